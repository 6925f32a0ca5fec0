"""Result models that cross boundaries: command results, grade components and grade results.

Every score is a finite float in [0, 1]; the models refuse anything else, so a NaN can never
reach a trainer as a reward. Every string they hold is valid UTF-8: a lone surrogate (a file
name that is not UTF-8) becomes U+FFFD (:mod:`repogym_gym.safetext`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from repogym_gym.safetext import safe_json

__all__ = ["CommandResult", "GradeComponent", "GradeResult", "Role", "TestOutcome"]

Role = Literal["objective", "gate"]
#: Per-test outcome as graded: a JUnit status, or "missing" (absent from the report; counts as failed).
TestOutcome = Literal["passed", "failed", "error", "skipped", "missing"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*")
    @classmethod
    def _valid_utf8(cls, v: Any) -> Any:
        # results are written as JSON and shown to agents: every string is valid UTF-8 (safetext's rule)
        return safe_json(v) if isinstance(v, (str, list, dict)) else v


def _unit_interval(value: float) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"score must be a finite number in [0, 1], got {value!r}")
    return value


class CommandResult(_Frozen):
    """What one command did.

    Attributes:
        argv: The command as run (the sandbox's own wrapper excluded).
        exit_code: The process's exit status; negative for death by signal (``-9`` after a
            timeout kill); None if the process could not be started.
        stdout: Decoded stdout (utf-8, invalid bytes replaced), middle cut with a marker past the limit.
        stderr: Same for stderr.
        duration_s: Wall-clock seconds from start to exit (or kill).
        cpu_s: CPU seconds (user + system) of the command and every process below it that was waited for,
            as the kernel accounted them (``wait4``'s rusage; a Docker command: its container's cgroup);
            None where the sandbox cannot tell.
        timed_out: True when the timeout killed the process group.
        truncated: True when stdout or stderr was cut.
    """

    argv: list[str]
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    duration_s: float = Field(ge=0)
    cpu_s: float | None = Field(None, ge=0)
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """Exit code 0 and no timeout."""
        return self.exit_code == 0 and not self.timed_out

    def tail(self, chars: int = 2000) -> str:
        """The last ``chars`` characters of stdout and stderr, for error messages."""
        text = (self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr).strip()
        return text if len(text) <= chars else "..." + text[-chars:]


class GradeComponent(_Frozen):
    """One grader's verdict.

    Attributes:
        name: Component name (``constraints``, ``tests``, ``quality``, ``perf`` or a custom one).
        role: ``objective`` contributes its weighted score; ``gate`` contributes nothing but a
            failing gate zeroes the total.
        score: In [0, 1].
        passed: The component's own pass verdict.
        weight: Weight among objectives (ignored for gates).
        messages: Human-readable reasons, most important first.
        details: JSON-serialisable specifics (per-test outcomes, timings, violations).
    """

    name: str
    role: Role
    score: float
    passed: bool
    weight: float = Field(1.0, ge=0)
    messages: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)

    @field_validator("score")
    @classmethod
    def _score_in_range(cls, v: float) -> float:
        return _unit_interval(v)

    def short(self) -> str:
        """``tests=1.00✓`` or ``constraints=0.50✗(gate)``."""
        mark = "✓" if self.passed else "✗"
        return f"{self.name}={self.score:.2f}{mark}" + ("(gate)" if self.role == "gate" else "")


class GradeResult(_Frozen):
    """The graded outcome of one submission.

    ``score = Σ wᵢ·sᵢ / Σ wᵢ`` over objectives, ``0`` if any gate failed (design doc 000,
    "Objectives and gates"); ``passed = all(passedᵢ) and score >= pass_threshold``.

    Attributes:
        task_id: The task graded.
        score: In [0, 1]; 0 on any infrastructure failure.
        passed: Every component passed and the score reached the threshold.
        components: In grading order (constraints first).
        patch: Unified diff (git format) of the submission against the baseline.
        files_changed: Paths (relative, posix) the submission changed, sorted.
        lines_changed: Added plus removed lines in ``patch``.
        fail_to_pass: Outcome of each fail_to_pass id.
        pass_to_pass: Outcome of each pass_to_pass id.
        infra_error: Set when the grade is 0 because the infrastructure failed (setup,
            sandbox, grader crash), not because of the submission; trainers should mask it.
        reward_kind: The reward kind graded by (``tests``, ``graded``, ``binary``,
            ``diff_similarity``; ``custom`` for a hand-built pipeline).
        duration_s: Seconds spent grading.
    """

    task_id: str
    score: float
    passed: bool
    components: list[GradeComponent] = Field(default_factory=list)
    patch: str = ""
    files_changed: list[str] = Field(default_factory=list)
    lines_changed: int = Field(0, ge=0)
    fail_to_pass: dict[str, TestOutcome] = Field(default_factory=dict)
    pass_to_pass: dict[str, TestOutcome] = Field(default_factory=dict)
    infra_error: str | None = None
    reward_kind: str = "tests"
    duration_s: float = Field(0.0, ge=0)

    @field_validator("score")
    @classmethod
    def _score_in_range(cls, v: float) -> float:
        return _unit_interval(v)

    def component(self, name: str) -> GradeComponent:
        """The component called ``name``.

        Raises:
            KeyError: naming the components that exist.
        """
        for comp in self.components:
            if comp.name == name:
                return comp
        raise KeyError(f"no component {name!r}; components are {[c.name for c in self.components]}")

    def reward_details(self, calibration: Mapping[str, float] | None = None) -> dict[str, Any]:
        """What ``reward-details.json`` holds (design doc 004, "Where the reward is written").

        Returns:
            ``reward``, ``kind``, ``passed``, the strict flag ``resolved`` and ``parse_status``,
            ``f2p_rate`` / ``p2p_rate`` and the per-test outcomes (tests kinds; None otherwise), ``per_case``
            (the optimization kind's per-case scores and statuses; None otherwise), ``answer`` (the answer
            kind's raw ±1, ``reward_min`` / ``reward_max`` and reason; None otherwise),
            ``components`` (name -> score), ``infra_error``, and ``calibration`` (the noop and
            golden scores ``repogym validate`` measured, when given) for ``(raw - noop) / (golden - noop)``.
        """
        tests = next((c.details for c in self.components if c.name == "tests"), {})
        cases = next((c.details.get("per_case") for c in self.components if c.name == "optimization"), None)
        answer = next((c.details for c in self.components if c.name == "answer"), None)
        return {
            "reward": self.score, "kind": self.reward_kind, "passed": self.passed,
            "resolved": tests.get("resolved"), "parse_status": tests.get("parse_status"),
            "f2p_rate": tests.get("f2p_rate"), "p2p_rate": tests.get("p2p_rate"),
            "fail_to_pass": dict(self.fail_to_pass), "pass_to_pass": dict(self.pass_to_pass),
            "components": {c.name: c.score for c in self.components}, "infra_error": self.infra_error,
            "per_case": cases, "answer": dict(answer) if answer is not None else None, "calibration": dict(calibration) if calibration is not None else None,
        }

    def summary(self) -> str:
        """One line, e.g. ``PASS 1.000 (constraints=1.00✓(gate), tests=1.00✓)``."""
        head = "PASS" if self.passed else "FAIL"
        parts = ", ".join(c.short() for c in self.components)
        text = f"{head} {self.score:.3f} ({parts})"
        return f"{text} [infra error: {self.infra_error}]" if self.infra_error else text
