"""Fixtures of the sandbox tests: a bubblewrap sandbox, and helpers that look for survivors.

Without bubblewrap the bwrap tests skip, except under ``CI=true``, where a missing sandbox is a
failure (CI installs it; a silently skipped boundary is no boundary).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repogym_gym.results import CommandResult
from repogym_gym.sandbox.bwrap import BubblewrapSandbox
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


@pytest.fixture
def bwrap() -> BubblewrapSandbox:
    """The bubblewrap sandbox with default limits."""
    return require_bwrap()


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
