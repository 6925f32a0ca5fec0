"""Agents for runner tests (not a test module): slow, crashing and flaky-backend agents.

Tests register them into the agent map with ``monkeypatch.setitem(AGENTS, name, "tests.runner.agents:Class")``,
so the runner builds them from an AgentSpec exactly as it builds the shipped agents.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from repogym_gym.errors import AgentInfraError
from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE

SUBMIT = {"kind": "submit"}


class SleepyAgent:
    """Sleeps ``sleep_s`` seconds before each action, and never submits."""

    name = "sleepy"

    def __init__(self, sleep_s: float = 1.0) -> None:
        self.sleep_s = sleep_s

    def begin(self, task: Task) -> None:
        return None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        time.sleep(self.sleep_s)
        return {"kind": "list_files", "path": "."}


class FixThenCrashAgent:
    """Writes the tiny task's fix, then raises; keeps a conversation and records ``close()`` in ``closed``."""

    name = "fix-then-crash"

    def __init__(self, closed: str) -> None:
        self.closed = Path(closed)
        self.acted = 0

    def begin(self, task: Task) -> None:
        self.acted = 0

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        self.acted += 1
        if self.acted == 1:
            return {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}
        raise RuntimeError("the policy fell over")

    def conversation(self) -> list[dict[str, Any]]:
        return [{"role": "user", "content": "fix add"}, {"role": "assistant", "content": f"acted {self.acted} times"}]

    def close(self) -> None:
        with self.closed.open("a") as handle:
            handle.write("closed\n")


class FlakyBackendAgent:
    """Its backend fails (AgentInfraError) on the first ``failures`` attempts, counted as lines in ``log``;
    each attempt appends its ``time.monotonic()``. Then it submits."""

    name = "flaky"

    def __init__(self, log: str, failures: int) -> None:
        self.log = Path(log)
        self.failures = failures

    def begin(self, task: Task) -> None:
        return None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        seen = len(self.log.read_text().splitlines()) if self.log.exists() else 0
        with self.log.open("a") as handle:
            handle.write(f"{time.monotonic()}\n")
        if seen < self.failures:
            raise AgentInfraError("model server at http://127.0.0.1:9 refused the connection")
        return SUBMIT


class FixAgent:
    """Writes the tiny task's fix, then submits; it says nothing of trust, so it counts as untrusted."""

    name = "fix"

    def begin(self, task: Task) -> None:
        self.wrote = False

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        if not self.wrote:
            self.wrote = True
            return {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}
        return SUBMIT
