"""OptimizationGrader: the ``optimization`` reward kind, a program scored on cases it has never seen.

The task's seeded generator makes ``optimization.cases`` cases on the host (:mod:`repogym_gym.optimization`);
the submission's program runs on each in the sandbox, its own process each time, the case on stdin, within
``optimization.time_limit_s`` (and the task's ``limits``); each case runs **twice** and both outputs go
through the task's scorer. A case scores the scorer's value when the two agree, and 0 when it is void (the two
runs scored differently), infeasible (the scorer refused the output), malformed, missing (no program, a
crash) or timed out; ``details["per_case"]`` says which. The reward is the mean (design doc 004,
"Optimization score"). A reference solution need not score 1: ``repogym validate`` checks that it beats
the task's baseline program and repeats its own scores.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from repogym_gym.graders.base import GradingContext, component
from repogym_gym.optimization import generate_cases, score_outputs
from repogym_gym.results import GradeComponent, Role
from repogym_gym.tree import discard_tree
from repogym_gym.venvs import venv_environ

__all__ = ["CASE_FILE", "OptimizationGrader"]

#: Where each run's case is written in the grading copy (its stdin comes from there).
CASE_FILE = ".repogym-case"
#: Most bytes of a run's stdout kept; a longer output is malformed.
_OUTPUT_LIMIT = 1 << 20


class OptimizationGrader:
    """Scores the submission's program on generated cases (an objective; passed when every case scored 1)."""

    name = "optimization"
    role: Role = "objective"

    def grade(self, ctx: GradingContext) -> GradeComponent:
        spec = ctx.task.spec.optimization
        assert spec is not None  # default_grader picks this grader for optimization tasks only
        cases = generate_cases(ctx.task)
        try:
            mode = os.lstat(ctx.repo / spec.program).st_mode
        except OSError:
            mode = 0
        if not stat.S_ISREG(mode):
            details = {"cases": len(cases), "per_case": [{"score": 0.0, "status": "missing program"}] * len(cases)}
            return component(self, score=0.0, passed=False, details=details,
                             messages=[f"no program: {spec.program} is not a regular file of the submission"])
        outputs = [[self._run(ctx, case) for _ in range(2)] for case in cases]
        scored = score_outputs(ctx.task, [(case, out) for case, pair in zip(cases, outputs, strict=True)
                                          for out, why in pair if not why])
        per_case: list[dict[str, Any]] = []
        values = iter(scored)
        for pair in outputs:
            whys = [why for _, why in pair if why]
            got = [next(values) for _, why in pair if not why]
            if whys:
                per_case.append({"score": 0.0, "status": whys[0]})
            elif got[0][1] or got[1][1]:
                per_case.append({"score": 0.0, "status": got[0][1] or got[1][1]})
            elif got[0][0] != got[1][0]:
                per_case.append({"score": 0.0, "status": "void", "scores": [got[0][0], got[1][0]]})
            else:
                per_case.append({"score": got[0][0], "status": "ok"})
        score = sum(c["score"] for c in per_case) / len(per_case)
        void = sum(c["status"] == "void" for c in per_case)
        messages = [f"mean {score:.4f} over {len(per_case)} cases"] + (
            [f"{void} case(s) void: the two runs scored differently"] if void else [])
        return component(self, score=score, passed=score >= 1.0, messages=messages,
                         details={"cases": len(per_case), "per_case": per_case})

    @staticmethod
    def _run(ctx: GradingContext, case: str) -> tuple[str, str]:
        """One run of the program on ``case``: (stdout, "") or ("", why it has no output to score)."""
        spec = ctx.task.spec.optimization
        assert spec is not None
        case_path = ctx.repo / CASE_FILE
        _clear(case_path)  # whatever the program left there (a file, a symlink, a directory), never followed
        fd = os.open(case_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(case)
        try:
            result = ctx.sandbox.run(["bash", "-c", f"{spec.run_command()} < {CASE_FILE}"], cwd=ctx.repo,
                                     timeout_s=spec.time_limit_s, env=venv_environ(ctx.baseline.python_env),
                                     output_limit_bytes=_OUTPUT_LIMIT)
        finally:
            _clear(case_path)
        if result.timed_out:
            return "", f"timed out after {spec.time_limit_s:g} s"
        if result.exit_code != 0:
            return "", f"exited {result.exit_code}"
        if result.truncated:
            return "", f"malformed: more than {_OUTPUT_LIMIT} bytes of output"
        return result.stdout, ""


def _clear(path: Path) -> None:
    """Remove ``path`` whatever the program made of it (a directory tree at any depth included)."""
    if path.is_dir() and not path.is_symlink():
        discard_tree(path)
    else:
        path.unlink(missing_ok=True)

