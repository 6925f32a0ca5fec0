"""The chat-agent loop shared by the LLM agents, and the Protocol of their model backends.

A :class:`ChatAgent` keeps the episode as OpenAI-style chat messages (the shapes of
:mod:`repogym_gym.conversation`) and asks a :class:`ChatBackend` for the next assistant turn
only when the tool calls of the previous one are used up:

1. the system prompt and the reset observation (a user message) open the conversation;
2. each tool call becomes one env action, the text ``{"name": ..., "arguments": <the model's
   raw arguments text>}``, so arguments that are not JSON, or an unknown tool, come back as the
   env's own error observation (``info["parse_error"]``); its observation is answered with a
   ``tool`` message carrying the call's id;
3. an answer without tool calls is sent as the action text itself (the env turns prose into an
   error observation) and its observation comes back as a user message;
4. after ``max_model_calls`` answers the agent submits (that submit is not in the conversation).

Backends map their failures by boundary (see :func:`api_failure`): the server unreachable, a
timeout, 408/409/429 and 5xx raise :class:`~repogym_gym.errors.AgentInfraError` (the runner
retries the episode, never scores it); a refused key (401/403) and other 4xx raise
:class:`~repogym_gym.errors.AgentError` (a configuration or request problem: the episode ends
and is graded as it stands).

Example:
    >>> class Submitter:
    ...     def complete(self, messages, tools):
    ...         return AssistantTurn("", [ToolCall("call_1", "submit", "{}")])
    >>> agent = ChatAgent(Submitter())
    >>> agent.act({"text": "Fix the bug."}, {})
    '{"name": "submit", "arguments": "{}"}'
    >>> [m["role"] for m in agent.conversation()]
    ['system', 'user', 'assistant']
"""

from __future__ import annotations

import copy
import json
import os
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from repogym_gym.actions import tool_schema
from repogym_gym.agents.base import AgentBase
from repogym_gym.conversation import SYSTEM_PROMPT, tool_result_message
from repogym_gym.errors import AgentError, AgentInfraError
from repogym_gym.task import Task

__all__ = ["AssistantTurn", "ChatAgent", "ChatBackend", "ToolCall", "api_failure", "api_key_from_env"]

