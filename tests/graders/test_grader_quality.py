"""QualityGrader: the objective of refactor tasks, a gate elsewhere, and fail-closed on bad source."""

from __future__ import annotations

import pytest
from tests.conftest import CALC_SOURCE, FIXED_SOURCE, GOLDEN_PATCH, MakeTask, tiny_spec

from repogym_gym.grading import grade_patch, grade_workspace
from repogym_gym.metrics import function_metrics
from repogym_gym.results import GradeResult
from repogym_gym.task import Task
from repogym_gym.workspace import Workspace

RATES = "shipping/rates.py"


@pytest.fixture(scope="module")
def refactor_task(starter_tasks: list[Task]) -> Task:
    return next(t for t in starter_tasks if t.id == "shipping-quote-refactor")


def grade_files(task: Task, files: dict[str, str], patch: str = "") -> GradeResult:
    with Workspace.create(task) as ws:
        ws.apply_patch(patch)
        for rel, text in files.items():
            ws.write(rel, text)
        return grade_workspace(ws)


def golden_rates(task: Task) -> str:
    with Workspace.create(task) as ws:
        ws.apply_patch(task.golden_patch())
        return ws.read(RATES)


# -- refactor: quality is the objective ---------------------------------------------------------------------


def test_refactor_noop_scores_zero_with_both_limits_violated(refactor_task: Task) -> None:
    result = grade_patch(refactor_task, "")
    quality = result.component("quality")
    assert quality.role == "objective"
    assert quality.score == 0.0
    assert all(quality.details["violations"][rule] for rule in ("max_function_length", "max_cyclomatic_complexity"))
    assert result.component("tests").role == "gate"
    assert result.component("tests").passed is True
    assert (result.score, result.passed) == (0.0, False)


def test_refactor_golden_scores_one(refactor_task: Task) -> None:
    result = grade_patch(refactor_task, refactor_task.golden_patch())
    assert result.component("quality").details["violations"] == {"max_function_length": [], "max_cyclomatic_complexity": []}
    assert (result.score, result.passed) == (1.0, True)
    assert result.summary() == "PASS 1.000 (constraints=1.00✓(gate), tests=1.00✓(gate), quality=1.00✓)"


def _pad_quote(source: str) -> str:
    """The golden source with quote() stretched past 35 lines by comments (complexity unchanged)."""
    anchor = "    _check_parcel(weight_grams, zone, service)\n"
    assert anchor in source
    return source.replace(anchor, "".join(f"    # step {i}\n" for i in range(10)) + anchor, 1)


def _add_complex_helper(source: str) -> str:
    """The golden source plus a 2-line helper of cyclomatic complexity 10 (length unchanged elsewhere)."""
    return source + "\n\ndef _all_set(x):\n    return x and x and x and x and x and x and x and x and x and x\n"


@pytest.mark.parametrize(
    ("edit", "violated"),
    [(_pad_quote, "max_function_length"), (_add_complex_helper, "max_cyclomatic_complexity")],
    ids=["too-long", "too-complex"],
)
def test_refactor_satisfying_one_of_two_limits_scores_one_half(refactor_task: Task, edit, violated: str) -> None:  # noqa: ANN001
    source = edit(golden_rates(refactor_task))
    metrics = {m.qualname: m for m in function_metrics(source)}
    assert (metrics["quote"].length > 35) == (violated == "max_function_length")
    assert (max(m.complexity for m in metrics.values()) > 8) == (violated == "max_cyclomatic_complexity")
    result = grade_files(refactor_task, {RATES: source})
    quality = result.component("quality")
    assert {rule for rule, v in quality.details["violations"].items() if v} == {violated}
    assert result.component("tests").passed is True
    assert quality.score == 0.5
    assert result.score == 0.5
    assert result.passed is False


# -- elsewhere: quality is a gate ------------------------------------------------------------------------------


def test_quality_limits_on_a_bugfix_are_a_gate_that_zeroes_the_golden(make_task: MakeTask) -> None:
    task = make_task(constraints={"paths": ["calc/__init__.py"], "max_function_length": 1})
    result = grade_patch(task, GOLDEN_PATCH)
    quality = result.component("quality")
    assert (quality.role, quality.weight, quality.score, quality.passed) == ("gate", 0.0, 0.0, False)
    assert result.component("tests").score == 1.0
    assert (result.score, result.passed) == (0.0, False)


def test_quality_limits_on_a_bugfix_that_hold_leave_the_score_to_the_tests(make_task: MakeTask) -> None:
    task = make_task(constraints={"paths": ["calc/__init__.py"], "max_function_length": 2, "max_cyclomatic_complexity": 1})
    result = grade_patch(task, GOLDEN_PATCH)
    assert result.component("quality").passed is True
    assert (result.score, result.passed) == (1.0, True)
    assert [c.name for c in result.components] == ["constraints", "tests", "quality"]


# -- fail closed ---------------------------------------------------------------------------------------------


def _tiny_refactor(make_task: MakeTask, **limits: int) -> Task:
    spec = tiny_spec()
    tests = {**spec["tests"], "fail_to_pass": [], "pass_to_pass": spec["tests"]["pass_to_pass"]}
    return make_task(type="refactor", tests=tests, constraints={"paths": ["calc"], **limits})


def test_a_syntax_error_under_paths_violates_every_rule(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=50, max_cyclomatic_complexity=50)
    result = grade_files(task, {"calc/broken.py": "def oops(:\n    pass\n"})
    assert result.component("tests").passed is True  # broken.py is never imported
    quality = result.component("quality")
    assert quality.details["violations"] == {"max_function_length": ["unmeasurable"], "max_cyclomatic_complexity": ["unmeasurable"]}
    assert (quality.score, quality.passed) == (0.0, False)
    assert any("cannot measure" in m for m in quality.messages)
    assert result.score == 0.0


def test_a_clean_tiny_refactor_scores_one_and_one_limit_gives_all_or_nothing(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=2)
    assert grade_files(task, {"calc/__init__.py": CALC_SOURCE + "\n\ndef mul(a, b):\n    return a * b\n"}).score == 1.0
    long_mul = CALC_SOURCE + "\n\ndef mul(a, b):\n    result = a * b\n    return result\n"
    result = grade_files(task, {"calc/__init__.py": long_mul})
    assert result.component("quality").score == 0.0
    assert result.score == 0.0


def test_quality_is_measured_on_the_graded_copy_not_the_baseline(make_task: MakeTask) -> None:
    task = make_task(constraints={"paths": ["calc/__init__.py"], "max_function_length": 2})
    long_add = FIXED_SOURCE.replace("    return a + b\n", "    total = a + b\n    return total\n", 1)
    result = grade_files(task, {"calc/__init__.py": long_add})
    assert result.component("tests").score == 1.0
    assert result.component("quality").details["violations"]["max_function_length"] == ["calc/__init__.py:1 add: 3 lines > 2"]
    assert result.score == 0.0
