"""The judge, fourth round: pytest's own flow rerouted, a test id running another test's body, a
race with the record, a sound run voided by a thread, and the hidden tests carried out in the grade.

A red-team round with the third policy's source in hand (at 7571c4c), through the env's actions
only, on the pagination starter task with its bug unfixed, under local, bwrap and docker:

- ``session.gethookproxy`` (an instance attribute), ``item.session`` (a slot of pytest's Node) or a
  hook caller's ``_hookexec`` (a slot of pluggy's HookCaller) rerouted ``pytest_pyfunc_call``
  through code of the submission, which ran the test and swallowed its failure: 1.0 everywhere;
- a module ``__getattr__`` planted in each test module while it ran rebound every failing test's
  name to a passing test of the same file before collection: 1.0 everywhere (the item was bound to
  *a* verified function of its file, not the one its name says);
- a config cleanup of the submission raced the policy's ``finish`` (every event was waved through
  once it had begun): 1.0 in 1 run out of 4 to 10;
- the golden patch plus a thread that compiles now and then scored 0 in every run (the policy's
  announcement of its own ``sys._getframe`` was one slot for all threads);
- a child process read the hidden test file and the judged process spelled it out in the names of
  functions making denied calls: it came back in the grade's text (1,500 characters a run).

The properties now: callable instance attributes and slots of pytest's session, config, plugin
manager, relay and hook callers are compared before every call and pass; an item is bound to the
function its id names; the record is built before anything is waved through, and then only the
judged thread's events; announcements are per thread; the grade quotes at most three violations of
160 printable characters.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from repogym_gym.task import Task, load_task
from tests.helpers import STARTER
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

G = "the judge"
INIT = "pagekit/__init__.py"
PAYLOADS = Path(__file__).with_name("round4")  # each attack's code as the red team wrote it (comment first)


def play(env, task: Task, name: str) -> None:
    """Write the payload: appended to the package's ``__init__.py``, or a ``#FILES`` literal of files."""
    text = (PAYLOADS / name).read_text()
    if not text.startswith("#FILES"):
        write(env, INIT, (task.root / "repo" / INIT).read_text() + "\n\n" + text)
        return
    for path, content in ast.literal_eval(text.split("\n", 1)[1]).items():
        write(env, path, content)


ATTACKS = {
    "pytest_pyfunc_call through a relay from session.gethookproxy": ("pyfunc_relay.py", ("were rewired",)),
    "pytest_pyfunc_call through a hook caller's _hookexec": ("hookexec.py", ("were rewired",)),
    "item.session (a slot) swapped for a proxy with the relay": ("item_session.py", ("session or config is not pytest's",)),
    # (since round 14 the statement ledger names the rebinding itself, while the module's body ran)
    "failing tests rebound to passing ones before collection": ("rebind_tests.py", ("another test of its file",
                                                                                    "was rebound after its body ran",
                                                                                    "was added while line")),
    "a race with the policy's finish": ("finish_race.py", ()),
    # fifth round: a trusted callable in _hookexec that runs submission code
    "_hookexec made a unittest.mock.Mock calling the submission": ("hookexec_mock.py", ("were rewired",)),
    "_hookexec made a functools.singledispatch of the submission": ("hookexec_singledispatch.py", ("were rewired",)),
    # sixth round: the config's hook relay replaced by an object of the submission
    "config.hook made a relay of the submission": ("config_hook_relay.py", ("were rewired",)),
}


@pytest.fixture(scope="module")
def pagination() -> Task:
    return load_task(STARTER / "pagination-off-by-one")


@pytest.mark.parametrize("case", list(ATTACKS))
@attack(G, "pytest's flow rerouted (session.gethookproxy, item.session, _hookexec), tests rebound by name "
           "before collection, a race with the record", local="score 0", confining="score 0")
def test_the_fourth_rounds_attacks_score_zero(start: Start, pagination: Task, case: str) -> None:
    name, reasons = ATTACKS[case]
    env = start(pagination)
    play(env, pagination, name)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = str(component(result, "tests")["details"].get("invalid") or "")
    assert not reasons or any(r in invalid for r in reasons), invalid


@attack(G, "the golden patch with a harmless thread of its own", local="score 1", confining="score 1")
def test_a_correct_patch_with_a_thread_still_earns_its_reward(start: Start, pagination: Task) -> None:
    env = start(pagination)
    play(env, pagination, "golden_with_thread.py")
    result = submit(env)
    assert result.reward == 1.0, component(result, "tests")["details"].get("invalid")


@attack(G, "the hidden tests spelled out in violation messages", local="score 0", confining="score 0")
def test_the_grade_cannot_carry_the_hidden_tests_out(start: Start, pagination: Task) -> None:
    env = start(pagination)
    play(env, pagination, "leak_via_violation.py")
    result = submit(env)
    assert_unearned_zero(result)
    hidden = (pagination.root / "hidden" / "tests" / "test_paginator_hidden.py").read_text()
    text = str(result.info["grade"]) + result.observation.text
    lines = [line.strip() for line in hidden.splitlines() if len(line.strip()) > 24]
    leaked = [line for line in lines if line in text]
    assert len(str(component(result, "tests")["details"].get("invalid") or "")) < 700
    assert len(leaked) <= 2, leaked


HELPER = "def check(got, want):\n    assert type(got) is type(want) and got == want, (got, want)\n"
HELPED_TESTS = ("from calc import add, sub\n\nfrom tests.helpers import check\n\n\n"
                "def test_add():\n    check(add(2, 3), 5)\n\n\ndef test_sub():\n    check(sub(5, 3), 2)\n\n\n"
                "def test_sub_zero():\n    check(sub(1, 0), 1)\n")


@attack(G, "a test support module beside the tests (tabulate's test/common.py) rewritten to assert nothing",
        local="score 0", confining="score 0")
def test_a_test_support_module_is_the_graders(start: Start, make_task) -> None:
    """The fourth round rewrote tabulate's ``test/common.py`` (its ``assert_equal``, which every test
    uses) to check nothing, with ``tabulate()`` swallowing the bug's own errors: 1.0 on
    tabulate-mut-8bc163b7. Every ``.py`` file in a scored test file's directory (but the root) is now
    the grader's: protected, so the baseline's is graded, and verified by the judge like a test file."""
    task = make_task(files={"tests/__init__.py": "", "tests/helpers.py": HELPER, "tests/test_calc.py": HELPED_TESTS})
    env = start(task)
    write(env, "tests/helpers.py", "def check(got, want):\n    return None\n")
    write(env, "tests/extra_helpers.py", "def check(got, want):\n    return None\n")
    result = submit(env)
    assert_unearned_zero(result)
    assert result.info["grade"]["fail_to_pass"]["tests/test_calc.py::test_add"] == "failed"
    rejected = " ".join(component(result, "constraints")["details"]["checks"]["protected_files"])
    assert "tests/helpers.py" in rejected and "tests/extra_helpers.py" in rejected, rejected
