"""Resource limits of a sandboxed command, and the ``prlimit`` argv that applies them.

Each limit is a kernel rlimit set on the sandbox's process before it starts, inherited by every
process the command starts; the private ``/tmp`` (and ``/dev/shm``) are size-limited tmpfs
mounts. What each one does and does not cap:

- ``cpu_s``: CPU seconds per *process* (RLIMIT_CPU; SIGXCPU then SIGKILL). Every child has its
  own counter; the command's wall-clock timeout bounds the whole command.
- ``memory_mb``: address space per process (RLIMIT_AS). It caps what a process can map, not
  what it uses: runtimes that reserve a large address space up front (the JVM, Go, Node) can
  fail to start under it, so raise or disable it (``None``) for such tasks. A memory cgroup
  would cap real use instead; it is not used because it needs a writable cgroup hierarchy.
- ``max_processes``: processes and threads of the command's dedicated uid (RLIMIT_NPROC). The
  kernel ignores it for uid 0, so the bubblewrap sandbox runs every command as an unprivileged
  uid of its own (see :mod:`repogym_gym.sandbox.slots`).
- ``file_size_mb``: size of any one file written (RLIMIT_FSIZE; the writer gets SIGXFSZ/EFBIG).
  It caps each file, not the disk.
- ``disk_mb``: what the command's writable directories (its workspace or grading copy, a
  scratch directory) may hold together, checked while it runs by
  :class:`~repogym_gym.sandbox.disk.DiskWatch`, which kills it past the limit. The private
  ``/tmp`` and ``/dev/shm`` are tmpfs mounts of ``tmp_size_mb`` each.
- ``open_files``: open file descriptors per process (RLIMIT_NOFILE).

Example:
    >>> SandboxLimits(max_processes=64).merged({"max_processes": None, "cpu_s": 30}).cpu_s
    30
    >>> prlimit_argv(SandboxLimits(cpu_s=30, memory_mb=None, max_processes=None, file_size_mb=None))[:3]
    ['prlimit', '--cpu=30', '--nofile=4096']
"""

from __future__ import annotations

import resource
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_LIFETIME_S", "LIFETIME_MARGIN_S", "SandboxLimits", "episode_lifetime", "over_host_limits",
           "prlimit_argv"]

_MB = 1024 * 1024
#: Seconds an episode's container lives by default (a Docker container's idle ``sleep``); one idle
#: past it is started again at the episode's next command.
DEFAULT_LIFETIME_S = 900
#: Seconds a container outlives the longest command it is started for.
LIFETIME_MARGIN_S = 60


def episode_lifetime(lifetime_s: int, limits: object) -> int:
    """``lifetime_s``, lowered for a task's limits (a :class:`~repogym_gym.spec.LimitsSpec`) to its
    longest command limit (``command_timeout_s``, ``test_timeout_s``, ``setup_timeout_s``) plus
    :data:`LIFETIME_MARGIN_S`, in seconds: a container of a killed process ends within the
    episode's own limits. Anything without those fields leaves ``lifetime_s`` as it is.

    >>> from repogym_gym.spec_run import LimitsSpec
    >>> episode_lifetime(900, LimitsSpec(test_timeout_s=120, command_timeout_s=30, setup_timeout_s=100)), episode_lifetime(900, {})
    (180, 900)
    """
    found = [getattr(limits, name, None) for name in ("command_timeout_s", "test_timeout_s", "setup_timeout_s")]
    seconds = [float(v) for v in found if isinstance(v, int | float) and not isinstance(v, bool)]
    if not seconds:
        return lifetime_s
    return max(1, min(lifetime_s, int(max(seconds)) + LIFETIME_MARGIN_S))


