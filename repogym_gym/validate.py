"""Prove a task is a sound reward signal before anyone trains on it.

A task is sound when (design doc 001, "Verification is a separate, explicit command"):

1. ``baseline``: on the untouched baseline every fail_to_pass test fails and every
   pass_to_pass test passes (read from the noop grade, which grades exactly the baseline);
2. ``noop``: the empty submission scores exactly 0;
3. ``golden``: the golden patch passes with score exactly 1;
4. ``repeatable``: ``repeats`` golden grades are identical (score, verdicts, per-test outcomes);
5. no grade hit an infrastructure error.

Example:
    >>> report = validate_task(load_task("task_suites/starter/parse-duration"))   # doctest: +SKIP
    >>> report.ok                                                                 # doctest: +SKIP
    True
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from repogym_gym.baseline import BaselineStore
from repogym_gym.errors import TaskNotFoundError
from repogym_gym.grading import grade_patch
from repogym_gym.results import GradeResult
from repogym_gym.sandbox import Sandbox
from repogym_gym.task import Task

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
        checks: baseline, noop, golden, repeatable (in that order).
        noop_score: Score of the empty submission.
        golden_scores: Score of each golden grade.
        duration_s: Seconds spent validating.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    ok: bool
    checks: list[ValidationCheck]
    noop_score: float
    golden_scores: list[float] = Field(default_factory=list)
    duration_s: float = 0.0

    def failures(self) -> list[str]:
        """Messages of the failed checks."""
        return [f"{c.name}: {c.message}" for c in self.checks if not c.ok]


def _fingerprint(result: GradeResult) -> tuple[object, ...]:
    comps = tuple((c.name, round(c.score, 6), c.passed) for c in result.components)
    return (round(result.score, 6), result.passed, comps, tuple(sorted(result.fail_to_pass.items())),
            tuple(sorted(result.pass_to_pass.items())))


def _baseline_check(task: Task, noop: GradeResult) -> ValidationCheck:
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


def validate_task(
    task: Task,
    *,
    repeats: int = 3,
    store: BaselineStore | None = None,
    sandbox: Sandbox | None = None,
    progress: Callable[[str], None] | None = None,
) -> TaskValidation:
    """Run the noop grade and ``repeats`` golden grades and check the task is sound.

    Args:
        task: The task.
        repeats: Golden grades to run (>= 1); all must be identical.
        store: Baseline cache (default: the process-wide one).
        sandbox: Where commands run (default: LocalSandbox).
        progress: Called with a short label before each grade (for progress bars).

    Raises:
        ValueError: when ``repeats`` < 1.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    start = time.monotonic()
    say = progress or (lambda _label: None)
    say("noop")
    noop = grade_patch(task, "", store=store, sandbox=sandbox)
    checks = [_baseline_check(task, noop)]
    noop_ok = noop.score == 0.0 and not noop.infra_error
    checks.append(ValidationCheck(name="noop", ok=noop_ok, message=f"noop {noop.summary()}"))
    try:
        golden_patch = task.golden_patch()
    except TaskNotFoundError as exc:
        checks.append(ValidationCheck(name="golden", ok=False, message=str(exc)))
        return TaskValidation(task_id=task.id, ok=False, checks=checks, noop_score=noop.score, duration_s=time.monotonic() - start)
    goldens = []
    for i in range(repeats):
        say(f"golden {i + 1}/{repeats}")
        goldens.append(grade_patch(task, golden_patch, store=store, sandbox=sandbox))
    first = goldens[0]
    golden_ok = first.score == 1.0 and first.passed and not first.infra_error
    detail = "" if golden_ok else " | " + " | ".join(m for c in first.components if not c.passed for m in c.messages[:3])
    checks.append(ValidationCheck(name="golden", ok=golden_ok, message=f"golden {first.summary()}{detail}"))
    distinct = {_fingerprint(g) for g in goldens}
    checks.append(ValidationCheck(
        name="repeatable", ok=len(distinct) == 1,
        message=f"{repeats} golden grades identical" if len(distinct) == 1
        else f"{len(distinct)} different outcomes in {repeats} golden grades: {[g.summary() for g in goldens]}",
    ))
    return TaskValidation(
        task_id=task.id, ok=all(c.ok for c in checks), checks=checks, noop_score=noop.score,
        golden_scores=[g.score for g in goldens], duration_s=time.monotonic() - start,
    )
