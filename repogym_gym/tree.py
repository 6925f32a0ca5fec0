"""Hashing a file tree, finding what changed against a baseline, and writing files safely.

Change detection never asks git: the tree is walked (symlinks not followed), every regular file
is hashed, and the result is compared with the baseline manifest, so git-ignored files, files
hidden by exclude rules and stale bytecode are all seen.

The agent builds the trees this module reads and removes, so every walk is total: it goes
through directory descriptors (:func:`walk_tree`: any depth, past PATH_MAX, at most two
descriptors open, no recursion), keeps names that are not UTF-8 as their lone surrogates, opens
files ``O_NOFOLLOW | O_NONBLOCK`` (a fifo is never waited on), and records what it cannot read
instead of raising.

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

import errno
import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from repogym_gym.errors import PathEscapeError

__all__ = [
    "Entry",
    "Manifest",
    "TreeChange",
    "GIT_MODE_EXECUTABLE",
    "GIT_MODE_FILE",
    "GIT_MODE_SYMLINK",
    "UNHASHED",
    "WalkItem",
    "check_parents",
    "diff_manifests",
    "discard_tree",
    "force_rmtree",
    "git_mode",
    "hash_file",
    "remove_path",
    "scan_tree",
    "walk_tree",
    "write_file_safely",
]

EntryKind = Literal["file", "symlink", "special", "unreadable"]
#: git's modes of the entries a tree records: a regular file, an executable one, a symlink.
GIT_MODE_FILE, GIT_MODE_EXECUTABLE, GIT_MODE_SYMLINK = 0o100644, 0o100755, 0o120000
#: The digest of a regular file :func:`scan_tree` did not read (past its ``max_hashed_bytes``).
UNHASHED = "unhashed"
#: Directories never walked, at any depth: git metadata an agent creates in its work tree is not part of a change.
SKIPPED_DIRS = frozenset({".git"})
#: Longest relative path :func:`scan_tree` enters, bytes (PATH_MAX): a deeper directory is one ``unreadable`` entry.
MAX_SCAN_PATH_BYTES = 4096
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a fifo swapped in for a file is never waited on (and is refused once open)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Entry:
    """One path of a tree.

    Attributes:
        kind: ``file`` (regular), ``symlink``, ``special`` (fifo, socket, device) or
            ``unreadable`` (could not be read whole: see :func:`scan_tree`).
        mode: ``0o755`` for an executable regular file, ``0o644`` otherwise (git's two modes).
        size: Bytes (regular files), link length (symlinks), 0 otherwise.
        digest: sha256 hex of the content (regular files) or of the link target (symlinks);
            for ``unreadable``, why (e.g. ``Permission denied``).
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


def git_mode(entry: Entry) -> int:
    """git's mode for a manifest entry: :data:`GIT_MODE_SYMLINK`, :data:`GIT_MODE_EXECUTABLE` (any x bit) or :data:`GIT_MODE_FILE`."""
    if entry.kind == "symlink":
        return GIT_MODE_SYMLINK
    return GIT_MODE_EXECUTABLE if entry.mode & 0o111 else GIT_MODE_FILE


def hash_file(path: Path) -> tuple[str, int]:
    """sha256 hex digest and size in bytes of a regular file (read without following a final symlink).

    Raises:
        OSError: when it cannot be opened, or is not a regular file (a fifo is never waited on).
    """
    fd = os.open(path, _FILE_FLAGS)
    return _hash_fd(fd, os.fspath(path))


def _hash_fd(fd: int, name: str) -> tuple[str, int]:
    """Digest and size of the open file ``fd`` (closed here), refusing anything but a regular file."""
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (it changed while it was read)", name)
        digest = hashlib.sha256()
        size = 0
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


class WalkItem(NamedTuple):
    """One entry met by :func:`walk_tree` (a tuple: the walk makes one per entry, so it is cheap).

    Attributes:
        dir_fd: An open descriptor of the directory holding the entry, valid only until the next
            item is asked for (open the entry with ``dir_fd=item.dir_fd``).
        name: The entry's name in that directory (a str; bytes that are not UTF-8 are carried as
            lone surrogates, as :func:`os.fsdecode` does).
        rel: Relative posix path from the root (None when the walk builds no paths).
        st: The entry's ``lstat`` (None when even that failed).
        error: Why the entry could not be read whole (a directory that could not be entered, was
            nested past the path limit, or was moved while walked); None when it was read.
    """

    dir_fd: int
    name: str
    rel: str | None
    st: os.stat_result | None
    error: OSError | None = None


@dataclass
class _Frame:
    key: tuple[int, int]  # (st_dev, st_ino) of the directory
    rel: str | None
    nbytes: int  # length of rel, in file system bytes
    pending: list[tuple[str, os.stat_result]]


def _child(frame: _Frame, name: str) -> tuple[str | None, int]:
    nbytes = frame.nbytes + (1 if frame.nbytes else 0) + len(os.fsencode(name))
    if frame.rel is None:
        return None, nbytes
    return (f"{frame.rel}/{name}" if frame.rel else name), nbytes


def _list(fd: int, frame: _Frame, skip: frozenset[str] | set[str]) -> Iterator[WalkItem]:
    """The items of the directory open at ``fd``; subdirectories to enter go to ``frame.pending``."""
    try:
        with os.scandir(fd) as it:
            entries = list(it)
    except OSError as exc:
        yield WalkItem(fd, "", frame.rel, None, exc)
        return
    for entry in entries:
        rel = None if frame.rel is None else _child(frame, entry.name)[0]
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue  # removed since it was listed: it holds nothing now
        except OSError as exc:
            yield WalkItem(fd, entry.name, rel, None, exc)
            continue
        yield WalkItem(fd, entry.name, rel, st)
        if stat.S_ISDIR(st.st_mode) and entry.name not in skip:
            frame.pending.append((entry.name, st))
    frame.pending.reverse()  # entered in listing order


def walk_tree(root: str | os.PathLike[str], *, skip: frozenset[str] | set[str] = SKIPPED_DIRS, paths: bool = True,
              max_path_bytes: int = MAX_SCAN_PATH_BYTES) -> Iterator[WalkItem]:
    """Every entry under ``root``, depth first, through directory descriptors: any depth, any name.

    The walk holds at most two descriptors open whatever the depth (it goes back up through
    ``..``, checking it is the directory it came from), never follows a symlink, never recurses
    in Python and never builds a path longer than ``max_path_bytes``. Directories are yielded
    before their contents. An entry removed while the walk runs is skipped; anything else that
    cannot be read is yielded with ``error`` set (a directory so yielded is not entered), so a
    caller decides how to fail closed. A directory moved while walked ends the walk with an
    error item for it.

    Args:
        root: The tree (its own open errors raise).
        skip: Directory names never entered, at any depth (still yielded).
        paths: Build each item's ``rel``. Without paths, nothing bounds the depth.
        max_path_bytes: With ``paths``, a directory whose relative path is longer is yielded with
            an ``ENAMETOOLONG`` error and not entered.

    Raises:
        OSError: when ``root`` cannot be opened as a directory.
    """
    fd = os.open(root, _DIR_FLAGS)
    try:
        st = os.fstat(fd)
        stack = [_Frame((st.st_dev, st.st_ino), "" if paths else None, 0, [])]
        yield from _list(fd, stack[0], skip)
        while stack:
            frame = stack[-1]
            if not frame.pending:
                stack.pop()
                if not stack:
                    break
                try:
                    parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    yield WalkItem(fd, "", frame.rel, None, exc)
                    return
                os.close(fd)
                fd = parent
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) != stack[-1].key:
                    yield WalkItem(fd, "", frame.rel, None, OSError(errno.ESTALE, "the directory was moved while it was read"))
                    return
                continue
            name, st = frame.pending.pop()
            rel, nbytes = _child(frame, name) if paths else (None, 0)
            if nbytes > max_path_bytes:
                yield WalkItem(fd, name, rel, st, OSError(errno.ENAMETOOLONG, f"nested past {max_path_bytes} bytes of path"))
                continue
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                yield WalkItem(fd, name, rel, st, exc)
                continue
            child_st = os.fstat(child)
            if (child_st.st_dev, child_st.st_ino) != (st.st_dev, st.st_ino):
                os.close(child)
                yield WalkItem(fd, name, rel, st, OSError(errno.ESTALE, "the directory was replaced while it was read"))
                continue
            os.close(fd)
            fd = child
            stack.append(_Frame((st.st_dev, st.st_ino), rel, nbytes, []))
            yield from _list(fd, stack[-1], skip)
    finally:
        os.close(fd)


