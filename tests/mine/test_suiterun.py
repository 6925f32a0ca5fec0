"""The miners' whole-suite runs see the test files as grading does: the grader's (issue 12, five packages).

Before, a run with no ids had no grader files: every test file was judged as the package's code, so
toolz's doctest test (a ``pdb.Pdb`` made under a test) voided the run, comparisons in the tests were
not the judge's, and the miner read the outcomes of a voided run anyway.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from repogym_gym.graders.grader_files import grader_files, suite_test_files
from repogym_gym.mine.suiterun import run_suite
from repogym_gym.spec import TestSpec

COMMAND = "python -m pytest -q --junitxml={junit} tests"


def _tree(tmp_path: Path, package: str, test: str) -> Path:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "minipkg.py").write_text(textwrap.dedent(package))
    (tree / "tests" / "test_mini.py").write_text(textwrap.dedent(test))
    return tree


def test_the_suite_s_test_files_are_found_as_pytest_collects_them(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for rel in ("tests/test_a.py", "tests/sub/b_test.py", "tests/helpers.py", "tests/check_c.py", "pkg/test_inside.py",
                "tests/.venv/test_env.py", "other/test_elsewhere.py"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("")
    os.symlink(tree / "other", tree / "tests" / "linked")
    spec = TestSpec(command=COMMAND)
    assert suite_test_files(tree, spec) == {"tests/test_a.py", "tests/sub/b_test.py"}
    assert suite_test_files(tree, spec, "check_*.py") == {"tests/check_c.py"}
    # no path named: the whole tree; a path outside the tree or absolute is not followed
    assert suite_test_files(tree, TestSpec(command="pytest --junitxml={junit}")) == {
        "tests/test_a.py", "tests/sub/b_test.py", "pkg/test_inside.py", "other/test_elsewhere.py"}
    assert suite_test_files(tree, TestSpec(command=f"pytest --junitxml={{junit}} ../ {tree}/other")) == {
        "tests/test_a.py", "tests/sub/b_test.py", "pkg/test_inside.py", "other/test_elsewhere.py"}
    # the support modules beside them are the grader's too; scored ids keep naming their own files
    assert grader_files(tree, spec, None) == ["tests/check_c.py", "tests/helpers.py", "tests/sub/b_test.py", "tests/test_a.py"]
    scored = TestSpec(command=COMMAND, fail_to_pass=["tests/test_a.py::test_x"])
    assert grader_files(tree, scored, None) == ["tests/check_c.py", "tests/helpers.py", "tests/test_a.py"]


def test_a_test_file_may_do_what_the_package_may_not_in_a_whole_suite_run(tmp_path: Path) -> None:
    """toolz's ``test_curried_doctests.py`` runs ``doctest.testmod``, whose runner makes a ``pdb.Pdb``:
    allowed under a test file's frame, refused under the package's."""
    test = """\
        import doctest

        import minipkg


        def test_doctests():
            assert doctest.testmod(minipkg).failed == 0


        def test_double():
            assert minipkg.double(2) == 4
        """
    package = '''\
        def double(x):
            """
            >>> double(3)
            6
            """
            return 2 * x
        '''
    run = run_suite(_tree(tmp_path, package, test), TestSpec(command=COMMAND), env_dir=None)
    assert run.invalid is None, run.invalid
    assert run.statuses == {"tests/test_mini.py::test_doctests": "passed", "tests/test_mini.py::test_double": "passed"}, run.messages


def test_a_whole_suite_run_the_judge_voids_is_not_used(tmp_path: Path) -> None:
    package = """\
        import pdb


        def double(x):
            pdb.Pdb()
            return 2 * x
        """
    test = """\
        import minipkg


        def test_double():
            assert minipkg.double(2) == 4
        """
    run = run_suite(_tree(tmp_path, package, test), TestSpec(command=COMMAND), env_dir=None)
    assert run.invalid is not None and "pdb.Pdb is not allowed" in run.invalid, run.invalid
    assert run.statuses == {}


def test_a_parametrised_test_with_one_moving_id_is_flaky_as_a_whole() -> None:
    """isodate on Python 3.11: ids numbered over a set whose order follows addresses name another case in
    the next process; the cases that happened to agree in the miner's runs are not trusted either."""
    from repogym_gym.mine.suiterun import SuiteRun, stable_outcomes

    first = SuiteRun({"t.py::test_p[a0]": "passed", "t.py::test_p[a1]": "failed", "t.py::test_p[a2]": "passed",
                      "t.py::test_q[a0]": "passed", "t.py::test_r": "passed", "t.py::test_s": "failed"})
    second = SuiteRun({"t.py::test_p[a0]": "failed", "t.py::test_p[a1]": "passed", "t.py::test_p[a2]": "passed",
                       "t.py::test_q[a0]": "passed", "t.py::test_r": "passed", "t.py::test_s": "passed"})
    stable, flaky = stable_outcomes([first, second])
    assert stable == {"t.py::test_q[a0]": "passed", "t.py::test_r": "passed"}
    assert flaky == {"t.py::test_p[a0]", "t.py::test_p[a1]", "t.py::test_p[a2]", "t.py::test_s"}


