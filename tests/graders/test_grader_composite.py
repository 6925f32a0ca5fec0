"""CompositeGrader and combine: weighted objectives, gates, thresholds, crashes, and the result models."""

from __future__ import annotations

import math

import pytest

from repogym_gym.errors import BrokenTaskError, GraderError, RepoGymError
from repogym_gym.graders import CompositeGrader, ConstraintGrader, GradingContext, TestGrader, combine, component
from repogym_gym.grading import grade_patch
from repogym_gym.results import GradeComponent, GradeResult, Role
from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE, GOLDEN_PATCH, grade_files


def comp(name: str, score: float, *, role: Role = "objective", passed: bool = True, weight: float = 1.0) -> GradeComponent:
    return GradeComponent(name=name, role=role, score=score, passed=passed, weight=weight)


class NoTodoGrader:
    """The custom grader of design doc 000: 0 when a changed file contains TODO."""

    name = "no_todo"

    def __init__(self, role: Role = "objective") -> None:
        self.role: Role = role

    def grade(self, ctx: GradingContext) -> GradeComponent:
        bad = [f for f in ctx.changed_files() if "TODO" in ctx.read(f)]
        return component(self, score=float(not bad), passed=not bad, messages=[f"TODO in {f}" for f in bad])


class RaisingGrader:
    role: Role = "objective"

    def __init__(self, name: str, exc: Exception) -> None:
        self.name = name
        self.exc = exc
        self.calls = 0

    def grade(self, ctx: GradingContext) -> GradeComponent:
        self.calls += 1
        raise self.exc


# -- combine ----------------------------------------------------------------------------------------------------


def test_combine_is_the_weighted_mean_of_objectives() -> None:
    score, passed = combine([comp("a", 1.0, weight=3.0), comp("b", 0.0, weight=1.0, passed=False)], 1.0)
    assert score == 0.75
    assert passed is False


def test_combine_with_unequal_scores_and_weights() -> None:
    components = [comp("a", 0.5, weight=2.0), comp("b", 0.25, weight=6.0), comp("g", 0.1, role="gate", weight=0.0)]
    score, _ = combine(components, 0.0)
    assert score == (2.0 * 0.5 + 6.0 * 0.25) / (2.0 + 6.0)


def test_combine_ignores_gate_scores_when_gates_pass() -> None:
    score, passed = combine([comp("g", 0.3, role="gate"), comp("a", 1.0)], 1.0)
    assert (score, passed) == (1.0, True)


def test_combine_zeroes_the_score_when_a_gate_fails() -> None:
    score, passed = combine([comp("g", 0.9, role="gate", passed=False), comp("a", 1.0)], 0.0)
    assert (score, passed) == (0.0, False)


def test_combine_without_objectives_scores_zero() -> None:
    assert combine([comp("g", 1.0, role="gate")], 0.0) == (0.0, False)
    assert combine([], 0.0) == (0.0, False)


def test_combine_with_only_zero_weights_scores_zero() -> None:
    assert combine([comp("a", 1.0, weight=0.0)], 0.0)[0] == 0.0


def test_combine_passes_only_at_or_above_the_threshold() -> None:
    components = [comp("a", 1.0, weight=3.0), comp("b", 0.0, weight=1.0, passed=True)]
    assert combine(components, 0.75) == (0.75, True)
    assert combine(components, 0.76) == (0.75, False)


def test_combine_fails_when_any_component_failed_even_above_the_threshold() -> None:
    assert combine([comp("a", 1.0), comp("b", 1.0, passed=False)], 0.5) == (1.0, False)


# -- CompositeGrader construction -------------------------------------------------------------------------------


def test_duplicate_grader_names_are_rejected() -> None:
    with pytest.raises(GraderError, match="unique") as info:
        CompositeGrader([TestGrader(), TestGrader(role="gate")])
    assert isinstance(info.value, RepoGymError)
    assert "'tests'" in str(info.value)


def test_weights_naming_unknown_graders_are_rejected() -> None:
    with pytest.raises(GraderError, match="perf"):
        CompositeGrader([ConstraintGrader(), TestGrader()], weights={"tests": 1.0, "perf": 1.0})


