"""Tests for repogym_gym.baseline: setup runs once, its artefacts are the baseline, the cache is checked.

Setup commands here are real shell commands run by the LocalSandbox; the ones that count their
runs append to a file outside the task tree, so the count survives every copy and rebuild.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

from repogym_gym.baseline import BaselineStore, default_cache_dir
from repogym_gym.errors import RepoGymError, SetupError
from repogym_gym.gitstore import BASELINE_REF
from repogym_gym.task import Task, load_task
from repogym_gym.tree import scan_tree
from repogym_gym.workspace import Workspace
from tests.helpers import CALC_SOURCE, MakeTask


def counting_setup(counter: Path, *more: str) -> dict[str, list[str]]:
    return {"setup": [f"echo run >> {shlex.quote(str(counter))}", *more]}


def runs(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def cache_entries(cache: Path) -> list[str]:
    """Directories under cache/baselines (lock files are not entries)."""
    base = cache / "baselines"
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.exists() else []


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


# --- setup runs once ----------------------------------------------------------------------------


def test_setup_runs_once_across_two_workspaces_of_one_store(make_task: MakeTask, tmp_path: Path, cache: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo=counting_setup(counter))
    store = BaselineStore(cache)
    with Workspace.create(task, store=store), Workspace.create(task, store=store):
        pass
    assert runs(counter) == 1


def test_setup_runs_once_across_a_fresh_store_on_the_same_cache(make_task: MakeTask, tmp_path: Path, cache: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo=counting_setup(counter))
    first = BaselineStore(cache).get(task)
    second = BaselineStore(cache).get(load_task(task.root))
    assert runs(counter) == 1
    assert (second.tree, second.commit, dict(second.manifest)) == (first.tree, first.commit, dict(first.manifest))


def test_store_returns_the_same_baseline_object_on_a_second_get(tiny_task: Task, cache: Path) -> None:
    store = BaselineStore(cache)
    assert store.get(tiny_task) is store.get(tiny_task)


def test_setup_reruns_when_the_source_changes(make_task: MakeTask, tmp_path: Path, cache: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo=counting_setup(counter))
    old = BaselineStore(cache).get(task)
    (task.source_dir / "calc" / "__init__.py").write_text(CALC_SOURCE + "# changed\n")
    new = BaselineStore(cache).get(load_task(task.root))
    assert runs(counter) == 2
    assert new.tree != old.tree
    assert (new.tree / "calc" / "__init__.py").read_text().endswith("# changed\n")
    assert len(cache_entries(cache)) == 2


# --- setup artefacts are the baseline ------------------------------------------------------------


def test_setup_artefacts_are_in_every_workspace_and_are_not_changes(make_task: MakeTask, cache: Path) -> None:
    task = make_task(repo={"setup": ["mkdir -p build && printf 'artefact\\n' > build/out.txt", "chmod +x build/out.txt"]})
    store = BaselineStore(cache)
    for _ in range(2):
        with Workspace.create(task, store=store) as ws:
            assert ws.read("build/out.txt") == "artefact\n"
            assert "build/out.txt" in ws.list_files()
            snap = ws.snapshot()
            assert snap.changes.empty and snap.patch == ""
            assert ws.changed_paths() == []
    baseline = store.get(task)
    assert baseline.manifest["build/out.txt"].mode == 0o755
    tree_listing = baseline.store.git("ls-tree", "-r", baseline.commit).decode()
    assert "100755 blob" in tree_listing and "build/out.txt" in tree_listing


def test_setup_runs_in_the_tree_with_a_scrubbed_environment(
    make_task: MakeTask, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    task = make_task(repo={"setup": ['test -f calc/__init__.py && echo "[$AWS_SECRET_ACCESS_KEY]" > seen.txt']})
    baseline = BaselineStore(cache).get(task)
    assert (baseline.tree / "seen.txt").read_text() == "[]\n"


def test_baseline_without_setup_is_the_source_and_its_commit_matches_the_manifest(tiny_task: Task, cache: Path) -> None:
    baseline = BaselineStore(cache).get(tiny_task)
    assert baseline.task_id == "tiny-calc" and baseline.fingerprint == tiny_task.fingerprint
    assert dict(baseline.manifest) == scan_tree(tiny_task.source_dir) == scan_tree(baseline.tree)
    assert baseline.store.git("rev-parse", BASELINE_REF).decode().strip() == baseline.commit
    names = baseline.store.git("ls-tree", "-r", "--name-only", baseline.commit).decode().split()
    assert names == sorted(baseline.manifest)


def test_baseline_commit_is_the_same_in_two_caches(tiny_task: Task, tmp_path: Path) -> None:
    assert BaselineStore(tmp_path / "c1").get(tiny_task).commit == BaselineStore(tmp_path / "c2").get(tiny_task).commit


def test_cache_entry_is_named_by_task_id_and_fingerprint(tiny_task: Task, cache: Path) -> None:
    baseline = BaselineStore(cache).get(tiny_task)
    entry = cache / "baselines" / f"tiny-calc-{tiny_task.fingerprint[:20]}"
    assert baseline.tree == entry / "tree"
    assert json.loads((entry / "baseline.json").read_text())["commit"] == baseline.commit
    assert cache_entries(cache) == [entry.name]


def test_default_cache_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOGYM_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("REPOGYM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "repogym_gym"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "repogym_gym"
    assert not (tmp_path / "home").exists()


# --- failing setup -------------------------------------------------------------------------------


def test_failing_setup_raises_naming_the_command_and_exit_code(make_task: MakeTask, cache: Path) -> None:
    task = make_task(repo={"setup": ["true", "echo building; echo 'compiler exploded' >&2; exit 3"]})
    with pytest.raises(SetupError) as info:
        BaselineStore(cache).get(task)
    message = str(info.value)
    assert message.startswith(
        "task 'tiny-calc': setup command \"echo building; echo 'compiler exploded' >&2; exit 3\" failed (exit 3):"
    )
    assert "compiler exploded" in message
    assert isinstance(info.value, RepoGymError)


def test_failing_setup_leaves_no_cache_entry_and_no_staging(make_task: MakeTask, cache: Path) -> None:
    task = make_task(repo={"setup": ["touch made-it", "exit 1"]})
    with pytest.raises(SetupError):
        BaselineStore(cache).get(task)
    assert cache_entries(cache) == []
    assert not [p for p in (cache / "baselines").rglob("made-it")]


def test_a_build_killed_half_way_leaves_staging_that_the_next_build_sweeps(make_task: MakeTask, cache: Path) -> None:
    """Issue 13's audit: a process killed while it built a baseline left its staging directory in the store
    for good. Staging is named for its process now, and the next build removes a dead process's."""
    import signal
    import subprocess
    import sys
    import time

    task = make_task(repo={"setup": ["sleep 60"]})
    script = ("import sys; from pathlib import Path; from repogym_gym.baseline import BaselineStore; "
              "from repogym_gym.task import load_task; BaselineStore(Path(sys.argv[1])).get(load_task(sys.argv[2]))")
    builder = subprocess.Popen([sys.executable, "-c", script, str(cache), str(task.root)], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not list((cache / "baselines").glob("repogym-staging-*")) and time.monotonic() < deadline:
            time.sleep(0.1)
        staged = list((cache / "baselines").glob("repogym-staging-*"))
        assert staged, "the builder never staged its baseline"
    finally:
        os.killpg(builder.pid, signal.SIGKILL)
        builder.wait()
    assert all(p.exists() for p in staged)  # what a killed build leaves
    quick = make_task(repo={"setup": ["true"]})
    BaselineStore(cache).get(quick)
    assert not any(p.exists() for p in staged)
    assert cache_entries(cache) != []


def test_failing_setup_is_retried_on_the_next_get(make_task: MakeTask, tmp_path: Path, cache: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo=counting_setup(counter, "exit 1"))
    store = BaselineStore(cache)
    for _ in range(2):
        with pytest.raises(SetupError):
            store.get(task)
    assert runs(counter) == 2


def test_setup_that_times_out_raises_setup_error(make_task: MakeTask, cache: Path) -> None:
    task = make_task(repo={"setup": ["sleep 30"]}, limits={"setup_timeout_s": 0.3})
    with pytest.raises(SetupError) as info:
        BaselineStore(cache).get(task)
    assert str(info.value) == "task 'tiny-calc': setup command 'sleep 30' timed out after 0.3 s"
    assert cache_entries(cache) == []


def test_setup_that_leaves_a_fifo_raises_setup_error(make_task: MakeTask, cache: Path) -> None:
    task = make_task(repo={"setup": ["mkfifo build.pipe"]})
    with pytest.raises(SetupError, match=r"setup left special files \(fifo/socket/device\): \['build.pipe'\]"):
        BaselineStore(cache).get(task)
    assert cache_entries(cache) == []


def test_failing_setup_makes_workspace_create_raise(make_task: MakeTask, cache: Path) -> None:
    task = make_task(repo={"setup": ["exit 5"]})
    with pytest.raises(SetupError, match=r"failed \(exit 5\)"):
        Workspace.create(task, store=BaselineStore(cache))


# --- a tampered cache is rebuilt -----------------------------------------------------------------


def test_tampered_cached_file_is_detected_and_rebuilt(make_task: MakeTask, tmp_path: Path, cache: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo=counting_setup(counter))
    baseline = BaselineStore(cache).get(task)
    (baseline.tree / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    rebuilt = BaselineStore(cache).get(load_task(task.root))
    assert runs(counter) == 2
    assert (rebuilt.tree / "calc" / "__init__.py").read_text() == CALC_SOURCE


def test_file_added_to_the_cached_tree_is_detected_and_removed(make_task: MakeTask, tmp_path: Path, cache: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo=counting_setup(counter))
    baseline = BaselineStore(cache).get(task)
    (baseline.tree / "calc" / "sitecustomize.py").write_text("import os\n")
    rebuilt = BaselineStore(cache).get(task)
    assert runs(counter) == 2
    assert not (rebuilt.tree / "calc" / "sitecustomize.py").exists()


def test_cached_file_made_executable_is_detected_and_rebuilt(make_task: MakeTask, tmp_path: Path, cache: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo=counting_setup(counter))
    baseline = BaselineStore(cache).get(task)
    os.chmod(baseline.tree / "calc" / "__init__.py", 0o755)
    rebuilt = BaselineStore(cache).get(task)
    assert runs(counter) == 2
    assert rebuilt.manifest["calc/__init__.py"].mode == 0o644


@pytest.mark.parametrize("damage", ["git", "baseline.json"])
def test_missing_cached_git_store_or_metadata_is_rebuilt(
    make_task: MakeTask, tmp_path: Path, cache: Path, damage: str
) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo=counting_setup(counter))
    baseline = BaselineStore(cache).get(task)
    target = baseline.tree.parent / damage
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.write_text("{not json")
    rebuilt = BaselineStore(cache).get(task)
    assert runs(counter) == 2
    rebuilt.store.verify_commit(rebuilt.commit)
    assert rebuilt.commit == baseline.commit


def test_cached_git_store_missing_the_commit_is_rebuilt(make_task: MakeTask, tmp_path: Path, cache: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo=counting_setup(counter))
    baseline = BaselineStore(cache).get(task)
    shutil.rmtree(baseline.store.git_dir / "objects")
    (baseline.store.git_dir / "objects").mkdir()
    BaselineStore(cache).get(task).store.verify_commit(baseline.commit)
    assert runs(counter) == 2


def test_source_file_made_executable_gives_a_baseline_with_the_new_mode(make_task: MakeTask, cache: Path) -> None:
    task = make_task()
    BaselineStore(cache).get(task)
    os.chmod(task.source_dir / "calc" / "__init__.py", 0o755)
    assert BaselineStore(cache).get(load_task(task.root)).manifest["calc/__init__.py"].mode == 0o755


def test_a_flipped_byte_in_a_cached_git_object_rebuilds_the_baseline(tiny_task: Task, cache: Path) -> None:
    """Issue 13: the cache check asked only whether the commit existed, so a corrupt blob made every
    later golden patch fail to apply, graded as the submission's 0. Objects are now checked by hash."""
    from repogym_gym.grading import grade_patch

    first = BaselineStore(cache).get(tiny_task)
    listing = first.store.git("cat-file", "--batch-check", "--batch-all-objects").decode().split("\n")
    blobs = [line.split()[0] for line in listing if line.split()[1:2] == ["blob"]]
    objects = [first.store.git_dir / "objects" / b[:2] / b[2:] for b in blobs]
    assert objects and all(p.is_file() for p in objects)
    for path in objects:  # the blobs only: the commit still exists, which is all the old check asked
        path.chmod(0o644)
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    second = BaselineStore(cache).get(tiny_task)
    assert second.commit == first.commit
    second.store.verify_objects()  # rebuilt: every object reads back to its hash again
    result = grade_patch(tiny_task, tiny_task.golden_patch(), store=BaselineStore(cache))
    assert result.score == 1.0 and result.infra_error is None
