"""ScriptedAgent: plays a fixed list of actions, then submits (e.g. a partial fix as a baseline).

The actions are given inline or in a YAML/JSON file holding a list, each entry an action of
the env (``{kind: edit, path: ..., old: ..., new: ...}`` or a tool call ``{name: ...,
arguments: {...}}``). Every entry is checked when the agent is built.

Example:
    >>> agent = ScriptedAgent(actions=[{"kind": "read", "path": "README.md"}])
    >>> agent.begin(None)
    >>> agent.act({}, {}), agent.act({}, {})
    ({'kind': 'read', 'path': 'README.md'}, {'kind': 'submit'})
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any

from repogym_gym.actions import ActionError, action_to_dict, parse_action
from repogym_gym.agents.base import AgentBase
from repogym_gym.errors import AgentError
from repogym_gym.task import Task
from repogym_gym.yamlfile import load_yaml_file

__all__ = ["ScriptedAgent"]

SUBMIT = {"kind": "submit"}


class ScriptedAgent(AgentBase):
    """Plays ``actions`` in order, then submits.

    Args:
        actions: The action dicts (exclusive with ``actions_file``).
        actions_file: A YAML/JSON file holding the list of action dicts.

    Raises:
        AgentError: when neither or both are given, the file cannot be read or parsed, or an
            entry is not a valid action (the message names the file and the entry's index).
    """

    name = "scripted"
    #: Its actions were written by the user: the fastest (local) sandbox is enough.
    trusted = True

    def __init__(self, actions: list[dict[str, Any]] | None = None,
                 actions_file: str | os.PathLike[str] | None = None) -> None:
        if (actions is None) == (actions_file is None):
            raise AgentError("agent 'scripted': give exactly one of actions= (a list of actions) "
                             "and actions_file= (a YAML/JSON file holding that list)")
        source = "actions"
        if actions_file is not None:
            source = str(actions_file)
            try:
                actions = load_yaml_file(actions_file, error=AgentError)
            except AgentError as exc:
                raise AgentError(f"agent 'scripted': cannot read actions_file {exc}") from None
        if not isinstance(actions, list):
            raise AgentError(f"agent 'scripted': {source} must be a list of actions, got {type(actions).__name__}")
        self.actions = [self._check(source, index, entry) for index, entry in enumerate(actions)]
        self._plan: deque[dict[str, Any]] = deque(self.actions)

    @staticmethod
    def _check(source: str, index: int, entry: Any) -> dict[str, Any]:
        try:
            return action_to_dict(parse_action(entry))
        except ActionError as exc:
            raise AgentError(f"agent 'scripted': {source}: entry {index} is not a valid action: {exc}") from None

    def begin(self, task: Task | None) -> None:
        """Start the list over."""
        self._plan = deque(self.actions)

    def act(self, observation: Any, info: dict[str, Any]) -> dict[str, Any]:
        """The next action of the list, then submit."""
        return self._plan.popleft() if self._plan else dict(SUBMIT)