def _reason(exc: OSError) -> str:
    return str(exc.strerror or exc)


def scan_tree(root: str | os.PathLike[str], *, max_hashed_bytes: int | None = None) -> Manifest:
    """Hash every non-directory path under ``root`` (``.git`` directories are skipped).

    Total over whatever an agent can build: any depth, any name (names that are not UTF-8
    keep their lone surrogates), files that cannot be read. What cannot be read whole is
    recorded, never skipped: an unreadable file or directory, and a directory nested past
    :data:`MAX_SCAN_PATH_BYTES` of path, is one ``unreadable`` entry.

    Args:
        root: The tree.
        max_hashed_bytes: Most bytes of file content read in all (None: no limit). A regular
            file bigger than what is left of it keeps its size and gets the digest
            :data:`UNHASHED` (a tree an agent made can hold a thousand sparse 1 GB files, which
            hold no disk but take an hour to hash).

    Returns:
        Relative posix path -> Entry, for regular files, symlinks, special files and
        unreadable entries.

    Raises:
        OSError: when ``root`` itself cannot be opened as a directory.
    """
    manifest: Manifest = {}
    budget = max_hashed_bytes
    for item in walk_tree(root):
        rel, st = item.rel or ".", item.st
        if item.error is not None or st is None:
            manifest[rel] = Entry("unreadable", 0, 0, _reason(item.error) if item.error else "unreadable")
        elif stat.S_ISDIR(st.st_mode):
            continue
        elif stat.S_ISREG(st.st_mode):
            mode = 0o755 if st.st_mode & 0o111 else 0o644
            if budget is not None and st.st_size > budget:
                manifest[rel] = Entry("file", mode, st.st_size, UNHASHED)
                continue
            try:
                digest, size = _hash_fd(os.open(item.name, _FILE_FLAGS, dir_fd=item.dir_fd), rel)
            except FileNotFoundError:
                continue
            except OSError as exc:
                manifest[rel] = Entry("unreadable", 0, 0, _reason(exc))
                continue
            if budget is not None:
                budget -= size
            manifest[rel] = Entry("file", mode, size, digest)
        elif stat.S_ISLNK(st.st_mode):
            try:  # the bytes: a target need not be UTF-8
                target = os.readlink(os.fsencode(item.name), dir_fd=item.dir_fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                manifest[rel] = Entry("unreadable", 0, 0, _reason(exc))
                continue
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
        status: Literal["added", "modified", "deleted"] = (
            "added" if old is None else "deleted" if new is None else "modified")
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


def _open_dir(name: str | os.PathLike[str], dir_fd: int | None, key: tuple[int, int] | None) -> int:
    """Open the directory ``name`` for listing, first making it accessible (0o700) whatever its
    mode, without following a symlink; ``key`` (st_dev, st_ino), when given, must match."""
    handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        st = os.fstat(handle)
        if key is not None and (st.st_dev, st.st_ino) != key:
            raise OSError(errno.ESTALE, "the directory was replaced while it was removed", os.fspath(name))
        if stat.S_IMODE(st.st_mode) & 0o700 != 0o700:
            os.chmod(f"/proc/self/fd/{handle}", 0o700)  # the O_PATH handle: never a symlink's target
        return os.open(".", _DIR_FLAGS, dir_fd=handle)
    finally:
        os.close(handle)


def _empty_dir(root: Path) -> None:
    """Remove everything below the directory ``root``: any depth, any mode, at most two descriptors."""
    fd = _open_dir(root, None, None)
    try:
        st = os.fstat(fd)
        stack: list[tuple[tuple[int, int], str, list[tuple[str, tuple[int, int]]]]] = [((st.st_dev, st.st_ino), "", [])]
        _unlink_entries(fd, stack[-1][2])
        while stack:
            key, name, subdirs = stack[-1]
            if subdirs:
                child_name, child_key = subdirs.pop()
                try:
                    child = _open_dir(child_name, fd, child_key)
                except FileNotFoundError:
                    continue
                os.close(fd)
                fd = child
                stack.append((child_key, child_name, []))
                _unlink_entries(fd, stack[-1][2])
                continue
            stack.pop()
            if not stack:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != stack[-1][0]:
                raise OSError(errno.ESTALE, "a directory was moved while the tree was removed", os.fspath(root))
            try:
                os.rmdir(name, dir_fd=fd)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)


