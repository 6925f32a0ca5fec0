"""CompositeGrader: objectives and gates into one GradeResult.

``score = Σ wᵢ·sᵢ / Σ wᵢ`` over objectives, ``0`` if any gate failed; ``passed = all(passedᵢ)
and score >= pass_threshold`` (design doc 000, "Objectives and gates"). With no objective, or
only zero weights, the score is 0: gates never contribute credit.

Expensive graders (``skip_after_failed_gate = True``, e.g. PerfGrader) are skipped with score 0
once a gate has failed: the total is 0 anyway.

A grader that raises :class:`~repogym_gym.errors.GraderError` scores 0 with its message; any
other exception is an infrastructure failure: the component scores 0 and the result carries
``infra_error`` so trainers can mask the episode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from repogym_gym.errors import BrokenTaskError, GraderError
from repogym_gym.graders.base import Grader, GradingContext
from repogym_gym.results import GradeComponent
from repogym_gym.safetext import short_text

__all__ = ["CompositeGrader", "combine"]


def combine(components: Sequence[GradeComponent], pass_threshold: float) -> tuple[float, bool]:
    """(score, passed) of components by the formula in the module docstring."""
    objectives = [c for c in components if c.role == "objective"]
    total_weight = sum(c.weight for c in objectives)
    gates_ok = all(c.passed for c in components if c.role == "gate")
    score = sum(c.weight * c.score for c in objectives) / total_weight if total_weight > 0 and gates_ok else 0.0
    passed = bool(objectives) and all(c.passed for c in components) and score >= pass_threshold
    return score, passed


class CompositeGrader:
    """Runs graders in order and combines their components.

    Args:
        graders: In run order (constraints first).
        weights: Component name -> weight for objectives (default 1 each).
        pass_threshold: Score needed to pass, in [0, 1].
        reward_kind: The reward kind this pipeline computes (recorded in each grade; ``custom`` for
            a hand-built pipeline).

    Example:
        >>> grader = CompositeGrader([ConstraintGrader(), TestGrader()], weights={"tests": 1.0})  # doctest: +SKIP
    """

    def __init__(self, graders: Sequence[Grader], weights: Mapping[str, float] | None = None, pass_threshold: float = 1.0,
                 reward_kind: str = "custom") -> None:
        names = [g.name for g in graders]
        if len(set(names)) != len(names):
            raise GraderError(f"grader names must be unique, got {names}")
        unknown = sorted(set(weights or {}) - set(names))
        if unknown:
            raise GraderError(f"weights name graders that are not in the composite: {unknown} (graders: {names})")
        self.graders = list(graders)
        self.weights = dict(weights or {})
        self.pass_threshold = pass_threshold
        self.reward_kind = reward_kind

    def grade(self, ctx: GradingContext) -> tuple[list[GradeComponent], str | None]:
        """Every component, in order, and the first infrastructure error (or None)."""
        components: list[GradeComponent] = []
        infra_errors: list[str] = []
        for grader in self.graders:
            comp = self._run_one(grader, ctx, components, infra_errors)
            weight = self.weights.get(grader.name, 1.0) if comp.role == "objective" else 0.0
            components.append(comp.model_copy(update={"weight": weight}))
        return components, (infra_errors[0] if infra_errors else None)

    @staticmethod
    def _run_one(grader: Grader, ctx: GradingContext, done: list[GradeComponent], infra_errors: list[str]) -> GradeComponent:
        def zero(message: str) -> GradeComponent:
            return GradeComponent(name=grader.name, role=grader.role, score=0.0, passed=False, messages=[message])

        failed_gate = next((c.name for c in done if c.role == "gate" and not c.passed), None)
        if failed_gate and getattr(grader, "skip_after_failed_gate", False):
            return zero(f"skipped: the {failed_gate!r} gate failed, so the score is 0")
        try:
            return grader.grade(ctx)
        except GraderError as exc:
            return zero(str(exc))
        except BrokenTaskError as exc:  # the task's own fault, not the grader's: infrastructure, said as it is
            message = f"the task is broken (grader {grader.name!r}): {short_text(str(exc), 300)}"
            infra_errors.append(message)
            return zero(message)
        except Exception as exc:  # noqa: BLE001 - a crashing grader is infrastructure, recorded
            # the exception's text may quote what the submission wrote: cut short, printable only
            message = f"grader {grader.name!r} crashed: {type(exc).__name__}: {short_text(str(exc), 300)}"
            infra_errors.append(message)
            return zero(message)
