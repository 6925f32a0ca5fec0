"""validate_task: baseline, noop, golden, repeatable and answer_hidden checks on real tasks."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from repogym_gym.sandbox.bwrap import BubblewrapSandbox
from repogym_gym.task import Task
from repogym_gym.validate import TaskValidation, validate_task
from tests.helpers import CALC_SOURCE, FIXED_SOURCE, MakeTask, make_patch, tiny_spec
from tests.sandbox.helpers import require_bwrap

# validation walks the system directories, where a red-team test plants golden look-alikes
pytestmark = pytest.mark.usefixtures("system_dirs")

CHECKS = ["baseline", "noop", "golden", "repeatable", "own_sandbox", "answer_hidden"]


def check(report: TaskValidation, name: str):  # noqa: ANN201
    return next(c for c in report.checks if c.name == name)


def test_the_tiny_task_is_sound(tiny_task: Task) -> None:
    labels: list[str] = []
    report = validate_task(tiny_task, repeats=2, progress=labels.append)
    assert report.ok, report.failures()
    assert [c.name for c in report.checks] == CHECKS
    assert all(c.ok for c in report.checks)
    assert report.noop_score == 0.0
    assert report.golden_scores == [1.0, 1.0]
    assert report.failures() == []
    assert check(report, "baseline").message == "2 fail_to_pass fail, 2 pass_to_pass pass"
    answer = check(report, "answer_hidden").message
    if BubblewrapSandbox().available():
        assert labels == ["noop", "golden 1/2", "golden 2/2", "golden in bwrap", "answer scan"]
        assert check(report, "own_sandbox").message.startswith("golden PASS 1.000 ")
        assert check(report, "own_sandbox").message.endswith("in the bwrap sandbox under the sandbox's default limits")
        assert answer.startswith("no copy of 1 golden file(s) or of their 1 hunk(s) among ") and "visible in the bwrap sandbox" in answer
    else:  # nothing confines an agent here: nothing to scan
        assert labels == ["noop", "golden 1/2", "golden 2/2"]
        assert answer.startswith("not checked: no confining sandbox runs here")


def test_a_copy_of_a_golden_file_in_the_baseline_fails_the_answer_check(make_task: MakeTask) -> None:
    """The workspace is visible to the agent: a vendored copy of the fixed source is the answer."""
    report = validate_task(make_task(files={"vendor/calc_release/__init__.py": FIXED_SOURCE}), repeats=1)
    answer = check(report, "answer_hidden")
    assert report.ok is False and answer.ok is False
    assert check(report, "golden").ok and check(report, "noop").ok
    assert "calc/__init__.py at /" in answer.message and answer.message.split(" at ")[1].startswith("/")
    assert "/vendor/calc_release/__init__.py" in answer.message


def test_a_copy_of_a_golden_file_the_sandbox_shows_fails_the_answer_check(make_task: MakeTask) -> None:
    """A host directory the sandbox shows (here, revealed on purpose) holding another release."""
    bwrap = require_bwrap()
    release = Path(tempfile.mkdtemp(prefix="repogym-validate-release-", dir="/var/cache"))
    try:
        (release / "calc").mkdir()
        (release / "calc" / "__init__.py").write_text(FIXED_SOURCE)
        release.chmod(0o755)
        report = validate_task(make_task(), repeats=1, sandbox=bwrap.scoped(reveal=[release]))
    finally:
        shutil.rmtree(release)
    answer = check(report, "answer_hidden")
    assert answer.ok is False and f"calc/__init__.py at {release}/calc/__init__.py" in answer.message
    hidden = [c for c in report.checks if c.name != "answer_hidden"]
    assert all(c.ok for c in hidden), report.failures()


def test_a_near_copy_holding_a_golden_hunk_fails_the_answer_check(make_task: MakeTask) -> None:
    """Another release whose bytes differ from the golden file (a header, another function,
    other indentation) but whose changed lines read as the golden version's: diff shows the fix."""
    bwrap = require_bwrap()
    release = Path(tempfile.mkdtemp(prefix="repogym-validate-near-", dir="/var/cache"))
    try:
        (release / "calc").mkdir()
        near = '"""calc 0.9"""\n\n' + FIXED_SOURCE.replace("    ", "  ") + "\n\ndef mul(a, b):\n  return a * b\n"
        (release / "calc" / "__init__.py").write_text(near)
        release.chmod(0o755)
        report = validate_task(make_task(), repeats=1, sandbox=bwrap.scoped(reveal=[release]))
    finally:
        shutil.rmtree(release)
    answer = check(report, "answer_hidden")
    assert answer.ok is False and f"calc/__init__.py at {release}/calc/__init__.py (hunk at line 1)" in answer.message
    assert all(c.ok for c in report.checks if c.name != "answer_hidden"), report.failures()


