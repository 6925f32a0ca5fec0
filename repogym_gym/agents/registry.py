"""Agents by name: a lazy name → import-path map, and the serialisable spec the runner passes around.

An :class:`AgentSpec` is plain data (a ``type`` from :data:`AGENTS`, a ``label`` that names the
agent in results, and the options of its constructor), so a Ray worker or a resumed run can
rebuild the same agent. :func:`make_agent` imports the backend only when it is asked for, so the
optional LLM SDKs cost nothing until used.

Example:
    >>> make_agent("noop").name
    'noop'
    >>> AgentSpec.parse("golden").label
    'golden'
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from repogym_gym.agents.base import Agent
from repogym_gym.errors import AgentError, AgentNotFoundError

__all__ = ["AGENTS", "AgentSpec", "check_agent_label", "make_agent"]

#: Agent type → ``module:Class``; imported on first use.
AGENTS: dict[str, str] = {
    "claude": "repogym_gym.agents.claude:ClaudeAgent",
    "golden": "repogym_gym.agents.simple:GoldenAgent",
    "noop": "repogym_gym.agents.simple:NoopAgent",
    "openai": "repogym_gym.agents.openai_chat:OpenAIChatAgent",
    "scripted": "repogym_gym.agents.scripted:ScriptedAgent",
    "shell": "repogym_gym.agents.shell:ShellAgent",
}

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_agent_label(value: str) -> str:
    """Return ``value`` if it is a valid agent label (it names directories of a results tree).

    Raises:
        ValueError: unless it is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.
    """
    if not _LABEL.match(value):
        raise ValueError(f"agent label {value!r} must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    return value


class AgentSpec(BaseModel):
    """Which agent to build, and under what name its results are filed.

    Attributes:
        type: A key of :data:`AGENTS`.
        label: The agent's name in results, reports and exports (letters, digits, ``._-``;
            at most 64 characters); defaults to ``type``.
        options: Keyword arguments of the agent's constructor.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    label: str = ""
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in AGENTS:
            raise ValueError(f"unknown agent type {value!r}; valid types are {sorted(AGENTS)}")
        return value

    @field_validator("label")
    @classmethod
    def _label_shape(cls, value: str) -> str:
        return check_agent_label(value) if value else value

    def model_post_init(self, context: Any) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.type)

    @classmethod
    def parse(cls, text: str) -> AgentSpec:
        """An agent type (``"golden"``) or the path of a YAML/JSON file.

        The file holds a mapping with ``type``, an optional ``label`` and the agent's options at
        top level, e.g. ``{type: openai, label: qwen-7b, model: Qwen2.5-7B, base_url: http://...}``.
        Relative paths among the options (``actions_file`` of the scripted agent) stay relative to the caller's
        working directory.

        Raises:
            AgentNotFoundError: for a name that is neither a type nor an existing file.
            AgentError: for a file that does not parse or does not validate.
        """
        if text in AGENTS:
            return cls(type=text)
        path = Path(text)
        if not path.is_file():
            raise AgentNotFoundError(f"no agent {text!r}: not an agent type ({', '.join(sorted(AGENTS))}) "
                                     "nor a YAML/JSON agent file")
        try:
            data = yaml.safe_load(path.read_text())
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise AgentError(f"{path}: not valid YAML/JSON: {exc}") from None
        if not isinstance(data, dict) or "type" not in data:
            raise AgentError(f"{path}: an agent file is a mapping with a 'type' field, got {type(data).__name__}")
        data = dict(data)
        agent_type, label = data.pop("type"), data.pop("label", "")
        try:
            return cls(type=agent_type, label=label, options=data)
        except ValueError as exc:
            raise AgentError(f"{path}: {exc}") from None

    def build(self) -> Agent:
        """The agent, built fresh (see :func:`make_agent`)."""
        agent = make_agent(self.type, **self.options)
        agent.name = self.label
        return agent


def make_agent(name: str, **options: Any) -> Agent:
    """Build the agent of type ``name`` with ``options``.

    Raises:
        AgentNotFoundError: for an unknown name (the message lists the valid ones).
        AgentError: for an option the agent does not take, or an optional dependency that is
            not installed (the message names the extra to install).
    """
    target = AGENTS.get(name)
    if target is None:
        raise AgentNotFoundError(f"unknown agent {name!r}; valid agents are {sorted(AGENTS)}")
    module_name, _, attr = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except ImportError as exc:
        raise AgentError(f"agent {name!r} needs a package that is not installed ({exc.name}); "
                         f"install it with: pip install 'repogym_gym[{name}]'") from None
    try:
        return cls(**options)
    except TypeError as exc:
        raise AgentError(f"agent {name!r}: {exc}") from None
