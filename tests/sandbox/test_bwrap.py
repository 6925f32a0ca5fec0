"""Tests for repogym_gym.sandbox.bwrap: each boundary, and each trap of bubblewrap we met, probed for real.

Every probe runs a real command in a real bubblewrap sandbox and checks the host afterwards.
"""

from __future__ import annotations

import doctest
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from repogym_gym.errors import SandboxError, SandboxUnavailableError, UnconfinedWarning
from repogym_gym.sandbox import LocalSandbox, Sandbox, default_sandbox, make_sandbox
from repogym_gym.sandbox import bwrap as bwrap_module
from repogym_gym.sandbox.bwrap import BubblewrapSandbox, _shared_pool
from repogym_gym.spec import LimitsSpec
from tests.helpers import STARTER
from tests.sandbox.helpers import pool_processes, require_bwrap, sh

# --- identity and privileges -------------------------------------------------------------------


def test_a_command_runs_as_an_unprivileged_uid_of_the_pool_with_no_groups(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    result = sh(bwrap, "id -u; id -G; pwd", tmp_path)
    uid, groups, cwd = result.stdout.split("\n")[:3]
    assert result.exit_code == 0 and int(uid) in _shared_pool().uids
    assert groups == uid and cwd == str(tmp_path)
    assert result.argv == ["bash", "-c", "id -u; id -G; pwd"]  # the sandbox's own wrapper is not recorded


def test_consecutive_commands_in_one_tree_keep_its_uid(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    uids = {sh(bwrap, "id -u", tmp_path).stdout for _ in range(3)}  # nothing to hand over after the first
    assert len(uids) == 1 and tmp_path.stat().st_uid == int(uids.pop())


def test_the_command_holds_no_capability_and_cannot_gain_privileges(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    status = sh(bwrap, "grep -E '^(Cap|NoNewPrivs)' /proc/self/status", tmp_path).stdout
    fields = dict(line.split(":\t") for line in status.strip().splitlines())
    assert {fields[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == {"0000000000000000"}
    assert fields["NoNewPrivs"] == "1"


def test_remounting_a_read_only_bind_writable_fails_and_the_host_file_is_unchanged(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    """Trap: bwrap started as root keeps every capability unless dropped, and a root command
    remounted a read-only bind writable and wrote the host. The file is world-writable here, so
    only the mount stands in the way."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    target = shared / "config.txt"
    target.write_text("original\n")
    os.chmod(shared, 0o777)
    os.chmod(target, 0o666)
    work = tmp_path / "work"
    work.mkdir()
    script = (f"mount -o remount,rw,bind {shared}; echo pwned > {target}; "
              f"unshare -Urm sh -c 'mount -o remount,rw,bind {shared}; echo pwned > {target}'; "
              f"echo pwned > {target} || echo refused")
    result = sh(bwrap.scoped(reveal=[shared]), script, work)
    assert target.read_text() == "original\n"
    assert "Read-only file system" in result.stderr and result.stdout.strip().endswith("refused")


def test_the_root_filesystem_is_read_only(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    result = sh(bwrap, "touch /usr/repogym-probe; awk '$5 == \"/\" {print $6}' /proc/self/mountinfo", tmp_path)
    assert "Read-only file system" in result.stderr
    assert result.stdout.split()[0].split(",")[0] == "ro"
    assert not Path("/usr/repogym-probe").exists()


# --- filesystem ------------------------------------------------------------------------------------


def test_only_the_cwd_the_writable_dirs_and_the_private_tmp_are_writable(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    work, scratch, sibling = tmp_path / "work", tmp_path / "scratch", tmp_path / "sibling"
    for d in (work, scratch, sibling):
        d.mkdir()
    (sibling / "host.txt").write_text("host\n")
    script = (f"echo w > {work}/a && echo s > {scratch}/b && echo t > /tmp/c && "
              f"ls {sibling} 2>&1; echo x > {sibling}/d 2>&1; echo x > /var/lib/repogym-probe 2>&1; true")
    result = sh(bwrap, script, work, writable=[scratch])
    assert (work / "a").read_text() == "w\n" and (scratch / "b").read_text() == "s\n"
    assert not (sibling / "d").exists() and "No such file or directory" in result.stdout  # siblings are not even visible
    assert not Path("/var/lib/repogym-probe").exists()


def test_the_private_tmp_and_dev_shm_are_empty_and_size_limited(tmp_path: Path) -> None:
    sandbox = require_bwrap().scoped(limits={"tmp_size_mb": 4})
    marker = Path("/tmp") / f"repogym-host-marker-{secrets.token_hex(4)}"
    marker.write_text("host\n")
    try:
        script = (f"test -e {marker} && echo visible; "
                  "head -c 8M /dev/zero > /tmp/fill; echo tmp=$?; head -c 8M /dev/zero > /dev/shm/fill; echo shm=$?; "
                  "du -k /tmp/fill /dev/shm/fill")
        result = sh(sandbox, script, tmp_path)
    finally:
        marker.unlink()
    assert "visible" not in result.stdout
    assert "tmp=1" in result.stdout and "shm=1" in result.stdout
    assert "No space left on device" in result.stderr
    sizes = [int(line.split()[0]) for line in result.stdout.splitlines() if "/fill" in line]
    assert len(sizes) == 2 and max(sizes) <= 4096


def test_host_paths_off_the_allowlist_are_absent_until_revealed_and_hidden_ones_stay_hidden(
        bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    # a copy outside /tmp (the sandbox's /tmp is private; a checkout may live under the host's):
    # readable on the host, by anyone
    outside = Path(tempfile.mkdtemp(prefix="repogym-bwrap-test-", dir="/var/cache"))
    try:
        task = Path(shutil.copytree(STARTER / "parse-duration", outside / "parse-duration"))
        outside.chmod(0o755)
        _check_hidden_and_revealed(bwrap, task, tmp_path)
    finally:
        shutil.rmtree(outside)


def _check_hidden_and_revealed(bwrap: BubblewrapSandbox, task: Path, tmp_path: Path) -> None:
    assert (task / "solution.patch").read_text() and (task / "hidden").is_dir()
    script = (f"cat {task}/solution.patch | wc -c; ls {task}/hidden 2>&1; cat {task}/repo/timefmt/__init__.py | wc -c; "
              "ls /var /mnt /home /opt /srv /work 2>&1 | grep -c 'No such file'")
    plain = sh(bwrap, script, tmp_path)
    revealed = sh(bwrap.scoped(reveal=[task]), script, tmp_path)
    narrowed = sh(bwrap.scoped(reveal=[task], hide=[task / "hidden"]), script, tmp_path)
    file_only = sh(bwrap.scoped(reveal=[task], hide=[task / "solution.patch"]), f"cat {task}/solution.patch", tmp_path)
    counts = plain.stdout.split()
    assert counts[0] == "0" and counts[-2] == "0" and counts[-1] == "6", plain.stdout + plain.stderr  # all absent
    assert int(revealed.stdout.split()[0]) > 0 and "tests" in revealed.stdout and int(revealed.stdout.split()[-2]) > 0
    assert "tests" not in narrowed.stdout and int(narrowed.stdout.split()[-2]) > 0  # an empty directory in its place
    assert file_only.stdout == "" and "Permission denied" in file_only.stderr  # a hidden file cannot be opened


def test_the_filesystem_is_the_allowlist_and_python_has_no_site_packages(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    """The sandbox's root holds the system directories, /dev, /proc, /tmp and the parents of what
    is bound; ``python`` is the base interpreter with its standard library and nothing else."""
    code = textwrap.dedent("""\
        import importlib.util, os, site, sys, sysconfig
        print("top", sorted(os.listdir("/")))
        print("site", [(p, sorted(os.listdir(p)) if os.path.isdir(p) else None) for p in site.getsitepackages()])
        print("third", [m for m in ("pytest", "yaml", "pydantic", "jmespath", "pip", "setuptools") if importlib.util.find_spec(m)])
        print("json", importlib.util.find_spec("json") is not None)
        """)
    result = bwrap.run(["python", "-c", code], cwd=tmp_path, timeout_s=30)
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    top = set(eval(lines["top"]))  # noqa: S307 - our own probe's repr
    assert top <= {"usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "dev", "proc", "tmp", "root", "opt",
                   "home", "srv", "work", "var"}, top
    assert {"usr", "etc", "dev", "proc", "tmp"} <= top and not {"run", "sys", "mnt", "media", "boot"} & top
    assert all(entries in (None, []) for _, entries in eval(lines["site"])), lines["site"]  # noqa: S307
    assert lines["third"] == "[]" and lines["json"] == "True", result.stdout + result.stderr


PERSIST_PROBE = textwrap.dedent("""\
    import ctypes, os, socket, sys
    libc = ctypes.CDLL(None, use_errno=True)
    KEY = 0x52474D31
    if sys.argv[1] == "write":
        print("shm", libc.shmget(KEY, 4096, 0o1666) >= 0, "msg", libc.msgget(KEY, 0o1666) >= 0,
              "sem", libc.semget(KEY, 1, 0o1666) >= 0, "mq", libc.mq_open(b"/repogym-probe", os.O_CREAT | os.O_RDWR, 0o666, None) >= 0)
        for path in ("/tmp/left", "/dev/shm/left"):
            open(path, "w").write("x")
        held = socket.socket(socket.AF_UNIX)
        held.bind(b"\\0repogym-probe")
        held.listen()
    else:
        print("shm", libc.shmget(KEY, 0, 0o666) >= 0, "msg", libc.msgget(KEY, 0o666) >= 0,
              "sem", libc.semget(KEY, 0, 0o666) >= 0, "mq", libc.mq_open(b"/repogym-probe", os.O_RDWR, 0, None) >= 0)
        print("files", [p for p in ("/tmp/left", "/dev/shm/left") if os.path.exists(p)])
        probe = socket.socket(socket.AF_UNIX)
        print("abstract", probe.connect_ex(b"\\0repogym-probe") == 0)
    """)


def test_nothing_of_one_command_persists_into_the_next_on_the_same_uid_but_its_tree(tmp_path: Path) -> None:
    """SysV IPC objects and POSIX message queues go with the command's IPC namespace, /tmp and
    /dev/shm with its tmpfs mounts, abstract sockets with its network namespace; the kernel
    keyring, which none of them holds, is refused (tests/sandbox/test_seccomp.py)."""
    from repogym_gym.sandbox.slots import DEFAULT_FIRST_UID, SlotPool

    require_bwrap()
    one_uid = BubblewrapSandbox(pool=SlotPool(first_uid=DEFAULT_FIRST_UID + 62, size=1))
    (tmp_path / "probe.py").write_text(PERSIST_PROBE)
    wrote = one_uid.run(["python", "probe.py", "write"], cwd=tmp_path, timeout_s=30)
    read = one_uid.run(["python", "probe.py", "read"], cwd=tmp_path, timeout_s=30)
    assert wrote.stdout.split() == ["shm", "True", "msg", "True", "sem", "True", "mq", "True"], wrote.tail(1000)
    assert read.stdout.split("\n")[:3] == ["shm False msg False sem False mq False", "files []", "abstract False"], read.tail(1000)


def test_a_cwd_inside_a_hidden_directory_stays_usable(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s3cret\n")
    work = tmp_path / "ws"
    work.mkdir()
    result = sh(bwrap.scoped(hide=[tmp_path]), f"echo ok > out; cat {tmp_path}/secret.txt", work)
    assert (work / "out").read_text() == "ok\n" and "s3cret" not in result.stdout


def test_files_the_command_creates_stay_usable_by_the_host_and_by_later_commands(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    (tmp_path / "host.txt").write_text("from host\n")  # written by the host (root) between commands
    first = sh(bwrap, "umask 077; echo more >> host.txt && mkdir -p d && echo mine > d/f && chmod 000 d/f", tmp_path)
    assert first.exit_code == 0, first.stderr
    assert (tmp_path / "host.txt").read_text() == "from host\nmore\n"
    (tmp_path / "d" / "f").write_text("host edit\n")  # the host still reads and writes everything
    (tmp_path / "later.txt").write_text("host again\n")
    second = sh(bwrap, "chmod 600 d/f && cat d/f && echo x >> later.txt && rm -r d", tmp_path)
    assert second.exit_code == 0, second.stderr
    assert second.stdout == "host edit\n" and (tmp_path / "later.txt").read_text() == "host again\nx\n"


def test_a_writable_entry_that_is_not_a_directory_is_refused(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="writable='.*nope' is not a directory"):
        bwrap.run(["true"], cwd=tmp_path, timeout_s=10, writable=[tmp_path / "nope"])


def test_a_missing_cwd_is_a_result_without_exit_code(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    result = bwrap.run(["true"], cwd=tmp_path / "missing", timeout_s=10)
    assert result.exit_code is None and "is not a directory" in result.stderr


# --- network, sockets, processes, environment -----------------------------------------------------


def test_the_network_is_closed(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        code = f"import socket; socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), timeout=3); print('connected')"
        result = bwrap.run(["python", "-c", code], cwd=tmp_path, timeout_s=20)
    finally:
        server.close()
    assert "connected" not in result.stdout and "ConnectionRefusedError" in result.stderr


def test_host_unix_sockets_are_unreachable(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    """Trap: a filesystem unix socket ignores the network namespace; the socket directories are hidden."""
    token = secrets.token_hex(4)
    paths = [f"/run/repogym-test-{token}.sock", str(tmp_path / "host.sock")]
    addresses = [*paths, "\0" + f"repogym-test-{token}"]  # the last one is abstract
    servers = []
    try:
        for address in addresses:
            server = socket.socket(socket.AF_UNIX)
            server.bind(address)
            server.listen()
            servers.append(server)
            if not address.startswith("\0"):
                os.chmod(address, 0o777)  # anyone may connect: only hiding the directory stands in the way
        code = textwrap.dedent(f"""\
            import socket
            for address in {addresses!r}:
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect(address)
                    print("connected", repr(address))
                except OSError as exc:
                    print("refused", type(exc).__name__)
            """)
        work = tmp_path / "work"
        work.mkdir()
        result = bwrap.run(["python", "-c", code], cwd=work, timeout_s=20)
    finally:
        for server in servers:
            server.close()
        Path(paths[0]).unlink(missing_ok=True)
    assert result.stdout.count("refused") == 3 and "connected" not in result.stdout, result.stdout + result.stderr


def test_the_environment_is_the_allowlist_and_the_host_is_out_of_sight(bwrap: BubblewrapSandbox, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOGYM_TEST_TOKEN", "s3cret-token")
    result = sh(bwrap, f"env; echo ---; ls /proc | grep -x {os.getpid()}; cat /proc/1/environ", tmp_path,
                env={"EXTRA": "given"})
    env_text = result.stdout.split("---")[0]
    assert "s3cret-token" not in result.stdout + result.stderr
    assert "HOME=/tmp\n" in env_text and "EXTRA=given\n" in env_text
    assert result.stdout.split("---")[1].strip() == ""  # the host's processes are not in this /proc
    assert "Permission denied" in result.stderr  # nor is bwrap's own environment readable


def test_the_process_limit_holds_for_the_commands_uid(tmp_path: Path) -> None:
    """Trap: RLIMIT_NPROC is not enforced for uid 0 (1,500 of 1,500 forks succeeded as root)."""
    sandbox = require_bwrap().scoped(limits={"max_processes": 24})
    code = textwrap.dedent("""\
        import os, signal, time
        children = []
        try:
            for _ in range(300):
                pid = os.fork()
                if pid == 0:
                    time.sleep(30)
                    os._exit(0)
                children.append(pid)
        except OSError as exc:
            print("stopped", exc.errno)
        print("forked", len(children))
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        """)
    result = sandbox.run(["python", "-c", code], cwd=tmp_path, timeout_s=60)
    forked = int(result.stdout.split("forked")[1].split()[0])
    assert "stopped 11" in result.stdout and forked < 24  # EAGAIN at the limit


def test_a_fork_bomb_is_contained_and_the_timeout_still_fires(tmp_path: Path) -> None:
    sandbox = require_bwrap().scoped(limits={"max_processes": 64})
    start = time.monotonic()
    result = sandbox.run(["bash", "-c", "bomb() { bomb | bomb & }; bomb; sleep 30"], cwd=tmp_path, timeout_s=2)
    assert result.timed_out and time.monotonic() - start < 10
    deadline = time.monotonic() + 3
    while pool_processes(_shared_pool()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool_processes(_shared_pool()) == []


def test_a_setsid_daemon_does_not_outlive_its_command(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    """Trap: killing the process group misses ``setsid`` daemons; the PID namespace does not."""
    script = ("setsid sh -c 'while :; do echo tick >> daemon.log; sleep 0.1; done' </dev/null >/dev/null 2>&1 & "
              "sleep 0.5; exit 0")
    result = sh(bwrap, script, tmp_path)
    assert result.exit_code == 0 and not result.timed_out
    log = tmp_path / "daemon.log"
    assert log.exists() and log.stat().st_size > 0  # the daemon ran
    size = log.stat().st_size
    time.sleep(0.6)
    assert log.stat().st_size == size  # and stopped with its command


def test_a_1_gb_stdout_flood_is_read_in_small_memory(tmp_path: Path) -> None:
    """Trap: capturing a 300 MB stdout in memory cost 615 MB; the stream is read with a head+tail cap."""
    require_bwrap()
    code = textwrap.dedent(f"""\
        import re
        from repogym_gym.sandbox.bwrap import BubblewrapSandbox
        result = BubblewrapSandbox().run(["head", "-c", "1G", "/dev/zero"], cwd={str(tmp_path)!r}, timeout_s=120,
                                         output_limit_bytes=64_000)
        # VmHWM is this process's own peak; ru_maxrss would also count the parent it was forked from
        peak = re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)
        print(result.exit_code, result.truncated, len(result.stdout), peak)
        """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    exit_code, truncated, kept, peak_kib = proc.stdout.split()
    assert (exit_code, truncated) == ("0", "True") and int(kept) < 70_000
    assert int(peak_kib) < 150 * 1024, f"peak RSS {int(peak_kib) // 1024} MiB while reading 1 GiB"


def test_a_file_past_the_file_size_limit_cannot_be_written(tmp_path: Path) -> None:
    sandbox = require_bwrap().scoped(limits=LimitsSpec(file_size_mb=1))
    result = sh(sandbox, "head -c 3M /dev/zero > big", tmp_path)
    assert result.exit_code != 0 and (tmp_path / "big").stat().st_size <= 2**20


def test_memory_past_the_limit_cannot_be_allocated(tmp_path: Path) -> None:
    sandbox = require_bwrap().scoped(limits={"memory_mb": 256})
    result = sandbox.run(["python", "-c", "b = bytearray(512 * 2**20)"], cwd=tmp_path, timeout_s=30)
    assert result.exit_code == 1 and "MemoryError" in result.stderr


def test_cpu_seconds_are_limited(tmp_path: Path) -> None:
    sandbox = require_bwrap().scoped(limits={"cpu_s": 1})
    result = sandbox.run(["python", "-c", "while True: pass"], cwd=tmp_path, timeout_s=30)
    assert not result.timed_out and result.exit_code != 0 and result.duration_s < 15


def test_the_timeout_kills_the_command(bwrap: BubblewrapSandbox, tmp_path: Path) -> None:
    result = bwrap.run(["sleep", "60"], cwd=tmp_path, timeout_s=1)
    assert result.timed_out and result.exit_code == -9 and result.duration_s < 5


# --- selection ---------------------------------------------------------------------------------------


def test_scoped_adds_hides_and_limits_and_leaves_the_original_unchanged() -> None:
    base = BubblewrapSandbox(limits={"cpu_s": 5}, hide=["/srv/a"])
    narrowed = base.scoped(hide=["/srv/b"], reveal=["/srv/b/env"], limits=LimitsSpec(max_processes=7))
    assert narrowed.hide == ("/srv/a", "/srv/b") and narrowed.reveal == ("/srv/b/env",)
    assert (narrowed.limits.cpu_s, narrowed.limits.max_processes) == (5, 7)
    assert base.hide == ("/srv/a",) and base.limits.max_processes == 256


def test_make_sandbox_builds_the_bwrap_backend() -> None:
    require_bwrap()
    sandbox = make_sandbox("bwrap", limits={"max_processes": 50})
    assert isinstance(sandbox, BubblewrapSandbox) and isinstance(sandbox, Sandbox)
    assert sandbox.name == "bwrap" and sandbox.limits.max_processes == 50


def test_without_bwrap_the_sandbox_is_unavailable_with_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap, prlimit nor setpriv on it
    sandbox = BubblewrapSandbox()
    assert not sandbox.available()
    with pytest.raises(SandboxUnavailableError, match=r"sandbox 'bwrap' is not available on this machine: "
                                                      r"bwrap, prlimit, setpriv not found on PATH; .*apt-get install bubblewrap"):
        make_sandbox("bwrap")
    with pytest.raises(SandboxError, match="not found on PATH"):
        sandbox.run(["true"], cwd=tmp_path, timeout_s=5)


def test_default_sandbox_confines_untrusted_agents_where_bwrap_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    require_bwrap()
    assert isinstance(default_sandbox(trusted=True), LocalSandbox)
    assert isinstance(default_sandbox(trusted=False), BubblewrapSandbox)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert isinstance(default_sandbox(trusted=True), LocalSandbox)  # a trusted agent: no warning
    with pytest.warns(UnconfinedWarning, match=r"local sandbox, a guardrail and not a boundary: no confining sandbox "
                                               r"runs on this machine \(bwrap: bwrap, prlimit, setpriv not found on PATH"):
        assert isinstance(default_sandbox(trusted=False), LocalSandbox)
    with pytest.warns(UnconfinedWarning):
        assert isinstance(make_sandbox("auto"), LocalSandbox)


def test_bwrap_docstring_examples_run() -> None:
    assert doctest.testmod(bwrap_module).failed == 0


def test_host_sockets_lists_the_bound_filesystem_sockets_that_exist(tmp_path: Path) -> None:
    """Every listening socket of the host is covered in the sandbox, wherever it lives (a socket
    that accepts anyone is reachable through a read-only mount); see tests/redteam/test_escapes.py."""
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    try:
        assert str(path) in bwrap_module.host_sockets()
        path.unlink()
        assert str(path) not in bwrap_module.host_sockets()  # bound, but no longer on disk
    finally:
        server.close()


def test_a_limit_over_the_host_s_hard_limit_is_a_sandbox_error_not_a_failed_command(tmp_path: Path) -> None:
    """Issue 13's audit: max_processes above the host's hard RLIMIT_NPROC made prlimit fail (EPERM), so every
    command exited 1 and a correct submission scored a silent 0; it is a SandboxError (an infra_error)."""
    import resource

    from repogym_gym.sandbox.limits import over_host_limits

    require_bwrap()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]  # finite on Linux (fs.nr_open)
    sandbox = BubblewrapSandbox(limits={"open_files": hard + 1})
    if over_host_limits(sandbox.limits) is None:  # root with CAP_SYS_RESOURCE: prlimit raises it, the command runs
        assert sandbox.run(["true"], cwd=tmp_path, timeout_s=30).exit_code == 0
        return
    with pytest.raises(SandboxError, match=rf"open_files={hard + 1} is over this host's hard limit \({hard:,}\)"):
        sandbox.run(["true"], cwd=tmp_path, timeout_s=30)
    assert BubblewrapSandbox(limits={"open_files": hard}).run(["true"], cwd=tmp_path, timeout_s=30).exit_code == 0
