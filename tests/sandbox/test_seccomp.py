"""Tests for repogym_gym.sandbox.seccomp: the bubblewrap sandbox's filter refuses the kernel keyring.

The program is checked twice: instruction by instruction here, by a small classic-BPF
interpreter, for every architecture it handles; and for real, under bubblewrap.
"""

from __future__ import annotations

import doctest
import errno
import platform
import struct
import textwrap
from pathlib import Path

import pytest

from repogym_gym.errors import SandboxError
from repogym_gym.sandbox import seccomp as seccomp_module
from repogym_gym.sandbox.seccomp import DENIED_SYSCALLS, SYSCALL_NUMBERS, keyring_filter
from tests.sandbox.helpers import require_bwrap

X86_64, I386, AARCH64, ARM, RISCV64 = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028, 0xC00000F3
ALLOW, KILL, EPERM = 0x7FFF0000, 0x80000000, 0x00050000 | errno.EPERM


def run_filter(program: bytes, arch: int, nr: int) -> int:
    """What the kernel would return for system call ``nr`` made under audit architecture ``arch``."""
    insns = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    data = struct.pack("=iI", nr if nr < 2**31 else nr - 2**32, arch) + bytes(56)
    acc, pc = 0, 0
    for _ in range(len(insns)):  # no loops in classic BPF: each instruction runs at most once
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x54:  # and #k
            acc &= k
        elif code == 0x15:  # jeq #k
            pc += jt if acc == k else jf
        elif code == 0x06:  # ret #k
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x} at {pc}")
        pc += 1
    raise AssertionError("the program fell off its end")


@pytest.mark.parametrize(("machine", "arches"), [("x86_64", (X86_64, I386)), ("aarch64", (AARCH64, ARM))])
def test_the_keyring_calls_get_eperm_and_every_other_call_runs(machine: str, arches: tuple[int, ...]) -> None:
    program = keyring_filter(machine)
    for arch in arches:
        for nr in SYSCALL_NUMBERS[arch]:
            assert run_filter(program, arch, nr) == EPERM, (hex(arch), nr)
        for nr in (0, 1, 3, 57, 59, 200, 247, 251, 435):
            assert run_filter(program, arch, nr) == ALLOW, (hex(arch), nr)


def test_an_x32_keyring_call_is_refused_too() -> None:
    program = keyring_filter("x86_64")
    assert [run_filter(program, X86_64, 0x40000000 | nr) for nr in (248, 249, 250)] == [EPERM] * 3
    assert run_filter(program, X86_64, 0x40000000 | 0) == ALLOW


def test_a_call_under_an_architecture_the_filter_does_not_know_kills_the_process() -> None:
    assert run_filter(keyring_filter("x86_64"), AARCH64, 217) == KILL
    assert run_filter(keyring_filter("aarch64"), X86_64, 248) == KILL
    assert run_filter(keyring_filter("x86_64"), RISCV64, 0) == KILL


def test_a_host_of_another_architecture_gets_an_error_not_an_unfiltered_sandbox() -> None:
    with pytest.raises(SandboxError, match=r"no seccomp filter for machine='s390x' .*refuses to run commands unfiltered"):
        keyring_filter("s390x")


KEYRING_PROBE = textwrap.dedent(
    """\
    import ctypes, os, subprocess, sys
    libc = ctypes.CDLL(None, use_errno=True)
    ADD_KEY, REQUEST_KEY, KEYCTL = {numbers}
    def call(name, nr, *args):
        result = libc.syscall(nr, *args)
        print(name, result, errno_name(ctypes.get_errno()) if result < 0 else "ok")
    def errno_name(code):
        import errno
        return errno.errorcode.get(code, str(code))
    call("add_key", ADD_KEY, b"user", b"repogym-probe", b"secret", 6, -4)
    call("request_key", REQUEST_KEY, b"user", b"repogym-probe", None, 0)
    call("keyctl", KEYCTL, 0, -4, 0)  # KEYCTL_GET_KEYRING_ID of @u
    if len(sys.argv) == 1:  # the filter holds in a child process too
        subprocess.run([sys.executable, __file__, "child"])
    """
)


def test_under_bubblewrap_every_keyring_call_fails_with_eperm(tmp_path: Path) -> None:
    bwrap = require_bwrap()
    numbers = SYSCALL_NUMBERS[{"x86_64": X86_64, "aarch64": AARCH64}[platform.machine()]]
    (tmp_path / "probe.py").write_text(KEYRING_PROBE.format(numbers=numbers))
    result = bwrap.run(["python", "probe.py"], cwd=tmp_path, timeout_s=60)
    assert result.exit_code == 0, result.tail(2000)
    lines = result.stdout.split()
    assert result.stdout.count("EPERM") == 2 * len(DENIED_SYSCALLS), result.stdout
    assert " ok" not in result.stdout and lines[:3] == ["add_key", "-1", "EPERM"], result.stdout
    status = bwrap.run(["grep", "^Seccomp:", "/proc/self/status"], cwd=tmp_path, timeout_s=30).stdout
    assert status.split() == ["Seccomp:", "2"]  # filter mode


def test_the_filter_descriptor_is_not_left_open_in_the_command(tmp_path: Path) -> None:
    bwrap = require_bwrap()
    result = bwrap.run(["python", "-c", "import os; print(sorted(os.listdir('/proc/self/fd')))"], cwd=tmp_path, timeout_s=30)
    assert result.stdout.strip() == "['0', '1', '2', '3']", result.stdout  # 3: the listing's own directory


def test_seccomp_docstring_examples_run() -> None:
    assert doctest.testmod(seccomp_module).failed == 0
