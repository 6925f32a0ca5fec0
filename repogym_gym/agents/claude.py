"""ClaudeAgent: a Claude model through the official ``anthropic`` SDK (the messages API).

The shared loop (:class:`~repogym_gym.agents.llm.ChatAgent`) keeps the conversation as
OpenAI-style messages, the export format; this backend converts it to the messages API on
every call (system prompt apart, ``tool_use`` blocks in assistant turns, ``tool_result``
blocks in user turns, consecutive turns of one role merged) and converts the gym tool schema
to Anthropic tools.

Example:
    >>> anthropic_tools([{"type": "function", "function": {"name": "submit", "description": "Submit.",
    ...                   "parameters": {"type": "object", "properties": {}}}}])[0]["input_schema"]
    {'type': 'object', 'properties': {}}
"""

from __future__ import annotations

import json
import os
from typing import Any

import anthropic

from repogym_gym.agents.llm import (
    AssistantTurn,
    ChatAgent,
    ToolCall,
    api_failure,
    api_key_from_env,
)
from repogym_gym.errors import AgentError, AgentInfraError

__all__ = ["ClaudeAgent", "ClaudeBackend", "anthropic_messages", "anthropic_tools"]


def anthropic_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style tool definitions as Anthropic tools (``name``, ``description``, ``input_schema``)."""
    return [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
             "input_schema": t["function"]["parameters"]} for t in tools]


def anthropic_messages(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """OpenAI-style messages as ``(system, messages)`` of the messages API.

    Empty texts become a placeholder (the API refuses empty text blocks), and tool arguments
    that do not decode to an object are sent as ``{}`` (they were already an error observation).
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role, content = message["role"], message.get("content") or ""
        if role == "system":
            system.append(content)
        elif role == "tool":
            push("user", [{"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": content or "(empty)"}])
        elif role == "user":
            push("user", [{"type": "text", "text": content or "(empty)"}])
        else:
            blocks = [{"type": "text", "text": content}] if content.strip() else []
            blocks += [{"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                        "input": _object(call["function"]["arguments"])} for call in message.get("tool_calls", [])]
            push("assistant", blocks or [{"type": "text", "text": "(no answer)"}])
    return "\n\n".join(system), out


def _object(arguments_text: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments_text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class ClaudeBackend:
    """:class:`~repogym_gym.agents.llm.ChatBackend` over ``anthropic.Anthropic().messages``.

    Args:
        client: The Anthropic client (its base URL, key, timeout and retries).
        model: The model name, e.g. ``claude-sonnet-4-5``.
        temperature: Sampling temperature; None (the default) leaves it to the API, which
            refuses it for some recent models.
        max_tokens: Longest answer, tokens (the API requires it).

    Attributes:
        sampling: The settings above as a dict (temperature None: the API's default), for results and exports.
    """

    def __init__(self, client: anthropic.Anthropic, model: str, *, temperature: float | None = None,
                 max_tokens: int = 4096, key_hint: str = "") -> None:
        self.client = client
        self.model = model
        self._options: dict[str, Any] = {"max_tokens": max_tokens}
        if temperature is not None:  # in the body: recent SDKs dropped the parameter, older ones have it
            self._options["extra_body"] = {"temperature": temperature}
        self._where = f"claude model {model!r} at {client.base_url}"
        self._key_hint = key_hint
        self.sampling = {"api": "anthropic", "model": model, "base_url": str(client.base_url),
                         "temperature": temperature, "max_tokens": max_tokens}

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        """The next assistant turn.

        Raises:
            AgentInfraError: no answer, HTTP 408/409/429/5xx (after the client's retries), or a
                body that is not a message.
            AgentError: HTTP 401/403 (the key) or another 4xx (model name, request too long).
        """
        system, converted = anthropic_messages(messages)
        try:
            reply: Any = self.client.messages.create(model=self.model, system=system, messages=converted,  # type: ignore[arg-type]
                                                     tools=anthropic_tools(tools), **self._options)  # type: ignore[arg-type]
        except anthropic.APIStatusError as exc:
            raise api_failure(self._where, exc.status_code, exc.message, key_hint=self._key_hint) from exc
        except anthropic.APIConnectionError as exc:
            raise api_failure(self._where, None, f"{exc} ({exc.__cause__})" if exc.__cause__ else str(exc)) from exc
        except (anthropic.APIResponseValidationError, ValueError) as exc:
            raise AgentInfraError(f"{self._where}: the answer is not a message: {exc}") from exc
        blocks = getattr(reply, "content", None)
        if not isinstance(blocks, list):
            raise AgentInfraError(f"{self._where}: the answer is not a message: {str(reply)[:200]!r}")
        texts = [str(getattr(b, "text", "")) for b in blocks if getattr(b, "type", None) == "text"]
        calls = [ToolCall(str(getattr(b, "id", "") or ""), str(getattr(b, "name", "") or ""), json.dumps(getattr(b, "input", {})))
                 for b in blocks if getattr(b, "type", None) == "tool_use"]
        return AssistantTurn("\n".join(texts), calls)

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()


class ClaudeAgent(ChatAgent):
    """A Claude model playing the gym tools; its conversation is exported as OpenAI-style messages.

    Args:
        model: The model name, e.g. ``claude-sonnet-4-5``.
        api_key_env: The environment variable holding the key.
        base_url: Another endpoint (a proxy, a gateway); default ``$ANTHROPIC_BASE_URL``, else
            Anthropic's own. With a base URL and no key, the key ``"EMPTY"`` is sent.
        temperature: Sampling temperature; None (the default) leaves it to the API, which
            refuses it for some recent models.
        max_tokens: Longest answer, tokens.
        request_timeout_s: Seconds one request may take.
        max_retries: Retries of the client on connection errors, 408/409/429 and 5xx.
        max_model_calls: Model answers per episode; then the agent submits.

    Raises:
        AgentError: without a key and a base URL, or for an empty ``model``.
    """

    name = "claude"

    def __init__(self, model: str, *, api_key_env: str = "ANTHROPIC_API_KEY", base_url: str | None = None,
                 temperature: float | None = None, max_tokens: int = 4096, request_timeout_s: float = 300.0,
                 max_retries: int = 2, max_model_calls: int = 100) -> None:
        if not model:
            raise AgentError("agent 'claude': model must name a Claude model, got ''")
        base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        key = api_key_from_env("claude", api_key_env, base_url)
        client = anthropic.Anthropic(api_key=key, base_url=base_url, timeout=request_timeout_s, max_retries=max_retries)
        backend = ClaudeBackend(client, model, temperature=temperature, max_tokens=max_tokens,
                                key_hint=f"check the key in ${api_key_env}")
        super().__init__(backend, max_model_calls=max_model_calls)
