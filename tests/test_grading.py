"""grade_patch / grade_workspace: reward = f(task, patch), failures typed, the result's fields."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from repogym_gym.baseline import BaselineStore
from repogym_gym.errors import SandboxConfigError
from repogym_gym.grading import default_grader, grade_patch, grade_workspace
from repogym_gym.task import Task
from repogym_gym.workspace import Workspace
from tests.helpers import FIXED_SOURCE, GOLDEN_PATCH, MakeTask

ADD = "tests/test_calc.py::test_add"
ADD_NEG = "tests/test_calc_hidden.py::test_add_negative"
SUB = "tests/test_calc.py::test_sub"
SUB_ZERO = "tests/test_calc.py::test_sub_zero"


# -- patches that do not apply ------------------------------------------------------------------------------------


def test_a_garbage_patch_scores_zero_with_git_s_reason(tiny_task: Task) -> None:
    result = grade_patch(tiny_task, "this is not a patch\n")
    assert (result.score, result.passed) == (0.0, False)
    assert result.infra_error is None
    assert [c.name for c in result.components] == ["patch"]
    message = result.component("patch").messages[0]
    assert message.startswith("patch does not apply: ")
    assert "error:" in message  # git's own words
    assert result.patch == "" and result.files_changed == [] and result.lines_changed == 0


def test_a_patch_with_the_wrong_context_scores_zero_with_git_s_reason(tiny_task: Task) -> None:
    stale = GOLDEN_PATCH.replace("-    return a - b", "-    return a * b")
    result = grade_patch(tiny_task, stale)
    assert (result.score, result.infra_error) == (0.0, None)
    message = result.component("patch").messages[0]
    assert "calc/__init__.py" in message and "patch does not apply" in message


def test_an_empty_patch_grades_the_baseline(tiny_task: Task) -> None:
    result = grade_patch(tiny_task, "")
    assert (result.score, result.passed, result.infra_error) == (0.0, False, None)
    assert result.fail_to_pass == {ADD: "failed", ADD_NEG: "failed"}
    assert result.pass_to_pass == {SUB: "passed", SUB_ZERO: "passed"}
    assert (result.patch, result.files_changed, result.lines_changed) == ("", [], 0)


# -- infrastructure failures -------------------------------------------------------------------------------------


def test_a_task_whose_setup_fails_is_an_infrastructure_error(make_task: MakeTask, tmp_path: Path) -> None:
    task = make_task(repo={"setup": ["echo setup went wrong >&2; exit 3"]})
    result = grade_patch(task, GOLDEN_PATCH, store=BaselineStore(tmp_path / "cache"))
    assert (result.score, result.passed) == (0.0, False)
    assert result.infra_error is not None
    assert "exit 3" in result.infra_error and "setup went wrong" in result.infra_error
    assert [c.name for c in result.components] == ["setup"]


def test_setup_output_becomes_part_of_the_baseline(make_task: MakeTask, tmp_path: Path) -> None:
    task = make_task(repo={"setup": ["printf 'BUILT = 1\\n' > calc/built.py"]})
    result = grade_patch(task, GOLDEN_PATCH, store=BaselineStore(tmp_path / "cache"))
    assert (result.score, result.infra_error) == (1.0, None)
    assert result.files_changed == ["calc/__init__.py"]  # the build artefact is baseline, not a change


# -- the result's fields -----------------------------------------------------------------------------------------


def test_the_golden_grade_result_fields(tiny_task: Task) -> None:
    result = grade_patch(tiny_task, GOLDEN_PATCH)
    assert result.task_id == "tiny-calc"
    assert (result.score, result.passed, result.infra_error) == (1.0, True, None)
    assert [(c.name, c.role) for c in result.components] == [("constraints", "gate"), ("tests", "objective")]
    assert result.patch.startswith("diff --git a/calc/__init__.py b/calc/__init__.py\n")
    assert "\n-    return a - b\n+    return a + b\n" in result.patch
    assert result.files_changed == ["calc/__init__.py"]
    assert result.lines_changed == 2
    assert result.fail_to_pass == {ADD: "passed", ADD_NEG: "passed"}
    assert result.pass_to_pass == {SUB: "passed", SUB_ZERO: "passed"}
    assert result.fail_to_pass == result.component("tests").details["fail_to_pass"]
    assert result.duration_s > 0


def test_grade_patch_takes_a_sandbox_by_name_and_refuses_an_unknown_one(tiny_task: Task) -> None:
    """A name, as ``gym.make(sandbox=...)`` takes one (it raised AttributeError on a str)."""
    assert grade_patch(tiny_task, tiny_task.golden_patch(), sandbox="local").score == 1.0
    assert grade_patch(tiny_task, tiny_task.golden_patch(), sandbox={"type": "local"}).score == 1.0
    with pytest.raises(SandboxConfigError, match="'nowhere'"):
        grade_patch(tiny_task, tiny_task.golden_patch(), sandbox="nowhere")


def test_the_graded_patch_reapplies_to_the_same_result(tiny_task: Task) -> None:
    first = grade_patch(tiny_task, GOLDEN_PATCH)
    again = grade_patch(tiny_task, first.patch)
    assert again.patch == first.patch
    assert (again.score, again.fail_to_pass, again.pass_to_pass) == (first.score, first.fail_to_pass, first.pass_to_pass)


def test_grade_workspace_equals_grade_patch_for_the_same_change(tiny_task: Task) -> None:
    with Workspace.create(tiny_task) as ws:
        ws.write("calc/__init__.py", FIXED_SOURCE)
        result = grade_workspace(ws)
        assert ws.read("calc/__init__.py") == FIXED_SOURCE  # grading never touches the workspace
        assert not (ws.path / "tests" / "test_calc_hidden.py").exists()
    assert result.patch == grade_patch(tiny_task, GOLDEN_PATCH).patch
    assert (result.score, result.passed) == (1.0, True)


def test_a_new_and_a_deleted_file_are_listed_and_counted(make_task: MakeTask) -> None:
    task = make_task(files={"calc/old.py": "A = 1\nB = 2\n"})
    with Workspace.create(task) as ws:
        ws.write("calc/__init__.py", FIXED_SOURCE)
        ws.write("calc/new.py", "C = 3\n")
        (ws.path / "calc" / "old.py").unlink()
        result = grade_workspace(ws)
    assert result.files_changed == ["calc/__init__.py", "calc/new.py", "calc/old.py"]
    assert result.lines_changed == 2 + 1 + 2
    assert "deleted file mode" in result.patch and "new file mode" in result.patch
    assert result.score == 1.0


def test_grading_after_the_git_store_is_destroyed_fails_closed(tiny_task: Task) -> None:
    with Workspace.create(tiny_task) as ws:
        ws.write("calc/__init__.py", FIXED_SOURCE)
        shutil.rmtree(ws.root / "git")
        result = grade_workspace(ws)
    assert (result.score, result.passed) == (0.0, False)
    assert result.infra_error is None
    assert [c.name for c in result.components] == ["snapshot"]


def test_the_baseline_s_git_store_deleted_under_a_live_workspace_is_an_infrastructure_error(
    tiny_task: Task, tmp_path: Path
) -> None:
    """Issue 13: deleting the cached git store under a live process made its open workspace score 0, counted as the
    submission's fault (the workspace reads the baseline's objects through git alternates)."""
    store = BaselineStore(tmp_path / "cache")
    with Workspace.create(tiny_task, store=store) as ws:
        ws.write("calc/__init__.py", FIXED_SOURCE)
        shutil.rmtree(ws.baseline.store.git_dir)  # another process clearing the cache
        result = grade_workspace(ws)
    assert (result.score, result.passed) == (0.0, False)
    assert result.infra_error is not None
    assert str(store.get(tiny_task).store.git_dir) in result.infra_error and "rerun" in result.infra_error
    assert grade_patch(tiny_task, GOLDEN_PATCH, store=store).score == 1.0  # the next episode rebuilds it


def test_the_baseline_s_git_objects_emptied_under_a_live_workspace_is_an_infrastructure_error(
    tiny_task: Task, tmp_path: Path
) -> None:
    store = BaselineStore(tmp_path / "cache")
    with Workspace.create(tiny_task, store=store) as ws:
        ws.write("calc/__init__.py", FIXED_SOURCE)
        objects = ws.baseline.store.git_dir / "objects"
        shutil.rmtree(objects)
        objects.mkdir()
        result = grade_workspace(ws)
    assert result.infra_error is not None and "no longer holds commit" in result.infra_error


def test_a_full_disk_while_freezing_the_submission_is_an_infrastructure_error(tiny_task: Task, small_tmpfs) -> None:  # noqa: ANN001
    """Issue 13: git could not write the submission's objects for want of space, and the grade was the submission's 0."""
    mount = small_tmpfs("1m")
    with Workspace.create(tiny_task, parent_dir=mount) as ws:
        ws.write("calc/__init__.py", FIXED_SOURCE + "# " + "x" * 4000 + "\n")
        with open(mount / "filler", "wb") as fh:  # noqa: PTH123 - fill the rest of the filesystem
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError:
                pass
        result = grade_workspace(ws)
        (mount / "filler").unlink()
    assert (result.score, result.passed) == (0.0, False), result.components[0].messages
    assert result.infra_error is not None and "the disk is full" in result.infra_error, result.components[0].messages


def test_a_patch_that_fills_the_disk_is_an_infra_error_of_grade_patch(
    tiny_task: Task, small_tmpfs, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
) -> None:
    """Issue 13: "patch does not apply: No space left on device" was graded as the submission's 0."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(small_tmpfs("512k")))  # workspaces are made here
    big = "".join(f"+line {i:06d} {'x' * 60}\n" for i in range(12000))  # ~800 KB
    patch = f"diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,12000 @@\n{big}"
    result = grade_patch(tiny_task, patch)
    assert (result.score, result.passed) == (0.0, False)
    assert result.infra_error is not None and "no space left to apply a patch" in result.infra_error


