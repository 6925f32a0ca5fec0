"""Tests for repogym_gym.sandbox: real subprocesses, process-group kills, capped output, scrubbed env.

Processes that must die carry a unique marker in their argv (a ``sleep`` duration no other
process uses) and the tests look for survivors in /proc.
"""

from __future__ import annotations

import doctest
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repogym_gym.errors import SandboxError, SandboxUnavailableError
from repogym_gym.results import CommandResult
from repogym_gym.sandbox import DEFAULT_ENV_ALLOWLIST, LocalSandbox, Sandbox, make_sandbox, scrubbed_env
from repogym_gym.sandbox import process as process_module
from repogym_gym.sandbox.process import CappedBuffer, run_process

MARKER = "bytes truncated by repogym"


def unique_sleep() -> str:
    """A sleep duration (about a minute) that no other process on the machine has in its argv."""
    return f"6{secrets.randbelow(9)}.{secrets.randbelow(10**9):09d}"


def processes_with(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_until_gone(marker: str, within_s: float = 3.0) -> list[int]:
    deadline = time.monotonic() + within_s
    while (alive := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive


def test_the_survivor_probe_sees_a_live_marked_process() -> None:
    marker = unique_sleep()
    proc = subprocess.Popen(["sleep", marker])
    try:
        deadline = time.monotonic() + 5  # the child shows its argv once it has exec'd
        while processes_with(marker) != [proc.pid] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert processes_with(marker) == [proc.pid]
    finally:
        proc.kill()
        proc.wait()
    assert processes_with(marker) == []


def _left_after_killing(parent: subprocess.Popen[bytes], marker: str) -> list[int]:
    """SIGKILL ``parent`` once its command (the process with ``marker``) runs; what of it is left 5 s later."""
    try:
        deadline = time.monotonic() + 30
        while not processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert processes_with(marker), "the command never started"
    finally:
        parent.kill()
        parent.wait()
    return wait_until_gone(marker, within_s=5.0)


def test_a_command_dies_with_its_killed_parent(tmp_path: Path) -> None:
    """Issue 13: under local, a killed run's pytest (and the perf task's benchmark) ran on. The command
    now carries a parent-death signal, so SIGKILL of the process that started it ends it."""
    marker = unique_sleep()
    head, tail = marker[:3], marker[3:]  # the parent's own command line must not hold the marker
    code = (f"from repogym_gym.sandbox import LocalSandbox; "
            f"LocalSandbox().run(['sleep', {head!r} + {tail!r}], cwd={str(tmp_path)!r}, timeout_s=300)")
    assert _left_after_killing(subprocess.Popen([sys.executable, "-c", code]), marker) == []


def test_what_a_command_starts_in_its_group_dies_with_the_killed_parent_too(tmp_path: Path) -> None:
    """Issue 13's audit: the parent-death signal ends the command itself, not the children it started (a
    killed run's pytest workers, a benchmark's processes ran on). A reaper kills the command's group."""
    marker = unique_sleep()
    head, tail = marker[:3], marker[3:]
    code = (f"from repogym_gym.sandbox import LocalSandbox; "
            f"LocalSandbox().run(['sh', '-c', 'sleep ' + {head!r} + {tail!r} + ' & wait'], cwd={str(tmp_path)!r}, "
            "timeout_s=300)")
    assert _left_after_killing(subprocess.Popen([sys.executable, "-c", code]), marker) == []


@pytest.mark.parametrize("where", ["command's PATH", "relative to cwd"])
def test_a_program_found_only_where_the_command_looks_still_dies_with_its_parent(tmp_path: Path, where: str) -> None:
    """The wrapper is added only for a program that can start; whether it can is decided on the
    command's own PATH and relative to its cwd (not this process's), so neither case runs on."""
    marker = unique_sleep()
    bin_dir, work = tmp_path / "bin", tmp_path / "work"
    bin_dir.mkdir()
    work.mkdir()
    program = (bin_dir if where == "command's PATH" else work) / "nap"
    program.write_text(f"#!/bin/sh\nexec sleep {marker}\n")
    program.chmod(0o755)
    argv = ["nap"] if where == "command's PATH" else ["./nap"]
    code = (f"from repogym_gym.sandbox import LocalSandbox; "
            f"LocalSandbox().run({argv!r}, cwd={str(work)!r}, timeout_s=300, env={{'PATH': {str(bin_dir) + ':/usr/bin:/bin'!r}}})")
    assert _left_after_killing(subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path), marker) == []


def test_the_parent_death_signal_changes_nothing_the_command_sees(tmp_path: Path) -> None:
    result = LocalSandbox().run(["bash", "-c", "echo $$ $PPID; exit 3"], cwd=tmp_path, timeout_s=30)
    assert result.exit_code == 3 and result.argv == ["bash", "-c", "echo $$ $PPID; exit 3"]
    pid, ppid = (int(x) for x in result.stdout.split())
    assert ppid == os.getpid() and pid != ppid  # setpriv exec'd bash: no process in between


@pytest.fixture
def sandbox() -> LocalSandbox:
    return LocalSandbox()


def sh(sandbox: LocalSandbox, script: str, cwd: Path, **kwargs: object) -> CommandResult:
    kwargs.setdefault("timeout_s", 30)
    return sandbox.run(["bash", "-c", script], cwd=cwd, **kwargs)  # type: ignore[arg-type]


# --- results -------------------------------------------------------------------------------------


def test_exit_code_stdout_and_stderr_are_reported_separately(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sh(sandbox, "echo out; echo err >&2; exit 7", tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (7, "out\n", "err\n")
    assert result.argv == ["bash", "-c", "echo out; echo err >&2; exit 7"]
    assert not result.ok and not result.timed_out and not result.truncated


def test_successful_command_is_ok(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sh(sandbox, "true", tmp_path)
    assert result.exit_code == 0 and result.ok


def test_command_runs_in_the_given_directory(sandbox: LocalSandbox, tmp_path: Path) -> None:
    assert sh(sandbox, "pwd", tmp_path).stdout == f"{tmp_path}\n"


def test_duration_is_wall_clock_seconds(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sh(sandbox, "sleep 0.3", tmp_path)
    assert 0.3 <= result.duration_s < 3


def test_death_by_signal_is_a_negative_exit_code(sandbox: LocalSandbox, tmp_path: Path) -> None:
    assert sh(sandbox, "kill -TERM $$", tmp_path).exit_code == -15


def test_stdin_is_empty_not_inherited(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sh(sandbox, "cat; echo done", tmp_path, timeout_s=10)
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "done\n", False)


def test_invalid_utf8_output_is_replaced_not_raised(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sh(sandbox, r"printf 'a\377b'", tmp_path)
    assert result.stdout == "a\ufffdb"


# --- timeouts and process groups -----------------------------------------------------------------


def test_timeout_kills_the_command_and_its_grandchildren(sandbox: LocalSandbox, tmp_path: Path) -> None:
    marker = unique_sleep()
    start = time.monotonic()
    result = sh(sandbox, f"sleep {marker} & sleep {marker} & echo started; wait", tmp_path, timeout_s=0.5)
    assert time.monotonic() - start < 5
    assert result.timed_out and result.exit_code == -9 and not result.ok
    assert result.stdout == "started\n"
    assert 0.5 <= result.duration_s < 5
    assert wait_until_gone(marker) == []


def test_timeout_kills_a_command_that_closed_its_output(sandbox: LocalSandbox, tmp_path: Path) -> None:
    marker = unique_sleep()
    result = sh(sandbox, f"exec >&- 2>&-; sleep {marker}", tmp_path, timeout_s=0.5)
    assert result.timed_out and result.exit_code == -9
    assert result.duration_s < 5
    assert wait_until_gone(marker) == []


def test_background_child_left_after_a_normal_exit_is_killed(sandbox: LocalSandbox, tmp_path: Path) -> None:
    marker = unique_sleep()
    start = time.monotonic()
    result = sh(sandbox, f"sleep {marker} & echo spawned", tmp_path)
    assert time.monotonic() - start < 5
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "spawned\n", False)
    assert wait_until_gone(marker) == []


def test_background_child_with_redirected_output_is_killed_too(sandbox: LocalSandbox, tmp_path: Path) -> None:
    marker = unique_sleep()
    result = sh(sandbox, f"sleep {marker} >/dev/null 2>&1 & echo spawned", tmp_path)
    assert (result.exit_code, result.stdout) == (0, "spawned\n")
    assert wait_until_gone(marker) == []


def test_timeout_is_data_not_an_exception(sandbox: LocalSandbox, tmp_path: Path) -> None:
    try:
        result = sh(sandbox, "sleep 5", tmp_path, timeout_s=0.2)
    except SandboxError as exc:  # pragma: no cover - the failure being tested for
        pytest.fail(f"a timeout raised {exc!r} instead of returning a result")
    assert result.timed_out


# --- output cap ----------------------------------------------------------------------------------


def test_output_over_the_cap_keeps_head_and_tail_with_a_marker(sandbox: LocalSandbox, tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('A' * 5000 + 'B' * 5000 + 'C' * 5000)"
    result = sandbox.run([sys.executable, "-c", code], cwd=tmp_path, timeout_s=30, output_limit_bytes=2000)
    assert result.truncated
    assert result.stdout == "A" * 1000 + f"\n[... 13000 {MARKER} ...]\n" + "C" * 1000
    assert result.stderr == ""


def test_stderr_is_capped_on_its_own(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sh(sandbox, "echo small; head -c 10000 /dev/zero | tr '\\0' e >&2", tmp_path, output_limit_bytes=1024)
    assert result.truncated
    assert result.stdout == "small\n"
    assert result.stderr == "e" * 512 + f"\n[... 8976 {MARKER} ...]\n" + "e" * 512


def test_output_at_the_cap_is_not_truncated(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sh(sandbox, "head -c 2000 /dev/zero | tr '\\0' x", tmp_path, output_limit_bytes=2000)
    assert not result.truncated
    assert result.stdout == "x" * 2000


def test_a_200_mb_stdout_flood_is_capped(sandbox: LocalSandbox, tmp_path: Path) -> None:
    total = 200 * 1024 * 1024
    result = sh(sandbox, f"head -c {total} /dev/zero", tmp_path, timeout_s=60, output_limit_bytes=64_000)
    assert result.exit_code == 0 and result.truncated
    assert f"[... {total - 64_000} {MARKER} ...]" in result.stdout
    assert len(result.stdout) < 64_000 + 100
    assert len(result.model_dump_json()) < 500_000


# --- environment ---------------------------------------------------------------------------------


def test_host_secrets_are_not_visible(sandbox: LocalSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-7f3a9")
    monkeypatch.setenv("GITHUB_TOKEN", "fake-token-7f3a9")
    result = sh(sandbox, "env", tmp_path)
    assert result.exit_code == 0
    assert "AWS_SECRET_ACCESS_KEY" not in result.stdout and "GITHUB_TOKEN" not in result.stdout
    assert "7f3a9" not in result.stdout


def test_path_starts_with_the_interpreters_directory(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sh(sandbox, 'echo "$PATH"; command -v python', tmp_path)
    path, python = result.stdout.splitlines()
    assert path.split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert python == str(Path(sys.executable).parent / "python")


def test_caller_env_extra_variables_pass(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sh(sandbox, 'echo "$REPOGYM_PROBE"', tmp_path, env={"REPOGYM_PROBE": "from-caller"})
    assert result.stdout == "from-caller\n"


def test_allowlisted_host_variables_pass(sandbox: LocalSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Paris")
    assert sh(sandbox, 'echo "$TZ"', tmp_path).stdout == "Europe/Paris\n"


def test_custom_allowlist_drops_everything_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Paris")
    result = sh(LocalSandbox(env_allowlist=("PATH",)), 'echo "[$TZ]"', tmp_path)
    assert result.stdout == "[]\n"


def test_scrubbed_env_keeps_only_the_allowlist_and_adds_extras() -> None:
    source = {"PATH": "/usr/bin", "HOME": "/home/u", "SECRET": "s", "LANG": "fr_FR.UTF-8"}
    env = scrubbed_env({"EXTRA": "1"}, source=source)
    interpreter_dir = str(Path(sys.executable).parent)
    assert env == {"PATH": f"{interpreter_dir}:/usr/bin", "HOME": "/home/u", "LANG": "fr_FR.UTF-8", "EXTRA": "1"}


def test_scrubbed_env_defaults_lang_and_path_and_does_not_prepend_twice() -> None:
    interpreter_dir = str(Path(sys.executable).parent)
    env = scrubbed_env(source={"PATH": f"{interpreter_dir}:/bin"})
    assert env == {"PATH": f"{interpreter_dir}:/bin", "LANG": "C.UTF-8"}
    assert scrubbed_env(source={})["PATH"] == f"{interpreter_dir}:/usr/local/bin:/usr/bin:/bin"


def test_default_allowlist_holds_no_credentials_or_proxies() -> None:
    assert not {n for n in DEFAULT_ENV_ALLOWLIST if any(k in n for k in ("KEY", "TOKEN", "SECRET", "PROXY"))}


# --- unstartable programs ------------------------------------------------------------------------


def test_missing_program_gives_no_exit_code_and_a_reason(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sandbox.run(["/nonexistent/program", "x"], cwd=tmp_path, timeout_s=5)
    assert result.exit_code is None and not result.ok
    assert result.stderr.startswith("could not start '/nonexistent/program': ")
    assert "No such file or directory" in result.stderr
    assert result.argv == ["/nonexistent/program", "x"]


def test_non_executable_program_gives_no_exit_code_and_a_reason(sandbox: LocalSandbox, tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    result = sandbox.run([str(script)], cwd=tmp_path, timeout_s=5)
    assert result.exit_code is None
    assert "Permission denied" in result.stderr


def test_missing_working_directory_gives_no_exit_code(sandbox: LocalSandbox, tmp_path: Path) -> None:
    result = sandbox.run(["true"], cwd=tmp_path / "gone", timeout_s=5)
    assert result.exit_code is None
    assert result.stderr.startswith("could not start 'true': ")


def test_display_argv_is_recorded_instead_of_the_real_one(tmp_path: Path) -> None:
    result = run_process(
        ["bash", "-c", "echo hi"], cwd=tmp_path, env=scrubbed_env(), timeout_s=5, display_argv=["echo", "hi"]
    )
    assert result.argv == ["echo", "hi"] and result.stdout == "hi\n"


# --- CappedBuffer --------------------------------------------------------------------------------


def test_capped_buffer_under_the_limit_keeps_everything() -> None:
    buf = CappedBuffer(100)
    buf.feed(b"hello ")
    buf.feed(b"world")
    assert (buf.text(), buf.truncated, buf.total) == ("hello world", False, 11)


def test_capped_buffer_keeps_first_and_last_halves_and_counts_the_rest() -> None:
    buf = CappedBuffer(10)
    buf.feed(b"0123456789abcdef")
    assert buf.truncated and buf.total == 16
    assert buf.text() == f"01234\n[... 6 {MARKER} ...]\nbcdef"


def test_capped_buffer_gives_the_same_text_for_any_chunking() -> None:
    data = bytes(range(256)) * 40
    whole = CappedBuffer(1000)
    whole.feed(data)
    for size in (1, 7, 499, 500, 501, 4096):
        pieces = CappedBuffer(1000)
        for i in range(0, len(data), size):
            pieces.feed(data[i : i + size])
        assert (pieces.text(), pieces.truncated, pieces.total) == (whole.text(), whole.truncated, whole.total), size


def test_capped_buffer_text_stays_small_for_a_large_stream() -> None:
    buf = CappedBuffer(1000)
    for _ in range(10_000):
        buf.feed(b"y" * 1000)
    assert buf.total == 10_000_000
    assert len(buf.text()) < 1100
    assert f"[... {10_000_000 - 1000} {MARKER} ...]" in buf.text()


def test_capped_buffer_empty_is_empty() -> None:
    buf = CappedBuffer(10)
    assert (buf.text(), buf.truncated, buf.total) == ("", False, 0)


def test_process_module_docstring_examples_run() -> None:
    failures, _ = doctest.testmod(process_module, verbose=False)
    assert failures == 0


# --- backends ------------------------------------------------------------------------------------


def test_make_sandbox_unknown_name_lists_the_valid_names() -> None:
    with pytest.raises(SandboxUnavailableError) as info:
        make_sandbox("nope")
    assert str(info.value) == "unknown sandbox 'nope'; valid sandboxes are ['auto', 'bwrap', 'docker', 'local']"


def test_make_sandbox_local_builds_a_sandbox() -> None:
    sb = make_sandbox("local", env_allowlist=("PATH",))
    assert isinstance(sb, LocalSandbox) and isinstance(sb, Sandbox)
    assert sb.name == "local" and sb.available()


def test_local_sandbox_close_is_idempotent_and_it_is_a_context_manager(tmp_path: Path) -> None:
    with LocalSandbox() as sb:
        assert sb.run(["true"], cwd=tmp_path, timeout_s=5).ok
    sb.close()
    sb.close()


def test_make_sandbox_auto_is_the_default_for_an_untrusted_agent() -> None:
    from repogym_gym.sandbox import default_sandbox

    assert make_sandbox("auto").name == default_sandbox(trusted=False).name
    assert default_sandbox(trusted=True).name == "local"


# -- configurations (a discriminated union on ``type``) ------------------------------------------------------------


def test_a_sandbox_config_names_its_backend_and_builds_it() -> None:
    from repogym_gym.sandbox.config import BubblewrapConfig, DockerConfig, LocalConfig, sandbox_config

    assert sandbox_config({"type": "docker", "cpus": 1, "limits": {"max_processes": 50}}) == DockerConfig(
        cpus=1.0, limits={"max_processes": 50})
    assert isinstance(sandbox_config("bwrap", hide=["/srv"]), BubblewrapConfig)
    local = make_sandbox({"type": "local", "env_allowlist": ["PATH"]})
    assert local.name == "local" and isinstance(sandbox_config(LocalConfig()), LocalConfig)
    assert local.run(["sh", "-c", "echo ${HOME:-unset}"], cwd="/", timeout_s=10).stdout.strip() == "unset"


@pytest.mark.parametrize(("config", "message"), [
    ("nope", "unknown sandbox 'nope'; valid sandboxes are ['auto', 'bwrap', 'docker', 'local']"),
    ({"cpus": 1}, "unknown sandbox None; valid sandboxes are"),
    ({"type": "bwrap", "limitz": {}}, "invalid 'bwrap' sandbox: limitz: unknown field (did you mean 'limits'?)"),
    ({"type": "docker", "cpus": 0}, "invalid 'docker' sandbox: cpus: Input should be greater than 0 (got 0)"),
    ({"type": "local", "limits": {}}, "invalid 'local' sandbox: limits: unknown field (known fields: ['env_allowlist', 'type'])"),
    ({"type": "bwrap", "limits": {"cpu_s": 0}}, "invalid 'bwrap' sandbox: limits.cpu_s: Input should be greater than or equal to 1 (got 0)"),
    (3, "sandbox: expected a name or a mapping with 'type', got int"),
])
def test_a_bad_sandbox_config_names_the_field_and_the_value(config: object, message: str) -> None:
    from repogym_gym.errors import SandboxConfigError

    with pytest.raises(SandboxConfigError) as info:
        make_sandbox(config)  # type: ignore[arg-type]
    assert str(info.value).startswith(message)
    assert isinstance(info.value, SandboxUnavailableError) and isinstance(info.value, ValueError)


def test_a_dead_reaper_a_forked_child_and_exit_leave_no_resource_warning(tmp_path: Path) -> None:
    """Stop 30's CI failed on ``ResourceWarning: unclosed file`` from a replaced group reaper: a reaper that
    died (or one a forked child inherited, which is not the child's own) was dropped with its pipe open, and
    the live one was never waited for at exit ("subprocess ... is still running")."""
    code = (
        "import os, signal\n"
        "from repogym_gym import owners\n"
        "from repogym_gym.sandbox import LocalSandbox\n"
        f"cwd = {str(tmp_path)!r}\n"
        "assert LocalSandbox().run(['true'], cwd=cwd, timeout_s=30).exit_code == 0\n"
        "first = owners._group_reaper[0][1]\n"
        "os.kill(first.pid, signal.SIGKILL); first.wait()\n"
        "assert LocalSandbox().run(['true'], cwd=cwd, timeout_s=30).exit_code == 0\n"
        "second = owners._group_reaper[0][1]\n"
        "assert second.pid != first.pid and first.stdin.closed\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    ok = LocalSandbox().run(['true'], cwd=cwd, timeout_s=30).exit_code == 0\n"
        "    ok = ok and owners._group_reaper[0][1].pid != second.pid\n"
        "    os._exit(0 if ok else 7)\n"
        "assert os.waitpid(child, 0)[1] == 0\n"
        "print(second.pid)\n"
    )
    done = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", code],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ResourceWarning" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    reaper_pid = int(done.stdout.split()[-1])
    assert not Path(f"/proc/{reaper_pid}").exists()  # waited for at exit, not left running
