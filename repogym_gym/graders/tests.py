"""TestGrader: fail_to_pass / pass_to_pass outcomes from a JUnit report of a trusted run.

Score (design doc 000, "TestGrader"):

============================================================  =====================================
situation                                                     score
============================================================  =====================================
k of n fail_to_pass pass, partial credit on                   k / n
partial credit off, any fail_to_pass failing                  0
any pass_to_pass broken, require_all_pass_to_pass on          0
any pass_to_pass broken, off                                  score x (1 - broken / total)
no fail_to_pass declared (refactor / perf)                    1 if all pass_to_pass pass
no report, timeout, forged report, exit code disagreeing      0 with a message
============================================================  =====================================

An id absent from the report counts as failed ("missing"); skipped counts as not passing.
"""

from __future__ import annotations

from repogym_gym.graders.base import GradingContext, component
from repogym_gym.graders.quality import runtime_code_violations
from repogym_gym.graders.record import shown_exit_code
from repogym_gym.graders.seal import Seal, compare_observations, sealed_files
from repogym_gym.graders.sealing import GoldenObservations, golden_observations
from repogym_gym.graders.testrun import TestRun, run_tests
from repogym_gym.results import GradeComponent, Role, TestOutcome
from repogym_gym.venvs import venv_environ

__all__ = ["TestGrader", "score_tests"]


def score_tests(
    fail_to_pass: dict[str, TestOutcome],
    pass_to_pass: dict[str, TestOutcome],
    *,
    partial_credit: bool,
    require_all_pass_to_pass: bool,
) -> tuple[float, bool, list[str]]:
    """Score per-test outcomes by the table in the module docstring.

    Returns:
        (score in [0, 1], passed, messages).
    """
    messages = []
    passing = [i for i, s in fail_to_pass.items() if s == "passed"]
    total = len(fail_to_pass)
    if total:
        score = len(passing) / total if partial_credit else float(len(passing) == total)
        messages.append(f"{len(passing)}/{total} fail_to_pass tests pass")
    else:
        score = 1.0
    broken = sorted(i for i, s in pass_to_pass.items() if s != "passed")
    if broken:
        messages.append(f"{len(broken)}/{len(pass_to_pass)} pass_to_pass tests broken: {broken[:10]}")
        score = 0.0 if require_all_pass_to_pass else score * (1 - len(broken) / len(pass_to_pass))
    passed = len(passing) == total and not broken
    return score, passed, messages


