"""Agents: things that drive an environment to the end of an episode.

:class:`OpenAIChatAgent` and :class:`ClaudeAgent` are imported on first access, so their SDKs
(optional extras) cost nothing until used.
"""

from __future__ import annotations

import importlib
from typing import Any

from repogym_gym.agents.base import Agent, EpisodeOutcome, run_episode
from repogym_gym.agents.llm import AssistantTurn, ChatAgent, ChatBackend, ToolCall
from repogym_gym.agents.scripted import ScriptedAgent
from repogym_gym.agents.shell import ShellAgent
from repogym_gym.agents.simple import GoldenAgent, NoopAgent, golden_actions

__all__ = [
    "Agent",
    "AssistantTurn",
    "ChatAgent",
    "ChatBackend",
    "ClaudeAgent",
    "EpisodeOutcome",
    "GoldenAgent",
    "NoopAgent",
    "OpenAIChatAgent",
    "ScriptedAgent",
    "ShellAgent",
    "ToolCall",
    "golden_actions",
    "run_episode",
]

_LAZY = {"ClaudeAgent": "repogym_gym.agents.claude", "OpenAIChatAgent": "repogym_gym.agents.openai_chat"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
