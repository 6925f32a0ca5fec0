"""AnswerGrader: the ``answer`` reward kind, an answer file against the task's reference answer.

Raw reward ``+1`` for an equivalent answer, ``-1`` for a wrong, missing or unparseable one (design doc
004, "Answer equivalence"; :mod:`repogym_gym.equivalence`); the component's score is the rescaled
``(raw + 1) / 2`` so gates and weights keep their meaning, and ``details`` keep ``raw``,
``reward_min`` and ``reward_max``. The file is read from the grading copy (what was carried), as a
regular file only: a symlink, a FIFO or a file past the size limit is no answer.
"""

from __future__ import annotations

from repogym_gym.equivalence import equivalent, read_answer
from repogym_gym.errors import BrokenTaskError
from repogym_gym.graders.base import GradingContext, component
from repogym_gym.results import GradeComponent, Role

__all__ = ["AnswerGrader"]


class AnswerGrader:
    """Compares the answer file with the reference (an objective; passed when equivalent)."""

    name = "answer"
    role: Role = "objective"

    def grade(self, ctx: GradingContext) -> GradeComponent:
        spec = ctx.task.spec.answer
        if spec is None:
            raise BrokenTaskError(f"task {ctx.task.id!r} has no answer section")
        text, reason = read_answer(ctx.repo, spec.path)
        same = False
        if text is not None:
            same, reason = equivalent(text, spec)
        raw = 1 if same else -1
        details = {"raw": raw, "reward_min": -1, "reward_max": 1, "contract": spec.contract, "reason": reason}
        return component(self, score=(raw + 1) / 2, passed=same, messages=[f"answer {raw:+d}: {reason}"], details=details)
