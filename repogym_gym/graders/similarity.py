"""DiffSimilarityGrader: the ``diff_similarity`` reward kind, the submission's patch against the golden patch.

The score is :func:`repogym_gym.diffsim.diff_similarity` of the golden patch and the frozen
submission's patch (what grading carried), with the task's ``grading.diff_weights``; nothing runs,
so it is a pure function of the two texts. No judge by default, so the reward stays deterministic;
a custom pipeline may pass one (``DiffSimilarityGrader(judge=openai_judge(...))``).
"""

from __future__ import annotations

from repogym_gym.diffsim import Judge, diff_similarity
from repogym_gym.graders.base import GradingContext, component
from repogym_gym.results import GradeComponent, Role

__all__ = ["DiffSimilarityGrader"]


class DiffSimilarityGrader:
    """Scores the submission's patch by its resemblance to the golden patch (an objective).

    ``passed`` only when the score is 1 (the golden patch's own resemblance).

    Args:
        judge: An optional :data:`~repogym_gym.diffsim.Judge` (e.g. :func:`~repogym_gym.diffsim.openai_judge`).
    """

    name = "diff_similarity"
    role: Role = "objective"

    def __init__(self, judge: Judge | None = None) -> None:
        self.judge = judge

    def grade(self, ctx: GradingContext) -> GradeComponent:
        weights = {str(name): value for name, value in ctx.task.spec.grading.diff_weights.items()}
        score, details = diff_similarity(ctx.task.golden_patch(), ctx.snapshot.patch, weights=weights, judge=self.judge)
        parts = ", ".join(f"{name} {value:.2f}" for name, value in details["components"].items())
        message = f"diff similarity {score:.3f}" + (f" ({parts})" if parts else f": {details.get('reason')}")
        if details["capped"]:
            message += " capped: the patch's size is far from the golden patch's"
        return component(self, score=score, passed=score >= 1.0, messages=[message], details=details)
