"""A disk-use limit for a running command: the trees it may write hold at most so many bytes.

``RLIMIT_FSIZE`` caps one file; nothing else stops an unprivileged command from filling the
host's disk with many files below that cap in its workspace (quotas need filesystem support,
a tmpfs per workspace would not outlive the command). :class:`DiskWatch` is the ``watch`` of
:func:`~repogym_gym.sandbox.process.run_process`: each call costs one ``statvfs`` per
filesystem; the trees are walked when a filesystem has filled by ``step_bytes`` (or used
``step_bytes / 4 KiB`` inodes) since the last count, and at least every ``walk_every_s``.
A file counts for what it allocates, its apparent size (a sparse file still costs the grader
a full read when it hashes the tree) and at least 4 KiB (an inode: a million empty files
exhaust a filesystem too); a hard-linked file counts once. The trees are walked through
directory descriptors, so depth and names do not matter; a tree that cannot be counted whole
(a directory that cannot be entered) counts as over the limit. Past the limit the command is killed;
what it writes beyond the limit is bounded by ``step_bytes`` plus what it writes between two
calls (:data:`~repogym_gym.sandbox.process.WATCH_INTERVAL_S`, 10 ms: page-cache writes run at
about 1.7 GB/s here, so a 50 ms look let 3 MiB files past a 24 MiB limit up to 145 MiB held, against
25-72 MiB with 10 ms, idle or with six busy processes on the two cores), except that a filesystem
with delayed allocation counts written blocks only at writeback, so ``statvfs`` can lag: the periodic walk (every 0.25 s) bounds that lag (at 1 GB/s of
page-cache writes, 250 MiB; a 1 s walk let a loaded machine overshoot a 24 MiB limit by 150 MiB),
and once a count finds the trees past half the limit, every call counts them.

Example:
    >>> import tempfile
    >>> watch = DiskWatch([Path(tempfile.mkdtemp())], limit_bytes=2**20)
    >>> watch() is None
    True
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path

from repogym_gym.tree import walk_tree

__all__ = ["DiskWatch", "tree_bytes"]

_MB = 1024 * 1024
#: What any file or directory counts for at least (an inode, a block).
MIN_ENTRY_BYTES = 4096


def tree_bytes(trees: Iterable[Path]) -> int:
    """What the entries under ``trees`` cost: per inode (symlinks not followed, each once) the
    largest of its allocated bytes, its apparent size and :data:`MIN_ENTRY_BYTES`.

    Every entry counts, at any depth and under any name: the trees are walked through directory
    descriptors (:func:`~repogym_gym.tree.walk_tree`), so a directory nested past PATH_MAX is
    counted like any other. An entry removed while it is counted is skipped (it holds nothing
    any more); a tree that does not exist holds nothing.

    Raises:
        OSError: when part of a tree cannot be counted (a directory that cannot be entered, one
            moved while counted): the caller fails closed.
    """
    seen: set[tuple[int, int]] = set()
    total = 0
    for tree in trees:
        try:
            items = walk_tree(tree, skip=frozenset(), paths=False)
            for item in items:
                if item.error is not None or item.st is None:
                    where = item.name or "a directory"
                    raise OSError(getattr(item.error, "errno", None) or errno.EIO,
                                  f"{where} under {tree} cannot be counted: {item.error}")
                st = item.st
                if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):  # a hard link counts once
                    key = (st.st_dev, st.st_ino)
                    if key in seen:
                        continue
                    seen.add(key)
                total += max(st.st_blocks * 512, st.st_size, MIN_ENTRY_BYTES)
        except FileNotFoundError as exc:
            if exc.filename is not None and Path(exc.filename) == Path(tree):
                continue  # the tree itself is gone: it holds nothing
            raise
    return total


def _used(path: Path) -> tuple[int, int] | None:
    """(bytes, inodes) in use on the filesystem of ``path``; None when it cannot be asked."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree


class DiskWatch:
    """Says why a command must stop once its ``trees`` hold more than ``limit_bytes``.

    Args:
        trees: The directories the command may write (they must exist).
        limit_bytes: Most bytes the trees may hold together.
        step_bytes: Filesystem growth between two counts of the trees (default: an eighth of
            the limit, between 1 and 64 MiB).
        walk_every_s: Seconds after which the trees are counted whatever the filesystem did.
    """

    def __init__(self, trees: Iterable[Path], limit_bytes: int, step_bytes: int | None = None,
                 walk_every_s: float = 0.25) -> None:
        self.trees = [Path(t) for t in trees]
        self.limit_bytes = limit_bytes
        self.step_bytes = step_bytes if step_bytes is not None else min(64 * _MB, max(_MB, limit_bytes // 8))
        self.walk_every_s = walk_every_s
        self._mark()

    def _mark(self, held: int = 0) -> None:
        self._marks = {t: _used(t) for t in self.trees}
        # past half the limit every call counts the trees: statvfs may not show the last writes yet
        self._next_walk = time.monotonic() + (0.0 if held * 2 > self.limit_bytes else self.walk_every_s)

    def _grown(self) -> bool:
        """Whether a filesystem filled by a step since the last count (or cannot be asked: count)."""
        step_files = max(1, self.step_bytes // MIN_ENTRY_BYTES)
        for tree, mark in self._marks.items():
            now = _used(tree)
            if mark is None or now is None or now[0] - mark[0] >= self.step_bytes or now[1] - mark[1] >= step_files:
                return True
        return False

    def __call__(self) -> str | None:
        if not self._grown() and time.monotonic() < self._next_walk:
            return None
        held = 0
        try:
            held = tree_bytes(self.trees)
        except OSError as exc:  # fail closed: what cannot be counted counts as over the limit
            return (f"the command's directories cannot be counted for the disk limit of "
                    f"{self.limit_bytes // _MB} MiB (limits.disk_mb): {exc.strerror or exc}")
        finally:
            self._mark(held)
        if held > self.limit_bytes:
            return (f"the command's directories hold {held // _MB} MiB, over the disk limit of "
                    f"{self.limit_bytes // _MB} MiB (limits.disk_mb)")
        return None