class SandboxLimits(BaseModel):
    """Per-command resource limits (see the module docstring for what each one caps).

    ``None`` disables a limit.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    cpu_s: Annotated[int, Field(ge=1)] | None = Field(600, description="CPU seconds per process (RLIMIT_CPU).")
    memory_mb: Annotated[int, Field(ge=16)] | None = Field(
        4096, description="Address space per process, MiB (RLIMIT_AS); breaks JVM/Go/Node-style reservations if low."
    )
    max_processes: Annotated[int, Field(ge=1)] | None = Field(
        256, description="Processes plus threads of the command's uid (RLIMIT_NPROC; needs a non-root uid)."
    )
    file_size_mb: Annotated[int, Field(ge=1)] | None = Field(1024, description="Largest file written, MiB (RLIMIT_FSIZE).")
    open_files: Annotated[int, Field(ge=16)] = Field(4096, description="Open file descriptors per process (RLIMIT_NOFILE).")
    disk_mb: Annotated[int, Field(ge=1)] | None = Field(
        4096, description="Bytes the command's writable directories may hold together, MiB (killed past it)."
    )
    tmp_size_mb: Annotated[int, Field(ge=1)] = Field(512, description="Size of the private /tmp and of /dev/shm, MiB each.")

    def merged(self, overrides: Mapping[str, Any] | BaseModel | None) -> SandboxLimits:
        """These limits with every non-None value of ``overrides`` (a mapping or a model such as
        :class:`~repogym_gym.spec.LimitsSpec`) whose name is a field of this model.

        Raises:
            pydantic.ValidationError: when an override is out of range.
        """
        if overrides is None:
            return self
        values = overrides.model_dump() if isinstance(overrides, BaseModel) else dict(overrides)
        update = {k: v for k, v in values.items() if k in type(self).model_fields and v is not None}
        return type(self).model_validate({**self.model_dump(), **update}) if update else self


def prlimit_argv(limits: SandboxLimits) -> list[str]:
    """``prlimit`` with the soft and hard limits of ``limits``, ready to prefix a command."""
    argv = ["prlimit"]
    if limits.cpu_s is not None:
        argv.append(f"--cpu={limits.cpu_s}")
    argv.append(f"--nofile={limits.open_files}")
    if limits.memory_mb is not None:
        argv.append(f"--as={limits.memory_mb * _MB}")
    if limits.max_processes is not None:
        argv.append(f"--nproc={limits.max_processes}")
    if limits.file_size_mb is not None:
        argv.append(f"--fsize={limits.file_size_mb * _MB}")
    return [*argv, "--core=0", "--"]


#: Each limit's rlimit, and its value in the rlimit's unit.
_RLIMITS = (("cpu_s", resource.RLIMIT_CPU, 1), ("open_files", resource.RLIMIT_NOFILE, 1),
            ("memory_mb", resource.RLIMIT_AS, _MB), ("max_processes", resource.RLIMIT_NPROC, 1),
            ("file_size_mb", resource.RLIMIT_FSIZE, _MB))


def _can_raise_hard_limits() -> bool:
    """Whether this process holds CAP_SYS_RESOURCE (capability 24), which lets it raise a hard rlimit."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> 24 & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


def over_host_limits(limits: SandboxLimits) -> str | None:
    """Why ``prlimit`` cannot set ``limits`` on this host, or None: a limit above the host's hard limit,
    which only a process with CAP_SYS_RESOURCE may raise (``prlimit`` then fails, and the command with
    it: every test would fail and the submission score a silent 0).

    Example:
        >>> over_host_limits(SandboxLimits(max_processes=None, cpu_s=None)) is None
        True
    """
    over = []
    for field, kind, unit in _RLIMITS:
        value = getattr(limits, field)
        hard = resource.getrlimit(kind)[1]
        if value is not None and hard != resource.RLIM_INFINITY and value * unit > hard:
            over.append(f"{field}={value} is over this host's hard limit ({hard // unit:,})")
    if not over or _can_raise_hard_limits():
        return None
    return "; ".join(over) + ": lower it in the task's limits, or raise the host's limit"
