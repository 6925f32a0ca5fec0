"""Sandboxes: where commands of an episode and of grading run.

Backends are resolved lazily by name, so an optional backend's imports cost nothing until used.

Example:
    >>> make_sandbox("local").name
    'local'
"""

from __future__ import annotations

import importlib
from typing import Any

from repogym_gym.errors import SandboxUnavailableError
from repogym_gym.sandbox.base import DEFAULT_ENV_ALLOWLIST, Sandbox, scrubbed_env
from repogym_gym.sandbox.local import LocalSandbox

__all__ = ["DEFAULT_ENV_ALLOWLIST", "LocalSandbox", "Sandbox", "make_sandbox", "scrubbed_env"]

_BACKENDS = {
    "local": "repogym_gym.sandbox.local:LocalSandbox",
}


def make_sandbox(name: str, **kwargs: Any) -> Sandbox:
    """Build the sandbox called ``name`` with ``kwargs``.

    Raises:
        SandboxUnavailableError: for an unknown name (the message lists the valid ones) or a
            backend that is not available on this machine.
    """
    target = _BACKENDS.get(name)
    if target is None:
        raise SandboxUnavailableError(f"unknown sandbox {name!r}; valid sandboxes are {sorted(_BACKENDS)}")
    module_name, _, attr = target.partition(":")
    sandbox: Sandbox = getattr(importlib.import_module(module_name), attr)(**kwargs)
    if not sandbox.available():
        raise SandboxUnavailableError(f"sandbox {name!r} is not available on this machine")
    return sandbox
