"""Hashing a file tree, finding what changed against a baseline, and writing files safely.

Change detection never asks git: the tree is walked (symlinks not followed), every regular file
is hashed, and the result is compared with the baseline manifest, so git-ignored files, files
hidden by exclude rules and stale bytecode are all seen.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.py").write_text("x = 1\\n")
    >>> base = scan_tree(root)
    >>> _ = (root / "a.py").write_text("x = 2\\n")
    >>> [c.path for c in diff_manifests(base, scan_tree(root))]
    ['a.py']
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from repogym_gym.errors import PathEscapeError

__all__ = [
    "Entry",
    "Manifest",
    "TreeChange",
    "UNHASHED",
    "check_parents",
    "diff_manifests",
    "force_rmtree",
    "hash_file",
    "remove_path",
    "scan_tree",
    "write_file_safely",
]

EntryKind = Literal["file", "symlink", "special"]
#: The digest of a regular file :func:`scan_tree` did not read (past its ``max_hashed_bytes``).
UNHASHED = "unhashed"
#: Directories never walked, at any depth: git metadata an agent creates in its work tree is not part of a change.
SKIPPED_DIRS = frozenset({".git"})


@dataclass(frozen=True)
class Entry:
    """One path of a tree.

    Attributes:
        kind: ``file`` (regular), ``symlink`` or ``special`` (fifo, socket, device).
        mode: ``0o755`` for an executable regular file, ``0o644`` otherwise (git's two modes).
        size: Bytes (regular files), link length (symlinks), 0 otherwise.
        digest: sha256 hex of the content (regular files) or of the link target (symlinks).
    """

    kind: EntryKind
    mode: int
    size: int
    digest: str


Manifest = dict[str, Entry]


@dataclass(frozen=True)
class TreeChange:
    """A path whose entry differs between two manifests.

    Attributes:
        path: Relative posix path.
        status: ``added``, ``modified`` or ``deleted``.
        old: The baseline entry (None when added).
        new: The current entry (None when deleted).
    """

    path: str
    status: Literal["added", "modified", "deleted"]
    old: Entry | None
    new: Entry | None


def hash_file(path: Path) -> tuple[str, int]:
    """sha256 hex digest and size in bytes of a regular file (read without following a final symlink)."""
    digest = hashlib.sha256()
    size = 0
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _walk(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    stack = [root]
    while stack:
        current = stack.pop()
        with os.scandir(current) as it:
            for entry in it:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    if entry.name not in SKIPPED_DIRS:
                        stack.append(Path(entry.path))
                    continue
                yield Path(entry.path).relative_to(root).as_posix(), st


def scan_tree(root: str | os.PathLike[str], *, max_hashed_bytes: int | None = None) -> Manifest:
    """Hash every non-directory path under ``root`` (``.git`` directories are skipped).

    Args:
        root: The tree.
        max_hashed_bytes: Most bytes of file content read in all (None: no limit). A regular
            file bigger than what is left of it keeps its size and gets the digest
            :data:`UNHASHED` (a tree an agent made can hold a thousand sparse 1 GB files, which
            hold no disk but take an hour to hash).

    Returns:
        Relative posix path -> Entry, for regular files, symlinks and special files.
    """
    root = Path(root)
    manifest: Manifest = {}
    budget = max_hashed_bytes
    for rel, st in _walk(root):
        if stat.S_ISREG(st.st_mode):
            mode = 0o755 if st.st_mode & 0o111 else 0o644
            if budget is not None and st.st_size > budget:
                manifest[rel] = Entry("file", mode, st.st_size, UNHASHED)
                continue
            digest, size = hash_file(root / rel)
            if budget is not None:
                budget -= size
            manifest[rel] = Entry("file", mode, size, digest)
        elif stat.S_ISLNK(st.st_mode):
            target = os.fsencode(os.readlink(root / rel))  # the bytes: a target need not be UTF-8
            manifest[rel] = Entry("symlink", 0o777, len(target), hashlib.sha256(target).hexdigest())
        else:
            manifest[rel] = Entry("special", 0, 0, "")
    return manifest


def diff_manifests(baseline: Mapping[str, Entry], current: Mapping[str, Entry]) -> list[TreeChange]:
    """Paths added, modified or deleted from ``baseline`` to ``current``, sorted by path."""
    changes = []
    for path in sorted(baseline.keys() | current.keys()):
        old, new = baseline.get(path), current.get(path)
        if old == new:
            continue
        status = "added" if old is None else "deleted" if new is None else "modified"
        changes.append(TreeChange(path, status, old, new))
    return changes


def check_parents(root: Path, rel: str) -> Path:
    """``root / rel`` after checking ``rel`` is relative, has no ``..`` and no parent that is a symlink or a file.

    Raises:
        PathEscapeError: naming the offending component.
    """
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise PathEscapeError(f"path {rel!r} must be relative and stay inside the tree")
    current = root
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise PathEscapeError(f"path {rel!r} goes through the symlink {current.relative_to(root).as_posix()!r}")
        if current.exists() and not current.is_dir():
            raise PathEscapeError(f"path {rel!r} goes through the file {current.relative_to(root).as_posix()!r}")
    return current / parts[-1]


def write_file_safely(root: Path, rel: str, data: bytes, mode: int = 0o644, *, clear_parents: bool = False) -> None:
    """Write ``data`` at ``root/rel`` without following any symlink on the way.

    A symlink or special file already at the destination is replaced, never written through.
    With ``clear_parents`` (for trees the caller owns), a file or symlink standing where a parent
    directory must be is removed first instead of refused.

    Raises:
        PathEscapeError: when ``rel`` escapes ``root`` or (without ``clear_parents``) a parent
            directory is a symlink or a file.
    """
    if clear_parents:
        current = root
        for part in Path(rel).parts[:-1]:
            current = current / part
            if current.is_symlink() or (current.exists() and not current.is_dir()):
                current.unlink()
    dest = check_parents(root, rel)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_symlink() or (dest.exists() and not dest.is_file()):
        remove_path(dest)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(dest, mode)


def force_rmtree(root: Path) -> None:
    """Remove a directory tree even where its owner made directories unreadable (mode 000).

    Every directory is made accessible (0o700) before it is listed, at any depth; symlinks are
    never followed. A missing ``root`` is fine.
    """
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            if current.is_symlink() or not current.is_dir():
                continue
            os.chmod(current, 0o700)
            with os.scandir(current) as it:
                stack.extend(Path(e.path) for e in it if e.is_dir(follow_symlinks=False))
        except OSError:
            continue
    shutil.rmtree(root, ignore_errors=not root.exists())


def remove_path(path: Path) -> None:
    """Remove a file, symlink or directory tree at ``path`` (never following a symlink); missing is fine."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        force_rmtree(path)
    else:
        path.unlink()
