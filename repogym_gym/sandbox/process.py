"""Run one process with a timeout that kills its whole process group and a capped output.

Shared by every sandbox: the sandbox decides the argv prefix (bwrap, docker exec, nothing) and
the environment; this module owns starting, streaming, capping and killing.
"""

from __future__ import annotations

import os
import resource
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from repogym_gym.owners import start_group_reaper, unwatch_group, watch_group
from repogym_gym.results import CommandResult
from repogym_gym.sandbox.cputime import CPU_SAMPLE_S, CpuCgroup, tree_cpu_s

__all__ = ["CappedBuffer", "run_captured", "run_process"]

#: Seconds to keep reading after the main process exited, before giving up on pipes that
#: an escaped process still holds open.
DRAIN_GRACE_S = 1.0
#: Seconds between two calls of a run's ``watch`` check (a :class:`~repogym_gym.sandbox.disk.DiskWatch`
#: costs one ``statvfs`` per tree a call): what a command writes past a disk limit is what it
#: writes in this long, about 17 MiB at the page-cache speed measured here.
WATCH_INTERVAL_S = 0.01
_CHUNK = 65536


class CappedBuffer:
    """Keeps the first and last ``limit // 2`` bytes of a stream and counts the rest.

    Memory stays O(limit) whatever the stream's size.

    Example:
        >>> buf = CappedBuffer(10)
        >>> buf.feed(b"0123456789abcdef")
        >>> buf.text()
        '01234\\n[... 6 bytes truncated by repogym ...]\\nbcdef'
    """

    def __init__(self, limit: int) -> None:
        self._half = max(1, limit // 2)
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._half - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail.append(data)
        self._tail_len += len(data)
        while self._tail_len - len(self._tail[0]) >= self._half:
            self._tail_len -= len(self._tail.popleft())

    @property
    def truncated(self) -> bool:
        return self.total > len(self._head) + min(self._tail_len, self._half)

    def text(self) -> str:
        tail = b"".join(self._tail)[-self._half :] if self._tail else b""
        dropped = self.total - len(self._head) - len(tail)
        if dropped <= 0:
            return (bytes(self._head) + tail).decode("utf-8", errors="replace")
        marker = f"\n[... {dropped} bytes truncated by repogym ...]\n"
        return self._head.decode("utf-8", errors="replace") + marker + tail.decode("utf-8", errors="replace")


def _reap(proc: subprocess.Popen[bytes], usage: list[resource.struct_rusage], *, block: bool) -> bool:
    """Whether ``proc`` has exited, reaping it with ``wait4`` so that its resource usage (its own and
    that of every process below it that was waited for) lands in ``usage``. Sets ``proc.returncode``."""
    if proc.returncode is not None:
        return True
    try:
        pid, status, rusage = os.wait4(proc.pid, 0 if block else os.WNOHANG)
    except ChildProcessError:  # reaped elsewhere: Popen records it (no usage to report)
        proc.poll()
        return True
    if pid == 0:
        return False
    proc.returncode = os.waitstatus_to_exitcode(status)
    usage.append(rusage)
    return True


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_captured(argv: Sequence[str], *, cwd: str | os.PathLike[str], env: Mapping[str, str], timeout_s: float,
                 stdin: bytes | None = None, merge_stderr: bool = False) -> tuple[int, bytes, bytes]:
    """Run a trusted helper program (git, pip) in a process group of its own and wait for it.

    Unlike :func:`run_process` the output is kept whole (the programs are ours, not the agent's);
    on a timeout the whole group is killed, so nothing it started outlives it.

    Args:
        argv: Program and arguments (no shell).
        cwd: Working directory.
        env: The complete environment (nothing is inherited).
        timeout_s: Seconds before the group is killed.
        stdin: Bytes fed to its standard input (None: /dev/null).
        merge_stderr: Send stderr into stdout (the third value is then ``b""``).

    Returns:
        ``(exit code, stdout, stderr)``.

    Raises:
        FileNotFoundError: when the program is not installed.
        subprocess.TimeoutExpired: after the group was killed at ``timeout_s``.
    """
    proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.communicate()
        raise
    return proc.returncode, out, err or b""


def run_process(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    timeout_s: float,
    output_limit_bytes: int = 64_000,
    display_argv: Sequence[str] | None = None,
    watch: Callable[[], str | None] | None = None,
    pass_fds: Sequence[int] = (),
    reap_group: bool = False,
) -> CommandResult:
    """Run ``argv`` in a new session and return what it did.

    The process gets its own process group; on timeout the whole group (grandchildren too)
    is killed with SIGKILL, and after a normal exit any process left in the group is killed
    too, so a command cannot leave background work behind in its group.

    Args:
        argv: Program and arguments (no shell).
        cwd: Working directory.
        env: The complete environment (nothing is inherited).
        timeout_s: Seconds before the group is killed.
        output_limit_bytes: Bytes of stdout and of stderr kept (head and tail halves).
        display_argv: What to record as ``argv`` in the result (defaults to ``argv``).
        watch: Called about every :data:`WATCH_INTERVAL_S` seconds while the command runs; a
            string it returns is why the command must stop: the group is killed (exit code
            ``-9``) and ``[killed by repogym: <reason>]`` ends ``stderr``.
        pass_fds: Descriptors the program inherits at the same numbers (every other one is closed).
        reap_group: Have :func:`~repogym_gym.owners.watch_group`'s reaper kill the command's group if
            this process dies while it runs (the local sandbox: nothing else ends what it starts).

    Returns:
        A CommandResult; ``exit_code`` is None when the program could not be started
        (the reason is in ``stderr``), ``-9`` after a timeout kill.
    """
    shown = list(display_argv if display_argv is not None else argv)
    if reap_group:
        start_group_reaper()  # before the command: telling it the group is then one write
    cgroup = CpuCgroup.make()  # counts the CPU of whatever the command starts (round 39 hid it from the readings)
    wrapped = cgroup.wrap(argv, env, cwd) if cgroup is not None else None
    if cgroup is not None and wrapped is None:
        cgroup.remove()
        cgroup = None
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            wrapped or list(argv),
            cwd=Path(cwd),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
            pass_fds=tuple(pass_fds),
        )
    except OSError as exc:
        if cgroup is not None:
            cgroup.remove()
        return CommandResult(argv=shown, exit_code=None, stderr=f"could not start {argv[0]!r}: {exc}", duration_s=0.0)
    if reap_group:
        watch_group(proc.pid)
    try:
        result = _wait(proc, shown, start, timeout_s, output_limit_bytes, watch, read_tree=cgroup is None)
    finally:
        if reap_group:
            unwatch_group(proc.pid)
        counted = cgroup.usage_s() if cgroup is not None else None
        if cgroup is not None:
            cgroup.remove()
    if counted is not None:
        result = result.model_copy(update={"cpu_s": max(result.cpu_s or 0.0, counted)})
    return result


