"""NoopAgent (submits at once) and GoldenAgent (writes the golden patch's files, then submits).

They are the controls of every task: noop must score exactly 0 and golden exactly 1.
"""

from __future__ import annotations

import shlex
from collections import deque
from typing import Any

from repogym_gym.agents.base import AgentBase
from repogym_gym.baseline import BaselineStore
from repogym_gym.errors import PatchError
from repogym_gym.task import Task
from repogym_gym.workspace import Workspace

__all__ = ["GoldenAgent", "NoopAgent", "golden_actions"]


class NoopAgent(AgentBase):
    """Submits the untouched repository."""

    name = "noop"
    #: It runs no command: the fastest (local) sandbox is enough.
    trusted = True

    def begin(self, task: Task) -> None:
        return None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        return {"kind": "submit"}


def golden_actions(task: Task, store: BaselineStore | None = None) -> list[dict[str, Any]]:
    """The actions that turn the baseline into the golden solution, ending with submit.

    One ``write`` per added or modified file and one ``run rm -f`` per deleted file.

    Args:
        task: The task.
        store: Baseline cache to build the scratch workspace from (default: the process-wide one).

    Raises:
        PatchError: when the golden patch does not apply or changes a binary file.
    """
    actions: list[dict[str, Any]] = []
    with Workspace.create(task, store=store) as ws:
        ws.apply_patch(task.golden_patch())
        for change in ws.snapshot().changes.carried:
            if change.status == "deleted":
                actions.append({"kind": "run", "command": f"rm -f -- {shlex.quote(change.path)}"})
                continue
            try:
                text = (change.data or b"").decode("utf-8")
            except UnicodeDecodeError:
                raise PatchError(f"task {task.id!r}: the golden patch changes binary file {change.path!r}") from None
            actions.append({"kind": "write", "path": change.path, "content": text})
    return actions + [{"kind": "submit"}]


class GoldenAgent(AgentBase):
    """Writes the golden solution through the env's own actions, then submits."""

    name = "golden"
    #: It only writes the golden patch's files: the fastest (local) sandbox is enough.
    trusted = True

    def __init__(self) -> None:
        self._plan: deque[dict[str, Any]] = deque()
        self._store: BaselineStore | None = None

    def attach(self, env: Any, deadline: float | None) -> None:
        """Use the env's baseline cache (so a run's ``cache_dir`` holds golden's baselines too)."""
        episode = env.get_wrapper_attr("episode")
        self._store = getattr(episode, "store", None)

    def begin(self, task: Task) -> None:
        self._plan = deque(golden_actions(task, self._store))

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        return self._plan.popleft() if self._plan else {"kind": "submit"}