def test_a_workspace_s_own_git_store_destroyed_stays_the_submission_s_zero(tiny_task: Task, tmp_path: Path) -> None:
    """The check that names the cache never excuses what the agent reaches: its workspace's own store."""
    store = BaselineStore(tmp_path / "cache")
    with Workspace.create(tiny_task, store=store) as ws:
        ws.write("calc/__init__.py", FIXED_SOURCE)
        shutil.rmtree(ws.root / "git" / "objects")
        assert ws.baseline_fault() is None
        result = grade_workspace(ws)
    assert (result.score, result.infra_error) == (0.0, None)


def test_default_grader_follows_the_task_type(tiny_task: Task, starter_tasks: list[Task]) -> None:
    assert [(g.name, g.role) for g in default_grader(tiny_task).graders] == [("constraints", "gate"), ("tests", "objective")]
    perf = next(t for t in starter_tasks if t.spec.type == "perf")
    assert [(g.name, g.role) for g in default_grader(perf).graders][-1] == ("perf", "objective")
    assert ("tests", "gate") in [(g.name, g.role) for g in default_grader(perf).graders]


# -- a corrupted cached baseline -----------------------------------------------------------------------------------


def _corrupt(store: BaselineStore, task: Task) -> None:
    """Plant the fix in the cached baseline tree, after the store has loaded it."""
    (store.get(task).tree / "calc" / "__init__.py").write_text(FIXED_SOURCE)


