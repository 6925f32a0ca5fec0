"""Whether a test run counts: the sentinel, timeouts, exit codes vs reports, grader-owned settings."""

from __future__ import annotations

import textwrap
from pathlib import Path

from repogym_gym.graders.testrun import hide_planted, run_tests, write_ini
from repogym_gym.grading import grade_patch
from repogym_gym.results import GradeResult
from repogym_gym.sandbox import LocalSandbox
from repogym_gym.spec import TestSpec
from tests.helpers import CALC_SOURCE, GOLDEN_PATCH, VISIBLE_TESTS, MakeTask, make_patch, tiny_spec

ADD = "tests/test_calc.py::test_add"
SUB = "tests/test_calc.py::test_sub"


def invalid_message(result: GradeResult) -> str:
    tests = result.component("tests")
    assert tests.score == 0.0 and tests.passed is False
    assert result.score == 0.0 and result.passed is False
    assert tests.details["invalid"], tests.details
    return tests.details["invalid"]


# -- the sentinel ----------------------------------------------------------------------------------


def _calc_repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "calc").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "calc" / "__init__.py").write_text(CALC_SOURCE)
    (repo / "tests" / "test_calc.py").write_text(VISIBLE_TESTS)
    return repo


def _files(repo: Path) -> set[str]:
    return {p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_the_sentinel_is_planted_as_a_failing_test_and_removed_afterwards(tmp_path: Path) -> None:
    repo = _calc_repo(tmp_path)
    before = _files(repo)
    spec = TestSpec(command="python -m pytest -q --junitxml={junit} tests")
    run = run_tests(spec, repo=repo, scratch=tmp_path / "scratch", baseline_tree=repo, sandbox=LocalSandbox(),
                    timeout_s=60, output_limit_bytes=64_000)
    assert run.invalid is None
    assert run.sentinel is not None
    sentinel_file = run.sentinel.split("::")[0]
    assert sentinel_file.startswith("test_") and "/" not in sentinel_file
    assert run.result.argv[-1] == sentinel_file
    assert run.report is not None and run.report.status_of(run.sentinel) == "failed"
    assert run.result.exit_code == 1
    assert _files(repo) == before
    assert not (repo / sentinel_file).exists()
    assert not any((tmp_path / "scratch").glob("test_*.py"))


def test_the_sentinel_has_a_fresh_random_name_on_every_run(tmp_path: Path) -> None:
    repo = _calc_repo(tmp_path)
    spec = TestSpec(command="python -m pytest -q --junitxml={junit} tests")
    kwargs = dict(repo=repo, scratch=tmp_path / "scratch", baseline_tree=repo, sandbox=LocalSandbox(), timeout_s=60, output_limit_bytes=64_000)
    first, second = run_tests(spec, **kwargs), run_tests(spec, **kwargs)  # type: ignore[arg-type]
    assert first.sentinel and second.sentinel and first.sentinel != second.sentinel


def test_a_run_where_the_sentinel_passes_is_invalid(make_task: MakeTask) -> None:
    forge = textwrap.dedent(
        """\
        import pytest


        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = "passed"
        """
    )
    task = make_task(files={"conftest.py": forge})
    message = invalid_message(grade_patch(task, GOLDEN_PATCH))
    # the judge sees each forced call raise; the host would also see the sentinel and the canaries pass
    assert "reported passed, but its call raised" in message, message


# -- timeouts and exit codes ----------------------------------------------------------------------------


def test_a_test_command_that_times_out_is_an_invalid_run(make_task: MakeTask) -> None:
    slow = "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"
    spec = tiny_spec()
    tests = {**spec["tests"], "pass_to_pass": [*spec["tests"]["pass_to_pass"], "tests/test_slow.py::test_slow"]}
    task = make_task(files={"tests/test_slow.py": slow}, tests=tests, limits={"max_steps": 10, "test_timeout_s": 1})
    result = grade_patch(task, GOLDEN_PATCH)
    message = invalid_message(result)
    assert "timed out after 1 s" in message
    assert result.component("tests").messages == [f"invalid test run: {message}"]
    assert result.infra_error is None
    assert result.duration_s < 20


def test_pytest_exiting_with_a_code_other_than_one_is_an_invalid_run(make_task: MakeTask) -> None:
    # A (baseline) conftest changes pytest's exit status after the JUnit report is complete.
    exit3 = "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 3\n"
    task = make_task(files={"conftest.py": exit3})
    result = grade_patch(task, GOLDEN_PATCH)
    message = invalid_message(result)
    assert "exited 3" in message
    assert result.component("tests").details["exit_code"] == 3


# -- the generic runner --------------------------------------------------------------------------------

GEN_TESTS = {
    "command": "bash report.sh {junit}",
    "runner": "generic",
    "fail_to_pass": ["gen::test_a", "gen::test_b"],
    "pass_to_pass": ["gen::test_c"],
}


def _report_script(outcomes: dict[str, str] | None, exit_code: int) -> str:
    """A bash script writing a JUnit report with ``outcomes`` (name -> passed/failed) to $1."""
    if outcomes is None:
        return f"exit {exit_code}\n"
    cases = "".join(
        f'<testcase classname="gen" name="{name}">' + ('<failure message="no"/>' if status == "failed" else "") + "</testcase>"
        for name, status in outcomes.items()
    )
    xml = f'<?xml version="1.0"?><testsuite name="gen" tests="{len(outcomes)}">{cases}</testsuite>'
    return f"cat > \"$1\" <<'XML'\n{xml}\nXML\nexit {exit_code}\n"


def _grade_generic(make_task: MakeTask, outcomes: dict[str, str] | None, exit_code: int) -> GradeResult:
    task = make_task(files={"report.sh": _report_script(outcomes, exit_code)}, tests=GEN_TESTS, patch=None)
    return grade_patch(task, "")


def test_generic_runner_consistent_report_with_a_failure_is_valid_and_scored(make_task: MakeTask) -> None:
    result = _grade_generic(make_task, {"test_a": "passed", "test_b": "failed", "test_c": "passed"}, 1)
    tests = result.component("tests")
    assert "invalid" not in tests.details
    assert result.fail_to_pass == {"gen::test_a": "passed", "gen::test_b": "failed"}
    assert result.pass_to_pass == {"gen::test_c": "passed"}
    assert result.score == 0.5


def test_generic_runner_consistent_report_all_passing_scores_one(make_task: MakeTask) -> None:
    result = _grade_generic(make_task, {"test_a": "passed", "test_b": "passed", "test_c": "passed"}, 0)
    assert (result.score, result.passed) == (1.0, True)


def test_generic_runner_exit_zero_with_failures_in_the_report_is_invalid(make_task: MakeTask) -> None:
    result = _grade_generic(make_task, {"test_a": "passed", "test_b": "failed", "test_c": "passed"}, 0)
    message = invalid_message(result)
    assert "exited 0" in message and "1 failing" in message


def test_generic_runner_nonzero_exit_without_failures_is_invalid(make_task: MakeTask) -> None:
    result = _grade_generic(make_task, {"test_a": "passed", "test_b": "passed", "test_c": "passed"}, 1)
    message = invalid_message(result)
    assert "exited 1" in message and "0 failing" in message


def test_generic_runner_without_a_report_is_invalid(make_task: MakeTask) -> None:
    result = _grade_generic(make_task, None, 0)
    assert "no usable test report" in invalid_message(result)
    assert result.fail_to_pass == {"gen::test_a": "missing", "gen::test_b": "missing"}


# -- grader-owned settings ------------------------------------------------------------------------------

BASELINE_INI = textwrap.dedent(
    """\
    [pytest]
    addopts = -k sub
    python_files = test_*.py check_*.py
    markers =
        smoke: quick checks
    """
)
CHECK_TESTS = "import pytest\n\nfrom calc import sub\n\n\n@pytest.mark.smoke\ndef test_check_sub():\n    assert sub(3, 3) == 0\n"
CHECK_ID = "tests/check_extra.py::test_check_sub"


def _ini_task(make_task: MakeTask):  # noqa: ANN202
    spec = tiny_spec()
    tests = {**spec["tests"], "command": "python -m pytest -q --strict-markers --junitxml={junit} tests",
             "pass_to_pass": [*spec["tests"]["pass_to_pass"], CHECK_ID]}
    return make_task(files={"pytest.ini": BASELINE_INI, "tests/check_extra.py": CHECK_TESTS}, tests=tests)


def test_baseline_python_files_is_honoured(make_task: MakeTask) -> None:
    result = grade_patch(_ini_task(make_task), GOLDEN_PATCH)
    assert result.pass_to_pass[CHECK_ID] == "passed"


def test_baseline_markers_are_honoured_under_strict_markers(make_task: MakeTask) -> None:
    result = grade_patch(_ini_task(make_task), GOLDEN_PATCH)
    assert result.component("tests").details.get("invalid") is None
    assert result.pass_to_pass[CHECK_ID] == "passed"
    assert (result.score, result.passed) == (1.0, True)


def test_baseline_addopts_are_not_applied(make_task: MakeTask) -> None:
    result = grade_patch(_ini_task(make_task), GOLDEN_PATCH)
    assert result.fail_to_pass[ADD] == "passed"  # "-k sub" would have deselected it
    assert result.fail_to_pass["tests/test_calc_hidden.py::test_add_negative"] == "passed"


def test_the_grader_ini_drops_addopts_and_writes_absolute_pythonpath(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    (baseline / "pytest.ini").write_text(BASELINE_INI + "pythonpath = lib\nrequired_plugins = pytest-xdist\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    ini = tmp_path / "scratch.ini"
    write_ini(ini, repo, baseline, TestSpec(command="pytest --junitxml={junit}", pythonpath=["src"]))
    text = ini.read_text()
    assert "-k sub" not in text and "required_plugins" not in text
    assert "check_*.py" in text and "smoke: quick checks" in text
    assert f"\n    {(repo / 'src').resolve()}\n" in text
    assert f"\n    {(repo / 'lib').resolve()}\n" in text


MATHLIB = "def add(a, b):\n    return a - b\n"
MATHLIB_TESTS = "from mathlib import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n"


def _src_layout_task(make_task: MakeTask, *, pythonpath: list[str] | None, files: dict[str, str] | None = None):  # noqa: ANN202
    tests = {
        "command": "python -m pytest -q --junitxml={junit} tests/test_mathlib.py",
        "fail_to_pass": ["tests/test_mathlib.py::test_add"],
        "pass_to_pass": ["tests/test_mathlib.py::test_add_zero"],
        "hidden": None,
    }
    if pythonpath is not None:
        tests["pythonpath"] = pythonpath
    patch = make_patch("src/mathlib/__init__.py", MATHLIB, MATHLIB.replace("a - b", "a + b"))
    return make_task(
        files={"src/mathlib/__init__.py": MATHLIB, "tests/test_mathlib.py": MATHLIB_TESTS, **(files or {})},
        patch=patch, tests=tests,
    )


def test_a_src_layout_on_the_task_pythonpath_is_importable(make_task: MakeTask) -> None:
    task = _src_layout_task(make_task, pythonpath=["src"])
    result = grade_patch(task, task.golden_patch())
    assert result.component("tests").details.get("invalid") is None
    assert (result.score, result.passed) == (1.0, True)


def test_a_pythonpath_from_the_baseline_ini_is_made_absolute(make_task: MakeTask) -> None:
    task = _src_layout_task(make_task, pythonpath=None, files={"pytest.ini": "[pytest]\npythonpath = src\n"})
    result = grade_patch(task, task.golden_patch())
    assert result.fail_to_pass == {"tests/test_mathlib.py::test_add": "passed"}
    assert (result.score, result.passed) == (1.0, True)


def test_plugin_autoload_is_disabled_for_the_test_run(make_task: MakeTask) -> None:
    probe = "import os\n\n\ndef test_autoload_disabled():\n    assert os.environ.get('PYTEST_DISABLE_PLUGIN_AUTOLOAD') == '1'\n"
    spec = tiny_spec()
    probe_id = "tests/test_env.py::test_autoload_disabled"
    task = make_task(files={"tests/test_env.py": probe},
                     tests={**spec["tests"], "pass_to_pass": [*spec["tests"]["pass_to_pass"], probe_id]})
    result = grade_patch(task, GOLDEN_PATCH)
    assert result.pass_to_pass[probe_id] == "passed"
    assert result.score == 1.0


SET_PARAMETRISED = textwrap.dedent("""\
    import pytest

    PAIRS = {("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5), ("f", 6), ("g", 7), ("h", 8)}


    @pytest.mark.parametrize("pair", list(PAIRS))
    def test_pair(pair):
        assert pair[0] != "e"
""")


def test_ids_parametrised_from_a_set_mean_the_same_test_in_every_run(make_task: MakeTask) -> None:
    """Tuples get positional ids (``pair0``...), and a set's order follows str hashes: with a random
    hash seed per run, ``pair3`` was a different case in every grading (isodate lost 148 of 378
    tests as flaky to this). Every judged run has PYTHONHASHSEED=0, so the failing case keeps its id."""
    ids = [f"tests/test_set.py::test_pair[pair{i}]" for i in range(8)]
    task = make_task(files={"tests/test_set.py": SET_PARAMETRISED},
                     tests={**tiny_spec()["tests"], "pass_to_pass": ids})
    outcomes = [grade_patch(task, GOLDEN_PATCH).pass_to_pass for _ in range(4)]
    assert sorted(outcomes[0].values()) == ["failed"] + ["passed"] * 7
    assert all(o == outcomes[0] for o in outcomes[1:]), outcomes


def test_grading_leaves_the_task_source_directory_untouched(tiny_task) -> None:  # noqa: ANN001
    before = {p: p.read_bytes() for p in tiny_task.source_dir.rglob("*") if p.is_file()}
    assert grade_patch(tiny_task, GOLDEN_PATCH).score == 1.0
    after = {p: p.read_bytes() for p in tiny_task.source_dir.rglob("*") if p.is_file()}
    assert after == before
    assert not (tiny_task.source_dir / "tests" / "test_calc_hidden.py").exists()
    assert (tiny_task.source_dir / "calc" / "__init__.py").read_text() == CALC_SOURCE


def test_the_visible_output_shows_no_progress_marks_of_planted_tests() -> None:
    """``.F.F..F`` counted 3 failures among 7 tests where the agent's 5 visible tests had 1 (stop 39's finding)."""
    output = ("tests/test_paginator.py .F.F..F                                     [100%]\n.F.F..F    [ 50%]\n"
              "=================================== FAILURES ===================================\n"
              "____ test_num_pages_exact_multiple ____\n\nE   assert False\n"
              "____ test_first_page_exact ____\n\nE   assert 1 == 2\n"
              "=========================== short test summary info ============================\n"
              "FAILED tests/test_paginator.py::test_num_pages_exact_multiple - assert False\n"
              "FAILED tests/test_paginator.py::test_first_page_exact - assert 1 == 2\n"
              "========================= 3 failed, 4 passed in 0.10s ==========================\n"
              "a line of the task's own output: 3.F\n")
    shown = hide_planted(output, {"tests/test_paginator.py::test_first_page_exact"})
    assert ".F.F" not in shown and "test_first_page_exact" not in shown and "3 failed" not in shown
    assert "test_num_pages_exact_multiple" in shown and "a line of the task's own output: 3.F" in shown
