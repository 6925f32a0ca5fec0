"""Tests for repogym_gym.sandbox.cputime: a command's CPU time counts the work of every process it hands
work to, in every sandbox (real forks, real sandboxes; CPU time, not wall time, so load does not matter)."""

from __future__ import annotations

import doctest
import os
import tempfile

import pytest

from repogym_gym.sandbox import cputime
from repogym_gym.sandbox.cputime import cgroup_cpu_s, tree_cpu_s
from tests.redteam.helpers import require_sandbox

#: Two processes each spend a measured amount of CPU and print it; ``{after}`` is what the worker does once
#: it has printed, ``{main_after}`` what the command does once it has the worker's result.
WORKERS = '''import os, signal, sys, time
{before}
def spend():
    start = time.process_time()
    while time.process_time() - start < 0.5:
        pass
    return time.process_time()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, f"{{spend():.3f}}\\n".encode())
    {after}
    os._exit(0)
mine = spend()
theirs = float(os.read(r, 64).decode())
print(mine + theirs)
sys.stdout.flush()
{main_after}
'''
SEQUENTIAL = '''import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
total = 0.0
for _ in range(4):
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        start = time.process_time()
        while time.process_time() - start < 0.25:
            pass
        os.write(w, f"{time.process_time():.3f}".encode())
        os._exit(0)
    total += float(os.read(r, 64).decode())
    os.close(r)
    os.close(w)
print(total + time.process_time())
'''
CASES = {
    "waited for": WORKERS.format(before="", after="pass", main_after="os.waitpid(pid, 0)"),
    "left a zombie": WORKERS.format(before="", after="pass", main_after="time.sleep(0.2)"),
    "still running when the command ends": WORKERS.format(before="", after="time.sleep(30)", main_after="pass"),
    # round 39: the kernel reaps the children of a process that ignores SIGCHLD and adds their time to no one,
    # so workers one after another (each in a session of its own) leave no trace in any reading but their own
    "reaped by the kernel, one after another": SEQUENTIAL,
}


@pytest.mark.parametrize("sandbox_name", ["local", "bwrap", "docker"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_commands_cpu_time_counts_the_work_of_a_forked_worker(sandbox_name: str, case: str) -> None:
    """Round 38 split a quadratic scan over two forked processes and the wall clock called it a 2x speed-up."""
    sandbox = require_sandbox(sandbox_name)
    try:
        with tempfile.TemporaryDirectory() as work:
            os.chmod(work, 0o777)
            result = sandbox.run(["python3", "-c", CASES[case]], cwd=work, timeout_s=60)
        assert result.exit_code == 0, result.stderr
        spent = float(result.stdout.split()[0])  # both processes' own CPU seconds, as each measured it
        assert spent >= 1.0
        # where no cgroup can be made the /proc readings (CPU_SAMPLE_S apart, further on a loaded machine) may
        # miss the worker's last moments: 20 % slack, where leaving the worker out (the wall clock's view) is 50 %
        assert result.cpu_s is not None and result.cpu_s >= 0.8 * spent, (result.cpu_s, spent)
    finally:
        sandbox.close()


def test_a_cgroup_made_for_a_command_is_used_and_removed(tmp_path: object) -> None:
    """Where root can make one (this machine: cgroup v1 cpuacct), each command gets its own, gone afterwards."""
    from repogym_gym.sandbox import LocalSandbox
    from repogym_gym.sandbox.cputime import CpuCgroup

    made = CpuCgroup.make()
    if made is None:
        if os.environ.get("CI") == "true" and os.geteuid() == 0:
            pytest.fail("CI=true as root, but no CPU-accounting cgroup can be made here")
        pytest.skip("no CPU-accounting cgroup can be made here")
    made.remove()
    assert not os.path.exists(made.path)
    result = LocalSandbox().run(["cat", "/proc/self/cgroup"], cwd=str(tmp_path), timeout_s=30)
    (used,) = {line.rsplit("/", 1)[1] for line in result.stdout.splitlines() if "/repogym-cpu-" in line}
    assert result.exit_code == 0 and used.startswith(f"repogym-cpu-{os.getpid()}-")
    assert not os.path.exists(os.path.join(os.path.dirname(made.path), used))
    env_seen = LocalSandbox().run(["env"], cwd=str(tmp_path), timeout_s=30).stdout
    assert "PWD=" not in env_seen  # the joining shell adds nothing to what the command sees


def test_the_cgroups_of_processes_killed_without_cleanup_are_swept() -> None:
    """A process killed with SIGKILL runs no atexit: its cgroups stayed (4 after one test run here)."""
    import subprocess
    import sys

    from repogym_gym.sandbox.cputime import CpuCgroup, _sweep

    made = CpuCgroup.make()
    if made is None:
        pytest.skip("no CPU-accounting cgroup can be made here")
    made.remove()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    left = os.path.join(os.path.dirname(made.path), f"repogym-cpu-{dead.stdout.strip()}-0")
    os.mkdir(left)
    _sweep()
    assert not os.path.exists(left)


def test_the_tree_of_this_process_and_its_cgroup_are_read() -> None:
    assert tree_cpu_s(os.getpid()) > 0
    assert tree_cpu_s(2**22 + 7) == 0.0  # no such process
    assert cgroup_cpu_s(2**22 + 7) is None
    own = cgroup_cpu_s(os.getpid())
    assert own is None or own > 0  # a host without CPU accounting in its cgroups says so


def test_doctests() -> None:
    assert doctest.testmod(cputime).failed == 0


@pytest.mark.parametrize("sandbox_name", ["local", "bwrap"])
def test_without_a_cgroup_the_process_tree_readings_count_a_waited_for_worker(
        sandbox_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not root, or no writable CPU accounting: the /proc readings are what counts (the fallback)."""
    from repogym_gym.sandbox.cputime import CpuCgroup

    monkeypatch.setattr(CpuCgroup, "make", classmethod(lambda cls: None))
    sandbox = require_sandbox(sandbox_name)
    try:
        with tempfile.TemporaryDirectory() as work:
            os.chmod(work, 0o777)
            result = sandbox.run(["python3", "-c", CASES["waited for"]], cwd=work, timeout_s=60)
        spent = float(result.stdout.split()[0])
        assert result.exit_code == 0 and result.cpu_s is not None and result.cpu_s >= 0.8 * spent, (result.cpu_s, spent)
    finally:
        sandbox.close()
