"""Tests for repogym_gym.workspace: a real copy of the tiny task, changed on disk and diffed with git."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repogym_gym.baseline import BaselineStore, copy_tree
from repogym_gym.errors import GitMetadataError, PatchError, PathEscapeError
from repogym_gym.gitstore import BASELINE_REF
from repogym_gym.grading_copy import inject_hidden
from repogym_gym.task import Task
from repogym_gym.workspace import Workspace, default_baseline_store
from tests.helpers import CALC_SOURCE, FIXED_SOURCE, GOLDEN_PATCH, HIDDEN_TESTS, VISIBLE_TESTS, MakeTask

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def ws(tiny_task: Task):
    workspace = Workspace.create(tiny_task)
    yield workspace
    workspace.close()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    o = tmp_path / "outside"
    o.mkdir()
    (o / "secret.txt").write_text("secret\n")
    return o


def baseline_copy(ws: Workspace, dest: Path) -> Path:
    copy_tree(ws.baseline.tree, dest)
    return dest


# --- layout --------------------------------------------------------------------------------------


def test_work_tree_has_no_git_and_the_git_store_sits_beside_it(ws: Workspace) -> None:
    assert ws.path == ws.root / "repo"
    assert not (ws.path / ".git").exists()
    assert ws.git.git_dir == ws.root / "git"
    assert (ws.root / "git" / "HEAD").is_file()
    assert ws.git.git("rev-parse", BASELINE_REF).decode().strip() == ws.baseline.commit
    assert sorted(p.name for p in ws.root.iterdir()) == ["git", "repo"]


def test_workspace_git_history_holds_only_the_baseline_commit(ws: Workspace) -> None:
    assert ws.git.git("rev-list", "--all").decode().split() == [ws.baseline.commit]


def test_work_tree_holds_the_source_but_not_the_hidden_tests(ws: Workspace) -> None:
    assert ws.list_files() == ["calc/__init__.py", "tests/test_calc.py"]


def test_workspace_is_made_under_parent_dir(tiny_task: Task, tmp_path: Path) -> None:
    with Workspace.create(tiny_task, parent_dir=tmp_path) as ws:
        assert ws.root.parent == tmp_path
        assert ws.root.name.startswith(f"repogym-workspace-{os.getpid()}.") and "-tiny-calc-" in ws.root.name


# --- files ---------------------------------------------------------------------------------------


def test_read_returns_the_baseline_text(ws: Workspace) -> None:
    assert ws.read("calc/__init__.py") == CALC_SOURCE
    assert ws.read("./tests/test_calc.py") == VISIBLE_TESTS


def test_read_of_a_missing_file_raises_file_not_found(ws: Workspace) -> None:
    with pytest.raises(FileNotFoundError, match="no file 'calc/nope.py' in the repository"):
        ws.read("calc/nope.py")
    with pytest.raises(FileNotFoundError):
        ws.read("calc")


def test_read_replaces_undecodable_bytes(ws: Workspace) -> None:
    ws.write("blob.bin", b"ok\xff\xfe")
    assert ws.read("blob.bin") == "ok\ufffd\ufffd"


def test_read_with_max_bytes_keeps_the_head_and_tail_of_a_larger_file(ws: Workspace) -> None:
    ws.write("big.txt", "a" * 1000 + "b" * 1000)
    assert ws.read("big.txt", max_bytes=2000) == "a" * 1000 + "b" * 1000
    assert ws.read("big.txt", max_bytes=10) == "aaaaa\n[... 1990 bytes of big.txt not shown ...]\nbbbbb"
    assert ws.size("big.txt") == 2000
    with pytest.raises(FileNotFoundError):
        ws.size("calc")


def test_write_creates_parents_and_list_files_sees_it(ws: Workspace) -> None:
    ws.write("calc/deep/er/mod.py", "x = 1\n")
    assert ws.read("calc/deep/er/mod.py") == "x = 1\n"
    assert "calc/deep/er/mod.py" in ws.list_files()


def test_list_files_excludes_caches_and_includes_symlinks(ws: Workspace) -> None:
    ws.write("calc/__pycache__/__init__.cpython-311.pyc", b"\0")
    ws.write(".pytest_cache/v/cache/lastfailed", "{}")
    os.symlink("calc/__init__.py", ws.path / "alias.py")
    assert ws.list_files() == ["alias.py", "calc/__init__.py", "tests/test_calc.py"]


@pytest.mark.parametrize("rel", ["../x", "calc/../../x", "../repo/../../x"])
def test_resolve_refuses_dotdot_escapes(ws: Workspace, rel: str) -> None:
    with pytest.raises(PathEscapeError) as info:
        ws.resolve(rel)
    assert str(info.value) == f"path {rel!r} resolves outside the repository"


def test_resolve_refuses_absolute_paths(ws: Workspace) -> None:
    with pytest.raises(PathEscapeError) as info:
        ws.resolve(str(ws.path / "calc" / "__init__.py"))
    assert "is absolute; give a path relative to the repository" in str(info.value)


@pytest.mark.parametrize("rel", ["", "calc/\0x"])
def test_resolve_refuses_empty_and_nul_paths(ws: Workspace, rel: str) -> None:
    with pytest.raises(PathEscapeError, match="is empty or contains a NUL byte"):
        ws.resolve(rel)


def test_resolve_accepts_the_root_and_dotdot_that_stays_inside(ws: Workspace) -> None:
    assert ws.resolve(".") == ws.path / "."
    assert ws.resolve("calc/../tests/test_calc.py").resolve() == (ws.path / "tests" / "test_calc.py").resolve()


def test_read_through_a_symlink_pointing_outside_is_refused(ws: Workspace, outside: Path) -> None:
    os.symlink(outside, ws.path / "out_dir")
    os.symlink(outside / "secret.txt", ws.path / "out_file")
    for rel in ("out_dir/secret.txt", "out_file"):
        with pytest.raises(PathEscapeError, match=f"path '{rel}' resolves outside the repository"):
            ws.read(rel)


def test_a_path_of_too_many_parts_is_refused_not_a_recursion_error(ws: Workspace) -> None:
    """Issue 13's audit: a Write of 2,000 one-letter directories crashed ``Path.mkdir(parents=True)``
    with a RecursionError out of ``step()``; the path is refused by its part count, nothing is created."""
    with pytest.raises(PathEscapeError, match=r"has 2,001 parts, over the 256 a path in the repository may have"):
        ws.write("a/" * 2000 + "x.py", "x = 1\n")
    assert not (ws.path / "a").exists()
    ws.write("a/" * 200 + "x.py", "x = 1\n")  # deep, and within the limit
    assert (ws.path / ("a/" * 200 + "x.py")).read_text() == "x = 1\n"


def test_write_through_a_symlink_pointing_outside_is_refused(ws: Workspace, outside: Path) -> None:
    os.symlink(outside, ws.path / "out_dir")
    os.symlink(outside / "secret.txt", ws.path / "out_file")
    with pytest.raises(PathEscapeError):
        ws.write("out_dir/planted.txt", "x")
    with pytest.raises(PathEscapeError):
        ws.write("out_file", "overwritten")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_write_replaces_a_symlink_pointing_inside_instead_of_writing_through(ws: Workspace) -> None:
    os.symlink("calc/__init__.py", ws.path / "alias.py")
    ws.write("alias.py", "mine\n")
    assert not (ws.path / "alias.py").is_symlink()
    assert ws.read("calc/__init__.py") == CALC_SOURCE


def test_a_symlink_loop_is_refused_with_path_escape_error(ws: Workspace) -> None:
    os.symlink("loop", ws.path / "loop")
    with pytest.raises(PathEscapeError):
        ws.read("loop")


# --- snapshot and diff ---------------------------------------------------------------------------


def test_snapshot_of_an_untouched_workspace_is_empty(ws: Workspace) -> None:
    snap = ws.snapshot()
    assert snap.changes.empty
    assert (snap.patch, snap.numstat, snap.lines_changed) == ("", (), 0)
    assert ws.diff() == "" and ws.changed_paths() == []


def test_importing_the_code_changes_nothing_that_counts(ws: Workspace) -> None:
    subprocess.run([sys.executable, "-c", "import calc"], cwd=ws.path, check=True, env={"PATH": os.environ["PATH"]})
    snap = ws.snapshot()
    assert snap.changes.empty and snap.patch == ""
    assert snap.changes.ignored and all("__pycache__" in p for p in snap.changes.ignored)
    assert ws.changed_paths() == list(snap.changes.ignored)


def test_diff_after_a_write_is_a_git_patch_that_git_apply_accepts(ws: Workspace, tmp_path: Path) -> None:
    ws.write("calc/__init__.py", FIXED_SOURCE)
    ws.write("calc/extra.py", "EXTRA = 1\n")
    patch = ws.diff()
    assert patch.startswith("diff --git a/calc/__init__.py b/calc/__init__.py\n")
    assert "-    return a - b\n+    return a + b\n" in patch
    assert "new file mode 100644" in patch

    fresh = baseline_copy(ws, tmp_path / "fresh")
    git = ["git", "-c", "core.hooksPath=/dev/null", f"--git-dir={tmp_path / 'scratch.git'}", f"--work-tree={fresh}"]
    subprocess.run(["git", "init", "--bare", "-q", str(tmp_path / "scratch.git")], check=True)
    proc = subprocess.run([*git, "apply", "-"], input=patch, text=True, cwd=fresh, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    assert (fresh / "calc" / "__init__.py").read_text() == FIXED_SOURCE
    assert (fresh / "calc" / "extra.py").read_text() == "EXTRA = 1\n"


def test_snapshot_counts_lines_and_lists_carried_files(ws: Workspace) -> None:
    ws.write("calc/__init__.py", FIXED_SOURCE)
    (ws.path / "tests" / "test_calc.py").unlink()
    ws.write("conftest.py", "import pytest\n")
    snap = ws.snapshot()
    assert [c.path for c in snap.changes.carried] == ["calc/__init__.py"]
    assert [(r.path, r.rule) for r in snap.changes.rejected] == [("conftest.py", "protected"), ("tests/test_calc.py", "protected")]
    assert snap.lines_changed == 2
    assert "conftest.py" not in snap.patch and "test_calc.py" not in snap.patch


def test_deleting_a_file_shows_as_a_deletion(make_task: MakeTask) -> None:
    task = make_task(files={"calc/legacy.py": "OLD = 1\n"})
    with Workspace.create(task) as ws:
        (ws.path / "calc" / "legacy.py").unlink()
        snap = ws.snapshot()
        assert "deleted file mode 100644" in snap.patch
        assert snap.lines_changed == 1


def test_apply_patch_of_the_golden_patch_then_diff(ws: Workspace) -> None:
    ws.apply_patch(GOLDEN_PATCH)
    assert ws.read("calc/__init__.py") == FIXED_SOURCE
    snap = ws.snapshot()
    assert [c.path for c in snap.changes.carried] == ["calc/__init__.py"]
    assert "-    return a - b\n+    return a + b\n" in snap.patch
    assert snap.lines_changed == 2


def test_the_diff_of_a_patched_workspace_reapplies_to_a_fresh_workspace(tiny_task: Task) -> None:
    with Workspace.create(tiny_task) as first, Workspace.create(tiny_task) as second:
        first.apply_patch(GOLDEN_PATCH)
        second.apply_patch(first.diff())
        assert second.read("calc/__init__.py") == FIXED_SOURCE
        assert second.diff() == first.diff()


def test_a_patch_that_does_not_apply_raises_and_changes_nothing(ws: Workspace) -> None:
    patch = GOLDEN_PATCH + textwrap.dedent(
        """\
        diff --git a/tests/test_calc.py b/tests/test_calc.py
        --- a/tests/test_calc.py
        +++ b/tests/test_calc.py
        @@ -1,1 +1,1 @@
        -from calc import nothing_like_this
        +from calc import add
        """
    )
    with pytest.raises(PatchError, match="^patch does not apply: error: patch failed: tests/test_calc.py:1"):
        ws.apply_patch(patch)
    assert ws.changed_paths() == []
    assert ws.read("calc/__init__.py") == CALC_SOURCE


def test_garbage_patch_raises_patch_error(ws: Workspace) -> None:
    with pytest.raises(PatchError, match="No valid patches in input"):
        ws.apply_patch("please fix the bug\n")
    assert ws.changed_paths() == []


def test_snapshot_ignores_a_git_dir_the_agent_made_in_the_work_tree(ws: Workspace) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(ws.root), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=ws.path, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=ws.path, check=True, env=env)
    snap = ws.snapshot()
    assert snap.changes.empty and snap.patch == ""


def test_snapshot_fails_closed_when_the_git_store_is_gone(ws: Workspace) -> None:
    ws.write("calc/__init__.py", FIXED_SOURCE)
    shutil.rmtree(ws.root / "git")
    with pytest.raises(GitMetadataError, match="is missing or incomplete; grading fails closed"):
        ws.snapshot()


# --- restore and reset ---------------------------------------------------------------------------


def test_restore_puts_back_a_modified_file_and_removes_an_added_one(ws: Workspace) -> None:
    ws.write("calc/__init__.py", FIXED_SOURCE)
    ws.write("calc/added.py", "x\n")
    ws.restore(["calc/__init__.py", "calc/added.py"])
    assert ws.read("calc/__init__.py") == CALC_SOURCE
    assert not (ws.path / "calc" / "added.py").exists()
    assert ws.changed_paths() == []


def test_restore_brings_back_a_deleted_file_and_replaces_a_symlink(ws: Workspace, outside: Path) -> None:
    (ws.path / "tests" / "test_calc.py").unlink()
    (ws.path / "calc" / "__init__.py").unlink()
    os.symlink(outside / "secret.txt", ws.path / "calc" / "__init__.py")
    ws.restore(["tests/test_calc.py", "calc/__init__.py"])
    assert ws.changed_paths() == []
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_restore_leaves_other_changes_alone(ws: Workspace) -> None:
    ws.write("calc/__init__.py", FIXED_SOURCE)
    ws.write("tests/test_calc.py", "weakened\n")
    ws.restore(["tests/test_calc.py"])
    assert ws.changed_paths() == ["calc/__init__.py"]


def test_restore_never_deletes_through_a_symlinked_directory(ws: Workspace, outside: Path) -> None:
    (outside / "test_calc_hidden.py").write_text("precious\n")
    shutil.rmtree(ws.path / "tests")
    os.symlink(outside, ws.path / "tests")
    try:
        ws.restore(["tests/test_calc_hidden.py"])
    except PathEscapeError:
        pass
    assert (outside / "test_calc_hidden.py").read_text() == "precious\n"


def test_restore_refuses_a_path_outside_the_work_tree(ws: Workspace) -> None:
    try:
        ws.restore(["../git"])
    except PathEscapeError:
        pass
    assert (ws.root / "git" / "HEAD").is_file()


def test_reset_after_many_changes_gives_an_empty_snapshot(ws: Workspace) -> None:
    ws.apply_patch(GOLDEN_PATCH)
    ws.write("new/pkg/mod.py", "x\n")
    ws.write("conftest.py", "import os\n")
    (ws.path / "tests" / "test_calc.py").unlink()
    os.symlink("/etc", ws.path / "etc")
    os.mkfifo(ws.path / "pipe")
    (ws.path / "calc" / "__init__.py").chmod(0o755)
    ws.write("calc/__pycache__/x.pyc", b"\0")
    ws.reset()
    snap = ws.snapshot()
    assert snap.changes.empty and snap.changes.ignored == () and snap.patch == ""
    assert ws.changed_paths() == []
    assert ws.read("calc/__init__.py") == CALC_SOURCE


def test_reset_does_not_touch_the_baseline_or_other_workspaces(tiny_task: Task, ws: Workspace) -> None:
    with Workspace.create(tiny_task) as other:
        other.write("calc/__init__.py", FIXED_SOURCE)
        ws.write("calc/__init__.py", "mine\n")
        ws.reset()
        assert other.read("calc/__init__.py") == FIXED_SOURCE
    assert (ws.baseline.tree / "calc" / "__init__.py").read_text() == CALC_SOURCE


# --- hidden tests --------------------------------------------------------------------------------


def test_inject_hidden_copies_hidden_files_into_a_tree(ws: Workspace, tiny_task: Task, tmp_path: Path) -> None:
    copy = baseline_copy(ws, tmp_path / "grading")
    assert inject_hidden(tiny_task, copy) == ["tests/test_calc_hidden.py"]
    assert (copy / "tests" / "test_calc_hidden.py").read_text() == HIDDEN_TESTS


def test_inject_hidden_replaces_a_symlinked_directory_and_never_writes_through_it(
    tiny_task: Task, tmp_path: Path, outside: Path
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    os.symlink(outside, tree / "tests")
    assert inject_hidden(tiny_task, tree) == ["tests/test_calc_hidden.py"]
    assert not (tree / "tests").is_symlink() and (tree / "tests" / "test_calc_hidden.py").is_file()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


# --- lifecycle -----------------------------------------------------------------------------------


def test_close_removes_the_root_and_is_idempotent(tiny_task: Task) -> None:
    ws = Workspace.create(tiny_task)
    ws.write("calc/x.py", "x\n")
    assert not ws.closed
    ws.close()
    assert ws.closed and not ws.root.exists()
    ws.close()
    assert not ws.root.exists()


def test_context_manager_closes_even_on_error(tiny_task: Task) -> None:
    with pytest.raises(KeyError), Workspace.create(tiny_task) as ws:
        raise KeyError("boom")
    assert ws.closed and not ws.root.exists()


_UNPRIVILEGED_SCRIPT = """
import os, sys
from pathlib import Path
from repogym_gym.baseline import BaselineStore
from repogym_gym.task import load_task
from repogym_gym.workspace import Workspace

