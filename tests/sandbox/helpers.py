"""Helpers shared by the tests of sandbox (plain functions and constants; the fixtures are in conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repogym_gym.results import CommandResult
from repogym_gym.sandbox.bwrap import BubblewrapSandbox
from repogym_gym.sandbox.containers import labelled
from repogym_gym.sandbox.docker import PID_LABEL, DockerSandbox
from repogym_gym.sandbox.slots import SlotPool


def require_bwrap() -> BubblewrapSandbox:
    """A BubblewrapSandbox, or a skip (a failure under CI=true) naming why it cannot run."""
    sandbox = BubblewrapSandbox()
    reason = sandbox.unavailable_reason()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true requires the bwrap sandbox, which cannot run here: {reason}")
        pytest.skip(f"bwrap sandbox unavailable: {reason}")
    return sandbox


def require_docker(**kwargs: object) -> DockerSandbox:
    """A DockerSandbox (``kwargs`` passed on), or a skip (a failure under CI=true) naming why it cannot run.

    The caller closes it. CI starts the engine with ``.ci/docker-up`` and exports
    ``REPOGYM_DOCKER_HOST``.
    """
    sandbox = DockerSandbox(**kwargs)  # type: ignore[arg-type]
    reason = sandbox.unavailable_reason()
    if reason is not None:
        sandbox.close()
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true requires the docker sandbox, which cannot run here: {reason}")
        pytest.skip(f"docker sandbox unavailable: {reason}")
    return sandbox


def my_containers() -> list[str]:
    """Ids of the containers (running or not) that sandboxes of this process started."""
    from repogym_gym.sandbox.engine import connect

    client = connect()
    try:
        return [cid for cid, _ in labelled(client, f"{PID_LABEL}={os.getpid()}")]
    finally:
        client.close()


def sh(sandbox: BubblewrapSandbox, script: str, cwd: Path, **kwargs: object) -> CommandResult:
    """Run a bash script in the sandbox (30 s timeout unless given)."""
    kwargs.setdefault("timeout_s", 30)
    return sandbox.run(["bash", "-c", script], cwd=cwd, **kwargs)  # type: ignore[arg-type]


def pool_processes(pool: SlotPool) -> list[int]:
    """Live processes whose real uid belongs to ``pool``."""
    uids = {str(u) for u in pool.uids}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] and fields["Uid"].split()[0] in uids and "Z" not in fields.get("State", ""):
            found.append(int(entry.name))
    return found
