"""Tests for repogym_gym.tree: hashing a real tree, diffing manifests, writing without following links."""

from __future__ import annotations

import doctest
import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from repogym_gym import tree as tree_module
from repogym_gym.errors import PathEscapeError
from repogym_gym.tree import Entry, diff_manifests, hash_file, remove_path, scan_tree, write_file_safely


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    (r / "pkg").mkdir(parents=True)
    (r / "pkg" / "mod.py").write_text("x = 1\n")
    (r / "README").write_text("hi\n")
    return r


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    o = tmp_path / "outside"
    o.mkdir()
    (o / "secret.txt").write_text("secret\n")
    return o


# --- scan_tree -----------------------------------------------------------------------------------


def test_scan_tree_hashes_regular_files_by_relative_posix_path(root: Path) -> None:
    assert scan_tree(root) == {
        "README": Entry("file", 0o644, 3, sha(b"hi\n")),
        "pkg/mod.py": Entry("file", 0o644, 6, sha(b"x = 1\n")),
    }


def test_scan_tree_records_executable_files_as_755(root: Path) -> None:
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o700)
    (root / "README").chmod(0o600)
    manifest = scan_tree(root)
    assert manifest["run.sh"].mode == 0o755
    assert manifest["README"].mode == 0o644


def test_scan_tree_sees_gitignored_and_excluded_files(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("secret.txt\n")
    (root / "debug.log").write_text("log\n")
    (root / "build").mkdir()
    (root / "build" / "out.bin").write_bytes(b"\0\1")
    (root / "secret.txt").write_text("s\n")
    manifest = scan_tree(root)
    assert {"debug.log", "build/out.bin", "secret.txt", ".gitignore"} <= manifest.keys()


def test_scan_tree_skips_git_directories_at_any_depth(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "init", "-q", str(root / "pkg" / "vendored")], check=True)
    (root / ".github").mkdir()
    (root / ".github" / "ci.yml").write_text("on: push\n")
    (root / ".gitmodules").write_text("")
    paths = scan_tree(root).keys()
    assert not [p for p in paths if p.startswith(".git/") or "/.git/" in p]
    assert {".github/ci.yml", ".gitmodules"} <= paths


def test_scan_tree_records_symlinks_without_following_them(root: Path, outside: Path) -> None:
    os.symlink(outside, root / "out_dir")
    os.symlink(outside / "secret.txt", root / "out_file")
    os.symlink("pkg/mod.py", root / "inside")
    os.symlink("nowhere", root / "dangling")
    manifest = scan_tree(root)
    target = str(outside)
    assert manifest["out_dir"] == Entry("symlink", 0o777, len(target), sha(target.encode()))
    assert manifest["inside"] == Entry("symlink", 0o777, len("pkg/mod.py"), sha(b"pkg/mod.py"))
    assert manifest["dangling"].kind == "symlink"
    assert manifest["out_file"].kind == "symlink"
    assert not [p for p in manifest if p.startswith("out_dir/")]


def test_scan_tree_records_a_fifo_as_special_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    assert scan_tree(root)["pipe"] == Entry("special", 0, 0, "")


def test_scan_tree_of_an_empty_tree_is_empty(tmp_path: Path) -> None:
    (tmp_path / "empty" / "nested").mkdir(parents=True)
    assert scan_tree(tmp_path / "empty") == {}


def test_hash_file_refuses_to_follow_a_final_symlink(root: Path, outside: Path) -> None:
    os.symlink(outside / "secret.txt", root / "link")
    with pytest.raises(OSError):
        hash_file(root / "link")
    assert hash_file(root / "README") == (sha(b"hi\n"), 3)


def test_tree_module_docstring_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the example makes a temp dir; keep it here
    failures, _ = doctest.testmod(tree_module, verbose=False)
    assert failures == 0


# --- diff_manifests ------------------------------------------------------------------------------


def test_diff_manifests_reports_added_modified_and_deleted_sorted(root: Path) -> None:
    base = scan_tree(root)
    (root / "pkg" / "mod.py").write_text("x = 2\n")
    (root / "README").unlink()
    (root / "a_new.py").write_text("")
    changes = diff_manifests(base, scan_tree(root))
    assert [(c.path, c.status) for c in changes] == [
        ("README", "deleted"),
        ("a_new.py", "added"),
        ("pkg/mod.py", "modified"),
    ]
    deleted, added, modified = changes
    assert deleted.new is None and deleted.old == base["README"]
    assert added.old is None and added.new is not None and added.new.size == 0
    assert modified.old == base["pkg/mod.py"] and modified.new != modified.old


