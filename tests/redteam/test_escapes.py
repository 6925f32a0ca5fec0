"""Escapes: the agent reaches the host through links, the network, sockets or mounts."""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path

import pytest

from repogym_gym.episode import Episode
from repogym_gym.sandbox import Sandbox
from repogym_gym.task import Task
from tests.redteam.helpers import GUARDRAIL, Start, act, assert_unearned_zero, attack, run, script, submit, violations

G = "escapes"


@pytest.fixture
def host_file(host_dir: Path) -> Path:
    """A world-writable host file holding a secret: only the sandbox stands in the way."""
    path = host_dir / "host.txt"
    path.write_text("HOST-SECRET\n")
    path.chmod(0o666)
    return path


@attack(G, "symlink to a host file for Read", local="refused", confining="refused")
def test_reading_through_a_symlink_to_the_host_is_refused(start: Start, tiny_task: Task, host_file: Path) -> None:
    env = start(tiny_task)
    assert run(env, f"ln -s {host_file} leak.txt && ln -s {host_file.parent} hostdir && ln -s /etc/passwd pw").observation.exit_code == 0
    for path in ("leak.txt", "hostdir/host.txt", "pw"):
        obs = act(env, "read", path=path).observation
        assert obs.error and "Refused" in obs.text and "HOST-SECRET" not in obs.text and "root:" not in obs.text, obs.text
    listing = act(env, "list_files", path="hostdir").observation
    assert listing.error and "host.txt" not in listing.text


@pytest.mark.parametrize("kind", ["write", "edit"])
@attack(G, "symlink to a host file for Write / Edit", local="refused", confining="refused")
def test_writing_through_a_symlink_to_the_host_is_refused(start: Start, tiny_task: Task, host_file: Path, kind: str) -> None:
    env = start(tiny_task)
    assert run(env, f"ln -s {host_file} calc/leak.py && ln -s {host_file.parent} hostdir").observation.exit_code == 0
    for path in ("calc/leak.py", "hostdir/host.txt", "hostdir/new.txt"):
        fields = {"content": "pwned\n"} if kind == "write" else {"old": "HOST-SECRET", "new": "pwned"}
        obs = act(env, kind, path=path, **fields).observation
        assert obs.error and "Refused" in obs.text, obs.text
    assert host_file.read_text() == "HOST-SECRET\n" and sorted(p.name for p in host_file.parent.iterdir()) == ["host.txt"]


@pytest.mark.parametrize("what", ["tests-dir", "hidden-file"])
@attack(G, "planted symlink where the grader copies hidden tests", local="score 0", confining="score 0")
def test_a_symlink_where_hidden_tests_land_copies_nothing_out(start: Start, tiny_task: Task, host_dir: Path, what: str) -> None:
    outside = host_dir / "outside"
    outside.mkdir(mode=0o777)
    outside.chmod(0o777)
    env = start(tiny_task)
    if what == "tests-dir":
        command = f"cp tests/test_calc.py {outside}/ 2>/dev/null; rm -r tests && ln -s {outside} tests"
    else:
        command = f"ln -s {outside}/planted.py tests/test_calc_hidden.py"
    assert run(env, command).observation.exit_code == 0
    before = sorted(p.name for p in outside.iterdir())
    act(env, "test")
    result = submit(env)
    assert_unearned_zero(result)
    assert sorted(p.name for p in outside.iterdir()) == before and not (outside / "planted.py").exists()
    assert not (outside / "test_calc_hidden.py").exists()
    planted = "tests" if what == "tests-dir" else "tests/test_calc_hidden.py"
    found = violations(result, "file_types") + violations(result)
    assert any(v.startswith(planted + " ") for v in found), found


@attack(G, "network connection (to a host loopback listener)", local=GUARDRAIL, confining="no effect")
def test_a_network_connection_to_the_host_fails(start: Start, tiny_task: Task) -> None:
    """Confining sandboxes only: LocalSandbox shares the host's network."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    port = server.getsockname()[1]
    try:
        env = start(tiny_task)
        out = script(env, f"""\
            import socket
            for host in ("127.0.0.1", "localhost", "::1"):
                try:
                    socket.create_connection((host, {port}), timeout=3)
                    print("connected", host)
                except OSError as exc:
                    print("refused", host, type(exc).__name__)
            """).observation.text
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
    assert "connected" not in out and out.count("refused") == 3, out


@attack(G, "unix socket on the host (/run, /tmp, abstract, elsewhere)", local=GUARDRAIL, confining="no effect")
def test_a_host_unix_socket_is_unreachable(start: Start, tiny_task: Task, host_dir: Path) -> None:
    """Confining sandboxes only: a filesystem socket ignores network namespaces, and LocalSandbox
    has none anyway. Every socket accepts anyone (mode 0777), so only hiding stands in the way."""
    token = secrets.token_hex(4)
    run_dir = Path("/run") / f"repogym-redteam-{token}"
    run_dir.mkdir(mode=0o755)
    paths = [str(run_dir / "s.sock"), f"/tmp/repogym-redteam-{token}.sock", str(host_dir / "s.sock")]
    addresses = [*paths, f"\0repogym-redteam-{token}"]
    servers = []
    try:
        for address in addresses:
            server = socket.socket(socket.AF_UNIX)
            server.bind(address)
            server.listen()
            servers.append(server)
            if not address.startswith("\0"):
                os.chmod(address, 0o777)
        env = start(tiny_task)
        out = script(env, f"""\
            import socket
            for address in {addresses!r}:
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect(address)
                    print("connected", repr(address))
                except OSError as exc:
                    print("refused", type(exc).__name__)
            """).observation.text
    finally:
        for server in servers:
            server.close()
        for path in paths:
            Path(path).unlink(missing_ok=True)
        run_dir.rmdir()
    assert out.count("refused") == 4 and "connected" not in out, out


REMOUNT = """\
import subprocess
target = {target!r}
for argv in (["mount", "-o", "remount,rw,bind", {directory!r}], ["mount", "-o", "remount,rw", "/"],
             ["unshare", "-Urm", "sh", "-c", "mount -o remount,rw,bind {directory} && echo pwned > {target}"]):
    p = subprocess.run(argv, capture_output=True, text=True)
    print(argv[0], p.returncode, p.stderr.strip()[-200:])
try:
    with open(target, "w") as fh:
        fh.write("pwned\\n")
    print("wrote")
except OSError as exc:
    print("refused", exc)
"""


@attack(G, "remounting a read-only bind writable", local="n/a (no read-only binds)", confining="refused")
def test_remounting_a_read_only_bind_writable_fails(sandbox: Sandbox, tiny_task: Task, host_file: Path) -> None:
    """Confining sandboxes only: LocalSandbox mounts nothing read-only (and a command there runs
    with the host user's own privileges, which is what a guardrail means).

    The host file is world-writable: only the read-only mount stands in the way. Neither
    sandbox shows that host directory unless told to, so it is revealed (read-only) here.
    """
    env = Episode(tiny_task, sandbox=sandbox.scoped(reveal=[host_file.parent]))  # type: ignore[attr-defined]
    try:
        env.reset()
        out = script(env, REMOUNT.format(target=str(host_file), directory=str(host_file.parent))).observation.text
    finally:
        env.close()
    assert host_file.read_text() == "HOST-SECRET\n", out
    assert "refused" in out and "wrote" not in out, out
    assert "Read-only file system" in out, out

