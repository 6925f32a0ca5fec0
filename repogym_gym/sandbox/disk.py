"""A disk-use limit for a running command: the trees it may write hold at most so many bytes.

``RLIMIT_FSIZE`` caps one file; nothing else stops an unprivileged command from filling the
host's disk with many files below that cap in its workspace (quotas need filesystem support,
a tmpfs per workspace would not outlive the command). :class:`DiskWatch` is the ``watch`` of
:func:`~repogym_gym.sandbox.process.run_process`: each call costs one ``statvfs`` per
filesystem; the trees are walked when a filesystem has filled by ``step_bytes`` (or used
``step_bytes / 4 KiB`` inodes) since the last count, and at least every ``walk_every_s``.
A file counts for what it allocates, its apparent size (a sparse file still costs the grader
a full read when it hashes the tree) and at least 4 KiB (an inode: a million empty files
exhaust a filesystem too); a hard-linked file counts once. Past the limit the command is killed;
what it writes beyond the limit is bounded by ``step_bytes`` plus what it writes between two
calls (50 ms).

Example:
    >>> import tempfile
    >>> watch = DiskWatch([Path(tempfile.mkdtemp())], limit_bytes=2**20)
    >>> watch() is None
    True
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path

__all__ = ["DiskWatch", "tree_bytes"]

_MB = 1024 * 1024
#: What any file or directory counts for at least (an inode, a block).
MIN_ENTRY_BYTES = 4096


def tree_bytes(trees: Iterable[Path]) -> int:
    """What the entries under ``trees`` cost: per inode (symlinks not followed, each once) the
    largest of its allocated bytes, its apparent size and :data:`MIN_ENTRY_BYTES`."""
    seen: set[tuple[int, int]] = set()
    total = 0
    stack = [os.fspath(t) for t in trees]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(entry.path)
            key = (st.st_dev, st.st_ino)
            if key not in seen:
                seen.add(key)
                total += max(st.st_blocks * 512, st.st_size, MIN_ENTRY_BYTES)
    return total


def _used(path: Path) -> tuple[int, int]:
    """(bytes, inodes) in use on the filesystem of ``path``."""
    st = os.statvfs(path)
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
                 walk_every_s: float = 1.0) -> None:
        self.trees = [Path(t) for t in trees]
        self.limit_bytes = limit_bytes
        self.step_bytes = step_bytes if step_bytes is not None else min(64 * _MB, max(_MB, limit_bytes // 8))
        self.walk_every_s = walk_every_s
        self._mark()

    def _mark(self) -> None:
        self._marks = {t: _used(t) for t in self.trees}
        self._next_walk = time.monotonic() + self.walk_every_s

    def __call__(self) -> str | None:
        step_files = max(1, self.step_bytes // MIN_ENTRY_BYTES)
        try:
            grown = any(used - mark[0] >= self.step_bytes or files - mark[1] >= step_files
                        for t, mark in self._marks.items() for used, files in [_used(t)])
        except OSError:
            return None
        if not grown and time.monotonic() < self._next_walk:
            return None
        held = tree_bytes(self.trees)
        self._mark()
        if held > self.limit_bytes:
            return (f"the command's directories hold {held // _MB} MiB, over the disk limit of "
                    f"{self.limit_bytes // _MB} MiB (limits.disk_mb)")
        return None