def _unlink_entries(fd: int, subdirs: list[tuple[str, tuple[int, int]]]) -> None:
    """Unlink every non-directory of the directory open at ``fd``; its subdirectories go to ``subdirs``."""
    with os.scandir(fd) as it:
        entries = list(it)
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                subdirs.append((entry.name, (st.st_dev, st.st_ino)))
            else:
                os.unlink(entry.name, dir_fd=fd)
        except FileNotFoundError:
            continue


def force_rmtree(root: Path) -> None:
    """Remove a directory tree whatever its owner did to it: directories made unreadable (mode
    000), nested past PATH_MAX or thousands of levels deep, names that are not UTF-8.

    The tree is walked through directory descriptors (no recursion, at most three descriptors
    open), every directory is made accessible (0o700) before it is listed, and symlinks are never
    followed. A missing ``root`` is fine; a symlink or file at ``root`` is unlinked.

    Raises:
        OSError: when the tree could not be removed (three attempts; e.g. a live process keeps
            writing into it).
    """
    root = Path(root)
    for attempt in range(3):
        try:
            st = root.lstat()
        except FileNotFoundError:
            return
        try:
            if not stat.S_ISDIR(st.st_mode):
                root.unlink()
            else:
                _empty_dir(root)
                root.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if attempt == 2:
                raise


def discard_tree(root: Path) -> bool:
    """:func:`force_rmtree` for a tree the grader made and code it ran may have filled (a grading
    copy, a benchmark copy): never raises. Returns False, leaving what could not be removed, when
    removal failed."""
    try:
        force_rmtree(root)
    except OSError:
        return False
    return True


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
