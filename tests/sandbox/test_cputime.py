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
WORKERS = '''import os, sys, time
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
CASES = {
    "waited for": WORKERS.format(after="pass", main_after="os.waitpid(pid, 0)"),
    "left a zombie": WORKERS.format(after="pass", main_after="time.sleep(0.2)"),
    "still running when the command ends": WORKERS.format(after="time.sleep(30)", main_after="pass"),
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
        # the /proc readings are CPU_SAMPLE_S apart (further on a loaded machine) and bwrap's outer process
        # does not reap the namespace's init, so the worker's last moments may go unseen: 20 % slack, where
        # leaving the worker out entirely (the wall clock's view of the work) is 50 %
        assert result.cpu_s is not None and result.cpu_s >= 0.8 * spent, (result.cpu_s, spent)
    finally:
        sandbox.close()


def test_the_tree_of_this_process_and_its_cgroup_are_read() -> None:
    assert tree_cpu_s(os.getpid()) > 0
    assert tree_cpu_s(2**22 + 7) == 0.0  # no such process
    assert cgroup_cpu_s(2**22 + 7) is None
    own = cgroup_cpu_s(os.getpid())
    assert own is None or own > 0  # a host without CPU accounting in its cgroups says so


def test_doctests() -> None:
    assert doctest.testmod(cputime).failed == 0
