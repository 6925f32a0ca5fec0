"""Dedicated unprivileged uids for sandboxed commands, one per concurrent command.

The kernel does not enforce RLIMIT_NPROC for uid 0, and counts processes per uid, so a command
that must not fork-bomb the host runs as a uid no other running command uses. A :class:`SlotPool`
hands out uids ``first_uid .. first_uid + size - 1`` (skipping any that name a real user or
group), each held under an exclusive ``flock`` on ``<lock_dir>/<uid>.lock``: the lock excludes
other threads and other processes alike, and dies with its holder.

The command's writable trees must belong to its uid; :func:`hand_over` gives them to it.

Example:
    >>> import tempfile
    >>> pool = SlotPool(first_uid=61000, size=4, lock_dir=Path(tempfile.mkdtemp()))
    >>> with pool.slot() as uid:
    ...     61000 <= uid < 61004
    True
"""

from __future__ import annotations

import fcntl
import grp
import os
import pwd
import stat
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from repogym_gym.errors import SandboxError
from repogym_gym.tree import walk_tree

__all__ = ["DEFAULT_FIRST_UID", "DEFAULT_LOCK_DIR", "SlotPool", "check_handable", "hand_over"]

#: First uid of the default pool; 61000-61183 lies below systemd's dynamic-user range (61184-65519).
DEFAULT_FIRST_UID = 61000
#: Where slot locks live (shared by every process of the machine).
DEFAULT_LOCK_DIR = Path("/run/lock/repogym-sandbox-slots")


def _is_known_id(uid: int) -> bool:
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
        except KeyError:
            continue
        return True
    return False


