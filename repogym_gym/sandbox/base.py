"""The Sandbox protocol every backend implements (local, bubblewrap, Docker)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from repogym_gym.results import CommandResult

__all__ = ["DEFAULT_ENV_ALLOWLIST", "Sandbox", "SandboxBase", "scrubbed_env"]

#: Host variables a sandboxed command may see; everything else (tokens, keys, proxies) is dropped.
DEFAULT_ENV_ALLOWLIST = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "USER", "LOGNAME", "TMPDIR")


@runtime_checkable
class Sandbox(Protocol):
    """Runs commands for an episode or a grading run.

    Implementations run ``argv`` with ``cwd`` inside a workspace, an environment built from an
    allowlist plus ``env``, a timeout that kills every process the command started, and output
    capped at ``output_limit_bytes`` per stream.
    """

    name: str
    #: Whether commands are confined (a boundary: bwrap, docker), not only guarded (local).
    confining: bool
    #: Whether the backend runs a task's ``environment.image`` (docker).
    runs_images: bool

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        output_limit_bytes: int = 64_000,
        writable: Sequence[str | os.PathLike[str]] = (),
    ) -> CommandResult:
        """Run ``argv`` (no shell; use ``["bash", "-c", cmd]`` for a shell string).

        ``cwd`` is writable; ``writable`` names more directories the command must be able to
        write (a grader's scratch directory). A backend that confines the filesystem makes
        nothing else writable; one that does not may ignore ``writable``.
        """
        ...

    def available(self) -> bool:
        """True when the backend can run commands on this machine."""
        ...

    def unavailable_reason(self) -> str | None:
        """Why :meth:`available` is False (what to install or start), or None."""
        ...

    def scoped(self, *, hide: Sequence[str | os.PathLike[str]] = (), reveal: Sequence[str | os.PathLike[str]] = (),
               limits: Any = None, image: str | None = None) -> Sandbox:
        """A sandbox like this one that also hides ``hide``, reveals ``reveal``, applies the non-None
        fields of ``limits`` (a task's ``LimitsSpec``) and, where :attr:`runs_images`, runs ``image``;
        a backend that confines nothing returns itself."""
        ...

    def open(self, tree: str | os.PathLike[str]) -> None:
        """Start what an episode whose commands run in ``tree`` holds (docker: its container); idempotent."""
        ...

    def release(self, tree: str | os.PathLike[str]) -> None:
        """Release what :meth:`open` started for ``tree``; idempotent."""
        ...

    def close(self) -> None:
        """Release what the sandbox holds; idempotent."""
        ...


class SandboxBase:
    """The optional parts of the :class:`Sandbox` contract with no-op defaults: a backend inherits
    this, implements :meth:`run`, and overrides what it supports."""

    name = "base"
    confining = False
    runs_images = False

    def available(self) -> bool:
        return True

    def unavailable_reason(self) -> str | None:
        return None

    def scoped(self, *, hide: Sequence[str | os.PathLike[str]] = (), reveal: Sequence[str | os.PathLike[str]] = (),
               limits: Any = None, image: str | None = None) -> Sandbox:
        return self  # type: ignore[return-value]  # a subclass implements run()

    def open(self, tree: str | os.PathLike[str]) -> None:
        return None

    def release(self, tree: str | os.PathLike[str]) -> None:
        return None

    def close(self) -> None:
        return None


def scrubbed_env(
    extra: Mapping[str, str] | None = None,
    *,
    allowlist: Sequence[str] = DEFAULT_ENV_ALLOWLIST,
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allowlisted subset of ``source`` (default ``os.environ``) updated with ``extra``.

    ``PATH`` starts with the directory of the running interpreter, so ``python`` in a command
    means the interpreter repogym_gym runs under (and its installed pytest).
    """
    source = os.environ if source is None else source
    env = {k: source[k] for k in allowlist if k in source}
    interpreter_dir = str(Path(sys.executable).parent)
    path = env.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    if path.split(os.pathsep)[0] != interpreter_dir:
        path = interpreter_dir + os.pathsep + path
    env["PATH"] = path
    env.setdefault("LANG", "C.UTF-8")
    if extra:
        env.update(extra)
    return env