def test_a_baseline_corrupted_during_the_episode_is_an_infrastructure_error(tiny_task: Task, tmp_path: Path) -> None:
    store = BaselineStore(tmp_path / "cache")
    with Workspace.create(tiny_task, store=store) as ws:
        _corrupt(store, tiny_task)  # e.g. a process of the episode wrote into the cache
        result = grade_workspace(ws)
    assert (result.score, result.passed) == (0.0, False)
    assert result.infra_error is not None and "was modified" in result.infra_error


def test_a_corrupted_cached_baseline_is_rebuilt_before_the_next_workspace(tiny_task: Task, tmp_path: Path) -> None:
    store = BaselineStore(tmp_path / "cache")
    _corrupt(store, tiny_task)
    noop = grade_patch(tiny_task, "", store=store)
    assert (noop.score, noop.passed, noop.infra_error) == (0.0, False, None)
    assert noop.fail_to_pass == {ADD: "failed", ADD_NEG: "failed"}
    assert (store.get(tiny_task).tree / "calc" / "__init__.py").read_text() != FIXED_SOURCE


def test_a_corrupted_cached_baseline_never_blames_the_golden_patch(tiny_task: Task, tmp_path: Path) -> None:
    store = BaselineStore(tmp_path / "cache")
    _corrupt(store, tiny_task)
    result = grade_patch(tiny_task, GOLDEN_PATCH, store=store)
    assert result.infra_error is not None or (result.score, result.passed) == (1.0, True)


