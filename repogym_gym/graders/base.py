"""The Grader protocol and the context every grader reads.

A grader turns a :class:`GradingContext` (the task, its baseline, the frozen submission, and a
fresh grading copy of the repository with the submission carried in and hidden tests injected)
into a :class:`~repogym_gym.results.GradeComponent`. Graders never see the agent's workspace.

Example (a custom grader, as in design doc 000 "Writing a grader"):
    >>> class NoTodoGrader:
    ...     name, role = "no_todo", "objective"
    ...     def grade(self, ctx):
    ...         bad = [f for f in ctx.changed_files() if "TODO" in ctx.read(f)]
    ...         return component(self, score=float(not bad), passed=not bad,
    ...                          messages=[f"TODO in {f}" for f in bad])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from repogym_gym.baseline import Baseline
from repogym_gym.results import GradeComponent, Role
from repogym_gym.sandbox import Sandbox
from repogym_gym.task import Task
from repogym_gym.workspace import Snapshot

__all__ = ["Grader", "GradingContext", "component"]


@dataclass(frozen=True)
class GradingContext:
    """What graders read.

    Attributes:
        task: The task being graded.
        baseline: Its cached baseline.
        snapshot: The frozen submission (classified changes and patch).
        repo: The grading copy's work tree: baseline + carried changes + hidden tests.
        scratch: A grader-owned directory outside ``repo`` (reports, configs).
        sandbox: Where test and benchmark commands run.
        hidden_files: Relative paths injected from the task's hidden/ directory.
    """

    task: Task
    baseline: Baseline
    snapshot: Snapshot
    repo: Path
    scratch: Path
    sandbox: Sandbox
    hidden_files: tuple[str, ...] = ()

    def changed_files(self) -> list[str]:
        """Paths the submission changed that were carried into grading (deletions included)."""
        return [c.path for c in self.snapshot.changes.carried]

    def read(self, rel: str) -> str:
        """Text of a file of the grading copy ("" when it does not exist)."""
        path = self.repo / rel
        return path.read_bytes().decode("utf-8", "replace") if path.is_file() and not path.is_symlink() else ""


@runtime_checkable
class Grader(Protocol):
    """Turns a grading context into one component.

    Attributes:
        name: The component's name (unique within a composite).
        role: ``objective`` (weighted score) or ``gate`` (zeroes the total when it fails).
    """

    name: str
    role: Role

    def grade(self, ctx: GradingContext) -> GradeComponent:
        """Score the submission. Raise GraderError for a reason to score 0 that is not a crash."""
        ...


def component(
    grader: Grader,
    *,
    score: float,
    passed: bool,
    messages: list[str] | None = None,
    details: dict[str, Any] | None = None,
) -> GradeComponent:
    """A GradeComponent named and roled after ``grader`` (score clamped to [0, 1])."""
    return GradeComponent(
        name=grader.name,
        role=grader.role,
        score=min(1.0, max(0.0, float(score))),
        passed=passed,
        messages=messages or [],
        details=details or {},
    )