def test_limits_too_small_for_the_task_s_own_sandbox_fail_validation(make_task: MakeTask) -> None:
    """Issue 13: limits that zero every reward under bubblewrap passed `validate`, which grades in LocalSandbox
    (it applies no limits): 16 MiB of address space starts no Python at all."""
    require_bwrap()
    report = validate_task(make_task(limits={"memory_mb": 16}), repeats=1)
    own = check(report, "own_sandbox")
    assert report.ok is False and own.ok is False
    assert check(report, "golden").ok and check(report, "noop").ok  # locally nothing looks wrong
    assert "in the bwrap sandbox under the task's limits {'memory_mb': 16}" in own.message
    assert "must leave room for the test run" in own.message


def test_a_named_pipe_in_the_repository_is_named_and_not_blamed_on_the_limits(make_task: MakeTask) -> None:
    """Issue 13: a repository file no copy can take (a named pipe) failed every check with shutil's raw
    error list, and the own-sandbox check told the author to raise ``limits:``. The file is named
    relative to the repository with what a repository may hold, and no check mentions the limits."""
    require_bwrap()
    task = make_task()
    os.mkfifo(task.root / "repo" / "calc" / "pipe")
    report = validate_task(task, repeats=1)
    assert report.ok is False
    own = check(report, "own_sandbox")
    assert "calc/pipe is a named pipe; a task's repository holds regular files, directories and symlinks only" \
        in own.message, own.message
    assert all("limits:" not in c.message for c in report.checks), report.checks


def test_validating_in_a_confining_sandbox_grades_the_golden_patch_there_once(make_task: MakeTask) -> None:
    bwrap = require_bwrap()
    labels: list[str] = []
    report = validate_task(make_task(), repeats=1, sandbox=bwrap, progress=labels.append)
    assert report.ok, report.failures()
    assert labels == ["noop", "golden 1/1", "answer scan"]
    assert check(report, "own_sandbox").message == "the golden grades above ran in the bwrap sandbox"


def test_a_golden_patch_that_does_not_fix_fails_the_golden_check(make_task: MakeTask) -> None:
    half = make_patch("calc/__init__.py", CALC_SOURCE, CALC_SOURCE.replace("return a - b", "return a + b if a > 0 else a - b", 1))
    report = validate_task(make_task(patch=half), repeats=1)
    assert report.ok is False
    assert check(report, "golden").ok is False
    assert check(report, "baseline").ok and check(report, "noop").ok and check(report, "repeatable").ok
    assert report.golden_scores == [0.5]
    assert "golden FAIL 0.500" in check(report, "golden").message
    assert any(f.startswith("golden: ") for f in report.failures())


def test_a_crlf_golden_patch_is_validated_as_grading_reads_it(make_task: MakeTask) -> None:
    """Issue 13: validate read solution.patch with newline translation and called a CRLF patch sound,
    while grade_patch on the file's own bytes (and git) rejects it."""
    task = make_task()
    task.solution_path.write_bytes(task.solution_path.read_bytes().replace(b"\n", b"\r\n"))
    report = validate_task(task, repeats=1)
    golden = check(report, "golden")
    assert golden.ok is False and "patch does not apply" in golden.message
    if "own_sandbox" in [c.name for c in report.checks]:  # issue 13's audit: not blamed on the limits either
        assert "limits: section" not in check(report, "own_sandbox").message