def test_a_corrupted_cached_baseline_is_rebuilt_by_a_fresh_store(tiny_task: Task, tmp_path: Path) -> None:
    _corrupt(BaselineStore(tmp_path / "cache"), tiny_task)
    fresh = BaselineStore(tmp_path / "cache")
    noop = grade_patch(tiny_task, "", store=fresh)
    assert (noop.score, noop.infra_error) == (0.0, None)
    assert noop.fail_to_pass == {ADD: "failed", ADD_NEG: "failed"}
    assert (fresh.get(tiny_task).tree / "calc" / "__init__.py").read_text() != FIXED_SOURCE
    assert grade_patch(tiny_task, GOLDEN_PATCH, store=fresh).score == 1.0


def test_a_symlink_whose_target_is_not_utf8_is_graded_not_raised(tiny_task: Task) -> None:
    """Red-team find: ``os.symlink(b"\\xff", b"badlink")`` crashed Submit and Test with UnicodeEncodeError."""
    import os

    with Workspace.create(tiny_task) as ws:
        (ws.path / "calc" / "__init__.py").write_text(FIXED_SOURCE)
        os.symlink(b"\xff", os.fsencode(ws.path / "badlink"))
        grade = grade_workspace(ws)
    assert grade.score == 0.0 and not grade.passed and grade.infra_error is None
    constraints = next(c for c in grade.components if c.name == "constraints")
    assert not constraints.passed and any("badlink" in m for m in constraints.messages)


# -- the visible test run (the Test action) ------------------------------------------------------------------------


def test_the_visible_run_names_only_the_task_s_visible_tests(tiny_task: Task) -> None:
    from repogym_gym.graders.testrun import SENTINEL_MESSAGE
    from repogym_gym.grading import run_visible_tests
    from repogym_gym.sandbox import LocalSandbox

    with Workspace.create(tiny_task) as ws:
        broken = run_visible_tests(ws, sandbox=LocalSandbox())
        ws.write("calc/__init__.py", FIXED_SOURCE)
        fixed = run_visible_tests(ws, sandbox=LocalSandbox())
    assert list(broken.statuses) == [ADD, SUB, SUB_ZERO]  # no sentinel, no canary, no hidden test
    assert broken.statuses[ADD] == "failed" and broken.failing and broken.valid
    assert (fixed.statuses, fixed.failing, fixed.invalid) == ({ADD: "passed", SUB: "passed", SUB_ZERO: "passed"}, False, None)
    for run in (broken, fixed):
        assert SENTINEL_MESSAGE not in run.output and "test_add_negative" not in run.output
        assert " passed" not in run.output.splitlines()[-1]  # pytest's totals count the planted tests: dropped
    assert "test_add" in broken.output and "/repo/" not in broken.output  # the failure is shown, paths relative
    assert broken.status_of(ADD) == "failed" and broken.status_of("tests/test_calc.py::nope") == "missing"


