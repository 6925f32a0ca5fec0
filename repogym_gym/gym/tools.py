"""Text actions for chat-LLM trainers: an OpenAI-style tool schema and a text action wrapper.

:func:`~repogym_gym.actions.tool_schema` (re-exported here) describes every action kind as an
OpenAI ``tools`` entry, built from the action models, so a chat trainer can pass it to the model
as is. :class:`TextActionWrapper`
makes the action space a single text: JSON (``{"kind": "read", "path": "a.py"}``) or a tool
call (``{"name": "read", "arguments": {...}}``, optionally in ``<tool_call>`` tags). Text that
does not parse is an observation with ``error`` and ``info["parse_error"]``, and uses a step.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from repogym_gym.actions import (
    tool_schema,  # re-exported: the schema lives with the actions
)
from repogym_gym.gym.spaces import UnicodeText

__all__ = ["TextActionWrapper", "tool_schema"]

#: Longest text action accepted, characters.
MAX_TEXT_ACTION = 4_000_000


class TextActionWrapper(gym.ActionWrapper[dict[str, Any], str, Any]):
    """Actions are text (JSON or a tool call); parse errors become observations.

    Example:
        >>> env = TextActionWrapper(gym.make("RepoGym/parse-duration-v0"))          # doctest: +SKIP
        >>> obs, *_ = env.step('{"name": "read", "arguments": {"path": "README.md"}}')  # doctest: +SKIP
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.action_space = UnicodeText(MAX_TEXT_ACTION)

    def action(self, action: str) -> str:
        return action  # the episode parses text itself, so a parse error is an observation