# -- CompositeGrader on real grading runs ---------------------------------------------------------------------


def test_weights_apply_to_objectives_and_gates_weigh_nothing(tiny_task: Task) -> None:
    grader = CompositeGrader([ConstraintGrader(), TestGrader(), NoTodoGrader()], weights={"tests": 3.0, "no_todo": 1.0})
    result = grade_files(tiny_task, {"calc/__init__.py": FIXED_SOURCE + "# TODO: tidy up\n"}, grader)
    assert [(c.name, c.weight) for c in result.components] == [("constraints", 0.0), ("tests", 3.0), ("no_todo", 1.0)]
    assert result.component("no_todo").messages == ["TODO in calc/__init__.py"]
    assert result.score == 0.75
    assert result.passed is False


def test_a_custom_objective_that_passes_keeps_the_score_at_one(tiny_task: Task) -> None:
    grader = CompositeGrader([ConstraintGrader(), TestGrader(), NoTodoGrader()], weights={"tests": 3.0, "no_todo": 1.0})
    result = grade_files(tiny_task, {"calc/__init__.py": FIXED_SOURCE}, grader)
    assert (result.score, result.passed) == (1.0, True)


def test_a_custom_failing_gate_zeroes_the_score(tiny_task: Task) -> None:
    grader = CompositeGrader([ConstraintGrader(), TestGrader(), NoTodoGrader(role="gate")])
    result = grade_files(tiny_task, {"calc/__init__.py": FIXED_SOURCE + "# TODO\n"}, grader)
    assert result.component("tests").score == 1.0
    assert (result.score, result.passed) == (0.0, False)


class HalfGrader:
    """An objective that always scores 0.5 and calls that a pass."""

    name = "style"
    role: Role = "objective"

    def grade(self, ctx: GradingContext) -> GradeComponent:
        return component(self, score=0.5, passed=True)


class PerfectGrader:
    """An objective that always scores 1 (no test run: the threshold is the point here)."""

    name = "perfect"
    role: Role = "objective"

    def grade(self, ctx: GradingContext) -> GradeComponent:
        return component(self, score=1.0, passed=True)


@pytest.mark.parametrize(("threshold", "passed"), [(0.75, True), (0.7501, False), (0.0, True)])
def test_the_pass_threshold_decides_passed(tiny_task: Task, threshold: float, passed: bool) -> None:
    grader = CompositeGrader([PerfectGrader(), HalfGrader()], weights={"perfect": 1.0, "style": 1.0}, pass_threshold=threshold)
    result = grade_patch(tiny_task, GOLDEN_PATCH, grader=grader)
    assert result.score == 0.75
    assert result.passed is passed


def test_a_grader_raising_grader_error_scores_zero_with_its_message(tiny_task: Task) -> None:
    failing = RaisingGrader("picky", GraderError("cannot judge this submission"))
    grader = CompositeGrader([ConstraintGrader(), TestGrader(), failing])
    result = grade_patch(tiny_task, GOLDEN_PATCH, grader=grader)
    picky = result.component("picky")
    assert (picky.score, picky.passed, picky.messages) == (0.0, False, ["cannot judge this submission"])
    assert result.infra_error is None
    assert result.score == 0.5  # tests 1, picky 0, equal weights
    assert result.passed is False


def test_a_crashing_grader_is_an_infrastructure_error_and_scores_zero(tiny_task: Task) -> None:
    crashing = RaisingGrader("boom", RuntimeError("kaboom"))
    after = NoTodoGrader()
    grader = CompositeGrader([ConstraintGrader(), TestGrader(), crashing, after], weights={"boom": 0.0})
    result = grade_patch(tiny_task, GOLDEN_PATCH, grader=grader)
    assert result.infra_error == "grader 'boom' crashed: RuntimeError: kaboom"
    assert result.component("boom").messages == ["grader 'boom' crashed: RuntimeError: kaboom"]
    assert result.component("tests").score == 1.0
    assert result.component("no_todo").score == 1.0  # later graders still ran
    assert (result.score, result.passed) == (0.0, False)
    assert result.summary().endswith("[infra error: grader 'boom' crashed: RuntimeError: kaboom]")


