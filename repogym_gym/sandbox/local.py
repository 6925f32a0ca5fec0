"""LocalSandbox: a plain subprocess with a scrubbed environment. A guardrail, not a boundary.

Use it for trusted agents (golden, scripted) and for speed; untrusted agents belong in the
bubblewrap or Docker sandbox, where the filesystem and network are really closed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from repogym_gym.results import CommandResult
from repogym_gym.sandbox.base import DEFAULT_ENV_ALLOWLIST, SandboxBase, scrubbed_env
from repogym_gym.sandbox.process import run_process

__all__ = ["LocalSandbox"]


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

        ``writable`` is accepted and ignored: nothing is confined here.
        """
        full_env = scrubbed_env(env, allowlist=self._allowlist)
        return run_process(argv, cwd=cwd, env=full_env, timeout_s=timeout_s, output_limit_bytes=output_limit_bytes)

    def available(self) -> bool:
        return True

    def close(self) -> None:
        return None

    def __enter__(self) -> LocalSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