task_dir, cache, parent, action, layout = sys.argv[1:]
ws = Workspace.create(load_task(task_dir), store=BaselineStore(Path(cache)), parent_dir=parent)
(ws.path / "locked" / "inner").mkdir(parents=True)
(ws.path / "locked" / "inner" / "f.py").write_text("x")
if layout == "nested":
    os.chmod(ws.path / "locked" / "inner", 0)
os.chmod(ws.path / "locked", 0)
os.chmod(ws.path / "calc", 0o500)
try:
    os.listdir(ws.path / "locked")
    sys.exit("permissions are not enforced for this process; the test would prove nothing")
except PermissionError:
    pass
if action == "close":
    ws.close()
    print("root exists" if ws.root.exists() else "root removed")
else:
    ws.reset()
    print("empty" if ws.snapshot().changes.empty and not ws.changed_paths() else "changed")
    ws.close()
"""


def run_unprivileged(task: Task, tmp_path: Path, action: str, layout: str = "single") -> subprocess.CompletedProcess[str]:
    """Run ``action`` on a workspace whose agent chmod-ed directories, as a process that obeys permissions.

    Root ignores directory permissions, so as root the script runs without the DAC capabilities.
    """
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot drop the capability that ignores permissions")
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
    parent = tmp_path / "workspaces"
    parent.mkdir()
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", _UNPRIVILEGED_SCRIPT, str(task.root), str(tmp_path / "cache"), str(parent), action, layout],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    subprocess.run(["chmod", "-R", "u+rwx", str(parent)], check=False)
    return proc


def test_close_works_after_the_agent_chmods_a_directory_to_000(tiny_task: Task, tmp_path: Path) -> None:
    proc = run_unprivileged(tiny_task, tmp_path, "close")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "root removed\n"
    assert list((tmp_path / "workspaces").iterdir()) == []


def test_close_works_after_the_agent_chmods_nested_directories_to_000(tiny_task: Task, tmp_path: Path) -> None:
    proc = run_unprivileged(tiny_task, tmp_path, "close", layout="nested")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "root removed\n"


def test_reset_works_after_the_agent_chmods_a_directory_to_000(tiny_task: Task, tmp_path: Path) -> None:
    proc = run_unprivileged(tiny_task, tmp_path, "reset")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "empty\n"


# --- shared baselines ----------------------------------------------------------------------------


def test_many_workspaces_of_one_task_share_one_baseline_build(make_task: MakeTask, tmp_path: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo={"setup": [f"echo run >> '{counter}'"]})
    store = BaselineStore(tmp_path / "cache")
    workspaces = [Workspace.create(task, store=store) for _ in range(5)]
    try:
        assert counter.read_text() == "run\n"
        assert len({ws.baseline.tree for ws in workspaces}) == 1
        assert len({ws.root for ws in workspaces}) == 5
        workspaces[0].write("calc/__init__.py", FIXED_SOURCE)
        assert [ws.changed_paths() for ws in workspaces[1:]] == [[]] * 4
        borrowed = f"{workspaces[0].baseline.store.git_dir / 'objects'}\n"
        assert {(ws.root / "git" / "objects" / "info" / "alternates").read_text() for ws in workspaces} == {borrowed}
    finally:
        for ws in workspaces:
            ws.close()


def test_workspaces_without_a_store_share_the_process_wide_store(tiny_task: Task) -> None:
    with Workspace.create(tiny_task) as a, Workspace.create(tiny_task) as b:
        assert a.baseline is b.baseline
        assert default_baseline_store().get(tiny_task) is a.baseline


def test_an_allowed_symlink_whose_target_is_not_utf8_reaches_the_grading_copy(make_task: MakeTask, tmp_path: Path) -> None:
    """The carried target is bytes; decoding it as UTF-8 raised UnicodeDecodeError out of grading."""
    from repogym_gym.grading_copy import build_grading_copy

    task = make_task(constraints={"allow_symlinks": True})
    with Workspace.create(task) as ws:
        os.symlink(b"calc/x\xff", os.fsencode(ws.path / "link"))
        snapshot = ws.snapshot()
        assert [c.path for c in snapshot.changes.carried] == ["link"]
        build_grading_copy(task, ws.baseline, snapshot, tmp_path / "copy")
    assert os.readlink(os.fsencode(tmp_path / "copy" / "link")) == b"calc/x\xff"


def test_reading_the_workspace_refuses_what_is_not_a_regular_file(tiny_task: Task) -> None:
    with Workspace.create(tiny_task) as ws:
        os.mkfifo(ws.path / "pipe")
        for rel in ("pipe", "calc"):
            with pytest.raises(FileNotFoundError, match="no file"):
                ws.read(rel)
            with pytest.raises(FileNotFoundError, match="no file"):
                ws.size(rel)


def test_a_write_never_replaces_a_directory(tiny_task) -> None:  # noqa: ANN001
    """A Write action to ``calc`` deleted the whole package and put a file in its place (the gym
    level: tests/gym/test_gym_env.py)."""
    with Workspace.create(tiny_task) as ws:
        with pytest.raises(IsADirectoryError, match="is a directory; write a file inside it"):
            ws.write("calc", "x = 1\n")
        assert (ws.path / "calc" / "__init__.py").is_file()
        ws.write("calc/extra.py", "x = 1\n")  # inside it is fine
        assert (ws.path / "calc" / "extra.py").read_text() == "x = 1\n"
