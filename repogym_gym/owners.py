"""Who made a resource, so that what a killed process left behind can be told apart and reaped.

A process killed with SIGKILL runs no cleanup: its grading directories (holding hidden tests) stay
in ``$TMPDIR`` and its containers run on. Each such resource carries its owner,
``<boot id>:<pid>:<start time>``, which names one process once: a pid reused later, or after a
reboot, names another owner. :func:`owned_tempdir` puts it in a directory's name and
:func:`sweep_tempdirs` removes the directories whose owner is gone (once per process, at the first
grading); containers carry it as a label (:mod:`repogym_gym.sandbox.containers`).

Example:
    >>> process_owner(os.getpid()).split(":")[1] == str(os.getpid())
    True
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from repogym_gym.reap import process_owner
from repogym_gym.tree import discard_tree

__all__ = ["TEMP_PREFIXES", "descendants", "owned_temporary", "owned_tempdir", "process_owner", "reaper", "start_group_reaper",
           "sweep_tempdirs", "unwatch_group", "watch_group"]

#: Every kind of temporary directory an episode makes (grading copies and test runs hold hidden tests,
#: golden ones the answer, workspaces and episode folders the agent's work): :func:`sweep_tempdirs`
#: removes those of dead processes.
TEMP_PREFIXES = ("repogym-grade-", "repogym-test-", "repogym-golden-", "repogym-workspace-", "repogym-episode-",
                 "repogym-shell-", "repogym-warm-")

_log = logging.getLogger(__name__)
_swept: set[str] = set()
_lock = threading.Lock()
#: ``<prefix><pid>.<start time>-<rest>``: the owner part of a directory name (the boot id is the machine's).
_NAME = re.compile(r"^(?P<prefix>repogym-[a-z]+-)(?P<pid>\d+)\.(?P<start>\d+)-")


def owned_tempdir(prefix: str, label: str, parent: str | os.PathLike[str] | None = None) -> Path:
    """A new private (0700) directory in ``parent`` (default ``$TMPDIR``) named ``<prefix><pid>.<start time>-<label>-XXXX``.

    Args:
        prefix: ``repogym-<kind>-`` (letters only in ``kind``): what :func:`sweep_tempdirs` looks for.
        label: Readable context (a task id).
        parent: Where to make it.
    """
    owner = process_owner(os.getpid()) or f"?:{os.getpid()}:0"
    _, pid, start = owner.split(":")
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{pid}.{start}-{label}-", dir=parent))


@contextlib.contextmanager
def owned_temporary(prefix: str, label: str) -> Iterator[Path]:
    """:func:`owned_tempdir` for a block, removed when it ends (a killed process's, by the next sweep)."""
    sweep_tempdirs(TEMP_PREFIXES)
    path = owned_tempdir(prefix, label)
    try:
        yield path
    finally:
        discard_tree(path)


def sweep_tempdirs(prefixes: tuple[str, ...], root: Path | None = None) -> list[Path]:
    """Remove the directories of ``prefixes`` in ``root`` (default ``$TMPDIR``) whose owner is dead.

    Runs once per process and root (later calls return ``[]``); never raises. Returns what it removed.
    """
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    with _lock:
        if str(base) in _swept:
            return []
        _swept.add(str(base))
    removed: list[Path] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        match = _NAME.match(entry.name)
        if match is None or match["prefix"] not in prefixes or not entry.is_dir(follow_symlinks=False):
            continue
        owner = process_owner(int(match["pid"]))
        if owner is not None and owner.split(":")[2] == match["start"]:
            continue  # its process lives
        try:
            discard_tree(Path(entry.path))
            removed.append(Path(entry.path))
        except OSError:
            continue
    if removed:
        _log.warning("removed %d %s left by dead processes in %s", len(removed),
                     "directory" if len(removed) == 1 else "directories", base)
    return removed


def descendants(pid: int) -> list[int]:
    """The live processes below ``pid`` (children, their children...), from ``/proc``; [] off Linux."""
    children: dict[int, list[int]] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        parent = int(stat[stat.rfind(b")") + 2:].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


#: How a reaper starts: :mod:`repogym_gym.reap` run by its path, isolated (no environment, no site-packages,
#: no package import), so it is ready in tens of milliseconds.
_REAPER = (sys.executable, "-I", "-S", str(Path(__file__).with_name("reap.py")))


def reaper(pids: list[int]) -> subprocess.Popen[bytes] | None:
    """A process that SIGKILLs ``pids`` once this process closes its stdin or dies (its own session:
    a kill of this process's group spares it). Each pid is killed only if it is still the process
    it was (owner checked: a pid reused since is left alone). None when there is nothing to watch.

    Used for the local Ray a run starts: killed with SIGKILL, the driver left Ray's agents running
    about a minute (they publish the raylet's death to a GCS that is gone, with a fixed 60 s timeout).
    """
    owners = [o for o in (process_owner(p) for p in pids) if o is not None]
    if not owners:
        return None
    return subprocess.Popen([*_REAPER, "owners", *owners], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


_groups_lock = threading.Lock()
#: The group reaper of this process, once started, as ``[(pid that started it, reaper)]``: a forked child
#: inherits the list but not the reaper (it is not the child's child), so it starts its own.
_group_reaper: list[tuple[int, subprocess.Popen[bytes]]] = []


def watch_group(pgid: int) -> None:
    """Have a reaper SIGKILL the process group ``pgid`` if this process dies before :func:`unwatch_group`.

    A command of the local sandbox dies with this process (its parent-death signal), but what it
    starts does not: a killed run's pytest children and a perf benchmark's workers ran on. One
    reaper per process (its own session) holds the groups and kills those still listed when its
    stdin reaches EOF, which the kernel gives it when this process dies however it dies. Never raises.
    """
    _tell_reaper(f"+{pgid}\n")


def unwatch_group(pgid: int) -> None:
    """The group ``pgid`` ended (its members were killed): the reaper forgets it. Never raises."""
    _tell_reaper(f"-{pgid}\n")


def start_group_reaper() -> None:
    """Start this process's group reaper now if it has none, so that :func:`watch_group` right after a
    command starts is one write to a pipe (a parent killed between the two leaves the command's
    children only in that window). Never raises."""
    with _groups_lock:
        _live_reaper()


def _live_reaper() -> subprocess.Popen[bytes] | None:
    """This process's live group reaper, started if needed; None when it cannot start. Caller holds ``_groups_lock``."""
    if _group_reaper and _group_reaper[0][0] == os.getpid() and _group_reaper[0][1].poll() is None:
        return _group_reaper[0][1]
    _drop_reaper()
    try:
        _group_reaper[:] = [(os.getpid(), subprocess.Popen(
            [*_REAPER, "groups"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True))]
    except OSError as exc:
        _log.warning("could not start a process-group reaper: %s", exc)
        return None
    return _group_reaper[0][1]


def _tell_reaper(line: str) -> None:
    with _groups_lock:
        for attempt in range(2):
            if line.startswith("-") and not (_group_reaper and _group_reaper[0][0] == os.getpid()
                                             and _group_reaper[0][1].poll() is None):
                _drop_reaper()
                return  # a reaper that is gone holds nothing to forget
            reaper_process = _live_reaper()
            stdin = reaper_process.stdin if reaper_process is not None else None
            try:
                if stdin is None:
                    raise OSError("no reaper process")
                stdin.write(line.encode("ascii"))
                stdin.flush()
                return
            except (OSError, ValueError):
                _drop_reaper()
                if attempt:
                    _log.warning("no reaper watches process group %s", line[1:].strip())


def _drop_reaper() -> None:
    """Close this process's end of a reaper's pipe (the CI run failed on the unclosed file a dead reaper's
    ``Popen`` left to the garbage collector) and forget it. Caller holds ``_groups_lock``."""
    for pid, reaper_process in _group_reaper:
        with contextlib.suppress(OSError, ValueError):
            if reaper_process.stdin is not None:
                reaper_process.stdin.close()
        if pid != os.getpid() and reaper_process.returncode is None:
            reaper_process.returncode = 0  # not this process's child: nothing to wait for, nothing to warn of
    _group_reaper.clear()


@atexit.register
def _end_reaper_at_exit() -> None:
    """At a normal exit the reaper gets its EOF now (it kills the groups still listed, as it would at a
    crash) and is waited for, so no "subprocess is still running" warning is left."""
    with _groups_lock:
        reapers = [reaper_process for pid, reaper_process in _group_reaper if pid == os.getpid()]
        _drop_reaper()
    for reaper_process in reapers:
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            reaper_process.wait(timeout=10)
