"""Tests for repogym_gym.reap, the reapers' program: real reaper processes, real groups killed.

Stop 34's CI failed once on a killed parent whose command's children ran on: the group reaper
imported the whole package (0.8 s idle, more under load) and was started only after the command.
"""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

from repogym_gym import reap

REAP = str(Path(reap.__file__))


def test_a_reaper_imports_nothing_of_the_package_nor_site() -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-I", "-S", REAP, "groups"], input=b"",
                          capture_output=True, timeout=30)
    assert done.returncode == 0
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()]
    assert "os" in imported or "posix" in imported  # the probe sees imports at all
    assert not [name for name in imported if name.startswith(("repogym_gym", "site", "pydantic", "numpy"))]


def test_the_groups_still_listed_at_eof_are_killed_and_those_forgotten_are_not() -> None:
    kept = subprocess.Popen(["sleep", "300"], start_new_session=True)
    forgotten = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        done = subprocess.run([sys.executable, "-I", "-S", REAP, "groups"], timeout=30,
                              input=f"+{kept.pid}\n+{forgotten.pid}\n-{forgotten.pid}\n+x\nnoise\n".encode())
        assert done.returncode == 0
        assert kept.wait(timeout=10) == -9
        assert forgotten.poll() is None
    finally:
        for proc in (kept, forgotten):
            proc.kill()
            proc.wait()


def test_an_owner_reaper_kills_only_a_process_that_is_still_its_owner() -> None:
    proc = subprocess.Popen(["sleep", "300"])
    try:
        owner = reap.process_owner(proc.pid)
        assert owner is not None
        boot, pid, start = owner.split(":")
        stale = f"{boot}:{pid}:{int(start) + 1}"  # the same pid, another process
        subprocess.run([sys.executable, "-I", "-S", REAP, "owners", stale], input=b"", timeout=30, check=True)
        assert proc.poll() is None
        subprocess.run([sys.executable, "-I", "-S", REAP, "owners", owner], input=b"", timeout=30, check=True)
        assert proc.wait(timeout=10) == -9
    finally:
        proc.kill()
        proc.wait()


def test_an_unknown_mode_is_exit_code_2() -> None:
    assert subprocess.run([sys.executable, "-I", "-S", REAP, "bogus"], input=b"", timeout=30).returncode == 2


def test_the_group_reaper_runs_before_the_first_command_starts(tmp_path: Path) -> None:
    """When the sandbox starts the command, this process's reaper is already running, so telling it the
    command's group afterwards is one write to its pipe, not a process start."""
    code = (
        "import subprocess, types\n"
        "from repogym_gym import owners\n"
        "from repogym_gym.sandbox import LocalSandbox, process\n"
        "seen = []\n"
        "def popen(*args, **kwargs):\n"
        "    seen.append([p.poll() is None for _, p in owners._group_reaper])\n"
        "    return subprocess.Popen(*args, **kwargs)\n"
        "process.subprocess = types.SimpleNamespace(Popen=popen, DEVNULL=subprocess.DEVNULL, PIPE=subprocess.PIPE)\n"
        f"assert LocalSandbox().run(['true'], cwd={str(tmp_path)!r}, timeout_s=30).exit_code == 0\n"
        "print(seen)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[True]]"


def test_doctests() -> None:
    assert doctest.testmod(reap).failed == 0
