"""The statement ledger (judge_statements): a grader module's namespace changes only by its own
statements, from its first line on, and its module-level names keep what they bound afterwards.

Each payload is code of the package under test (``mod.py``) that runs while the test module's body
runs (its ``import mod``) or during a test, and makes an honestly failing test pass by changing
what a name of the test module means: the run must carry a violation naming the change."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.graders.test_judge_policy import judge

IDS = ["tests/test_x.py::test_runs", "tests/test_x.py::test_other"]

ATTACKS = {
    # a module-level value bound before the package is imported, rebound by the package's import
    "a data name rebound during the body": (
        "import sys\nsys.modules['test_x'].WANT = 2\n",
        "WANT = 3\nimport mod\n\n\ndef test_runs():\n    assert mod.run() == 'ok'\n\n\n"
        "def test_other():\n    assert 1 + 1 == WANT\n",
        "WANT was rebound while line 2 ran"),
    # a list the file bound, changed in place by the import
    "a data list changed during the body": (
        "import sys\nsys.modules['test_x'].CASES[0] = 2\n",
        "CASES = [3]\nimport mod\n\n\ndef test_runs():\n    assert mod.run() == 'ok'\n\n\n"
        "def test_other():\n    assert 1 + 1 == CASES[0]\n",
        "the list CASES was changed while line 2 ran"),
    # a test class's attribute, changed by an import after the class statement
    "a class attribute changed during the body": (
        "import sys\nsys.modules['test_x'].Want.value = 2\n",
        "class Want:\n    value = 3\n\n\nimport mod\n\n\ndef test_runs():\n    assert mod.run() == 'ok'\n\n\n"
        "def test_other():\n    assert 1 + 1 == Want.value\n",
        "class Want was changed while line 5 ran"),
    # a builtin replaced by the import and restored by its first call, made by a later line of the body
    "a builtin replaced and restored within the body": (
        "import builtins\n_real = builtins.len\n\ndef _fake(x):\n    builtins.len = _real\n    return 2\n\n"
        "builtins.len = _fake\n",
        "import mod\nN = len([1, 2, 3])\n\n\ndef test_runs():\n    assert mod.run() == 'ok'\n\n\n"
        "def test_other():\n    assert 1 + 1 == N\n",
        "len was replaced"),
    # a name added while a line that does not bind it ran (a global that shadows nothing)
    "a name added during the body": (
        "import sys\nsys.modules['test_x'].planted = 1\n",
        "import mod\n\n\ndef test_runs():\n    assert mod.run() == 'ok'\n\n\ndef test_other():\n    assert 1 + 1 == 2\n",
        "planted was added while line 1 ran"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_change_no_statement_of_the_file_made_is_a_violation(tmp_path: Path, name: str) -> None:
    prelude, test_file, expected = ATTACKS[name]
    record, output = judge(tmp_path, "pass", test_file=test_file, prelude=prelude, ids=IDS)
    assert record is not None, output
    assert any(expected in v for v in record["violations"]), record["violations"]


def test_a_module_level_name_rebound_by_the_package_during_a_test_is_a_violation(tmp_path: Path) -> None:
    """After the body: WANT is bound only by a module-level statement, so the package rebinding it
    from inside test_runs (to make the later test_other pass) changes what the file bound."""
    test_file = ("WANT = 3\nimport mod\n\n\ndef test_runs():\n    assert mod.run() == 'ok'\n\n\n"
                 "def test_other():\n    assert 1 + 1 == WANT\n")
    record, output = judge(tmp_path, "import sys\nsys.modules['test_x'].WANT = 2", test_file=test_file, ids=IDS)
    assert record is not None, output
    assert any("WANT was replaced" in v for v in record["violations"]), record["violations"]


LEGITIMATE = '''"""Module-level code of a test file that changes its own names, as real suites do."""
import unittest
import mod

CASES = []
CASES.append(("a", 1))
COUNT = 0


class TestThing(unittest.TestCase):
    seen = []


TestThing.extra = 1
setup_value = {"k": 1}
setup_value["k"] += 1


def bump():
    global COUNT
    COUNT += 1


bump()
try:
    import nothing_of_that_name
except ImportError as error:
    missing = str(error)
for i in range(2):
    last = i
if __name__ == "__main__":
    unittest.main()


def test_runs():
    bump()
    assert mod.run() == "ok" and COUNT == 2 and CASES == [("a", 1)] and TestThing.extra == 1


def test_other():
    assert setup_value == {"k": 2} and last == 1 and missing
'''


def test_a_file_that_changes_its_own_names_is_judged_clean(tmp_path: Path) -> None:
    record, output = judge(tmp_path, "pass", test_file=LEGITIMATE, ids=IDS)
    assert record is not None, output
    assert record["violations"] == [], record["violations"]
    assert record["record"] == {"tests/test_x.py::test_runs": "passed", "tests/test_x.py::test_other": "passed"}, output
