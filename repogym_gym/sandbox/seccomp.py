"""The seccomp filter of the bubblewrap sandbox: no kernel keyring, the one per-uid store that outlives a command.

A bubblewrap command runs in fresh mount, PID, network, IPC, UTS and cgroup namespaces, so what
it writes outside its workspace (``/tmp``, ``/dev/shm``, SysV IPC, POSIX message queues, abstract
sockets) and every process it starts end with it. One kernel store is not namespaced that way:
the **key rings** of a uid (``@u``, ``@us``, the persistent keyring) belong to the uid in the
initial user namespace and outlive every process of it. The sandbox creates no user namespace,
and its uid pool hands the same uid to later commands (:mod:`repogym_gym.sandbox.slots`), so a
grading-time subprocess could store a hidden test file with ``add_key`` and a later episode's
command read it back with ``keyctl``. ``request_key`` can also make the kernel run
``/sbin/request-key`` as root on the host. So every command runs under this filter:
``add_key``, ``request_key`` and ``keyctl`` fail with ``EPERM`` (as under Docker's default
profile); everything else is allowed.

The filter is a classic BPF program (``struct sock_filter`` array, what ``bwrap --seccomp FD``
reads), written here for the host's architecture and its compat ABIs (x86_64 with x32 and i386;
aarch64 with 32-bit arm). A system call made under any other audit architecture kills the
process, and a host of another architecture gets a :class:`~repogym_gym.errors.SandboxError`
(the sandbox is then unavailable) rather than commands without a filter.

Example:
    >>> program = keyring_filter("x86_64")
    >>> len(program) % 8, len(program) // 8
    (0, 16)
    >>> keyring_filter("riscv64")
    Traceback (most recent call last):
        ...
    repogym_gym.errors.SandboxError: no seccomp filter for machine='riscv64' (only x86_64, aarch64): the bwrap sandbox refuses to run commands unfiltered
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import struct

from repogym_gym.errors import SandboxError

__all__ = ["DENIED_SYSCALLS", "SYSCALL_NUMBERS", "filter_fd", "keyring_filter"]

#: The system calls every command is refused (with EPERM).
DENIED_SYSCALLS = ("add_key", "request_key", "keyctl")
#: Audit architecture (``AUDIT_ARCH_*``) -> numbers of :data:`DENIED_SYSCALLS` in its table.
SYSCALL_NUMBERS = {
    0xC000003E: (248, 249, 250),  # x86_64 (x32 shares the table, with bit 30 set)
    0x40000003: (286, 287, 288),  # i386
    0xC00000B7: (217, 218, 219),  # aarch64
    0x40000028: (309, 310, 311),  # arm (EABI)
}
#: Host machine (``platform.machine()``) -> the audit architectures its processes can call with.
_ARCHES = {"x86_64": (0xC000003E, 0x40000003), "amd64": (0xC000003E, 0x40000003),
           "aarch64": (0xC00000B7, 0x40000028), "arm64": (0xC00000B7, 0x40000028)}
_X32_BIT = 0x40000000

# classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h)
_LD_W_ABS, _ALU_AND_K, _JEQ_K, _RET_K = 0x20, 0x54, 0x15, 0x06
_RET_KILL_PROCESS, _RET_ALLOW, _RET_ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
_NR_OFFSET, _ARCH_OFFSET = 0, 4  # struct seccomp_data: int nr; __u32 arch; ...


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


@functools.cache
def keyring_filter(machine: str | None = None) -> bytes:
    """The compiled filter for ``machine`` (default: this host's), as ``bwrap --seccomp`` reads it.

    Args:
        machine: A ``platform.machine()`` value (``x86_64``, ``aarch64``).

    Returns:
        ``struct sock_filter`` instructions in native byte order (8 bytes each).

    Raises:
        SandboxError: for a machine whose system call numbers are not known here.
    """
    machine = machine or platform.machine()
    arches = _ARCHES.get(machine)
    if arches is None:
        raise SandboxError(f"no seccomp filter for machine={machine!r} (only x86_64, aarch64): the bwrap sandbox "
                           "refuses to run commands unfiltered")
    # layout: arch dispatch, then one block per architecture, then the shared returns
    # an instruction: (code, k, label to jump to when true, label when false); None falls through
    blocks: list[list[tuple[int, int, str | None, str | None]]] = []
    for arch in arches:
        block: list[tuple[int, int, str | None, str | None]] = [(_LD_W_ABS, _NR_OFFSET, None, None)]
        if arch == 0xC000003E:
            block.append((_ALU_AND_K, 0xFFFFFFFF & ~_X32_BIT, None, None))  # an x32 call is the same call
        block += [(_JEQ_K, nr, "deny", None) for nr in SYSCALL_NUMBERS[arch]]
        block.append((_RET_K, _RET_ALLOW, None, None))
        blocks.append(block)
    dispatch: list[tuple[int, int, str | None, str | None]] = [(_LD_W_ABS, _ARCH_OFFSET, None, None)]
    dispatch += [(_JEQ_K, arch, f"arch{i}", None) for i, arch in enumerate(arches)]
    dispatch.append((_RET_K, _RET_KILL_PROCESS, None, None))  # an architecture this filter does not know
    program = list(dispatch)
    labels = {}
    for i, block in enumerate(blocks):
        labels[f"arch{i}"] = len(program)
        program += block
    labels["deny"] = len(program)
    program.append((_RET_K, _RET_ERRNO | errno.EPERM, None, None))
    out = []
    for pc, (code, k, jt, jf) in enumerate(program):
        out.append(_insn(code, k, labels[jt] - pc - 1 if jt else 0, labels[jf] - pc - 1 if jf else 0))
    return b"".join(out)


def filter_fd() -> int:
    """A pipe's read end holding :func:`keyring_filter` (the caller passes it to bwrap and closes it).

    Raises:
        SandboxError: for a host architecture without a filter.
    """
    program = keyring_filter()
    read, write = os.pipe()
    try:
        os.write(write, program)  # a few hundred bytes: the pipe's buffer holds them
    finally:
        os.close(write)
    return read
