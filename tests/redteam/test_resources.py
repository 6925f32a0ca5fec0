"""Resource abuse: the agent exhausts processes, time, memory, disk, or outlives its command."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from repogym_gym.sandbox.disk import tree_bytes
from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE, FIXED_SOURCE, MakeTask
from tests.redteam.helpers import (
    GUARDRAIL,
    Start,
    act,
    assert_unearned_zero,
    attack,
    messages,
    run,
    script,
    submit,
    violations,
    wait_for_no_processes_in,
    write,
)

G = "resource abuse"
_MB = 1024 * 1024


FORK_BOMB = """\
import os, time
children = 0
try:
    while children < 5000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
except OSError as exc:
    print("stopped", exc.errno, "after", children)
"""


@attack(G, "fork bomb", local=GUARDRAIL, confining="bounded")
def test_a_fork_bomb_is_bounded(start: Start, make_task: MakeTask) -> None:
    """Confining sandboxes only: LocalSandbox runs commands as the host user (root here, for whom
    the kernel does not enforce a process limit).

    The bomb stops at the task's process limit, the command is killed at its timeout, nothing
    survives it, and the episode goes on.
    """
    task = make_task(limits={"max_steps": 10, "test_timeout_s": 60, "command_timeout_s": 5, "max_processes": 40})
    env = start(task)
    assert env.workspace is not None
    out = script(env, FORK_BOMB).observation.text
    assert "stopped 11 after" in out, out  # EAGAIN at the limit
    assert int(out.split("after")[1].split()[0]) < 40
    assert wait_for_no_processes_in(env.workspace.root) == []
    assert run(env, "echo alive").observation.text.startswith("alive")
    assert_unearned_zero(submit(env))


@attack(G, "endless loop (in a command, and at import while grading)", local="timeout, score 0",
        confining="timeout, score 0")
def test_an_endless_loop_is_stopped_by_the_timeouts(start: Start, make_task: MakeTask) -> None:
    task = make_task(limits={"max_steps": 10, "command_timeout_s": 1, "test_timeout_s": 3})
    env = start(task)
    began = time.monotonic()
    obs = run(env, "python -c 'while True: pass'").observation
    assert "[timed out after 1 s]" in obs.text and time.monotonic() - began < 10
    write(env, "calc/__init__.py", CALC_SOURCE + "\nwhile True:\n    pass\n")
    began = time.monotonic()
    result = submit(env)
    assert time.monotonic() - began < 20
    assert_unearned_zero(result)
    assert any("timed out" in m for m in messages(result)), messages(result)


def _peak_rss_since_reset() -> tuple[int, int]:
    """(VmHWM, VmRSS) of this process in KiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return int(fields["VmHWM"].split()[0]), int(fields["VmRSS"].split()[0])


