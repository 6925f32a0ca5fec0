"""OpenAIChatAgent: a chat model behind an OpenAI-compatible server (OpenAI, vLLM, SGLang).

It uses only what those servers share: non-streaming ``chat.completions`` with ``tools`` (the
gym layer's :func:`~repogym_gym.gym.tools.tool_schema`), ``temperature`` and ``max_tokens``.
A vLLM server needs ``--enable-auto-tool-choice`` and a ``--tool-call-parser`` for its model.

Example:
    >>> agent = OpenAIChatAgent("Qwen2.5-Coder-7B-Instruct", base_url="http://localhost:8000/v1")  # doctest: +SKIP
    >>> run_episode(gym.make("RepoGym/parse-duration-v0"), agent).total_reward                     # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from typing import Any

import openai

from repogym_gym.agents.llm import (
    AssistantTurn,
    ChatAgent,
    ToolCall,
    api_failure,
    api_key_from_env,
)
from repogym_gym.errors import AgentError, AgentInfraError

__all__ = ["OpenAIBackend", "OpenAIChatAgent"]


class OpenAIBackend:
    """:class:`~repogym_gym.agents.llm.ChatBackend` over ``openai.OpenAI().chat.completions``.

    Args:
        client: The OpenAI client (its base URL, key, timeout and retries).
        model: The model name the server serves.
        temperature: Sampling temperature; None leaves it to the server.
        max_tokens: Longest answer, tokens; None leaves it to the server.

    Attributes:
        sampling: The settings above as a dict (None: the server's default), for results and exports.
    """

    def __init__(self, client: openai.OpenAI, model: str, *, temperature: float | None = None,
                 max_tokens: int | None = None, key_hint: str = "") -> None:
        self.client = client
        self.model = model
        self._options: dict[str, Any] = {}
        if temperature is not None:
            self._options["temperature"] = temperature
        if max_tokens is not None:
            self._options["max_tokens"] = max_tokens
        self._where = f"openai model {model!r} at {client.base_url}"
        self._key_hint = key_hint
        self.sampling = {"api": "openai", "model": model, "base_url": str(client.base_url),
                         "temperature": temperature, "max_tokens": max_tokens}

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        """The next assistant turn (an empty turn when the server answered no choice).

        Raises:
            AgentInfraError: no answer, HTTP 408/409/429/5xx (after the client's retries), or a
                body that is not a chat completion.
            AgentError: HTTP 401/403 (the key) or another 4xx (model name, request too long).
        """
        try:
            options = {**self._options, **({"tools": tools} if tools else {})}  # OpenAI refuses an empty tool list
            completion: Any = self.client.chat.completions.create(
                model=self.model, messages=messages, **options)  # type: ignore[arg-type]
        except openai.APIStatusError as exc:
            raise api_failure(self._where, exc.status_code, exc.message, key_hint=self._key_hint) from exc
        except openai.APIConnectionError as exc:
            raise api_failure(self._where, None, f"{exc} ({exc.__cause__})" if exc.__cause__ else str(exc)) from exc
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise AgentInfraError(f"{self._where}: the answer is not a chat completion: {exc}") from exc
        return self._turn(completion)

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()

    def _turn(self, completion: Any) -> AssistantTurn:
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list):
            raise AgentInfraError(f"{self._where}: the answer is not a chat completion: {str(completion)[:200]!r}")
        if not choices:
            return AssistantTurn()
        message = getattr(choices[0], "message", None)
        calls = []
        for call in getattr(message, "tool_calls", None) or []:
            function = getattr(call, "function", None)
            arguments = getattr(function, "arguments", None)
            calls.append(ToolCall(str(getattr(call, "id", None) or ""), str(getattr(function, "name", None) or ""),
                                  arguments if isinstance(arguments, str) else json.dumps(arguments or {})))
        return AssistantTurn(str(getattr(message, "content", None) or ""), calls)


class OpenAIChatAgent(ChatAgent):
    """A chat model behind an OpenAI-compatible server, playing the gym tools.

    Args:
        model: The model name the server serves.
        base_url: The server's URL, e.g. ``http://localhost:8000/v1``; default
            ``$OPENAI_BASE_URL``, else OpenAI's own.
        api_key_env: The environment variable holding the key. When it is unset and a base URL
            is given, the key ``"EMPTY"`` is sent (vLLM and SGLang need none unless started
            with ``--api-key``).
        temperature: Sampling temperature; None (the default) leaves it to the server's default,
            never a silent 0: samples at 0 are near-identical, so ``--samples k`` measured pass@k
            over one answer and a GRPO group got no advantage.
        max_tokens: Longest answer, tokens; None leaves it to the server.
        request_timeout_s: Seconds one request may take.
        max_retries: Retries of the client on connection errors, 408/409/429 and 5xx (with
            its own backoff) before the failure is raised.
        max_model_calls: Model answers per episode; then the agent submits.

    Raises:
        AgentError: without a key and a base URL, or for an empty ``model``.
    """

    name = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float | None = None, max_tokens: int | None = None, request_timeout_s: float = 300.0,
                 max_retries: int = 2, max_model_calls: int = 100) -> None:
        if not model:
            raise AgentError("agent 'openai': model must name the model the server serves, got ''")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key_from_env("openai", api_key_env, base_url)
        client = openai.OpenAI(api_key=key, base_url=base_url, timeout=request_timeout_s, max_retries=max_retries)
        backend = OpenAIBackend(client, model, temperature=temperature, max_tokens=max_tokens,
                                key_hint=f"check the key in ${api_key_env}")
        super().__init__(backend, max_model_calls=max_model_calls)
