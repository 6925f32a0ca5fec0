"""Where and within what limits a task's episodes run: ``limits:``, ``environment:`` and ``repo.env`` of task.yaml.

Split from :mod:`repogym_gym.spec`, which re-exports both models; also home of the strict,
frozen base every task.yaml model shares.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from repogym_gym.interpreters import supported_version

__all__ = ["EnvironmentSpec", "LimitsSpec", "MAX_MIB", "MAX_PROCESSES", "MAX_SECONDS", "PythonEnvSpec", "StrictModel"]


class StrictModel(BaseModel):
    """A frozen pydantic model that refuses unknown fields, coercions (a bool for an int, a string for
    a number) and infinities or NaN (``weights: {tests: .inf}`` made every score NaN): the base of
    every task.yaml section."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


#: Longest timeout or CPU limit a task may set, seconds (a week): every deadline is finite.
MAX_SECONDS = 7 * 24 * 3600
#: Largest size a task may set, MiB (1 TiB): prlimit and Docker take it in bytes, and 1e15 MiB
#: overflowed, so the sandbox refused every command and every golden scored 0.
MAX_MIB = 1024 * 1024
#: Most processes a task may allow (the kernel's largest pid_max).
MAX_PROCESSES = 4_194_304


class LimitsSpec(StrictModel):
    """Episode and command limits. Every timeout is in seconds; each value is finite and within what
    the sandboxes can enforce (:data:`MAX_SECONDS`, :data:`MAX_MIB`, :data:`MAX_PROCESSES`), and an
    integer field takes an integer, not a bool (``max_steps: yes`` was 1)."""

    max_steps: Annotated[int, Field(ge=1, le=10_000)] = 30
    setup_timeout_s: Annotated[float, Field(gt=0, le=MAX_SECONDS)] = 600.0
    command_timeout_s: Annotated[float, Field(gt=0, le=MAX_SECONDS)] = 60.0
    test_timeout_s: Annotated[float, Field(gt=0, le=MAX_SECONDS)] = 300.0
    output_limit_bytes: Annotated[int, Field(ge=1024, le=MAX_MIB * 64)] = Field(
        64_000, description="Bytes of stdout (and of stderr) kept per command; the middle is cut with a marker."
    )
    # Resource limits of a confining sandbox (bubblewrap); null keeps the sandbox's default.
    cpu_s: Annotated[int, Field(ge=1, le=MAX_SECONDS)] | None = Field(None, description="CPU seconds per process; null: the sandbox's default.")
    memory_mb: Annotated[int, Field(ge=16, le=MAX_MIB)] | None = Field(
        None, description="Address space per process, MiB (runtimes such as the JVM need several GiB); null: the sandbox's default."
    )
    max_processes: Annotated[int, Field(ge=1, le=MAX_PROCESSES)] | None = Field(
        None, description="Processes plus threads a command may run at once; null: the sandbox's default."
    )
    file_size_mb: Annotated[int, Field(ge=1, le=MAX_MIB)] | None = Field(None, description="Largest file a command may write, MiB; null: the sandbox's default.")
    tmp_size_mb: Annotated[int, Field(ge=1, le=MAX_MIB)] | None = Field(None, description="Size of the command's private /tmp, MiB; null: the sandbox's default.")
    disk_mb: Annotated[int, Field(ge=1, le=MAX_MIB)] | None = Field(
        None, description="Disk space a command's workspace (or grading copy) may fill, MiB; null: the sandbox's default."
    )


class EnvironmentSpec(StrictModel):
    """Where a task's episodes must run (``environment:`` in task.yaml).

    A gym env or run given no sandbox (or ``auto``) uses ``sandbox``; an explicit sandbox name
    wins. ``image`` is the Docker image (built by ``repogym envs build``, see ``envs/``), used
    whenever the task runs in the Docker sandbox.
    """

    sandbox: Literal["local", "bwrap", "docker"] | None = Field(
        None, description="The sandbox the task needs (e.g. docker for a toolchain image); null: the env's choice."
    )
    image: str | None = Field(
        None, min_length=1, description="Docker image of the task's episodes and grading; null: the sandbox's base image."
    )


class PythonEnvSpec(StrictModel):
    """A task's own Python environment (see :mod:`repogym_gym.venvs`): pinned requirements and,
    optionally, the CPython version it is made with."""

    requirements: list[str] = Field(
        description="pip requirement specifiers, pinned (e.g. 'pytest==9.0.3'); the test runner needs pytest."
    )
    python: str | None = Field(
        None, description="CPython version (major.minor, e.g. '3.12') the environment is made with, one the judge "
        "runs on (repogym_gym.interpreters.JUDGE_PYTHONS); null: the interpreter running repogym_gym."
    )

    @field_validator("requirements")
    @classmethod
    def _no_options(cls, v: list[str]) -> list[str]:
        for req in v:
            if not req.strip() or req.lstrip().startswith("-"):
                raise ValueError(f"requirement {req!r} must be a package specifier, not empty or a pip option")
        return v

    @field_validator("python")
    @classmethod
    def _judged_version(cls, v: str | None) -> str | None:
        return None if v is None else supported_version(v)