def test_diff_manifests_of_an_unchanged_tree_is_empty(root: Path) -> None:
    assert diff_manifests(scan_tree(root), scan_tree(root)) == []


def test_rewriting_identical_content_is_not_a_change(root: Path) -> None:
    base = scan_tree(root)
    (root / "README").write_text("hi\n")
    os.utime(root / "README", (0, 0))
    assert diff_manifests(base, scan_tree(root)) == []


def test_a_mode_change_alone_is_a_modification(root: Path) -> None:
    base = scan_tree(root)
    (root / "README").chmod(0o755)
    changes = diff_manifests(base, scan_tree(root))
    assert [(c.path, c.status) for c in changes] == [("README", "modified")]
    assert changes[0].old.mode == 0o644 and changes[0].new.mode == 0o755  # type: ignore[union-attr]


def test_replacing_a_file_by_a_symlink_to_identical_text_is_a_modification(root: Path) -> None:
    base = scan_tree(root)
    (root / "README").unlink()
    os.symlink("hi\n", root / "README")
    assert [(c.path, c.status) for c in diff_manifests(base, scan_tree(root))] == [("README", "modified")]


def test_retargeting_a_symlink_is_a_modification(root: Path) -> None:
    os.symlink("README", root / "link")
    base = scan_tree(root)
    os.unlink(root / "link")
    os.symlink("pkg/mod.py", root / "link")
    assert [(c.path, c.status) for c in diff_manifests(base, scan_tree(root))] == [("link", "modified")]


# --- write_file_safely ---------------------------------------------------------------------------


def test_write_file_safely_creates_parents_and_sets_the_mode(root: Path) -> None:
    write_file_safely(root, "a/b/c.sh", b"#!/bin/sh\n", 0o755)
    assert (root / "a" / "b" / "c.sh").read_bytes() == b"#!/bin/sh\n"
    assert (root / "a" / "b" / "c.sh").stat().st_mode & 0o777 == 0o755


def test_write_file_safely_overwrites_a_regular_file(root: Path) -> None:
    write_file_safely(root, "README", b"new")
    assert (root / "README").read_bytes() == b"new"
    assert (root / "README").stat().st_mode & 0o777 == 0o644


def test_write_file_safely_refuses_a_path_through_a_symlinked_parent(root: Path, outside: Path) -> None:
    os.symlink(outside, root / "escape")
    with pytest.raises(PathEscapeError) as info:
        write_file_safely(root, "escape/planted.txt", b"x")
    assert str(info.value) == "path 'escape/planted.txt' goes through the symlink 'escape'"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_write_file_safely_refuses_a_symlinked_parent_even_pointing_inside(root: Path) -> None:
    os.symlink("pkg", root / "alias")
    with pytest.raises(PathEscapeError, match="goes through the symlink 'alias'"):
        write_file_safely(root, "alias/new.py", b"x")
    assert not (root / "pkg" / "new.py").exists()


def test_write_file_safely_refuses_a_deeper_symlinked_parent(root: Path, outside: Path) -> None:
    os.symlink(outside, root / "pkg" / "sub")
    with pytest.raises(PathEscapeError, match="goes through the symlink 'pkg/sub'"):
        write_file_safely(root, "pkg/sub/deeper/x.py", b"x")
    assert not (outside / "deeper").exists()


@pytest.mark.parametrize("rel", ["../escaped.txt", "pkg/../../escaped.txt", "/tmp/escaped.txt"])
def test_write_file_safely_refuses_dotdot_and_absolute_paths(root: Path, rel: str) -> None:
    with pytest.raises(PathEscapeError) as info:
        write_file_safely(root, rel, b"x")
    # the message names the path but never the absolute root (it reaches agents' observations)
    assert str(info.value) == f"path {rel!r} must be relative and stay inside the tree"
    assert not (root.parent / "escaped.txt").exists()


def test_write_file_safely_refuses_a_path_through_a_file(root: Path) -> None:
    with pytest.raises(PathEscapeError, match="path 'README/x' goes through the file 'README'"):
        write_file_safely(root, "README/x", b"x")


def test_write_file_safely_replaces_a_symlink_at_the_destination(root: Path, outside: Path) -> None:
    os.symlink(outside / "secret.txt", root / "target.txt")
    write_file_safely(root, "target.txt", b"mine")
    assert not (root / "target.txt").is_symlink()
    assert (root / "target.txt").read_bytes() == b"mine"
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_write_file_safely_replaces_a_dangling_symlink_without_creating_its_target(root: Path, outside: Path) -> None:
    os.symlink(outside / "would-be-created", root / "dangling")
    write_file_safely(root, "dangling", b"mine")
    assert (root / "dangling").read_bytes() == b"mine"
    assert not (outside / "would-be-created").exists()