class TestGrader:
    """Runs the tests in the grading copy and scores fail_to_pass / pass_to_pass.

    Every component carries, besides the per-test outcomes, ``parse_status`` (``parsed``, or
    ``unparseable: <why>`` with score 0: an exit code is never a stand-in for a report),
    ``f2p_rate``, ``p2p_rate`` (1.0 with no pass_to_pass tests) and ``resolved`` (every
    fail_to_pass and pass_to_pass test passes) whatever the scoring mode.

    Args:
        role: ``objective`` for bugfix/feature tasks, ``gate`` for refactor/perf tasks.
        partial_credit: Overrides the task's ``grading.partial_credit`` (None: the task's).
        require_all_pass_to_pass: Overrides the task's ``grading.require_all_pass_to_pass``.
            The ``graded`` reward kind is (True, False): ``f2p_rate × p2p_rate``; ``binary`` is
            (False, True): 1 only when resolved (design doc 004).
    """

    __test__ = False
    name = "tests"

    def __init__(self, role: Role = "objective", *, partial_credit: bool | None = None,
                 require_all_pass_to_pass: bool | None = None) -> None:
        self.role: Role = role
        self.partial_credit = partial_credit
        self.require_all_pass_to_pass = require_all_pass_to_pass

    def grade(self, ctx: GradingContext) -> GradeComponent:
        spec, tests = ctx.task.spec, ctx.task.spec.tested()
        files = sealed_files(tests.fail_to_pass, tests.pass_to_pass, ctx.hidden_files) if tests.sealed else ()
        golden = golden_observations(ctx, files) if files else None  # before any code of the submission runs
        run = run_tests(
            tests,
            repo=ctx.repo,
            scratch=ctx.scratch / "tests",
            baseline_tree=ctx.baseline.tree,
            sandbox=ctx.sandbox,
            timeout_s=spec.limits.test_timeout_s,
            output_limit_bytes=spec.limits.output_limit_bytes,
            extra_env=venv_environ(ctx.baseline.python_env),
            seal=Seal(files) if files else None,
        )
        return self.score_run(ctx, run, golden)

    def score_run(self, ctx: GradingContext, run: TestRun, golden: GoldenObservations | None = None) -> GradeComponent:
        """Score a finished run; with ``golden`` (a sealed task), a sealed test passes only if its
        observations equal the golden patch's too."""
        spec, tests = ctx.task.spec, ctx.task.spec.tested()
        # No output in the details: with hidden tests injected it would show their source, and
        # trainers that feed info back to the model would leak them.
        # whole seconds: the run's duration is the one number the code under test sets freely (a timing channel)
        details: dict[str, object] = {"exit_code": shown_exit_code(run.result.exit_code), "duration_s": float(round(run.result.duration_s))}
        if run.invalid is not None or run.report is None:
            missing: dict[str, TestOutcome] = {i: "missing" for i in tests.fail_to_pass}
            details |= {"invalid": run.invalid, "fail_to_pass": missing, "parse_status": f"unparseable: {run.invalid}",
                        "pass_to_pass": {i: "missing" for i in tests.pass_to_pass},
                        "f2p_rate": 0.0 if missing else 1.0, "p2p_rate": 0.0 if tests.pass_to_pass else 1.0,
                        "resolved": False}
            return component(self, score=0.0, passed=False, messages=[f"invalid test run: {run.invalid}"], details=details)
        report = run.report
        f2p = {i: report.status_of(i) for i in tests.fail_to_pass}
        p2p = {i: report.status_of(i) for i in tests.pass_to_pass}
        sealed_messages = self._apply_seal(run, golden, f2p, p2p, details) if golden is not None else []
        partial = spec.grading.partial_credit if self.partial_credit is None else self.partial_credit
        require_all = (spec.grading.require_all_pass_to_pass if self.require_all_pass_to_pass is None
                       else self.require_all_pass_to_pass)
        score, passed, messages = score_tests(f2p, p2p, partial_credit=partial, require_all_pass_to_pass=require_all)
        messages += sealed_messages
        details |= {"fail_to_pass": f2p, "pass_to_pass": p2p, "flaky": [i for i in report.flaky if i != run.sentinel],
                    "parse_status": "parsed", "resolved": passed, **_rates(f2p, p2p)}
        limits = spec.constraints
        if limits.has_quality_limits():  # what ran is measured too, not only what was carried
            runtime = runtime_code_violations(run.compiled, run.unmeasured, max_function_length=limits.max_function_length,
                                              max_cyclomatic_complexity=limits.max_cyclomatic_complexity,
                                              generated=run.generated)
            details["runtime_code"] = {"texts": len(run.compiled), "violations": runtime[:20]}
            if runtime:
                return component(self, score=0.0, passed=False, details=details, messages=[
                    "code compiled at run time breaks the quality limits (measured like a changed file):", *runtime[:5]])
        return component(self, score=score, passed=passed, messages=messages, details=details)

    @staticmethod
    def _apply_seal(run: TestRun, golden: GoldenObservations, f2p: dict[str, TestOutcome], p2p: dict[str, TestOutcome],
                    details: dict[str, object]) -> list[str]:
        """Fail every sealed test whose observations differ from the golden patch's (in place); the messages."""
        differing = compare_observations(golden, run.observed or {})
        for outcomes in (f2p, p2p):
            for test_id in outcomes:
                if test_id in differing and outcomes[test_id] == "passed":
                    outcomes[test_id] = "failed"
        details["sealed"] = {"tests": len(golden), "observations": sum(v[0] for v in golden.values()),
                             "differing": differing}
        if not differing:
            return []
        shown = "; ".join(f"{i}: {why}" for i, why in sorted(differing.items())[:3])
        return [f"{len(differing)}/{len(golden)} sealed tests observed other values than the golden patch: {shown}"]


def _rates(f2p: dict[str, TestOutcome], p2p: dict[str, TestOutcome]) -> dict[str, float]:
    """``f2p_rate`` and ``p2p_rate``: the share passing (1.0 for an empty list)."""
    return {name: sum(s == "passed" for s in outcomes.values()) / len(outcomes) if outcomes else 1.0
            for name, outcomes in (("f2p_rate", f2p), ("p2p_rate", p2p))}