class SlotPool:
    """A pool of uids, each used by at most one command at a time on this machine.

    Args:
        first_uid: The pool's first uid (also used as the group id of each slot).
        size: Number of uids (the most commands that can run at once).
        lock_dir: Directory of the lock files (created on first use, mode 0700).
        wait_s: Seconds :meth:`slot` waits for a free uid before raising.
    """

    def __init__(self, first_uid: int = DEFAULT_FIRST_UID, size: int = 64, lock_dir: Path = DEFAULT_LOCK_DIR,
                 wait_s: float = 600.0) -> None:
        if first_uid < 1000 or size < 1:
            raise ValueError(f"a slot pool needs first_uid >= 1000 and size >= 1, got first_uid={first_uid} size={size}")
        self.lock_dir = Path(lock_dir)
        self.wait_s = wait_s
        self.uids = tuple(u for u in range(first_uid, first_uid + size) if not _is_known_id(u))
        if not self.uids:
            raise ValueError(f"every uid of {first_uid}..{first_uid + size - 1} names a user or group of this machine")
        self._next = 0
        self._lock = threading.Lock()

    def _try(self, uid: int) -> int | None:
        fd = os.open(self.lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return fd

    @contextmanager
    def slot(self, prefer: int | None = None) -> Iterator[int]:
        """Hold a free uid for the duration of the ``with`` block; ``prefer`` it when it is free
        (the uid that already owns the command's tree: nothing to hand over then).

        Raises:
            SandboxError: when no uid frees up within ``wait_s`` seconds, or the lock directory
                cannot be used.
        """
        try:
            self.lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            owner = self.lock_dir.lstat().st_uid
        except OSError as exc:
            raise SandboxError(f"cannot create the sandbox slot lock directory {self.lock_dir}: {exc}") from None
        if owner != os.geteuid():
            raise SandboxError(f"the sandbox slot lock directory {self.lock_dir} belongs to uid {owner}, not to this "
                               f"process (uid {os.geteuid()}); remove it or pass another lock_dir")
        deadline = time.monotonic() + self.wait_s
        while True:
            with self._lock:  # spread threads over the pool; the flock is what excludes
                start, self._next = self._next, (self._next + 1) % len(self.uids)
            order = self.uids[start:] + self.uids[:start]
            for uid in ((prefer,) if prefer in self.uids else ()) + order:
                fd = self._try(uid)
                if fd is not None:
                    try:
                        yield uid
                    finally:
                        os.close(fd)  # releases the flock
                    return
            if time.monotonic() >= deadline:
                raise SandboxError(f"all {len(self.uids)} sandbox slots stayed busy for {self.wait_s:g} s; "
                                   "raise the pool size (SlotPool(size=...)) or run fewer commands at once")
            time.sleep(0.01)


def _is_slot_uid(uid: int) -> bool:
    """Whether ``uid`` lies in the range sandbox slots are handed out from (never a real user's)."""
    return DEFAULT_FIRST_UID <= uid < 61184 and not _is_known_id(uid)


def check_handable(tree: str | os.PathLike[str]) -> str:
    """Return the real path of ``tree`` if it may be handed to a sandbox uid.

    A tree is handed over recursively, so it must be a directory made for the command (a
    workspace, a grading copy, a scratch directory), never a shared one: running a command with
    ``cwd="/tmp"`` once gave the whole of the host's ``/tmp`` to uid 61000 and locked root's own
    tools out of it.

    Raises:
        SandboxError: for ``/`` or a directory directly under it (``/tmp``, ``/home``, ``/work``),
            a sticky directory not owned by a slot uid (a shared temp directory), the home directory or one of its
            ancestors, or a directory holding this process's working directory or its interpreter.
    """
    real = os.path.realpath(os.fspath(tree))
    st = os.lstat(real)
    inside = [os.path.realpath(p) for p in (os.getcwd(), sys.prefix, os.path.expanduser("~"))]
    reasons = [
        (real.rstrip("/").count("/") <= 1, "it is / or a directory directly under /"),
        # a shared temp directory is sticky and root's; a tree already handed to a slot uid that a
        # command made sticky (chmod +t .) is still its own, and refusing it would be an infra error
        (bool(st.st_mode & stat.S_ISVTX) and not _is_slot_uid(st.st_uid), "it is a shared (sticky) directory"),
        (any(p == real or p.startswith(real.rstrip("/") + "/") for p in inside),
         "it holds this process's working directory, its interpreter or its home directory"),
    ]
    for refused, why in reasons:
        if refused:
            raise SandboxError(f"refusing to hand {real!r} to a sandbox uid: {why}; run sandboxed commands in a "
                               "directory made for them (a workspace or a fresh temporary directory)")
    return real


def hand_over(trees: Iterable[Path], uid: int, *, reclaim: Iterable[int] = ()) -> int:
    """Give every entry of ``trees`` (not following symlinks) to ``uid:uid``; return how many changed.

    Only entries owned by this process's uid or by a uid in ``reclaim`` (the pool's) change
    hands, and a regular file with more than one hard link is left alone when this process owns
    it, so nothing the host owns outside the trees can be reached through a planted link.

    Raises:
        SandboxError: when a tree is a shared directory (see :func:`check_handable`); nothing
            changes hands then.
    """
    trees = [Path(check_handable(tree)) for tree in trees]
    me, others = os.geteuid(), {*reclaim} - {uid}
    changed = 0

    def give(name: str, st: os.stat_result, dir_fd: int | None = None) -> None:
        nonlocal changed
        if st.st_uid == uid and st.st_gid == uid:
            return
        if st.st_uid != me and st.st_uid not in others:
            return
        if st.st_uid == me and stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            return
        try:
            os.chown(name, uid, uid, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return  # removed since it was listed
        changed += 1

    for tree in trees:
        root = os.fspath(tree)
        give(root, os.lstat(root))
        # through directory descriptors: a tree nested past PATH_MAX raised ENAMETOOLONG here before every
        # command, so the agent could no longer run the command that removes it (red-team round 43)
        for item in walk_tree(root, skip=frozenset(), paths=False):
            if item.st is not None and item.name:
                give(item.name, item.st, item.dir_fd)
    return changed