def test_write_file_safely_replaces_a_fifo_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    write_file_safely(root, "pipe", b"data")
    assert (root / "pipe").is_file() and (root / "pipe").read_bytes() == b"data"


# --- remove_path ---------------------------------------------------------------------------------


def test_remove_path_removes_a_symlink_not_its_target(root: Path, outside: Path) -> None:
    os.symlink(outside, root / "link")
    remove_path(root / "link")
    assert not (root / "link").is_symlink()
    assert (outside / "secret.txt").exists()


def test_remove_path_removes_files_and_trees_and_ignores_missing(root: Path) -> None:
    remove_path(root / "pkg")
    remove_path(root / "README")
    remove_path(root / "missing")
    assert list(root.iterdir()) == []


# --- any depth, any name (the agent builds the tree) ----------------------------------------------

def _chain(start: Path, depth: int, name: str = "d") -> int:
    """Make ``depth`` nested directories ``name`` below ``start`` through descriptors; returns the
    descriptor of the deepest one (the caller closes it)."""
    fd = os.open(start, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    return fd


def _put(fd: int, name: str | bytes, data: bytes) -> None:
    with open(os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as fh:
        fh.write(data)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_scan_tree_records_a_directory_nested_past_path_max_as_unreadable_and_never_raises(root: Path) -> None:
    fd = _chain(root / "pkg", 20, "d" * 250)  # 5,000 bytes of path
    _put(fd, "deep.py", b"x = 1\n")
    os.close(fd)
    manifest = scan_tree(root)
    deep = {p: e for p, e in manifest.items() if p.startswith("pkg/d")}
    assert len(deep) == 1
    [(path, entry)] = deep.items()
    assert entry.kind == "unreadable" and "nested past 4096 bytes" in entry.digest
    assert len(path.encode()) <= tree_module.MAX_SCAN_PATH_BYTES + 256
    assert manifest["pkg/mod.py"].kind == "file"


def test_walk_tree_reaches_every_entry_3000_levels_deep_with_two_descriptors(deep_dir: Path) -> None:
    root = deep_dir
    fd = _chain(root, 3000)
    _put(fd, "bottom.bin", b"z" * 10)
    os.close(fd)
    before = _open_fds()
    most = 0
    names = []
    for item in tree_module.walk_tree(root, paths=False):
        most = max(most, _open_fds() - before)
        names.append(item.name)
        assert item.error is None
    assert names.count("d") == 3000 and "bottom.bin" in names
    assert most <= 2
    assert _open_fds() == before


def test_scan_tree_keeps_a_name_that_is_not_utf8_as_its_surrogate_escape(root: Path) -> None:
    fd = os.open(root, os.O_RDONLY)
    _put(fd, b"bad\xff.py", b"x = 1\n")
    os.close(fd)
    entry = scan_tree(root)["bad\udcff.py"]
    assert entry == Entry("file", 0o644, 6, sha(b"x = 1\n"))
    assert os.fsencode("bad\udcff.py") == b"bad\xff.py"


def test_a_fifo_swapped_in_after_listing_is_never_waited_on(root: Path) -> None:
    """The walk lists, then hashes: a file replaced by a fifo in between is refused, not read."""
    os.mkfifo(root / "pipe")
    with pytest.raises(OSError, match="not a regular file"):
        tree_module._hash_fd(os.open(root / "pipe", tree_module._FILE_FLAGS), "pipe")


def test_force_rmtree_removes_a_tree_3000_deep_past_path_max_with_odd_names_and_modes(deep_dir: Path) -> None:
    victim = deep_dir / "victim"
    victim.mkdir()
    fd = _chain(victim, 3000)
    _put(fd, b"\xff\xfe", b"x")
    os.symlink("/etc/passwd", "link", dir_fd=fd)
    os.mkdir("locked", dir_fd=fd)
    os.chmod(f"/proc/self/fd/{fd}", 0)
    os.close(fd)
    tree_module.force_rmtree(victim)
    assert not victim.exists() and Path("/etc/passwd").exists()
    tree_module.force_rmtree(victim)  # missing is fine


def test_discard_tree_never_raises(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert tree_module.discard_tree(tmp_path / "f") is True and not (tmp_path / "f").exists()
    assert tree_module.discard_tree(tmp_path / "missing") is True
