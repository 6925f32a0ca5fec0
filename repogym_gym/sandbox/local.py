"""LocalSandbox: a plain subprocess with a scrubbed environment. A guardrail, not a boundary.

Use it for trusted agents (golden, scripted) and for speed; untrusted agents belong in the
bubblewrap or Docker sandbox, where the filesystem and network are really closed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence

from repogym_gym.results import CommandResult
from repogym_gym.sandbox.base import DEFAULT_ENV_ALLOWLIST, SandboxBase, scrubbed_env
from repogym_gym.sandbox.process import run_process

__all__ = ["LocalSandbox"]

#: util-linux's setpriv, which sets the parent-death signal and execs the command (no extra process,
#: about 1 ms): when this process dies, even by SIGKILL, the kernel kills the command it started.
#: Without it (not Linux, util-linux missing) commands outlive a killed parent, as before.
_SETPRIV = shutil.which("setpriv")


def _findable(program: str, cwd: str | os.PathLike[str], path: str) -> bool:
    """Whether ``program`` is an executable the command would start: found on the command's own
    ``PATH`` (not this process's), or, when it names a directory, relative to the command's ``cwd``."""
    if "/" in program:
        target = os.path.join(cwd, program)
        return os.path.isfile(target) and os.access(target, os.X_OK)
    return shutil.which(program, path=path) is not None


class LocalSandbox(SandboxBase):
    """Runs commands as subprocesses of this process.

    Args:
        env_allowlist: Host variables passed through (default
            :data:`~repogym_gym.sandbox.base.DEFAULT_ENV_ALLOWLIST`).

    Example:
        >>> sb = LocalSandbox()
        >>> sb.run(["bash", "-c", "echo hi"], cwd=".", timeout_s=10).stdout
        'hi\\n'
    """

    name = "local"

    def __init__(self, env_allowlist: Sequence[str] = DEFAULT_ENV_ALLOWLIST) -> None:
        self._allowlist = tuple(env_allowlist)

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
        """Run ``argv`` in ``cwd``; see :func:`~repogym_gym.sandbox.process.run_process`.

        ``writable`` is accepted and ignored: nothing is confined here. The command is killed
        when this process dies (its parent-death signal, through ``setpriv``), and what it started in
        its process group by a reaper (:func:`~repogym_gym.owners.watch_group`); what it moved into a
        session of its own is not (bubblewrap and Docker end the whole sandbox).
        """
        full_env = scrubbed_env(env, allowlist=self._allowlist)
        # the command dies with this process: a killed run's pytest (and the perf benchmark) used to run on
        # (only a program that can start: otherwise run_process reports why it could not, as before)
        startable = bool(argv) and os.path.isdir(cwd) and _findable(argv[0], cwd, full_env.get("PATH", os.defpath))
        wrapped = [_SETPRIV, "--pdeathsig", "KILL", "--", *argv] if _SETPRIV and startable else list(argv)
        return run_process(wrapped, cwd=cwd, env=full_env, timeout_s=timeout_s, output_limit_bytes=output_limit_bytes,
                           display_argv=argv, reap_group=True)

    def available(self) -> bool:
        return True

    def close(self) -> None:
        return None

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
