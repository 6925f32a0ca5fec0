"""The one exception tree of repogym_gym.

Every error the library raises on purpose derives from :class:`RepoGymError`, and where a
built-in exception means the same thing it derives from that too, so ``except ValueError``
and ``except RepoGymError`` both work::

    RepoGymError
    ├── TaskError
    │   ├── TaskSpecError (ValueError)        a task.yaml that does not validate
    │   ├── TaskNotFoundError (LookupError)   no task with that id / path
    │   ├── SourceError                       a task's source cannot be fetched, verified or unpacked
    │   └── BrokenTaskError (RuntimeError)    the task itself fails (its baseline benchmark), not a submission
    ├── WorkspaceError
    │   ├── PatchError (ValueError)           a patch that does not apply
    │   ├── DiskFullError (OSError)           no space left where the grader writes: infrastructure
    │   ├── PathEscapeError (ValueError)      a path that leaves the workspace
    │   └── GitMetadataError                  the workspace's git metadata is gone or broken
    │       └── GitCommandError               a git command exited non-zero (its stderr kept)
    ├── SetupError                            a task's setup commands failed
    ├── SandboxError
    │   └── SandboxUnavailableError           the sandbox's backend is not on this machine
    │       └── SandboxConfigError (ValueError) an unknown sandbox or a bad option: none can be made
    ├── ActionError (ValueError)              an agent's action that cannot be parsed or validated
    ├── CommandRefusedError (ValueError)      a Run command the allowlist refuses
    ├── EpisodeError (RuntimeError)           step() before reset() or after the episode ended
    ├── ServeError                            a request `repogym serve` refuses (its HTTP status kept)
    ├── JUnitParseError (ValueError)          an empty, missing or malformed JUnit report
    ├── GraderError                           a grader could not produce a score
    ├── MiningError (RuntimeError)            a package's tests could not be mined
    ├── AgentError                            an agent misconfigured or unknown
    │   └── AgentNotFoundError (LookupError)  no agent of that name
    ├── AgentInfraError (ConnectionError)     an agent's backend (model server, CLI) is unreachable;
    │                                         the runner retries it and never scores it
    └── RunError                              a results directory or run file that cannot be used

Messages name the field and the value, and say what to do.

Warnings (``warnings.warn``, never raised on purpose) have their own small tree::

    RepoGymWarning (UserWarning)
    └── UnconfinedWarning                     an untrusted agent's commands run in the local
                                              sandbox, a guardrail and not a boundary
"""

from __future__ import annotations

import difflib
from typing import Any

__all__ = [
    "ActionError",
    "AgentError",
    "AgentInfraError",
    "AgentNotFoundError",
    "BrokenTaskError",
    "CommandRefusedError",
    "DiskFullError",
    "EpisodeError",
    "GitCommandError",
    "GitMetadataError",
    "GraderError",
    "JUnitParseError",
    "MiningError",
    "PatchError",
    "PathEscapeError",
    "RepoGymError",
    "RepoGymWarning",
    "RunError",
    "SandboxConfigError",
    "SandboxError",
    "SandboxUnavailableError",
    "ServeError",
    "SetupError",
    "SourceError",
    "TaskError",
    "TaskNotFoundError",
    "TaskSpecError",
    "UnconfinedWarning",
    "WorkspaceError",
    "validation_problems",
    "validation_summary",
]


class RepoGymError(Exception):
    """Root of every error raised by repogym_gym."""


class TaskError(RepoGymError):
    """A task could not be found or loaded."""


class TaskSpecError(TaskError, ValueError):
    """A task.yaml (or task dict) failed validation; the message names file, field and value."""


class TaskNotFoundError(TaskError, LookupError):
    """No task matches the given id or path."""


class SourceError(TaskError):
    """A task's source (git commit, sdist, archive, directory) cannot be fetched, verified or unpacked."""


class BrokenTaskError(TaskError, RuntimeError):
    """The task itself fails where a submission plays no part (its baseline benchmark exits non-zero)."""


class WorkspaceError(RepoGymError):
    """A workspace could not be materialised, inspected or changed."""


class PatchError(WorkspaceError, ValueError):
    """A patch is malformed or does not apply to the baseline."""


class DiskFullError(WorkspaceError, OSError):
    """The host ran out of space (or quota) while the grader wrote: an infrastructure fault, never the submission's 0."""


class PathEscapeError(WorkspaceError, ValueError):
    """A path resolves outside the workspace (``..``, absolute, or through a symlink)."""


class GitMetadataError(WorkspaceError):
    """The workspace's git metadata is missing or broken; grading fails closed."""


class GitCommandError(GitMetadataError):
    """A git command exited non-zero; ``command`` (its first argument), ``returncode`` and ``stderr``."""

    def __init__(self, command: str, returncode: int, stderr: str) -> None:
        super().__init__(f"git {command} failed (exit {returncode}): {stderr[-2000:]}")
        self.command = command
        self.returncode = returncode
        self.stderr = stderr


class SetupError(RepoGymError):
    """A task's setup commands failed while building its baseline."""


class SandboxError(RepoGymError):
    """A sandbox could not run a command."""


class SandboxUnavailableError(SandboxError):
    """The sandbox's backend (binary, daemon) is not available on this machine."""


class SandboxConfigError(SandboxUnavailableError, ValueError):
    """A sandbox configuration names no backend or holds a bad option (no sandbox can be made from it)."""


class ActionError(RepoGymError, ValueError):
    """An action that cannot be parsed or validated; the episode turns it into an observation."""


class CommandRefusedError(RepoGymError, ValueError):
    """A Run command the allowlist refuses; the episode turns it into an error observation."""


