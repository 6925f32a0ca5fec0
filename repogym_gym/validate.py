"""Prove a task is a sound reward signal before anyone trains on it.

A task is sound when (design doc 001, "Verification is a separate, explicit command"):

1. ``baseline``: on the untouched baseline every fail_to_pass test fails and every
   pass_to_pass test passes (read from the noop grade, which grades exactly the baseline);
2. ``noop``: the empty submission scores exactly 0;
3. ``golden``: the golden patch passes with score exactly 1 (an optimization task's reference instead beats
   the task's baseline program; ``calibration`` keeps both scores);
4. ``repeatable``: ``repeats`` golden grades are identical (score, verdicts, per-test outcomes);
5. ``answer_hidden``: no file visible inside the sandbox an untrusted agent's episodes of the
   task get holds the golden version of a file the golden patch changes, or one of its hunks
   in context (:func:`~repogym_gym.answers.scan_for_answers`: ``diff`` against another release
   of the module would hand over the patch); where no confining sandbox runs, the check says
   so and passes, since such a machine confines no agent at all;
6. ``own_sandbox``: when validation itself ran in LocalSandbox (which applies none of the task's
   ``limits``), the golden patch scores 1 once more in the sandbox an untrusted agent's episodes
   get, under the task's limits: a ``memory_mb`` or ``max_processes`` too small for the test run
   (or one the sandbox cannot apply) would zero every reward there while passing locally;
7. ``reward:<kind>``: for each other reward kind the task offers (``grading.rewards``), the noop
   and the golden patch graded by that kind score exactly 0 and 1 (``calibration`` keeps the
   scores of every kind, the task type's ``tests`` included);
8. no grade hit an infrastructure error.

Beside the checks, ``flags`` name what is sound but weak: a fail_to_pass none of whose tests is
collected on the baseline (their module does not import: what they ask for does not exist yet),
where any stub that makes the module importable already turns the failure into a run.

Example:
    >>> report = validate_task(load_task("task_suites/starter/parse-duration"))   # doctest: +SKIP
    >>> report.ok                                                                 # doctest: +SKIP
    True
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from repogym_gym.answers import scan_for_answers
from repogym_gym.baseline import BaselineStore
from repogym_gym.errors import RepoGymError, SandboxUnavailableError, TaskError
from repogym_gym.grading import default_grader, grade_patch, grade_workspace
from repogym_gym.results import GradeResult
from repogym_gym.sandbox import Sandbox, make_sandbox
from repogym_gym.task import Task
from repogym_gym.workspace import Workspace

__all__ = ["TaskValidation", "ValidationCheck", "validate_task"]


class ValidationCheck(BaseModel):
    """One soundness check."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    ok: bool
    message: str