#: The action sent when the model-call budget is spent.
SUBMIT_TEXT = json.dumps({"kind": "submit"})
#: The key sent to a server given by URL when the key's variable is unset (vLLM's convention).
NO_KEY = "EMPTY"
#: Characters of a server's error detail kept in an exception message.
_DETAIL_CHARS = 500


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant turn.

    Attributes:
        id: The call's id in the protocol ("" lets the agent number it).
        name: The tool's name, as the model wrote it (maybe not a real tool).
        arguments_text: The arguments as the model wrote them (maybe not JSON).
    """

    id: str
    name: str
    arguments_text: str


@dataclass(frozen=True)
class AssistantTurn:
    """One answer of the model: its text ("" for none) and its tool calls, in order."""

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)


@runtime_checkable
class ChatBackend(Protocol):
    """A model behind a chat API.

    ``complete`` gets the conversation as OpenAI-style messages and the OpenAI-style tool
    schema, and returns the next assistant turn.

    Raises (from ``complete``):
        AgentInfraError: the server is unreachable, timed out, overloaded or broken.
        AgentError: the server refused the request (key, model name, request too long).
    """

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        """The next assistant turn."""
        ...


def api_failure(where: str, status: int | None, detail: str, *, key_hint: str = "") -> AgentError | AgentInfraError:
    """The exception for a failed model call, typed by whose problem it is.

    Args:
        where: Names the backend and server, e.g. ``"openai model 'qwen' at http://..."``.
        status: The HTTP status, or None when no answer came (connection refused, timeout).
        detail: What the client library or the server said.
        key_hint: Added to the message of a refused key, e.g. ``"check $OPENAI_API_KEY"``.

    Example:
        >>> type(api_failure("m", 503, "overloaded")).__name__
        'AgentInfraError'
        >>> type(api_failure("m", 401, "bad key")).__name__
        'AgentError'
    """
    detail = " ".join(str(detail).split())[:_DETAIL_CHARS]
    if status is None:
        return AgentInfraError(f"{where}: no answer from the model server: {detail}")
    if status in (408, 409, 429) or status >= 500:
        return AgentInfraError(f"{where}: the model server failed with HTTP {status}: {detail}")
    if status in (401, 403):
        hint = f"; {key_hint}" if key_hint else ""
        return AgentError(f"{where}: the model server refused the API key (HTTP {status}): {detail}{hint}")
    return AgentError(f"{where}: the model server rejected the request (HTTP {status}): {detail}")


def api_key_from_env(agent: str, api_key_env: str, base_url: str | None) -> str:
    """The API key in ``$api_key_env``.

    When the variable is unset or empty and a ``base_url`` is given (a vLLM or SGLang server,
    which needs no key unless started with one), the key is :data:`NO_KEY` (``"EMPTY"``);
    the vendors' own endpoints (no ``base_url``) need a real key.

    Raises:
        AgentError: when the variable is unset and no ``base_url`` is given.
    """
    key = os.environ.get(api_key_env, "")
    if key:
        return key
    if base_url:
        return NO_KEY
    raise AgentError(f"agent {agent!r}: no API key: the environment variable {api_key_env} is not set; "
                     "set it, or name another variable with api_key_env=, or give base_url= for a local "
                     "server that needs no key")


class ChatAgent(AgentBase):
    """An agent that plays a chat model's tool calls (see the module docstring).

    Args:
        backend: The model.
        max_model_calls: Model answers per episode; then the agent submits.
        system_prompt: The conversation's first message.

    Raises:
        AgentError: for ``max_model_calls < 1``.
    """

    name = "chat"
    #: A model's commands are untrusted: the runner confines them (bubblewrap where it runs).
    trusted = False

    def __init__(self, backend: ChatBackend, *, max_model_calls: int = 100, system_prompt: str = SYSTEM_PROMPT) -> None:
        if max_model_calls < 1:
            raise AgentError(f"max_model_calls must be at least 1, got {max_model_calls}")
        self.backend = backend
        self.max_model_calls = max_model_calls
        self._system_prompt = system_prompt
        self._tools = tool_schema()
        self.begin(None)

    def begin(self, task: Task | None) -> None:
        """Start a new conversation."""
        self._messages: list[dict[str, Any]] = [{"role": "system", "content": self._system_prompt}]
        self._queue: deque[ToolCall] = deque()
        self._awaiting: str | None = "reset"  # what the next observation answers: reset, tool call id, "text"
        self.model_calls = 0

    def act(self, observation: Any, info: dict[str, Any]) -> str:
        """The next action text: a queued tool call, else a new model answer, else submit.

        Raises:
            AgentInfraError, AgentError: from the backend (see :func:`api_failure`).
        """
        self._record(_text(observation))
        if not self._queue:
            if self.model_calls >= self.max_model_calls:
                self._awaiting = None
                return SUBMIT_TEXT
            turn = self.backend.complete(self._messages, self._tools)
            self.model_calls += 1
            calls = [c if c.id else ToolCall(f"call_{self.model_calls}_{i}", c.name, c.arguments_text)
                     for i, c in enumerate(turn.tool_calls)]
            self._messages.append(_assistant_message(turn.content, calls))
            if not calls:
                self._awaiting = "text"
                return turn.content
            self._queue.extend(calls)
        call = self._queue.popleft()
        self._awaiting = "tool:" + call.id
        return json.dumps({"name": call.name, "arguments": call.arguments_text}, ensure_ascii=False)

    def conversation(self) -> list[dict[str, Any]]:
        """The episode so far as OpenAI-style chat messages (a copy)."""
        return copy.deepcopy(self._messages)

    def sampling(self) -> dict[str, Any] | None:
        """The backend's sampling settings (its ``sampling`` attribute, a copy), or None when it has none."""
        settings = getattr(self.backend, "sampling", None)
        return dict(settings) if isinstance(settings, dict) else None

    def close(self) -> None:
        """Close the backend's client, when it has one."""
        close = getattr(self.backend, "close", None)
        if callable(close):
            close()

    def _record(self, text: str) -> None:
        if self._awaiting in ("reset", "text"):
            self._messages.append({"role": "user", "content": text})
        elif self._awaiting is not None:
            self._messages.append(tool_result_message(self._awaiting.removeprefix("tool:"), text))
        self._awaiting = None


def _text(observation: Any) -> str:
    if isinstance(observation, Mapping):
        return str(observation.get("text", ""))
    return str(getattr(observation, "text", observation))


def _assistant_message(content: str, calls: list[ToolCall]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments_text}} for c in calls]
    return message
