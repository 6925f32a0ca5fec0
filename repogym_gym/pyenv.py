"""Per-task Python environments: a virtualenv outside the work tree, cached by its requirements.

Real packages need their own test dependencies (a pinned pytest, hypothesis, ...). Installing
them inside the work tree would not survive copying (a venv holds absolute paths) and an
editable install would import the *baseline* copy instead of the agent's, so the environment
lives at ``<cache>/envs/<key>/`` and the code under test is imported from the tree through the
test runner's ``pythonpath``. Commands of such a task run with ``<env>/bin`` first on PATH, so
``python`` in a test or setup command means the environment's interpreter.

Example:
    >>> env = ensure_env(["pytest==8.3.3"], cache_dir=default_cache_dir())   # doctest: +SKIP
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from repogym_gym.errors import SetupError
from repogym_gym.sandbox.base import scrubbed_env

__all__ = ["ENV_READY_MARKER", "command_env", "ensure_env", "env_key"]

ENV_READY_MARKER = ".repogym-ready"
_INSTALL_TIMEOUT_S = 900


def env_key(requirements: Sequence[str], python: str = sys.executable) -> str:
    """16 hex characters identifying an environment (interpreter version + requirements in order)."""
    version = ".".join(map(str, sys.version_info[:3])) if python == sys.executable else python
    return hashlib.sha256(json.dumps([version, list(requirements)]).encode()).hexdigest()[:16]


def ensure_env(requirements: Sequence[str], *, cache_dir: Path, python: str = sys.executable) -> Path:
    """The environment for ``requirements``, created (once, under a file lock) if missing.

    Args:
        requirements: pip requirement specifiers, ideally pinned (``pytest==8.3.3``).
        cache_dir: Cache root; environments live in ``cache_dir/envs``.
        python: Interpreter that creates the environment.

    Returns:
        The environment directory (its interpreter is ``<dir>/bin/python``).

    Raises:
        SetupError: naming the requirements and quoting pip when the install fails.
    """
    root = cache_dir / "envs"
    root.mkdir(parents=True, exist_ok=True)
    env_dir = root / env_key(requirements, python)
    with open(root / f"{env_dir.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (env_dir / ENV_READY_MARKER).is_file():
            return env_dir
        shutil.rmtree(env_dir, ignore_errors=True)
        try:
            _run([python, "-m", "venv", str(env_dir)], "create the virtualenv")
            if requirements:
                _run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "--no-input", "-q", *requirements],
                     f"install {list(requirements)}")
        except SetupError:
            shutil.rmtree(env_dir, ignore_errors=True)
            raise
        (env_dir / ENV_READY_MARKER).write_text(json.dumps(list(requirements)))
    return env_dir


def _run(argv: list[str], what: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")}
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise SetupError(f"could not {what}: timed out after {_INSTALL_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip()[-2000:]
        raise SetupError(f"could not {what} (exit {proc.returncode}):\n{tail}")


def command_env(env_dir: Path | None) -> dict[str, str]:
    """Environment variables that make commands use ``env_dir`` ({} when there is none)."""
    if env_dir is None:
        return {}
    path = scrubbed_env()["PATH"]
    return {"PATH": f"{env_dir / 'bin'}{os.pathsep}{path}", "VIRTUAL_ENV": str(env_dir)}
