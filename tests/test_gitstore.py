"""Tests for repogym_gym.gitstore: real git, bare stores, fast-import commits, diffs and git apply."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from repogym_gym.errors import GitMetadataError, PatchError, WorkspaceError
from repogym_gym.gitstore import (
    BASELINE_REF,
    CANDIDATE_REF,
    GIT_HARDENING,
    GitCommandError,
    GitStore,
    NumStat,
    export_tree,
    files_from_manifest,
    git_apply,
    has_commit,
    run_git,
)

REG, EXE, LINK = 0o100644, 0o100755, 0o120000
BASE_FILES = [
    ("a.txt", REG, b"one\ntwo\nthree\nfour\nfive\n"),
    ("pkg/b.py", REG, b"x = 1\n"),
]
ODD_PATHS = [
    "with space.txt",
    'quote".txt',
    "new\nline.txt",
    "tab\there.txt",
    "back\\slash.txt",
    "ünïcødé/файл.txt",
    '"leading-quote.txt',
    "-dash.txt",
]


@pytest.fixture
def store(tmp_path: Path) -> GitStore:
    return GitStore.create(tmp_path / "store.git")


def materialise(tmp_path: Path, files: list[tuple[str, int, bytes]], name: str = "tree") -> Path:
    root = tmp_path / name
    root.mkdir()
    for path, mode, data in files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        if mode == LINK:
            os.symlink(data.decode(), root / path)
        else:
            (root / path).write_bytes(data)
            (root / path).chmod(0o755 if mode == EXE else 0o644)
    return root


# --- write_commit --------------------------------------------------------------------------------


def test_create_makes_a_bare_repository_outside_any_work_tree(store: GitStore) -> None:
    assert (store.git_dir / "HEAD").is_file() and (store.git_dir / "objects").is_dir()
    assert store.git("rev-parse", "--is-bare-repository").decode().strip() == "true"


def test_write_commit_returns_the_commit_at_the_ref(store: GitStore) -> None:
    commit = store.write_commit(BASELINE_REF, BASE_FILES)
    assert len(commit) == 40 and all(c in "0123456789abcdef" for c in commit)
    assert store.git("rev-parse", BASELINE_REF).decode().strip() == commit
    listing = store.git("ls-tree", "-r", "--name-only", commit).decode().split()
    assert listing == ["a.txt", "pkg/b.py"]


def test_write_commit_is_deterministic_across_stores(tmp_path: Path) -> None:
    first = GitStore.create(tmp_path / "one.git").write_commit(BASELINE_REF, BASE_FILES)
    second = GitStore.create(tmp_path / "two.git").write_commit(BASELINE_REF, list(reversed(BASE_FILES)))
    assert first == second


def test_write_commit_uses_a_fixed_identity_and_date(store: GitStore) -> None:
    commit = store.write_commit(BASELINE_REF, BASE_FILES)
    body = store.git("cat-file", "-p", commit).decode()
    assert "committer repogym <repogym@localhost> 0 +0000" in body
    assert "author repogym <repogym@localhost> 0 +0000" in body


def test_different_content_or_mode_gives_a_different_commit(tmp_path: Path) -> None:
    ids = {
        GitStore.create(tmp_path / f"s{i}.git").write_commit(BASELINE_REF, files)
        for i, files in enumerate(
            [BASE_FILES, [("a.txt", REG, b"other\n"), BASE_FILES[1]], [("a.txt", EXE, BASE_FILES[0][2]), BASE_FILES[1]]]
        )
    }
    assert len(ids) == 3


def test_write_commit_without_parent_holds_exactly_the_given_files(store: GitStore) -> None:
    store.write_commit(BASELINE_REF, BASE_FILES)
    commit = store.write_commit(BASELINE_REF, [("only.txt", REG, b"x")])
    assert store.git("ls-tree", "-r", "--name-only", commit).decode().split() == ["only.txt"]


def test_empty_commit_is_allowed(store: GitStore) -> None:
    commit = store.write_commit(BASELINE_REF, [])
    assert store.git("ls-tree", "-r", commit) == b""


def test_write_commit_with_parent_changes_adds_and_deletes(store: GitStore) -> None:
    base = store.write_commit(BASELINE_REF, BASE_FILES)
    cand = store.write_commit(
        CANDIDATE_REF, [("new.txt", REG, b"n\n")], parent=base, deleted=["pkg/b.py"], message="candidate"
    )
    assert store.git("ls-tree", "-r", "--name-only", cand).decode().split() == ["a.txt", "new.txt"]
    assert store.git("rev-parse", f"{cand}^").decode().strip() == base


def test_verify_commit_accepts_a_known_commit_and_rejects_an_unknown_one(store: GitStore) -> None:
    store.verify_commit(store.write_commit(BASELINE_REF, BASE_FILES))
    with pytest.raises(GitMetadataError, match=r"^git cat-file failed \(exit 128\)"):
        store.verify_commit("0" * 40)


# --- diff ----------------------------------------------------------------------------------------


def test_diff_gives_a_git_patch_and_numstat(store: GitStore) -> None:
    base = store.write_commit(BASELINE_REF, BASE_FILES)
    cand = store.write_commit(
        CANDIDATE_REF,
        [("a.txt", REG, b"one\nTWO\nthree\nFOUR\nfive\nsix\n")],
        parent=base,
        deleted=["pkg/b.py"],
    )
    patch, stats = store.diff(base, cand)
    assert patch.startswith("diff --git a/a.txt b/a.txt\n")
    assert "-two\n+TWO\n" in patch
    assert "deleted file mode 100644" in patch
    assert stats == [NumStat("a.txt", 3, 2), NumStat("pkg/b.py", 0, 1)]


def test_diff_of_identical_commits_is_empty(store: GitStore) -> None:
    base = store.write_commit(BASELINE_REF, BASE_FILES)
    assert store.diff(base, base) == ("", [])


def test_diff_shows_mode_changes_and_symlinks(store: GitStore) -> None:
    base = store.write_commit(BASELINE_REF, BASE_FILES)
    cand = store.write_commit(
        CANDIDATE_REF, [("a.txt", EXE, BASE_FILES[0][2]), ("link", LINK, b"a.txt")], parent=base
    )
    patch, stats = store.diff(base, cand)
    assert "old mode 100644\nnew mode 100755" in patch
    assert "new file mode 120000" in patch
    assert NumStat("link", 1, 0) in stats


def test_binary_files_produce_a_git_binary_patch_and_no_line_counts(store: GitStore) -> None:
    base = store.write_commit(BASELINE_REF, BASE_FILES)
    blob = bytes(range(256)) * 4
    cand = store.write_commit(CANDIDATE_REF, [("data.bin", REG, blob)], parent=base)
    patch, stats = store.diff(base, cand)
    assert "GIT binary patch" in patch
    assert stats == [NumStat("data.bin", None, None)]


def test_binary_patch_round_trips_through_git_apply(store: GitStore, tmp_path: Path) -> None:
    base = store.write_commit(BASELINE_REF, BASE_FILES)
    blob = bytes(range(256)) * 4 + b"\0\xff"
    patch, _ = store.diff(base, store.write_commit(CANDIDATE_REF, [("data.bin", REG, blob)], parent=base))
    tree = materialise(tmp_path, BASE_FILES)
    git_apply(patch, tree)
    assert (tree / "data.bin").read_bytes() == blob


def test_odd_paths_round_trip_through_write_commit_diff_and_apply(store: GitStore, tmp_path: Path) -> None:
    base_files = [(p, REG, f"old {i}\n".encode()) for i, p in enumerate(ODD_PATHS)]
    base = store.write_commit(BASELINE_REF, base_files)
    listed = store.git("ls-tree", "-r", "-z", "--name-only", base).split(b"\0")
    assert sorted(p.decode() for p in listed if p) == sorted(ODD_PATHS)

    cand = store.write_commit(
        CANDIDATE_REF,
        [(p, REG, f"new {i}\n".encode()) for i, p in enumerate(ODD_PATHS[1:], 1)],
        parent=base,
        deleted=[ODD_PATHS[0]],
    )
    patch, stats = store.diff(base, cand)
    assert sorted(s.path for s in stats) == sorted(ODD_PATHS)

    tree = materialise(tmp_path, base_files)
    git_apply(patch, tree)
    assert not (tree / ODD_PATHS[0]).exists()
    for i, path in enumerate(ODD_PATHS[1:], 1):
        assert (tree / path).read_bytes() == f"new {i}\n".encode(), path


def test_files_from_manifest_reads_files_and_link_targets_sorted(tmp_path: Path) -> None:
    files = [("z.txt", REG, b"z"), ("a/run.sh", EXE, b"#!/bin/sh\n"), ("link", LINK, b"z.txt")]
    root = materialise(tmp_path, files)
    got = list(files_from_manifest(root, {p: m for p, m, _ in files}))
    assert got == sorted(files)


# --- git_apply -----------------------------------------------------------------------------------

TWO_FILE_PATCH_SECOND_FAILS = """\
diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
-one
+ONE
 two