class EpisodeError(RepoGymError, RuntimeError):
    """``step()`` before ``reset()`` or after the episode ended."""


class ServeError(RepoGymError):
    """A request ``repogym serve`` refuses; ``status`` is its HTTP status (404, 409, 422, 429)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class JUnitParseError(RepoGymError, ValueError):
    """A JUnit XML report is missing, empty or malformed; it never reads as 'nothing failed'."""


class GraderError(RepoGymError):
    """A grader could not produce a score (the component then scores 0 with this message)."""


class MiningError(RepoGymError, RuntimeError):
    """A miner could not run a package's test suite (or its original is not a stable baseline)."""


class AgentError(RepoGymError):
    """An agent that cannot be built: unknown option, missing file, bad value."""


class AgentNotFoundError(AgentError, LookupError):
    """No agent of that name; the message lists the valid names."""


class AgentInfraError(RepoGymError, ConnectionError):
    """An agent's backend failed (model server unreachable, 5xx, CLI missing): not the agent's score."""


class RunError(RepoGymError):
    """A run's results directory or a results file that cannot be read or resumed."""


class RepoGymWarning(UserWarning):
    """The root of repogym_gym's warnings."""


class UnconfinedWarning(RepoGymWarning):
    """An untrusted agent's commands run in the local sandbox (the host user's own processes):
    pass ``sandbox="auto"`` (bubblewrap where it runs) or ``"bwrap"``/``"docker"`` to confine them."""


#: Longest value quoted by :func:`validation_problems`, characters.
_VALUE_LIMIT = 80


def validation_problems(exc: Any, *, model: type | None = None, skip: int = 0, root: str = "") -> list[str]:
    """Every problem of a pydantic ``ValidationError``, one line each, naming the field and the value.

    The one formatter of the package: each line reads ``field.path: problem (got value)`` (the
    value cut to 80 characters; not repeated when the problem quotes it, nor for a missing field);
    a check of the whole input (a model validator) gives its message without the input.
    Unknown fields come first, since one is usually a typo of a required field, as
    ``field.path: unknown field (did you mean 'name'?)`` when ``model`` (the model validated) has
    a close name at that place, else with the known fields listed.

    Args:
        exc: The error. Any other exception (an ``OSError`` reading the file) gives its own message.
        model: The validated model, for the unknown-field hint (nested models are followed).
        skip: Leading parts of each location to drop (a discriminated union's tag).
        root: What a problem of the whole input is called ("" leaves it unnamed).

    Example:
        >>> from pydantic import BaseModel, ConfigDict, ValidationError
        >>> class M(BaseModel):
        ...     model_config = ConfigDict(extra="forbid")
        ...     name: str
        >>> try:
        ...     M.model_validate({"nmae": 3})
        ... except ValidationError as exc:
        ...     print(validation_problems(exc, model=M))
        ["nmae: unknown field (did you mean 'name'?)", 'name: Field required']
    """
    if not callable(getattr(exc, "errors", None)):  # an OSError reading the file, say
        return [getattr(exc, "strerror", None) or str(exc) or type(exc).__name__]
    errors = sorted(exc.errors(), key=lambda e: e.get("type") != "extra_forbidden")
    if not errors:
        return [str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__]
    lines = []
    for err in errors:
        parts = tuple(err.get("loc", ()))[skip:]
        loc = ".".join(str(part) for part in parts) or root
        where = f"{loc}: " if loc else ""
        if err.get("type") == "extra_forbidden" and parts:
            lines.append(f"{where}unknown field{_known_fields_hint(model, parts)}")
            continue
        msg = str(err.get("msg", "")).removeprefix("Value error, ")
        if not parts and err.get("type") == "value_error":
            lines.append(f"{where}{msg}")  # a check of the whole input: its message names the fields, not the input
            continue
        shown = ""
        if err.get("type") not in ("missing", "json_invalid") and "input" in err:
            value = repr(err["input"])
            value = value if len(value) <= _VALUE_LIMIT else value[:_VALUE_LIMIT - 3] + "..."
            quoted = value in msg and not isinstance(err["input"], (int, float))  # a bound such as "than 0" is not the value
            shown = "" if quoted else f" (got {value})"
        lines.append(f"{where}{msg}{shown}")
    return lines


def validation_summary(exc: Any, *, model: type | None = None, skip: int = 0) -> str:
    """The first of :func:`validation_problems` on one line, then ``(and N more problems)``.

    Example:
        >>> from pydantic import BaseModel, ValidationError
        >>> class M(BaseModel):
        ...     n: int
        ...     s: str
        >>> try:
        ...     M.model_validate({"n": "many"})
        ... except ValidationError as exc:
        ...     print(validation_summary(exc))
        n: Input should be a valid integer, unable to parse string as an integer (got 'many') (and 1 more problem)
    """
    problems = validation_problems(exc, model=model, skip=skip)
    more = len(problems) - 1
    return problems[0] + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def _known_fields_hint(model: type | None, loc: tuple[Any, ...]) -> str:
    """`` (did you mean 'x'?)`` or `` (known fields: [...])`` for the unknown field at ``loc`` of ``model``."""
    for part in loc[:-1]:
        info = getattr(model, "model_fields", {}).get(part)
        if info is None:
            return ""
        candidates = [info.annotation, *getattr(info.annotation, "__args__", ())]
        model = next((c for c in candidates if hasattr(c, "model_fields")), None)
    fields = sorted(getattr(model, "model_fields", {}))
    if not fields:
        return ""
    close = difflib.get_close_matches(str(loc[-1]), fields, n=1)
    return f" (did you mean {close[0]!r}?)" if close else f" (known fields: {fields})"