def _wait(proc: subprocess.Popen[bytes], shown: list[str], start: float, timeout_s: float, output_limit_bytes: int,
          watch: Callable[[], str | None] | None, *, read_tree: bool = True) -> CommandResult:
    """:func:`run_process` once ``proc`` started: its output read and capped, its group killed when it ends."""
    out, err = CappedBuffer(output_limit_bytes), CappedBuffer(output_limit_bytes)
    usage: list[resource.struct_rusage] = []
    sel = selectors.DefaultSelector()
    assert proc.stdout is not None and proc.stderr is not None
    sel.register(proc.stdout, selectors.EVENT_READ, out)
    sel.register(proc.stderr, selectors.EVENT_READ, err)
    deadline = start + timeout_s
    timed_out = False
    drain_until: float | None = None
    stopped: str | None = None
    next_watch = start + WATCH_INTERVAL_S
    cpu_seen, next_cpu = 0.0, start
    try:
        while sel.get_map():
            now = time.monotonic()
            if read_tree and drain_until is None and now >= next_cpu:  # a cgroup, where made, counts it all
                next_cpu = now + CPU_SAMPLE_S
                cpu_seen = max(cpu_seen, tree_cpu_s(proc.pid))
            if watch is not None and drain_until is None and now >= next_watch:
                next_watch = now + WATCH_INTERVAL_S
                stopped = watch()
                if stopped:
                    _kill_group(proc.pid)
                    drain_until = now + DRAIN_GRACE_S
            if not timed_out and now >= deadline:
                timed_out = True
                _kill_group(proc.pid)
                drain_until = now + DRAIN_GRACE_S
            if drain_until is None and _reap(proc, usage, block=False):
                _kill_group(proc.pid)
                drain_until = now + DRAIN_GRACE_S
            if drain_until is not None and now >= drain_until:
                break
            wait = min(WATCH_INTERVAL_S, max(0.0, (drain_until or deadline) - now))
            for key, _ in sel.select(timeout=wait):
                data = os.read(key.fd, _CHUNK)
                if data:
                    key.data.feed(data)
                else:
                    sel.unregister(key.fileobj)
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
        while not _reap(proc, usage, block=False) and not timed_out:
            # Both pipes closed before exit: wait for the rest of the time budget.
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(WATCH_INTERVAL_S)
        _kill_group(proc.pid)
        _reap(proc, usage, block=True)
    duration = time.monotonic() - start
    return CommandResult(
        argv=shown,
        exit_code=proc.returncode,
        stdout=out.text(),
        stderr=err.text() + (f"\n[killed by repogym: {stopped}]\n" if stopped else ""),
        duration_s=duration,
        cpu_s=max(cpu_seen, (usage[0].ru_utime + usage[0].ru_stime) if usage else 0.0),
        timed_out=timed_out,
        truncated=out.truncated or err.truncated,
    )