diff --git a/pkg/b.py b/pkg/b.py
--- a/pkg/b.py
+++ b/pkg/b.py
@@ -1 +1 @@
-this line is not in the file
+y = 2
"""


def test_git_apply_applies_a_unified_patch(tmp_path: Path) -> None:
    tree = materialise(tmp_path, BASE_FILES)
    git_apply(TWO_FILE_PATCH_SECOND_FAILS.split("diff --git a/pkg")[0], tree)
    assert (tree / "a.txt").read_text().startswith("ONE\ntwo\n")


def test_git_apply_is_all_or_nothing(tmp_path: Path) -> None:
    tree = materialise(tmp_path, BASE_FILES)
    with pytest.raises(PatchError) as info:
        git_apply(TWO_FILE_PATCH_SECOND_FAILS, tree)
    assert str(info.value).startswith("patch does not apply: error: patch failed: pkg/b.py:1")
    assert (tree / "a.txt").read_bytes() == BASE_FILES[0][2]
    assert (tree / "pkg" / "b.py").read_bytes() == BASE_FILES[1][2]


def test_git_apply_of_garbage_raises_patch_error_quoting_git(tmp_path: Path) -> None:
    tree = materialise(tmp_path, BASE_FILES)
    with pytest.raises(PatchError) as info:
        git_apply("this is not a patch\n", tree)
    assert str(info.value).startswith("patch does not apply: error: No valid patches in input")
    assert isinstance(info.value, ValueError) and isinstance(info.value, WorkspaceError)


def test_git_apply_of_an_empty_patch_is_a_no_op(tmp_path: Path) -> None:
    tree = materialise(tmp_path, BASE_FILES)
    git_apply("", tree)
    git_apply("  \n", tree)
    assert (tree / "a.txt").read_bytes() == BASE_FILES[0][2]


def test_git_apply_check_only_changes_nothing(tmp_path: Path) -> None:
    tree = materialise(tmp_path, BASE_FILES)
    git_apply(TWO_FILE_PATCH_SECOND_FAILS.split("diff --git a/pkg")[0], tree, check_only=True)
    assert (tree / "a.txt").read_bytes() == BASE_FILES[0][2]


def test_git_apply_accepts_a_patch_without_final_newline(tmp_path: Path) -> None:
    tree = materialise(tmp_path, BASE_FILES)
    git_apply(TWO_FILE_PATCH_SECOND_FAILS.split("diff --git a/pkg")[0].rstrip("\n"), tree)
    assert (tree / "a.txt").read_text().startswith("ONE\n")


def test_git_apply_ignores_a_git_dir_planted_in_the_work_tree(tmp_path: Path) -> None:
    tree = materialise(tmp_path, BASE_FILES)
    (tree / ".git").write_text("gitdir: /nonexistent/elsewhere\n")
    git_apply(TWO_FILE_PATCH_SECOND_FAILS.split("diff --git a/pkg")[0], tree)
    assert (tree / "a.txt").read_text().startswith("ONE\n")


def test_git_apply_refuses_a_patch_escaping_the_work_tree(tmp_path: Path) -> None:
    tree = materialise(tmp_path, BASE_FILES)
    patch = "diff --git a/../escaped.txt b/../escaped.txt\nnew file mode 100644\n--- /dev/null\n+++ b/../escaped.txt\n@@ -0,0 +1 @@\n+x\n"
    with pytest.raises(PatchError):
        git_apply(patch, tree)
    assert not (tmp_path / "escaped.txt").exists()


def test_git_apply_leaves_no_scratch_repository_behind(tmp_path: Path) -> None:
    tree = materialise(tmp_path, BASE_FILES)
    git_apply(TWO_FILE_PATCH_SECOND_FAILS.split("diff --git a/pkg")[0], tree)
    with pytest.raises(PatchError):
        git_apply("garbage\n", tree)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree"]


# --- hardening -----------------------------------------------------------------------------------


def test_harden_wipes_a_planted_config_hooks_and_info(store: GitStore, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    (store.git_dir / "config").write_text(
        f"[core]\n\tbare = true\n\tfsmonitor = touch {marker}\n[alias]\n\tx = !touch {marker}\n"
    )
    (store.git_dir / "hooks").mkdir(exist_ok=True)
    (store.git_dir / "hooks" / "post-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (store.git_dir / "info").mkdir(exist_ok=True)
    (store.git_dir / "info" / "attributes").write_text("* filter=evil\n")
    store.harden()
    config = (store.git_dir / "config").read_text()
    assert "fsmonitor" not in config and "alias" not in config
    assert "bare = true" in config
    assert not (store.git_dir / "hooks").exists() and not (store.git_dir / "info").exists()
    store.write_commit(BASELINE_REF, BASE_FILES)
    assert not marker.exists()


def test_harden_unlinks_a_hooks_symlink_without_following_it(store: GitStore, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    shutil.rmtree(store.git_dir / "hooks", ignore_errors=True)
    os.symlink(elsewhere, store.git_dir / "hooks")
    store.harden()
    assert not (store.git_dir / "hooks").exists()
    assert (elsewhere / "keep.txt").read_text() == "keep"


def test_harden_repoints_a_tampered_alternates_file(tmp_path: Path) -> None:
    parent = GitStore.create(tmp_path / "parent.git")
    commit = parent.write_commit(BASELINE_REF, BASE_FILES)
    child = GitStore.create(tmp_path / "child.git", alternate=parent.git_dir)
    alternates = child.git_dir / "objects" / "info" / "alternates"
    assert alternates.read_text() == f"{parent.git_dir / 'objects'}\n"
    child.verify_commit(commit)
    alternates.write_text("/nonexistent/objects\n")
    child.harden()
    assert alternates.read_text() == f"{parent.git_dir / 'objects'}\n"
    child.verify_commit(commit)


def test_store_whose_objects_dir_was_deleted_raises_git_metadata_error(store: GitStore) -> None:
    commit = store.write_commit(BASELINE_REF, BASE_FILES)
    shutil.rmtree(store.git_dir / "objects")
    with pytest.raises(GitMetadataError) as info:
        store.harden()
    assert str(info.value) == f"git metadata at {store.git_dir} is missing or incomplete; grading fails closed"
    with pytest.raises(GitMetadataError):
        store.verify_commit(commit)


def test_store_that_was_removed_entirely_raises_git_metadata_error(store: GitStore) -> None:
    shutil.rmtree(store.git_dir)
    with pytest.raises(GitMetadataError, match="is missing or incomplete"):
        store.harden()


def test_create_ignores_the_callers_global_git_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, template = tmp_path / "home", tmp_path / "template"
    (template / "hooks").mkdir(parents=True)
    (template / "planted.txt").write_text("from the user's template\n")
    home.mkdir()
    (home / ".gitconfig").write_text(f"[init]\n\ttemplateDir = {template}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    plain = tmp_path / "plain.git"
    subprocess.run(["git", "init", "--bare", "-q", str(plain)], check=True)
    assert (plain / "planted.txt").exists()  # the config is live for an ordinary git call
    store = GitStore.create(tmp_path / "store.git")
    assert not (store.git_dir / "planted.txt").exists()


def test_a_patch_with_a_lone_surrogate_is_a_patch_error_not_a_crash(tmp_path: Path) -> None:
    """surrogateescape carries bytes read from a file; any other lone surrogate is not text at all."""
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(PatchError, match="lone surrogate at character"):
        git_apply("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+\ud800\n", tmp_path)
    assert (tmp_path / "a.txt").read_text() == "x\n"


# --- the one git boundary: run_git, has_commit, export_tree ---------------------------------------


def test_run_git_raises_git_command_error_with_git_s_reason(tmp_path: Path) -> None:
    with pytest.raises(GitCommandError) as caught:
        run_git(["cat-file", "-t", "0" * 40], git_dir=tmp_path / "missing.git", cwd=tmp_path)
    assert caught.value.command == "cat-file" and caught.value.returncode != 0
    assert "not a git repository" in caught.value.stderr.lower() or "missing.git" in caught.value.stderr


def test_run_git_runs_with_every_hardening_setting(tmp_path: Path) -> None:
    """Each ``-c`` of GIT_HARDENING reaches git: ``git config`` reads them back from the command line."""
    for setting in GIT_HARDENING:
        key, value = setting.split("=", 1)
        got = run_git(["config", "--get", key], git_dir=None, cwd=tmp_path).decode().strip()
        assert got == value, (key, got)
    assert "protocol.ext.allow=never" in GIT_HARDENING


def test_has_commit_tells_a_commit_from_an_unknown_id(store: GitStore) -> None:
    commit = store.write_commit(BASELINE_REF, BASE_FILES)
    assert has_commit(store.git_dir, commit)
    assert not has_commit(store.git_dir, "1" * 40)


def test_export_tree_writes_exactly_the_commit_and_ignores_export_attributes(store: GitStore, tmp_path: Path) -> None:
    files = [*BASE_FILES, (".gitattributes", REG, b"a.txt export-ignore\npkg/b.py export-subst\n"),
             ("pkg/b.py", REG, b"x = '$Format:%H$'\n"), ("run.sh", EXE, b"#!/bin/sh\n"), ("ln", LINK, b"a.txt")]
    files = [f for f in files if f != BASE_FILES[1]]
    commit = store.write_commit(BASELINE_REF, files)
    dest = tmp_path / "exported"
    export_tree(store.git_dir, commit, dest)
    got = {str(p.relative_to(dest)) for p in dest.rglob("*") if not p.is_dir()}
    assert got == {"a.txt", "pkg/b.py", ".gitattributes", "run.sh", "ln"}
    assert (dest / "pkg" / "b.py").read_bytes() == b"x = '$Format:%H$'\n"  # not substituted
    assert os.readlink(dest / "ln") == "a.txt" and os.access(dest / "run.sh", os.X_OK)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".exported")] == []  # no staging left


def test_export_tree_of_an_unknown_commit_leaves_no_directory(store: GitStore, tmp_path: Path) -> None:
    store.write_commit(BASELINE_REF, BASE_FILES)
    with pytest.raises(GitCommandError):
        export_tree(store.git_dir, "1" * 40, tmp_path / "exported")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.git"]


def test_no_module_but_gitstore_starts_git() -> None:
    """Git hardening is written once: every other module reaches git through gitstore's run_git."""
    package = Path(__file__).resolve().parents[1] / "repogym_gym"
    starts = [f"{p.relative_to(package)}:{node.lineno}" for p in package.rglob("*.py") if p.name != "gitstore.py"
              for node in ast.walk(ast.parse(p.read_text())) if isinstance(node, ast.List) and node.elts
              and isinstance(node.elts[0], ast.Constant) and node.elts[0].value == "git"]
    assert starts == []


@pytest.fixture
def full_disk(small_tmpfs) -> Path:  # noqa: ANN001 - tests/conftest.py's factory
    """A 256 KiB tmpfs mounted for the test."""
    return small_tmpfs("256k")


def test_a_patch_that_fills_the_disk_is_the_host_s_fault_not_the_patch_s(full_disk: Path) -> None:
    """Issue 13: "patch does not apply: No space left on device" was graded as the submission's 0."""
    from repogym_gym.errors import DiskFullError
    from repogym_gym.gitstore import git_apply

    tree = full_disk / "repo"
    tree.mkdir()
    (tree / "a.txt").write_text("one\n")
    big = "".join(f"+line {i:06d} {'x' * 60}\n" for i in range(8000))  # ~550 KB into 256 KiB
    patch = f"diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,8000 @@\n{big}"
    with pytest.raises(DiskFullError, match="no space left to apply a patch .*free disk space") as caught:
        git_apply(patch, tree)
    assert not isinstance(caught.value, PatchError)
    small = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n"
    with pytest.raises(PatchError, match="patch does not apply"):
        git_apply(small.replace("-one", "-three"), tree)  # a patch that does not apply is still the patch's fault
