"""The reaper processes' program: the standard library only, run as a script by its path.

A reaper (:func:`repogym_gym.owners.reaper`, :func:`repogym_gym.owners.watch_group`) is started as
``python -I -S <this file> groups`` or ``... owners <owner>...``: it imports nothing of the package
(whose ``__init__`` costs about 0.8 s here, more on a loaded machine: a parent killed within that
time once left a command's children running), ignores the environment and site-packages, and is
ready in tens of milliseconds. It waits for EOF on stdin, which the kernel gives it when the
process that started it dies however it dies, then kills what it was told of.

Example:
    >>> process_owner(os.getpid()).split(":")[1] == str(os.getpid())
    True
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterable

__all__ = ["main", "process_owner", "reap_groups", "reap_owners"]


def process_owner(pid: int) -> str | None:
    """``<boot id>:<pid>:<start time in clock ticks>`` of a live process, None when it is gone."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            boot = handle.read().strip()
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # after the command name, which may hold spaces
    return f"{boot}:{pid}:{fields[19].decode()}" if len(fields) > 19 else None


def reap_groups(lines: Iterable[bytes]) -> set[int]:
    """Keep the process groups told of (``+pgid`` / ``-pgid`` lines) until they end,
    then SIGKILL every group still listed. Returns those groups."""
    groups: set[int] = set()
    for raw in lines:
        line = raw.strip()
        if line[:1] in (b"+", b"-") and line[1:].isdigit():
            (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    return groups


def reap_owners(owners: list[str]) -> None:
    """SIGKILL each owner's process (``<boot id>:<pid>:<start time>``) that is still that process."""
    for owner in owners:
        pid = int(owner.split(":")[1])
        if process_owner(pid) == owner:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """``groups``: read ``+pgid``/``-pgid`` lines to EOF, kill the groups left; ``owners <owner>...``:
    wait for EOF, kill the owners' processes. Returns the exit code (2 for an unknown mode)."""
    if argv[:1] == ["groups"]:
        reap_groups(sys.stdin.buffer)
        return 0
    if argv[:1] == ["owners"]:
        with contextlib.suppress(OSError):
            sys.stdin.buffer.read()
        reap_owners(argv[1:])
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