class TaskValidation(BaseModel):
    """The verdict on one task.

    Attributes:
        task_id: The task.
        ok: Every check passed.
        checks: baseline, noop, golden, repeatable, ``reward:<kind>`` per offered kind, own_sandbox, answer_hidden.
        flags: Sound but weak (module docstring); they do not make ``ok`` False.
        noop_score: Score of the empty submission.
        golden_scores: Score of each golden grade.
        calibration: Reward kind -> ``{"noop", "golden"}`` scores (``tests`` and every kind the task
            offers), so that ``(raw - noop) / (golden - noop)`` can be computed.
        duration_s: Seconds spent validating.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    ok: bool
    checks: list[ValidationCheck]
    flags: list[str] = Field(default_factory=list)
    noop_score: float
    golden_scores: list[float] = Field(default_factory=list)
    calibration: dict[str, dict[str, float]] = Field(default_factory=dict)
    duration_s: float = 0.0

    def failures(self) -> list[str]:
        """Messages of the failed checks."""
        return [f"{c.name}: {c.message}" for c in self.checks if not c.ok]


def _fingerprint(result: GradeResult) -> tuple[object, ...]:
    comps = tuple((c.name, round(c.score, 6), c.passed) for c in result.components)
    return (round(result.score, 6), result.passed, comps, tuple(sorted(result.fail_to_pass.items())),
            tuple(sorted(result.pass_to_pass.items())))


def _baseline_check(task: Task, noop: GradeResult) -> ValidationCheck:
    if task.spec.tests is None:
        return ValidationCheck(name="baseline", ok=not noop.infra_error,
                               message=f"an {task.spec.type} task: no tests to run on the baseline ({noop.summary()})")
    if noop.infra_error:
        return ValidationCheck(name="baseline", ok=False, message=f"infrastructure error: {noop.infra_error}")
    passing_f2p = sorted(i for i, s in noop.fail_to_pass.items() if s == "passed")
    broken_p2p = sorted(f"{i} ({s})" for i, s in noop.pass_to_pass.items() if s != "passed")
    problems = []
    if passing_f2p:
        problems.append(f"fail_to_pass tests already pass on the baseline: {passing_f2p}")
    if broken_p2p:
        problems.append(f"pass_to_pass tests do not pass on the baseline: {broken_p2p}")
    if problems:
        return ValidationCheck(name="baseline", ok=False, message="; ".join(problems))
    counts = f"{len(noop.fail_to_pass)} fail_to_pass fail, {len(noop.pass_to_pass)} pass_to_pass pass"
    return ValidationCheck(name="baseline", ok=True, message=counts)


def _flags(noop: GradeResult) -> list[str]:
    """What is sound but weak about the task, read from its baseline (the noop grade)."""
    if noop.infra_error or not noop.fail_to_pass:
        return []
    if all(s == "missing" for s in noop.fail_to_pass.values()):
        return [f"fail_to_pass is only import errors: none of its {len(noop.fail_to_pass)} tests is collected on the "
                "baseline (their module does not import); the statement must name what to implement"]
    return []


def _agent_sandbox(task: Task) -> Sandbox:
    """The sandbox an untrusted agent's episodes of ``task`` get: its ``environment.sandbox``, else bubblewrap.

    Raises:
        SandboxUnavailableError: when that sandbox cannot run on this machine.
    """
    wanted = task.spec.environment.sandbox or "auto"
    return make_sandbox(wanted) if wanted != "auto" else make_sandbox("bwrap")


def _not_confined(name: str, exc: Exception) -> ValidationCheck:
    return ValidationCheck(name=name, ok=True, message=f"not checked: no confining sandbox runs here ({exc}); "
                           "untrusted agents cannot be confined on this machine either")


def _own_sandbox_check(task: Task, golden_patch: str, store: BaselineStore | None, own: Sandbox,
                       expected: float) -> ValidationCheck:
    """The golden patch graded once in ``own`` (the agent's sandbox) under the task's limits: it scores
    ``expected`` there too (1, or an optimization reference's own score)."""
    result = grade_patch(task, golden_patch, store=store, sandbox=own)
    ok = result.score == expected and (result.passed or task.spec.type == "optimization") and not result.infra_error
    limits = {k: v for k, v in task.spec.limits.model_dump().items() if k in _SANDBOX_LIMITS and v is not None}
    under = f"the task's limits {limits}" if limits else "the sandbox's default limits"
    detail = "" if ok else " | " + " | ".join(m for c in result.components if not c.passed for m in c.messages[:3])
    # only a failed test or benchmark run can be the limits' doing (not setup, a patch that does not apply, constraints)
    ran = any(c.name in ("tests", "perf") and not c.passed for c in result.components) and not any(
        c.name in ("setup", "patch", "grading_copy", "snapshot") and not c.passed for c in result.components)
    hint = "" if ok or not ran else "; the limits: section of task.yaml must leave room for the test run in that sandbox"
    return ValidationCheck(name="own_sandbox", ok=ok,
                           message=f"golden {result.summary()} in the {own.name} sandbox under {under}{detail}{hint}")


#: The ``limits:`` fields a confining sandbox applies to each command (LocalSandbox applies none of them).
_SANDBOX_LIMITS = ("cpu_s", "memory_mb", "max_processes", "file_size_mb", "tmp_size_mb", "disk_mb")


def _answer_check(task: Task, store: BaselineStore | None, sandbox: Sandbox) -> ValidationCheck:
    """The ``answer_hidden`` check, in ``sandbox`` (a confining one)."""
    name = "answer_hidden"
    try:
        scan = scan_for_answers(task, sandbox, store=store)
    except RepoGymError as exc:
        return ValidationCheck(name=name, ok=False, message=f"could not scan the {sandbox.name} sandbox: {exc}")
    if scan.error:
        return ValidationCheck(name=name, ok=False, message=scan.error)
    if scan.copies:
        shown = "; ".join(c.describe() for c in scan.copies[:5])
        more = f" (and {len(scan.copies) - 5} more)" if len(scan.copies) > 5 else ""
        return ValidationCheck(name=name, ok=False, message=(
            f"the golden version of a changed file is visible inside the {scan.sandbox} sandbox: {shown}{more}; "
            "an agent diffing against it reads the answer (remove the copy from the host or the image)"))
    return ValidationCheck(name=name, ok=True, message=(
        f"no copy of {len(scan.golden_files)} golden file(s) or of their {scan.hunks} hunk(s) among {scan.scanned} "
        f"files visible in the {scan.sandbox} sandbox ({scan.duration_s:.1f} s)"))


def validate_task(
    task: Task,
    *,
    repeats: int = 3,
    store: BaselineStore | None = None,
    sandbox: Sandbox | None = None,
    progress: Callable[[str], None] | None = None,
) -> TaskValidation:
    """Run the noop grade and ``repeats`` golden grades, scan for visible answers, and check the task is sound.

    Args:
        task: The task.
        repeats: Golden grades to run (>= 1); all must be identical.
        store: Baseline cache (default: the process-wide one).
        sandbox: Where commands run (default: LocalSandbox); a confining one (bubblewrap,
            Docker) is also where the answer scan runs, which otherwise uses the task's
            ``environment.sandbox``, else bubblewrap.
        progress: Called with a short label before each grade (for progress bars).

    Raises:
        ValueError: when ``repeats`` < 1.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    start = time.monotonic()
    say = progress or (lambda _label: None)
    core = "tests" if task.spec.tests is not None else task.spec.reward_kinds()[0]  # the task type's own pipeline
    say("noop")
    noop = grade_patch(task, "", store=store, sandbox=sandbox, grader=default_grader(task, core))
    checks = [_baseline_check(task, noop)]
    noop_ok = noop.score == 0.0 and not noop.infra_error
    checks.append(ValidationCheck(name="noop", ok=noop_ok, message=f"noop {noop.summary()}"))
    try:
        golden_patch = task.golden_patch()
    except TaskError as exc:  # none (TaskNotFoundError), or unreadable
        checks.append(ValidationCheck(name="golden", ok=False, message=str(exc)))
        return TaskValidation(task_id=task.id, ok=False, checks=checks, noop_score=noop.score, duration_s=time.monotonic() - start)
    goldens = []
    for i in range(repeats):
        say(f"golden {i + 1}/{repeats}")
        goldens.append(grade_patch(task, golden_patch, store=store, sandbox=sandbox, grader=default_grader(task, core)))
    first = goldens[0]
    calibration = {core: {"noop": noop.score, "golden": first.score}}
    if task.spec.type == "optimization":  # a reference need not score 1: it must beat the task's baseline program
        say("baseline program")
        base = _baseline_program(task, store, sandbox)
        calibration[core]["baseline"] = base.score
        checks.append(ValidationCheck(name="golden", ok=first.score > base.score and not (first.infra_error or base.infra_error),
                                      message=f"reference {first.summary()}; baseline program {base.summary()}"))
    else:
        golden_ok = first.score == 1.0 and first.passed and not first.infra_error
        detail = "" if golden_ok else " | " + " | ".join(m for c in first.components if not c.passed for m in c.messages[:3])
        checks.append(ValidationCheck(name="golden", ok=golden_ok, message=f"golden {first.summary()}{detail}"))
    distinct = {_fingerprint(g) for g in goldens}
    checks.append(ValidationCheck(
        name="repeatable", ok=len(distinct) == 1,
        message=f"{repeats} golden grades identical" if len(distinct) == 1
        else f"{len(distinct)} different outcomes in {repeats} golden grades: {[g.summary() for g in goldens]}",
    ))
    for kind in (k for k in task.spec.reward_kinds() if k != core):
        say(f"reward {kind}")
        check, calibration[kind] = _reward_check(task, kind, golden_patch, store, sandbox)
        checks.append(check)
    own, owned = sandbox, sandbox is None or not sandbox.confining
    try:
        if owned:
            own = _agent_sandbox(task)
    except SandboxUnavailableError as exc:
        checks.extend([_not_confined("own_sandbox", exc), _not_confined("answer_hidden", exc)])
    else:
        assert own is not None
        try:
            if owned:
                say(f"golden in {own.name}")
                checks.append(_own_sandbox_check(task, golden_patch, store, own, first.score))
            else:
                checks.append(ValidationCheck(name="own_sandbox", ok=True,
                                              message=f"the golden grades above ran in the {own.name} sandbox"))
            say("answer scan")
            checks.append(_answer_check(task, store, own))
        finally:
            if owned:
                own.close()
    return TaskValidation(
        task_id=task.id, ok=all(c.ok for c in checks), checks=checks, flags=_flags(noop), noop_score=noop.score,
        golden_scores=[g.score for g in goldens], calibration=calibration, duration_s=time.monotonic() - start,
    )


def _reward_check(task: Task, kind: str, golden_patch: str, store: BaselineStore | None,
                  sandbox: Sandbox | None) -> tuple[ValidationCheck, dict[str, float]]:
    """The noop and golden grades by one reward kind: sound when they score exactly 0 and 1."""
    grader = default_grader(task, kind)
    noop = grade_patch(task, "", store=store, sandbox=sandbox, grader=grader)
    golden = grade_patch(task, golden_patch, store=store, sandbox=sandbox, grader=grader)
    ok = noop.score == 0.0 and golden.score == 1.0 and not (noop.infra_error or golden.infra_error)
    check = ValidationCheck(name=f"reward:{kind}", ok=ok, message=f"{kind}: noop {noop.summary()} | golden {golden.summary()}")
    return check, {"noop": noop.score, "golden": golden.score}


def _baseline_program(task: Task, store: BaselineStore | None, sandbox: Sandbox | None) -> GradeResult:
    """An optimization task's baseline program (a file of the task) graded as the submission's program."""
    spec = task.spec.optimization
    assert spec is not None
    with Workspace.create(task, store=store) as workspace:
        workspace.write(spec.program, (task.root / spec.baseline).read_bytes())
        return grade_workspace(workspace, sandbox=sandbox)

