"""Helpers of the integration tests (plain functions; the fixtures are in conftest.py)."""

from __future__ import annotations

import importlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import httpx
import pytest


def require_library(module: str, extra: str) -> ModuleType:
    """``module`` imported, or a skip (a failure under CI=true) naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true requires {module} (pip install 'repogym_gym[{extra}]'): {exc}")
        pytest.skip(f"{module} is not installed (pip install 'repogym_gym[{extra}]')")


def start_openenv_server(tmp: Path, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    """``repogym serve --openenv --sandbox local ARGS`` on a free loopback port, its TMPDIR ``tmp`` (so its
    workspaces can be counted there): (process, url) once ``/health`` answers. The caller terminates it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    log = tmp / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "repogym_gym.cli", "serve", "--openenv", "--port", str(port),
                                 "--sandbox", "local", *args],
                                env={**os.environ, "TMPDIR": str(tmp)}, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"the server did not start: {log.read_text()[-3000:]}") from None
            time.sleep(0.2)