def test_the_files_the_judge_accepts_are_found_one_by_one(tmp_path: Path) -> None:
    """boltons: ``typeutils`` reads its caller's frame at import (``sys._getframe``), so the judge voids any run
    that imports it, the whole suite's included; the other test files still make sound tasks, run without it."""
    from repogym_gym.mine.suiterun import judged_files, narrowed

    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "good.py").write_text("def double(x):\n    return 2 * x\n")
    (tree / "framey.py").write_text("import sys\n\nNAME = sys._getframe(0).f_globals['__name__']\n")
    (tree / "tests" / "test_good.py").write_text("import good\n\n\ndef test_double():\n    assert good.double(2) == 4\n")
    (tree / "tests" / "test_framey.py").write_text("import framey\n\n\ndef test_name():\n    assert framey.NAME == 'framey'\n")
    spec = TestSpec(command="python -m pytest -q -p no:warnings --junitxml={junit} tests")
    assert run_suite(tree, spec, env_dir=None).invalid is not None
    kept, refused = judged_files(tree, spec, env_dir=None)
    assert kept == ["tests/test_good.py"]
    assert list(refused) == ["tests/test_framey.py"] and "_getframe" in refused["tests/test_framey.py"]
    only = narrowed(spec, kept, tree)
    assert only.command == "python -m pytest -q -p no:warnings '--junitxml={junit}' tests/test_good.py"
    run = run_suite(tree, only, env_dir=None)
    assert run.invalid is None and run.statuses == {"tests/test_good.py::test_double": "passed"}


def test_the_accepted_files_are_found_in_halves_not_one_run_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite of many files with one the judge refuses costs a few runs, not a pytest start per file: eight
    files, one importing a module that reads its caller's frame, take 6 runs (4 + 4, 2 + 2, 1 + 1)."""
    from repogym_gym.mine import suiterun

    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "good.py").write_text("def double(x):\n    return 2 * x\n")
    (tree / "framey.py").write_text("import sys\n\nNAME = sys._getframe(0).f_globals['__name__']\n")
    names = [f"test_{i}.py" for i in range(8)]
    for name in names:
        imported = "framey" if name == "test_3.py" else "good"
        (tree / "tests" / name).write_text(f"import {imported}\n\n\ndef test_it():\n    assert {imported}\n")
    runs: list[str] = []
    real = suiterun.run_suite

    def counted(tree_: Path, tests: TestSpec, **kwargs: object) -> suiterun.SuiteRun:
        runs.append(tests.command)
        return real(tree_, tests, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(suiterun, "run_suite", counted)
    kept, refused = suiterun.judged_files(tree, TestSpec(command="python -m pytest -q --junitxml={junit} tests"),
                                          env_dir=None)
    assert kept == [f"tests/{n}" for n in names if n != "test_3.py"]
    assert list(refused) == ["tests/test_3.py"] and "_getframe" in refused["tests/test_3.py"]
    assert len(runs) == 6, runs
