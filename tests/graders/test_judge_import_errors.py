"""A hidden test module that does not import on the baseline is a collection error, not a broken policy.

A history task's new tests import what the commit adds (toolz's ``peekn``): on the parent, and for any
submission that has not written it, that module's import raises. The judge used to watch every grader
module's namespace when the next test module's import returned, so the failed module's names (its
import statements never bound the names after the missing one) read as rebound by the submission, and the whole run was void:
the baseline's pass_to_pass counted as missing and 9 of 27 toolz history tasks failed validation.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from repogym_gym.graders.testrun import run_tests
from repogym_gym.sandbox import LocalSandbox
from repogym_gym.spec import TestSpec

PACKAGE = "def first(items):\n    return items[0]\n"
NEW_TESTS = ("import pytest\n\nfrom minipkg import peek, first\n\n\ndef test_first():\n    assert first([1, 2]) == 1\n\n\n"
             "def test_peek():\n    assert peek([1, 2]) == (1, [1, 2])\n")
OLD_TESTS = ("try:\n    from minipkg import peek\nexcept ImportError:\n    peek = None\n\nfrom minipkg import first\n\n\n"
             "def test_first_again():\n    assert first('ab') == 'a'\n\n\ndef test_no_peek_yet():\n    assert peek is None\n")


def _run(tmp_path: Path, package: str) -> tuple[object, dict[str, str]]:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "minipkg.py").write_text(package)
    (tree / "tests" / "__init__.py").write_text("")
    (tree / "tests" / "test_new.py").write_text(NEW_TESTS)  # sorted before test_old: imported first
    (tree / "tests" / "test_old.py").write_text(OLD_TESTS)
    spec = TestSpec(command="python -m pytest -q --junitxml={junit} tests",
                    fail_to_pass=["tests/test_new.py::test_peek"],
                    pass_to_pass=["tests/test_new.py::test_first", "tests/test_old.py::test_first_again"])
    with tempfile.TemporaryDirectory() as scratch:
        run = run_tests(spec, repo=tree, scratch=Path(scratch), baseline_tree=tree, sandbox=LocalSandbox(), timeout_s=120,
                        output_limit_bytes=100_000)
        assert run.report is not None, run.result.stdout[-2000:]
        return run.invalid, {i: run.report.status_of(i) for i in [*spec.fail_to_pass, *spec.pass_to_pass, "tests/test_old.py::test_no_peek_yet"]}


def test_a_test_module_that_does_not_import_counts_as_not_collected(tmp_path: Path) -> None:
    invalid, statuses = _run(tmp_path, PACKAGE)
    assert invalid is None, invalid
    assert statuses["tests/test_old.py::test_first_again"] == "passed"
    assert statuses["tests/test_old.py::test_no_peek_yet"] == "passed"  # an ImportError caught in the body: it ran on
    assert statuses["tests/test_new.py::test_peek"] not in ("passed", "skipped")
    assert statuses["tests/test_new.py::test_first"] not in ("passed", "skipped")


def test_once_the_module_imports_its_tests_are_judged_as_usual(tmp_path: Path) -> None:
    invalid, statuses = _run(tmp_path, PACKAGE + "\n\ndef peek(items):\n    return items[0], items\n")
    assert invalid is None, invalid
    assert statuses == {"tests/test_new.py::test_peek": "passed", "tests/test_new.py::test_first": "passed",
                        "tests/test_old.py::test_first_again": "passed", "tests/test_old.py::test_no_peek_yet": "failed"}