@attack(G, "1 GB stdout", local="capped", confining="capped")
def test_a_1_gb_stdout_is_capped_and_the_parent_stays_small(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    Path("/proc/self/clear_refs").write_text("5")  # reset this process's peak RSS (VmHWM)
    _, before = _peak_rss_since_reset()
    obs = run(env, "head -c 1G /dev/zero; echo tail-marker").observation
    peak, _ = _peak_rss_since_reset()
    assert len(obs.text) < 70_000 and "tail-marker" in obs.text
    assert "truncated by repogym" in obs.text or "characters cut" in obs.text
    assert peak - before < 100 * 1024, f"peak RSS grew {(peak - before) // 1024} MiB while a command printed 1 GiB"


DISK_FILL = """\
import os
def fill(path, mb):
    written = 0
    try:
        with open(path, "wb") as fh:
            for _ in range(mb):
                fh.write(b"x" * 1024 * 1024)
                fh.flush()
                written += 1
    except OSError as exc:
        print(path, "stopped", type(exc).__name__, exc.errno, flush=True)
    print(path, "wrote", written, flush=True)
for base in ("/tmp", "/dev/shm"):
    for i in range(4):
        fill("%s/fill%d" % (base, i), 3)
fill("big.bin", 64)
os.makedirs("many", exist_ok=True)
HOW = {how!r}
for i in range({{"blocks": 100, "sparse": 400, "inodes": 200_000}}[HOW]):
    if HOW == "blocks":
        fill("many/%d.bin" % i, 3)
    elif HOW == "sparse":  # allocates nothing; hashing the tree still reads every byte
        with open("many/%d.bin" % i, "wb") as fh:
            fh.truncate(4 * 1024 * 1024)
    else:  # empty files: inodes
        open("many/%d" % i, "w").close()
print("done")
"""


@pytest.mark.parametrize("how", ["blocks", "sparse", "inodes"])
@attack(G, "filling the disk (/tmp, /dev/shm, one file, many full / sparse / empty files in the workspace)",
        local=GUARDRAIL, confining="bounded")
def test_filling_the_disk_is_bounded(start: Start, make_task: MakeTask, how: str) -> None:
    """Confining sandboxes only: LocalSandbox writes wherever the host user can.

    The private ``/tmp`` and ``/dev/shm`` are size-limited tmpfs mounts, one file is capped by the
    file size limit, and the workspace as a whole by the disk limit (what its files allocate, their
    apparent size and 4 KiB per inode, so empty files count too). Sparse files hold no disk and
    can be made faster than the watch looks: what they cost is the grader's time hashing them,
    and the grader reads at most 1 GiB of a work tree (the rest is rejected unread).
    """
    task = make_task(limits={"max_steps": 10, "test_timeout_s": 60, "command_timeout_s": 60, "tmp_size_mb": 8,
                             "file_size_mb": 4, "disk_mb": 24})
    env = start(task)
    out = script(env, DISK_FILL.format(how=how)).observation.text
    assert env.workspace is not None
    held = tree_bytes([env.workspace.path])
    assert "/tmp/fill2 stopped OSError 28" in out and "/dev/shm/fill2 stopped OSError 28" in out, out  # ENOSPC at 8 MiB
    assert "big.bin stopped OSError 27" in out  # EFBIG at 4 MiB
    assert (env.workspace.path / "big.bin").stat().st_size <= 4 * _MB
    began = time.monotonic()
    result = submit(env)
    assert_unearned_zero(result)
    if how == "sparse":  # up to 1.6 GiB of holes: killed by a periodic count, or not read past 1 GiB
        assert any("was not read" in v or "in all" in v for v in violations(result, "file_types"))
        assert time.monotonic() - began < 30
        return
    # far more is attempted in the workspace; the watch kills the command soon after it passes 24 MiB
    assert "killed by repogym" in out and "disk limit of 24 MiB" in out and "done" not in out, out
    # the overshoot is what is written between two looks; a Docker exec is watched from outside the
    # container and killed through the engine, so it overshoots more (135 MiB seen under load)
    slack = 160 * _MB if env.sandbox.name == "docker" else 64 * _MB
    assert held <= 24 * _MB + slack < 300 * _MB, f"the workspace holds {held // _MB} MiB of the 300 MiB attempted"


DAEMON = """\
import glob, os, sys, time
fixed = {fixed!r}
if os.fork():
    time.sleep(0.5)  # the daemon is up and beating when the command ends
    sys.exit(0)
os.setsid()
if os.fork():
    os._exit(0)
for fd in (0, 1, 2):
    os.close(fd)
own = os.getcwd()
deadline = time.time() + 30
while time.time() < deadline:
    with open("heartbeat.log", "a") as fh:
        fh.write("beat\\n")
    # every other tree of ours it can find (grading copies) gets the fix written in
    for copy in set(glob.glob("/tmp/repogym-*/repo") + glob.glob("/tmp/repogym-*/*/repo")) - {{own}}:
        try:
            with open(os.path.join(copy, "calc", "__init__.py"), "w") as fh:
                fh.write(fixed)
        except OSError:
            pass
    time.sleep(0.02)
"""


@attack(G, "setsid daemon outliving its command, editing files during grading", local=GUARDRAIL,
        confining="killed, score 0")
def test_a_setsid_daemon_dies_with_its_command(start: Start, tiny_task: Task) -> None:
    """Confining sandboxes only: under LocalSandbox a ``setsid`` daemon leaves the command's
    process group and survives it (tests/graders/test_attacks_library.py shows it editing a grading copy).

    In a confining sandbox the command's PID namespace ends with it, daemons included.
    """
    env = start(tiny_task)
    assert env.workspace is not None
    heartbeat = env.workspace.path / "heartbeat.log"
    out = script(env, DAEMON.format(fixed=FIXED_SOURCE)).observation
    assert out.exit_code == 0, out.text
    size = heartbeat.stat().st_size
    assert size > 0  # the daemon ran
    time.sleep(0.5)
    assert heartbeat.stat().st_size == size  # and died with its command
    assert wait_for_no_processes_in(env.workspace.root) == []
    act(env, "test")
    result = submit(env)
    assert_unearned_zero(result)


@attack(G, "many large files carried into grading (the grader's memory)", local="score 0, capped",
        confining="score 0, capped")
def test_many_large_files_are_not_all_carried_into_grading(start: Start, tiny_task: Task) -> None:
    """Carried bytes are held in the grader's memory (and in the patch): past 32 MiB in all, files
    are rejected, so what grading holds stays a small multiple of that whatever the workspace holds."""
    env = start(tiny_task)
    obs = script(env, "for i in range(5):\n    open('blob%d.bin' % i, 'wb').write(bytes([i + 1]) * (15 * 2**20))\n").observation
    assert obs.exit_code == 0, obs.text
    Path("/proc/self/clear_refs").write_text("5")
    _, before = _peak_rss_since_reset()
    result = submit(env)
    peak, _ = _peak_rss_since_reset()
    assert_unearned_zero(result)
    too_large = [v for v in violations(result, "file_types") if "in all" in v]
    assert len(too_large) == 3, violations(result, "file_types")  # 2 x 15 MiB carried, 3 refused
    assert peak - before < 200 * 1024, f"peak RSS grew {(peak - before) // 1024} MiB while grading"


@attack(G, "a 1 GB file in the workspace read or edited (the host's memory)", local="capped / refused",
        confining="capped / refused")
def test_reading_or_editing_a_huge_file_keeps_the_host_small(start: Start, tiny_task: Task) -> None:
    """Read and Edit run in the library, on the host: a Read shows the file's head and tail (only
    those are read), and an Edit of a file past 8 MiB is refused."""
    env = start(tiny_task)
    assert run(env, "head -c 1000M /dev/zero > huge.txt && echo end >> huge.txt").observation.exit_code == 0
    Path("/proc/self/clear_refs").write_text("5")
    _, before = _peak_rss_since_reset()
    read = act(env, "read", path="huge.txt").observation
    edit = act(env, "edit", path="huge.txt", old="end", new="END").observation
    peak, _ = _peak_rss_since_reset()
    assert len(read.text) <= 60_000 and read.text.rstrip().endswith("end") and "not shown" in read.text
    assert edit.error and "over the 8388608-byte limit" in edit.text
    assert peak - before < 50 * 1024, f"peak RSS grew {(peak - before) // 1024} MiB reading a 1 GB file"
