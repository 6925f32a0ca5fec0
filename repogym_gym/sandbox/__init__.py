"""Sandboxes: where commands of an episode and of grading run.

Backends are built from a configuration (:mod:`repogym_gym.sandbox.config`: a name or a mapping
with ``type``), each importing its module only when built, so an optional backend costs nothing until used:
``local`` (a plain subprocess, a guardrail for trusted agents), ``bwrap`` (bubblewrap: a real
boundary for untrusted ones; see :mod:`repogym_gym.sandbox.bwrap`) and ``docker`` (a container
per episode, grading in fresh ones; see :mod:`repogym_gym.sandbox.docker`).
:func:`default_sandbox` picks between the first two; where an untrusted agent's commands end up
in ``local`` it says so with an :class:`~repogym_gym.errors.UnconfinedWarning`
(:func:`warn_unconfined`).

Example:
    >>> make_sandbox("local").name
    'local'
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from repogym_gym.errors import SandboxUnavailableError, UnconfinedWarning
from repogym_gym.sandbox.base import DEFAULT_ENV_ALLOWLIST, Sandbox, SandboxBase, scrubbed_env
from repogym_gym.sandbox.config import SandboxConfig, sandbox_config
from repogym_gym.sandbox.local import LocalSandbox

__all__ = ["DEFAULT_ENV_ALLOWLIST", "LocalSandbox", "Sandbox", "SandboxBase", "SandboxConfig", "default_sandbox", "make_sandbox",
           "sandbox_config", "scrubbed_env", "warn_unconfined"]

def make_sandbox(config: str | Mapping[str, Any] | SandboxConfig, **options: Any) -> Sandbox:
    """Build the sandbox ``config`` describes and check that it runs here.

    ``config`` is a backend's name (``"local"``, ``"bwrap"``, ``"docker"``, ``"auto"``), a
    mapping with ``type`` and the backend's options (``{"type": "docker", "cpus": 1}``) or a
    :data:`~repogym_gym.sandbox.config.SandboxConfig`; ``options`` are set on top. ``"auto"`` is
    :func:`default_sandbox` for an untrusted agent: bubblewrap where it runs, else the local sandbox.

    Raises:
        SandboxConfigError: for an unknown name (the message lists the valid ones) or a bad
            option (naming the field and the value); a :class:`SandboxUnavailableError`.
        SandboxUnavailableError: for a backend that is not available on this machine.
    """
    settings = sandbox_config(config, **options)
    sandbox = settings.build()
    if settings.type != "auto" and not sandbox.available():
        reason = sandbox.unavailable_reason()
        sandbox.close()  # what probing it opened (Docker: an engine connection)
        raise SandboxUnavailableError(f"sandbox {settings.type!r} is not available on this machine" + (f": {reason}" if reason else ""))
    return sandbox


def default_sandbox(trusted: bool, **kwargs: Any) -> Sandbox:
    """The sandbox for an agent: ``bwrap`` for an untrusted one where bubblewrap runs, else ``local``.

    Trusted agents (golden, scripted, noop) get the local sandbox, the fastest. An untrusted
    agent (an LLM under training) gets bubblewrap when this machine can run it, and otherwise
    the local sandbox (a guardrail, not a boundary) with an
    :class:`~repogym_gym.errors.UnconfinedWarning` naming why bubblewrap cannot run; check
    ``.name`` when that matters.

    Args:
        trusted: Whether the agent's commands can be trusted with the host.
        kwargs: Options of the bubblewrap sandbox (``limits``, ``hide``, ...).
    """
    if not trusted:
        from repogym_gym.sandbox.bwrap import BubblewrapSandbox

        sandbox = BubblewrapSandbox(**kwargs)
        reason = sandbox.unavailable_reason()
        if reason is None:
            return sandbox
        warn_unconfined(f"no confining sandbox runs on this machine (bwrap: {reason})", stacklevel=3)
    return LocalSandbox()


def warn_unconfined(why: str, *, stacklevel: int = 2) -> None:
    """Warn (:class:`~repogym_gym.errors.UnconfinedWarning`) that an untrusted agent's commands
    run in the local sandbox, because ``why``; Python's default filter shows each distinct
    warning once."""
    warnings.warn(f"an untrusted agent's commands run in the local sandbox, a guardrail and not a boundary: {why}; "
                  "confine them with sandbox='bwrap' or 'docker' (root, bubblewrap or a Docker engine)",
                  UnconfinedWarning, stacklevel=stacklevel + 1)