def test_a_utf16_golden_patch_fails_the_golden_check_as_a_patch_that_does_not_apply(make_task: MakeTask) -> None:
    """Issue 13's audit: a UTF-16 solution.patch is bytes git does not read as a patch; validate says so
    (not sound, not an internal error)."""
    task = make_task()
    task.solution_path.write_bytes(task.solution_path.read_text(encoding="utf-8").encode("utf-16"))
    report = validate_task(task, repeats=1)
    golden = check(report, "golden")
    assert report.ok is False and golden.ok is False and "patch does not apply" in golden.message


def test_a_task_without_a_golden_patch_fails_the_golden_check(make_task: MakeTask) -> None:
    report = validate_task(make_task(patch=None), repeats=1)
    assert report.ok is False
    assert check(report, "golden").ok is False
    assert "no golden patch" in check(report, "golden").message


def test_a_fail_to_pass_that_already_passes_on_the_baseline_fails_the_baseline_check(make_task: MakeTask) -> None:
    spec = tiny_spec()
    tests = {**spec["tests"], "fail_to_pass": ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"],
             "pass_to_pass": ["tests/test_calc.py::test_sub_zero"]}
    report = validate_task(make_task(tests=tests), repeats=1)
    baseline = check(report, "baseline")
    assert report.ok is False and baseline.ok is False
    assert "fail_to_pass tests already pass on the baseline" in baseline.message
    assert "tests/test_calc.py::test_sub" in baseline.message
    assert "tests/test_calc.py::test_add'" not in baseline.message


def test_a_pass_to_pass_that_fails_on_the_baseline_fails_the_baseline_check(make_task: MakeTask) -> None:
    spec = tiny_spec()
    tests = {**spec["tests"], "fail_to_pass": ["tests/test_calc_hidden.py::test_add_negative"],
             "pass_to_pass": ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"]}
    report = validate_task(make_task(tests=tests), repeats=1)
    baseline = check(report, "baseline")
    assert baseline.ok is False
    assert "tests/test_calc.py::test_add (failed)" in baseline.message


def test_a_flaky_pass_to_pass_fails_the_repeatable_check(make_task: MakeTask, tmp_path: Path) -> None:
    counter = tmp_path / "outside-the-repo" / "counter"
    counter.parent.mkdir()
    flaky = (
        "from pathlib import Path\n\n\n"
        "def test_alternates():\n"
        f"    path = Path({str(counter)!r})\n"
        "    n = int(path.read_text()) + 1 if path.exists() else 1\n"
        "    path.write_text(str(n))\n"
        "    assert n % 2 == 1\n"
    )
    spec = tiny_spec()
    flaky_id = "tests/test_flaky.py::test_alternates"
    tests = {**spec["tests"], "pass_to_pass": [*spec["tests"]["pass_to_pass"], flaky_id]}
    report = validate_task(make_task(files={"tests/test_flaky.py": flaky}, tests=tests), repeats=3)
    assert counter.read_text() == "4"  # noop + 3 golden grades, each ran the test once
    assert check(report, "baseline").ok is True  # run 1 passed
    repeatable = check(report, "repeatable")
    assert repeatable.ok is False
    assert "2 different outcomes in 3 golden grades" in repeatable.message
    assert report.golden_scores == [0.0, 1.0, 0.0]
    assert report.ok is False


@pytest.mark.parametrize("repeats", [0, -1])
def test_repeats_below_one_is_a_value_error(tiny_task: Task, repeats: int) -> None:
    with pytest.raises(ValueError, match=f"repeats must be at least 1, got {repeats}"):
        validate_task(tiny_task, repeats=repeats)


def test_a_task_whose_setup_fails_is_not_sound(make_task: MakeTask) -> None:
    report = validate_task(make_task(repo={"setup": ["exit 7"]}), repeats=1)
    assert report.ok is False
    assert check(report, "baseline").ok is False
    assert "infrastructure error" in check(report, "baseline").message
    assert check(report, "noop").ok is False


@pytest.mark.slow
def test_the_starter_suite_is_sound(starter_tasks: list[Task]) -> None:
    assert len(starter_tasks) >= 4
    reports = [validate_task(task, repeats=2) for task in starter_tasks]
    failures = {r.task_id: r.failures() for r in reports if not r.ok}
    assert failures == {}
    assert all(r.noop_score == 0.0 and r.golden_scores == [1.0, 1.0] for r in reports)