def test_a_visible_run_grading_would_not_trust_is_invalid_and_failing(tiny_task: Task) -> None:
    from repogym_gym.grading import run_visible_tests
    from repogym_gym.sandbox import LocalSandbox

    forcing = ("import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
               "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")
    with Workspace.create(tiny_task) as ws:
        ws.write("conftest.py", forcing)
        run = run_visible_tests(ws, sandbox=LocalSandbox())
    assert run.failing and not run.valid
    assert run.rejected == ("conftest.py is protected (added); the change is not carried",)


def test_grading_directories_of_a_killed_process_are_swept_and_a_live_one_s_kept(tmp_path: Path) -> None:
    """Issue 13: a grading killed with SIGKILL left its directory (hidden tests inside) in $TMPDIR for
    good. Each directory is named by its owner process; the sweep removes those whose owner is dead."""
    import subprocess
    import sys

    from repogym_gym.owners import owned_tempdir, process_owner, sweep_tempdirs

    child = subprocess.Popen([sys.executable, "-c", (
        "import sys, tempfile, time; tempfile.tempdir = sys.argv[1]\n"
        "from repogym_gym.owners import owned_tempdir\n"
        "d = owned_tempdir('repogym-grade-', 'tiny'); (d / 'hidden.py').write_text('secret'); print(d, flush=True)\n"
        "time.sleep(300)\n"), str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    orphan = Path(child.stdout.readline().strip())
    assert (orphan / "hidden.py").is_file() and oct(orphan.stat().st_mode & 0o777) == "0o700"
    child.kill()
    child.communicate()
    import tempfile

    old = tempfile.tempdir
    tempfile.tempdir = str(tmp_path)
    try:
        live = owned_tempdir("repogym-grade-", "tiny")  # this process's: kept
    finally:
        tempfile.tempdir = old
    other = tmp_path / "repogym-grade-not-ours"
    other.mkdir()
    assert sweep_tempdirs(("repogym-grade-",), tmp_path) == [orphan]
    assert not orphan.exists() and live.is_dir() and other.is_dir()
    assert sweep_tempdirs(("repogym-grade-",), tmp_path) == []  # once per process and directory
    assert process_owner(child.pid) is None


def test_workspaces_and_episode_folders_of_a_killed_process_are_swept_by_the_next_one(tmp_path: Path, make_task: MakeTask) -> None:
    """Issue 13: a killed run left its workspaces (``repogym-<task>-*``) and episode folders in $TMPDIR
    with nothing to tell whose they were. Both are owner-named now, and the next process that makes a
    workspace removes those of dead owners (and none of a live one)."""
    import subprocess
    import sys

    task = make_task()
    prelude = f"import sys, tempfile, time; tempfile.tempdir = {str(tmp_path)!r}\nimport repogym_gym as rg\n"
    child = subprocess.Popen([sys.executable, "-c", prelude + (
        "from repogym_gym.owners import owned_temporary\nfrom repogym_gym.workspace import Workspace\n"
        f"ws = Workspace.create(rg.load_task({str(task.root)!r}))\n"
        "with owned_temporary('repogym-episode-', 'tiny') as episode:\n"
        "    print(ws.root, episode, flush=True)\n"
        "    time.sleep(300)\n")], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    left = [Path(p) for p in child.stdout.readline().split()]
    assert len(left) == 2 and all(p.is_dir() for p in left), left
    assert left[0].name.startswith(f"repogym-workspace-{child.pid}.")
    child.kill()
    child.communicate()
    survivor = subprocess.run([sys.executable, "-c", prelude + (
        "from repogym_gym.workspace import Workspace\n"
        f"print(Workspace.create(rg.load_task({str(task.root)!r})).root)\n")], capture_output=True, text=True, check=True)
    kept = Path(survivor.stdout.strip())
    assert not any(p.exists() for p in left)
    assert kept.is_dir()  # made after that process's own sweep (left unclosed: the next sweep takes it)
