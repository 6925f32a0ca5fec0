"""Issue 15: the optimization score's task-owned generator and scorer, run in a child interpreter."""

from __future__ import annotations

import shutil

import pytest

from repogym_gym.errors import BrokenTaskError
from repogym_gym.optimization import generate_cases, score_outputs
from repogym_gym.task import Task, load_task
from tests.helpers import REPO_ROOT, MakeTask

TASK = REPO_ROOT / "task_suites" / "rewards" / "bin-packing-optimization"


@pytest.fixture(scope="module")
def bins() -> Task:
    return load_task(TASK)


def test_the_cases_are_the_same_every_time(bins: Task) -> None:
    cases = generate_cases(bins)
    assert len(cases) == 6 and cases == generate_cases(bins)
    assert [len(c.split("\n")[1].split()) for c in cases] == [30, 40, 50, 60, 70, 80]


def own_grader_task(make_task: MakeTask, **optimization: object) -> Task:
    """A task of its own with the bin-packing task's grader files (``optimization`` overrides its section)."""
    task = make_task(type="optimization", tests=None, patch=None, optimization={
        "generator": "grader/generate.py", "scorer": "grader/score.py", "baseline": "grader/baseline.py",
        "cases": 2, **optimization})
    shutil.copytree(TASK / "grader", task.root / "grader")
    return task


def test_the_seed_decides_the_cases(make_task: MakeTask) -> None:
    one, two = own_grader_task(make_task, seed=1), own_grader_task(make_task, seed=2)
    assert generate_cases(one) == generate_cases(one) != generate_cases(two)


def test_a_broken_generator_or_scorer_is_the_task_s_fault(make_task: MakeTask) -> None:
    task = own_grader_task(make_task, scorer_timeout_s=2)
    (task.root / "grader" / "generate.py").write_text("def generate(rng, index):\n    return 1 / 0\n")
    with pytest.raises(BrokenTaskError, match="(?s)the generate step failed: .*ZeroDivisionError"):
        generate_cases(task)
    (task.root / "grader" / "score.py").write_text("def score(case, output):\n    while True:\n        pass\n")
    with pytest.raises(BrokenTaskError, match="the score step ran past 2 s"):
        score_outputs(task, [("1 1\n1\n", "0\n")])


def test_the_scorer_s_refusals_and_odd_answers_are_zeros_with_why(bins: Task) -> None:
    case = generate_cases(bins)[0]
    count = len(case.split("\n")[1].split())
    one_per_bin = "\n".join(str(i) for i in range(count))
    scored = score_outputs(bins, [(case, one_per_bin), (case, ""), (case, "0 0\n"), (case, "x y z")])
    assert 0.0 < scored[0][0] < 1.0 and scored[0][1] == ""
    assert [s for s, _ in scored[1:]] == [0.0, 0.0, 0.0]
    assert all(why.startswith("infeasible: ") for _, why in scored[1:]), scored


@pytest.mark.parametrize(("returned", "why"), [("float('nan')", "nan"), ("1.5", "1.5"), ("True", "not a number"),
                                               ("'0.5'", "not a number"), ("10 ** 400", "OverflowError")])
def test_a_score_that_is_not_a_number_in_0_1_is_a_zero(make_task: MakeTask, returned: str, why: str) -> None:
    task = own_grader_task(make_task)
    (task.root / "grader" / "score.py").write_text(f"def score(case, output):\n    return {returned}\n")
    [(value, reason)] = score_outputs(task, [("1 1\n1\n", "0\n")])
    assert value == 0.0 and why in reason


def test_what_the_task_s_code_prints_is_not_taken_for_the_reply(make_task: MakeTask) -> None:
    task = own_grader_task(make_task)
    (task.root / "grader" / "score.py").write_text("def score(case, output):\n    print('scoring...')\n    return 0.5\n")
    gen = (task.root / "grader" / "generate.py").read_text()
    (task.root / "grader" / "generate.py").write_text("print('loading the generator')\n" + gen)
    assert len(generate_cases(task)) == 2
    assert score_outputs(task, [("1 1\n1\n", "0\n")]) == [(0.5, "")]
