"""Issue 15: reward kinds chosen per task (task.yaml ``grading.rewards``) and per env (``gym.make(id, reward=...)``)."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

from repogym_gym.errors import TaskSpecError
from repogym_gym.grading import default_grader, grade_patch
from repogym_gym.task import Task, load_task
from repogym_gym.validate import validate_task
from tests.helpers import CALC_SOURCE, FIXED_SOURCE, REPO_ROOT, MakeTask

KINDS = ["tests", "graded", "binary", "diff_similarity"]
#: add fixed, sub broken for b == 0 only: fail_to_pass 2/2, pass_to_pass 1/2
HALF_P2P = FIXED_SOURCE.replace("def sub(a, b):\n    return a - b", "def sub(a, b):\n    return 0 if b == 0 else a - b")
#: add right for (2, 3) only: fail_to_pass 1/2, pass_to_pass 2/2
HALF_F2P = CALC_SOURCE.replace("def add(a, b):\n    return a - b", "def add(a, b):\n    return 5 if (a, b) == (2, 3) else a - b")


@pytest.fixture
def offering(make_task: MakeTask) -> Task:
    """The tiny task offering every kind of this increment, the default first."""
    return make_task(grading={"rewards": KINDS})


def _submitted(env_id: str, path: str, content: str | None, **make: Any) -> tuple[float, dict[str, Any]]:
    """(reward, info) of an episode of ``env_id`` that writes ``content`` to ``path`` (None: nothing) and submits."""
    env = gym.make(env_id, sandbox="local", **make)
    try:
        env.reset(seed=0)
        if content is not None:
            env.step({"kind": "write", "path": path, "content": content})
        _, reward, terminated, _, info = env.step({"kind": "submit"})
    finally:
        env.close()
    assert terminated
    return float(reward), info


def _play(task: Task, source: str | None, **make: Any) -> tuple[float, dict[str, Any]]:
    return _submitted("RepoGym/Task-v0", "calc/__init__.py", source, task=str(task.root), **make)


@pytest.mark.slow
def test_each_kind_scores_a_partial_fix_by_its_own_formula(offering: Task) -> None:
    expected = {  # (HALF_F2P, HALF_P2P, golden, noop)
        "tests": (0.5, 0.0, 1.0, 0.0),  # partial credit k/n; any broken pass_to_pass zeroes it
        "graded": (0.5, 0.5, 1.0, 0.0),  # f2p_rate x p2p_rate
        "binary": (0.0, 0.0, 1.0, 0.0),  # all or nothing
    }
    for kind, scores in expected.items():
        got = tuple(_play(offering, source, reward=kind)[0] for source in (HALF_F2P, HALF_P2P, FIXED_SOURCE, None))
        assert got == scores, kind
    _, info = _play(offering, HALF_P2P, reward="graded")
    details = info["grade"]["components"][1]["details"]
    assert (details["f2p_rate"], details["p2p_rate"], details["resolved"], details["parse_status"]) == (1.0, 0.5, False, "parsed")
    assert info["grade"]["reward_kind"] == "graded"


@pytest.mark.slow
def test_diff_similarity_runs_nothing_and_scores_resemblance(offering: Task) -> None:
    golden, info = _play(offering, FIXED_SOURCE, reward="diff_similarity")
    assert golden == 1.0 and [c["name"] for c in info["grade"]["components"]] == ["constraints", "diff_similarity"]
    assert info["grade"]["fail_to_pass"] == {}  # no test ran
    assert _play(offering, None, reward="diff_similarity")[0] == 0.0
    partial, info = _play(offering, HALF_P2P, reward="diff_similarity")
    assert 0.0 < partial < 1.0 and info["grade"]["components"][1]["details"]["components"]["file"] == 1.0


@pytest.mark.slow
def test_five_grades_of_one_submission_agree_exactly_for_every_kind(offering: Task) -> None:
    for kind in KINDS:
        rewards = {_play(offering, HALF_P2P, reward=kind)[0] for _ in range(5)}
        assert len(rewards) == 1, (kind, rewards)


@pytest.mark.slow
def test_an_unparseable_report_with_fail_to_pass_declared_is_0_with_its_status(make_task: MakeTask) -> None:
    """The tests exit 0 but write no JUnit report: never "exit code 0 means 1.0"."""
    task = make_task(grading={"rewards": ["graded", "binary"]},
                     tests={"runner": "generic", "command": "python -c 'print(\"all good\")' {junit}",
                            "fail_to_pass": ["tests/test_calc.py::test_add"], "pass_to_pass": []})
    for kind in ("graded", "binary"):
        reward, info = _play(task, FIXED_SOURCE, reward=kind)
        details = info["grade"]["components"][1]["details"]
        assert reward == 0.0 and details["parse_status"].startswith("unparseable: ") and details["resolved"] is False


def test_a_kind_the_task_does_not_offer_is_named(tiny_task: Task, offering: Task) -> None:
    with pytest.raises(ValueError, match=r"reward='graded': task 'tiny-calc' offers \['tests'\]"):
        gym.make("RepoGym/Task-v0", task=str(tiny_task.root), sandbox="local", reward="graded")
    with pytest.raises(ValueError, match=r"reward='exact': task 'tiny-calc' offers"):
        gym.make("RepoGym/Task-v0", task=str(offering.root), sandbox="local", reward="exact")


def test_task_yaml_rewards_are_checked(make_task: MakeTask) -> None:
    with pytest.raises(TaskSpecError, match="rewards"):
        make_task(grading={"rewards": ["graded", "graded"]})
    with pytest.raises(TaskSpecError, match="rewards"):
        make_task(grading={"rewards": []})
    with pytest.raises(TaskSpecError, match="diff_weights"):
        make_task(grading={"rewards": ["diff_similarity"], "diff_weights": {"siz": 1}})


@pytest.mark.slow
def test_validate_proves_each_offered_kind_and_records_the_calibration(offering: Task) -> None:
    report = validate_task(offering, repeats=1)
    assert report.ok, report.failures()
    assert [c.name for c in report.checks if c.name.startswith("reward:")] == [f"reward:{k}" for k in KINDS[1:]]
    assert report.calibration == {kind: {"noop": 0.0, "golden": 1.0} for kind in KINDS}
    assert json.loads(report.model_dump_json())["calibration"]["diff_similarity"] == {"noop": 0.0, "golden": 1.0}


# -- the answer kind: the bundled task of the rewards suite --------------------------------------------------

ANSWER_ID = "RepoGym/error-users-answer-v0"
ANSWER_TASK = REPO_ROOT / "task_suites" / "rewards" / "error-users-answer"


def _answer(content: str | None) -> tuple[float, dict[str, Any]]:
    return _submitted(ANSWER_ID, "answer.txt", content)


def test_an_answer_scores_raw_plus_or_minus_one_rescaled() -> None:
    for content, reward, raw in (("31\n", 1.0, 1), ("30", 0.0, -1), ("thirty-one", 0.0, -1), (None, 0.0, -1)):
        got, info = _answer(content)
        details = info["grade"]["components"][1]["details"]
        assert (got, details["raw"], details["reward_min"], details["reward_max"]) == (reward, raw, -1, 1), content
        assert info["grade"]["reward_kind"] == "answer" and info.get("infra_error") is None
    assert {_answer("30")[0] for _ in range(5)} == {0.0} and {_answer("31")[0] for _ in range(5)} == {1.0}


def test_an_answer_task_has_no_tests_to_run_or_choose() -> None:
    env = gym.make(ANSWER_ID, sandbox="local")
    try:
        env.reset(seed=0)
        _, _, terminated, _, info = env.step({"kind": "test"})
        assert not terminated and "is an answer task: it has no tests to run" in info["parse_error"]
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"reward='tests': task 'error-users-answer' offers \['answer'\]"):
        gym.make(ANSWER_ID, sandbox="local", reward="tests")


def test_task_yaml_answer_sections_are_checked(make_task: MakeTask) -> None:
    with pytest.raises(TaskSpecError, match="an answer task has an 'answer' section .* neither 'tests'"):
        make_task(type="answer", answer={"expected": "1", "contract": "int"})  # tests left in
    with pytest.raises(TaskSpecError, match="an answer task has an 'answer' section"):
        make_task(answer={"expected": "1", "contract": "int"})  # a bugfix task with an answer
    with pytest.raises(TaskSpecError, match=r"grading.rewards \['graded'\]"):
        make_task(type="answer", tests=None, answer={"expected": "1", "contract": "int"}, grading={"rewards": ["graded"]})


@pytest.mark.slow
def test_validate_proves_the_answer_task() -> None:
    report = validate_task(load_task(ANSWER_TASK), repeats=2)
    assert report.ok, report.failures()
    assert report.calibration == {"answer": {"noop": 0.0, "golden": 1.0}}


def test_a_grade_that_fails_early_still_names_its_kind(offering: Task) -> None:
    """A patch that does not apply is graded 0 before any grader runs; its result names the kind all the same."""
    broken = "diff --git a/nowhere.py b/nowhere.py\n--- a/nowhere.py\n+++ b/nowhere.py\n@@ -1 +1 @@\n-x\n+y\n"
    for kind in KINDS:
        result = grade_patch(offering, broken, grader=default_grader(offering, kind))
        assert (result.score, result.reward_kind, result.components[0].name) == (0.0, kind, "patch")
    assert grade_patch(load_task(ANSWER_TASK), broken).reward_kind == "answer"


# -- the optimization kind: the bundled bin-packing task ----------------------------------------------------

BINS_ID = "RepoGym/bin-packing-optimization-v0"
BINS_TASK = REPO_ROOT / "task_suites" / "rewards" / "bin-packing-optimization"
REFERENCE = "".join(line[1:] for line in (BINS_TASK / "solution.patch").read_text().splitlines(True)[6:])
#: the reference's packing on the first run of a case, one item per bin on the second: every case void
FLIPPING = REFERENCE.replace('if __name__ == "__main__":\n    main()', '''if __name__ == "__main__":
    import os
    if os.path.exists(".second-run"):
        os.remove(".second-run")
        capacity, count = map(int, sys.stdin.readline().split())
        print("\\n".join(str(i) for i in range(count)))
    else:
        open(".second-run", "w").close()
        main()''')


@pytest.mark.slow
def test_a_program_scores_its_mean_over_generated_cases() -> None:
    reference, info = _submitted(BINS_ID, "solution.py", REFERENCE)
    details = info["grade"]["components"][1]["details"]
    assert 0.9 < reference < 1.0 and details["cases"] == 6 and {c["status"] for c in details["per_case"]} == {"ok"}
    assert reference == pytest.approx(sum(c["score"] for c in details["per_case"]) / 6)
    assert {_submitted(BINS_ID, "solution.py", REFERENCE)[0] for _ in range(4)} == {reference}  # five grades agree
    assert _submitted(BINS_ID, "solution.py", None)[0] == 0.0  # the noop
    garbage, info = _submitted(BINS_ID, "solution.py", "print('hello')\n")
    assert garbage == 0.0 and all(c["status"].startswith("infeasible") for c in info["grade"]["components"][1]["details"]["per_case"])


@pytest.mark.slow
def test_a_case_scored_differently_twice_is_void() -> None:
    flipping, info = _submitted(BINS_ID, "solution.py", FLIPPING)
    per_case = info["grade"]["components"][1]["details"]["per_case"]
    assert flipping == 0.0 and {c["status"] for c in per_case} == {"void"}
    assert all(c["scores"][0] > c["scores"][1] for c in per_case)
    assert "6 case(s) void" in " ".join(info["grade"]["components"][1]["messages"])


@pytest.mark.slow
def test_validate_proves_the_optimization_task_by_its_baseline() -> None:
    report = validate_task(load_task(BINS_TASK), repeats=2)
    assert report.ok, report.failures()
    calibration = report.calibration["optimization"]
    assert calibration["noop"] == 0.0 and calibration["baseline"] < 0.5 < calibration["golden"] < 1.0


def test_diff_weights_that_zero_every_deterministic_component_are_refused_at_load(make_task: MakeTask) -> None:
    """New-user trial: they loaded, and every diff_similarity grade then crashed as an infrastructure error."""
    zero = dict.fromkeys(("format", "size", "file", "region", "sim"), 0.0)
    with pytest.raises(TaskSpecError, match=r"grading.diff_weights: .*every deterministic component \(format, size, file, region, sim\) weight 0"):
        make_task(grading={"rewards": ["tests", "diff_similarity"], "diff_weights": zero})
    make_task(grading={"rewards": ["tests", "diff_similarity"], "diff_weights": {**zero, "sim": 1.0}})


def test_a_task_without_tests_offers_no_test_action() -> None:
    env = gym.make(ANSWER_ID, sandbox="local", observation_mode="chat")
    try:
        (_, first), info = env.reset(seed=0)
        assert "test (visible tests)" not in first["content"] and "list_files, submit" in first["content"]
        assert "test" not in [tool["function"]["name"] for tool in info["tools"]]
    finally:
        env.close()