def test_a_broken_task_is_an_infrastructure_error_said_as_such_not_a_crash(tiny_task: Task) -> None:
    """Issue 13: ``validate`` reported a golden patch whose sealed run fails as "grader 'tests' crashed:
    BrokenTaskError: ..."; the task is broken, and the message says so."""
    broken = RaisingGrader("sealed", BrokenTaskError("the golden patch of 'tiny-calc' does not apply"))
    result = grade_patch(tiny_task, GOLDEN_PATCH, grader=CompositeGrader([ConstraintGrader(), broken]))
    expected = "the task is broken (grader 'sealed'): the golden patch of 'tiny-calc' does not apply"
    assert result.infra_error == expected
    assert result.component("sealed").messages == [expected]
    assert (result.score, result.passed) == (0.0, False)


def test_a_composite_with_only_gates_scores_zero(tiny_task: Task) -> None:
    grader = CompositeGrader([ConstraintGrader(), TestGrader(role="gate")])
    result = grade_patch(tiny_task, GOLDEN_PATCH, grader=grader)
    assert all(c.passed for c in result.components)
    assert (result.score, result.passed) == (0.0, False)


# -- summary() ---------------------------------------------------------------------------------------------------


def test_summary_of_the_golden_grade(tiny_task: Task) -> None:
    assert grade_patch(tiny_task, GOLDEN_PATCH).summary() == "PASS 1.000 (constraints=1.00✓(gate), tests=1.00✓)"


def test_summary_of_a_partial_grade() -> None:
    result = GradeResult(task_id="t", score=0.5, passed=False,
                         components=[comp("constraints", 1.0, role="gate"), comp("tests", 0.5, passed=False)])
    assert result.summary() == "FAIL 0.500 (constraints=1.00✓(gate), tests=0.50✗)"


def test_summary_rounds_to_three_and_two_digits() -> None:
    result = GradeResult(task_id="t", score=2 / 3, passed=False, components=[comp("tests", 2 / 3, passed=False)])
    assert result.summary() == "FAIL 0.667 (tests=0.67✗)"


def test_component_lookup_names_the_components_that_exist() -> None:
    result = GradeResult(task_id="t", score=0.0, passed=False, components=[comp("tests", 0.0)])
    with pytest.raises(KeyError, match=r"\['tests'\]"):
        result.component("perf")


# -- the result models refuse scores outside [0, 1] -------------------------------------------------------------

BAD_SCORES = [math.nan, -0.1, 1.1, math.inf, -math.inf]


@pytest.mark.parametrize("score", BAD_SCORES)
def test_grade_component_rejects_a_bad_score(score: float) -> None:
    with pytest.raises(ValueError, match="score"):
        GradeComponent(name="x", role="objective", score=score, passed=False)


@pytest.mark.parametrize("score", BAD_SCORES)
def test_grade_result_rejects_a_bad_score(score: float) -> None:
    with pytest.raises(ValueError, match="score"):
        GradeResult(task_id="t", score=score, passed=False)


@pytest.mark.parametrize("score", [0.0, 1.0, 0.5])
def test_scores_in_the_unit_interval_are_accepted(score: float) -> None:
    assert GradeComponent(name="x", role="gate", score=score, passed=True).score == score
    assert GradeResult(task_id="t", score=score, passed=False).score == score


def test_a_negative_weight_is_rejected() -> None:
    with pytest.raises(ValueError, match="weight"):
        GradeComponent(name="x", role="objective", score=1.0, passed=True, weight=-1.0)


@pytest.mark.parametrize(("raw", "kept"), [(1.5, 1.0), (-2.0, 0.0), (math.nan, 0.0)])
def test_the_component_helper_clamps_into_the_unit_interval(raw: float, kept: float) -> None:
    assert component(NoTodoGrader(), score=raw, passed=False).score == kept
