"""Sandboxes: where commands of an episode and of grading run.

Backends are resolved lazily by name, so an optional backend's imports cost nothing until used:
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

import importlib
import warnings
from typing import Any

from repogym_gym.errors import SandboxUnavailableError, UnconfinedWarning
from repogym_gym.sandbox.base import DEFAULT_ENV_ALLOWLIST, Sandbox, SandboxBase, scrubbed_env
from repogym_gym.sandbox.local import LocalSandbox

__all__ = ["DEFAULT_ENV_ALLOWLIST", "LocalSandbox", "Sandbox", "SandboxBase", "default_sandbox", "make_sandbox", "scrubbed_env",
           "warn_unconfined"]

_BACKENDS = {
    "bwrap": "repogym_gym.sandbox.bwrap:BubblewrapSandbox",
    "docker": "repogym_gym.sandbox.docker:DockerSandbox",
    "local": "repogym_gym.sandbox.local:LocalSandbox",
}


def make_sandbox(name: str, **kwargs: Any) -> Sandbox:
    """Build the sandbox called ``name`` with ``kwargs``.

    ``"auto"`` is :func:`default_sandbox` for an untrusted agent: bubblewrap where it runs,
    else the local sandbox.

    Raises:
        SandboxUnavailableError: for an unknown name (the message lists the valid ones) or a
            backend that is not available on this machine.
    """
    if name == "auto":
        return default_sandbox(trusted=False, **kwargs)
    target = _BACKENDS.get(name)
    if target is None:
        raise SandboxUnavailableError(f"unknown sandbox {name!r}; valid sandboxes are {sorted([*_BACKENDS, 'auto'])}")
    module_name, _, attr = target.partition(":")
    sandbox: Sandbox = getattr(importlib.import_module(module_name), attr)(**kwargs)
    if not sandbox.available():
        reason = sandbox.unavailable_reason()
        sandbox.close()  # what probing it opened (Docker: an engine connection)
        raise SandboxUnavailableError(f"sandbox {name!r} is not available on this machine" + (f": {reason}" if reason else ""))
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
