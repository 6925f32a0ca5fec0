"""The shared chat-agent loop with an in-process backend, and the typing of backend failures."""

from __future__ import annotations

import json
from typing import Any

import pytest

from repogym_gym.actions import Observation, parse_action
from repogym_gym.agents.llm import (
    AssistantTurn,
    ChatAgent,
    ChatBackend,
    ToolCall,
    api_failure,
    api_key_from_env,
)
from repogym_gym.conversation import SYSTEM_PROMPT
from repogym_gym.errors import AgentError, AgentInfraError


class ListBackend:
    """A ChatBackend answering from a list, keeping a copy of each conversation it was sent."""

    def __init__(self, turns: list[AssistantTurn]) -> None:
        self.turns = list(turns)
        self.seen: list[list[dict[str, Any]]] = []

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantTurn:
        self.seen.append(json.loads(json.dumps(messages)))
        return self.turns.pop(0)


def calls(*names: str) -> AssistantTurn:
    return AssistantTurn("", [ToolCall("", name, "{}") for name in names])


def test_a_backend_satisfies_the_protocol() -> None:
    assert isinstance(ListBackend([]), ChatBackend)


def test_tool_calls_become_tool_call_action_texts_with_the_raw_arguments() -> None:
    agent = ChatAgent(ListBackend([AssistantTurn("", [ToolCall("c1", "edit", '{"path": ')])]))
    action = agent.act({"text": "task"}, {})
    assert json.loads(action) == {"name": "edit", "arguments": '{"path": '}
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_action(action)


def test_calls_without_ids_get_unique_ids_that_their_results_carry() -> None:
    backend = ListBackend([calls("read", "read"), calls("submit")])
    agent = ChatAgent(backend)
    agent.act({"text": "task"}, {})
    agent.act({"text": "first result"}, {})
    agent.act({"text": "second result"}, {})
    sent = backend.seen[1]
    ids = [c["id"] for c in sent[2]["tool_calls"]]
    assert len(set(ids)) == 2 and all(ids)
    assert [(m["tool_call_id"], m["content"]) for m in sent[3:]] == [(ids[0], "first result"), (ids[1], "second result")]


def test_the_conversation_opens_with_the_system_prompt_and_the_reset_observation() -> None:
    backend = ListBackend([calls("submit")])
    ChatAgent(backend).act(Observation(text="the task", step=0, steps_left=5), {})
    assert backend.seen[0] == [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "the task"}]


def test_begin_starts_a_new_conversation_and_conversation_returns_a_copy() -> None:
    agent = ChatAgent(ListBackend([calls("read"), calls("submit")]))
    agent.act({"text": "episode 1"}, {})
    agent.begin(None)
    agent.act({"text": "episode 2"}, {})
    messages = agent.conversation()
    assert [m.get("content") for m in messages[:2]] == [SYSTEM_PROMPT, "episode 2"] and len(messages) == 3
    messages.clear()
    assert len(agent.conversation()) == 3 and agent.model_calls == 1


def test_the_budget_is_counted_in_model_calls_not_steps() -> None:
    agent = ChatAgent(ListBackend([calls("read", "read", "read")]), max_model_calls=1)
    actions = [agent.act({"text": "obs"}, {}) for _ in range(4)]
    assert [json.loads(a).get("name", json.loads(a).get("kind")) for a in actions] == ["read", "read", "read", "submit"]


def test_a_budget_below_one_is_refused() -> None:
    with pytest.raises(AgentError, match="max_model_calls must be at least 1, got 0"):
        ChatAgent(ListBackend([]), max_model_calls=0)


@pytest.mark.parametrize("status", [None, 408, 409, 429, 500, 502, 529])
def test_unreachable_overloaded_or_broken_servers_are_infrastructure_errors(status: int | None) -> None:
    assert isinstance(api_failure("srv", status, "detail"), AgentInfraError)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_refused_requests_are_agent_errors(status: int) -> None:
    error = api_failure("srv", status, "detail", key_hint="check $KEY")
    assert type(error) is AgentError
    assert ("check $KEY" in str(error)) == (status in (401, 403))
    assert f"HTTP {status}" in str(error) and str(error).startswith("srv: ")


def test_api_key_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOGYM_TEST_KEY", "k")
    monkeypatch.delenv("REPOGYM_TEST_NO_SUCH_KEY", raising=False)
    assert api_key_from_env("a", "REPOGYM_TEST_KEY", None) == "k"
    assert api_key_from_env("a", "REPOGYM_TEST_NO_SUCH_KEY", "http://localhost:8000/v1") == "EMPTY"
    with pytest.raises(AgentError, match="agent 'a': no API key: the environment variable REPOGYM_TEST_NO_SUCH_KEY"):
        api_key_from_env("a", "REPOGYM_TEST_NO_SUCH_KEY", None)
