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

import difflib
import importlib
import inspect
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from repogym_gym.agents.base import Agent
from repogym_gym.errors import AgentError, AgentNotFoundError, validation_summary
from repogym_gym.yamlfile import load_yaml_file

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
        data = load_yaml_file(path, error=AgentError)
        if not isinstance(data, dict) or "type" not in data:
            got = "an empty file" if data is None else "a mapping without it" if isinstance(data, dict) else type(data).__name__
            raise AgentError(f"{path}: an agent file is a mapping with a 'type' field, got {got}")
        data = dict(data)
        agent_type, label = data.pop("type"), data.pop("label", "")
        try:
            spec = cls(type=agent_type, label=label, options=data)
        except ValueError as exc:
            raise AgentError(f"{path}: {validation_summary(exc) if isinstance(exc, ValidationError) else exc}") from None
        problem = _options_problem(spec.type, spec.options)
        if problem:
            raise AgentError(f"{path}: {problem}")
        return spec

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
    try:
        cls = _agent_class(name)
    except ImportError as exc:
        raise AgentError(f"agent {name!r} needs a package that is not installed ({exc.name}); "
                         f"install it with: pip install 'repogym_gym[{name}]'") from None
    problem = _options_problem(name, options)
    if problem:
        raise AgentError(problem)
    try:
        return cls(**options)
    except TypeError as exc:
        raise AgentError(f"agent {name!r}: {exc}") from None


def _agent_class(name: str) -> type[Agent]:
    """The class of agent type ``name`` (imports its module; ImportError when an extra is missing)."""
    module_name, _, attr = AGENTS[name].partition(":")
    cls: type[Agent] = getattr(importlib.import_module(module_name), attr)
    return cls


def _options_problem(name: str, options: dict[str, Any]) -> str | None:
    """What is wrong with ``options`` for agent type ``name``: an unknown option (with the closest
    known one) or a missing required one; None when they fit, or when the class cannot be imported
    (:func:`make_agent` says which extra to install)."""
    try:
        signature = inspect.signature(_agent_class(name))
    except (ImportError, ValueError, TypeError):
        return None
    params = signature.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    known = [n for n, p in params.items() if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    for option in options:
        if option not in known:
            close = difflib.get_close_matches(option, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return f"agent {name!r}: unknown option {option!r}{hint}; its options are {sorted(known)}"
    missing = [n for n in known if params[n].default is inspect.Parameter.empty and n not in options]
    if missing:
        return f"agent {name!r}: option {missing[0]!r} is required; its options are {sorted(known)}"
    return None
