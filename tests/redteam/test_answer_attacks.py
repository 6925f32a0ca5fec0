"""Issue 15's red-team cases for the ``answer`` reward kind: each scores the minimum (raw -1, score 0), never an
infrastructure error, in every sandbox."""

from __future__ import annotations

import pytest

from repogym_gym.task import Task
from tests.helpers import MakeTask
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, run, submit, write

G = "answer tasks"
ANSWER_PATCH = ("diff --git a/answer.txt b/answer.txt\nnew file mode 100644\n--- /dev/null\n+++ b/answer.txt\n"
                "@@ -0,0 +1 @@\n+2*x + 2\n")


@pytest.fixture
def expression_task(make_task: MakeTask) -> Task:
    """An answer task whose reference is the expression ``2*(x+1)`` (symbolic check within 10 s: SymPy's import
    alone took 2 s in the child on the loaded 2-core machine, and 3 s failed the right answer there)."""
    return make_task(type="answer", tests=None, patch=ANSWER_PATCH, problem_statement="Expand 2*(x+1).",
                     answer={"path": "answer.txt", "expected": "2*(x+1)", "contract": "expression", "variables": ["x"],
                             "timeout_s": 10})


def _minimum(result: object, *reasons: str) -> None:
    assert_unearned_zero(result)  # type: ignore[arg-type]
    answer = component(result, "answer")  # type: ignore[arg-type]
    assert answer["details"]["raw"] == -1 and any(r in answer["details"]["reason"] for r in reasons), answer


def test_the_right_answer_scores_1_as_a_control(start: Start, expression_task: Task) -> None:
    env = start(expression_task)
    write(env, "answer.txt", "2*x + 2\n")
    result = submit(env)
    assert result.reward == 1.0 and component(result, "answer")["details"]["raw"] == 1


@attack(G, "the answer file as a symlink to a file holding the right answer", local="score 0 (raw -1) with the reason",
        confining="score 0 (raw -1) with the reason")
def test_an_answer_written_as_a_symlink_is_no_answer(start: Start, expression_task: Task) -> None:
    env = start(expression_task)
    write(env, "notes.txt", "2*x + 2\n")
    linked = run(env, "ln -s notes.txt answer.txt").observation
    assert linked.exit_code == 0, linked.text
    _minimum(submit(env), "no answer: answer.txt")


@attack(G, "a huge answer (the right one padded past 64 KiB)", local="score 0 (raw -1) with the reason",
        confining="score 0 (raw -1) with the reason")
def test_a_huge_answer_is_no_answer(start: Start, expression_task: Task) -> None:
    env = start(expression_task)
    write(env, "answer.txt", "2*x + 2" + " " * (64 * 1024))
    _minimum(submit(env), "larger than 65536 bytes")


@attack(G, "an answer that is right but takes forever to simplify (2*x + 2 + ((x+1)**5000 - (x**2+2*x+1)**2500))",
        local="score 0 (raw -1): the time or memory limit", confining="score 0 (raw -1): the time or memory limit")
def test_an_expression_that_takes_forever_is_cut_at_the_time_limit(start: Start, expression_task: Task) -> None:
    """Right, but proving it expands a polynomial of degree 5000: 7.7-9.5 s to the child's 1 GiB limit here."""
    env = start(expression_task)
    write(env, "answer.txt", "2*x + 2 + ((x+1)**5000 - (x**2+2*x+1)**2500)")
    _minimum(submit(env), "took longer than 10 s", "ran out of memory (1 GiB)")


@attack(G, "an answer that is code ('__import__(\"os\").system(...)') instead of an expression",
        local="score 0 (raw -1): refused by the allowlist, never run", confining="score 0 (raw -1): refused by the allowlist, never run")
def test_an_answer_that_is_code_is_never_run(start: Start, expression_task: Task) -> None:
    env = start(expression_task)
    write(env, "answer.txt", "__import__('os').system('touch /tmp/repogym-answer-ran')")
    _minimum(submit(env), "unparseable expression")
