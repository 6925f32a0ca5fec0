"""NoopAgent (submits at once) and GoldenAgent (writes the golden patch's files, then submits).

They are the controls of every task: noop must score exactly 0 and golden exactly 1.
"""

from __future__ import annotations

import shlex
from collections import deque
from typing import Any

from repogym_gym.agents.base import AgentBase
from repogym_gym.baseline import BaselineStore
from repogym_gym.task import Task
from repogym_gym.workspace import Workspace

__all__ = ["BYTES_PER_PRINTF", "GoldenAgent", "NoopAgent", "golden_actions", "printf_actions"]


class NoopAgent(AgentBase):
    """Submits the untouched repository."""

    name = "noop"
    #: It runs no command: the fastest (local) sandbox is enough.
    trusted = True

    def begin(self, task: Task) -> None:
        return None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        return {"kind": "submit"}


#: Bytes per ``run printf`` action that carries a file that is not UTF-8 (each byte is at most four
#: characters of the format, so a chunk stays well inside the command limit of 20,000).
BYTES_PER_PRINTF = 4_000

_PRINTF_PLAIN = frozenset(range(0x20, 0x7F)) - {ord("%"), ord("\\"), ord("'")}


def printf_actions(path: str, data: bytes) -> list[dict[str, Any]]:
    """``run`` actions that write ``data`` to ``path`` byte-exact with the shell's ``printf`` (an
    allowed program): printable ASCII as itself, every other byte as a ``\\ooo`` octal escape, in
    chunks of :data:`BYTES_PER_PRINTF` bytes (the first truncates, the rest append; the first also
    makes the parent directories).

    A write action carries text only, so a file that is not UTF-8 (a Latin-1 comment, a binary
    fixture) goes this way: the golden plan then makes exactly the bytes ``grade_patch`` grades.
    """
    target = shlex.quote(path)
    parent = path.rpartition("/")[0]
    actions = []
    for start in range(0, max(len(data), 1), BYTES_PER_PRINTF):
        chunk = data[start:start + BYTES_PER_PRINTF]
        text = "".join(chr(b) if b in _PRINTF_PLAIN else f"\\{b:03o}" for b in chunk)
        if start:
            command = f"printf '{text}' >> {target}"
        else:
            command = (f"mkdir -p -- {shlex.quote(parent)} && " if parent else "") + f"printf '{text}' > {target}"
        actions.append({"kind": "run", "command": command})
    return actions


def golden_actions(task: Task, store: BaselineStore | None = None) -> list[dict[str, Any]]:
    """The actions that turn the baseline into the golden solution, ending with submit.

    One ``write`` per added or modified file, ``run printf`` actions for one that is not UTF-8
    (:func:`printf_actions`), and one ``run rm -f`` per deleted file.

    Args:
        task: The task.
        store: Baseline cache to build the scratch workspace from (default: the process-wide one).

    Raises:
        PatchError: when the golden patch does not apply.
    """
    actions: list[dict[str, Any]] = []
    with Workspace.create(task, store=store) as ws:
        ws.apply_patch(task.golden_patch())
        for change in ws.snapshot().changes.carried:
            if change.status == "deleted":
                actions.append({"kind": "run", "command": f"rm -f -- {shlex.quote(change.path)}"})
                continue
            data = change.data or b""
            try:
                actions.append({"kind": "write", "path": change.path, "content": data.decode("utf-8")})
            except UnicodeDecodeError:
                actions.extend(printf_actions(change.path, data))
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
