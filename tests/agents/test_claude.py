"""ClaudeAgent through the Anthropic messages protocol of the shipped ChatServer: the same solve
as the OpenAI agent, tool_use / tool_result blocks on the wire, OpenAI-style conversation out."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

from repogym_gym.agents import run_episode
from repogym_gym.agents.claude import ClaudeAgent, anthropic_messages, anthropic_tools
from repogym_gym.errors import AgentError, AgentInfraError
from repogym_gym.gym import tool_schema
from repogym_gym.testing import ChatServer, Reply
from tests.agents.test_openai_chat import FIX, TASK, UNSET


@pytest.fixture
def env() -> Iterator[Any]:
    env = gym.make(f"RepoGym/{TASK}-v0")
    yield env
    env.close()


def agent_for(server: ChatServer, **options: Any) -> ClaudeAgent:
    return ClaudeAgent("claude-test", base_url=server.anthropic_base_url, api_key_env=UNSET, max_retries=0, **options)


def test_the_agent_solves_a_starter_task_through_the_messages_api(env: Any) -> None:
    script = [Reply(text="Reading first.", tool_calls=Reply.call("read", path="pagekit/paginator.py").tool_calls),
              FIX, Reply.call("submit")]
    with ChatServer(script) as server:
        agent = agent_for(server)
        outcome = run_episode(env, agent)
        requests = [r.body for r in server.requests]
    assert (outcome.total_reward, outcome.steps, outcome.agent_error) == (1.0, 3, None)
    first, second = requests[0], requests[1]
    assert first["model"] == "claude-test" and first["max_tokens"] == 4096
    assert first["system"].startswith("You are a software engineer")
    assert first["tools"] == anthropic_tools(tool_schema())
    assert [m["role"] for m in first["messages"]] == ["user"]
    use = second["messages"][1]["content"]
    assert [b["type"] for b in use] == ["text", "tool_use"] and use[1]["input"] == {"path": "pagekit/paginator.py"}
    [result] = second["messages"][2]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == use[1]["id"]
    assert "def num_pages" in result["content"]


def test_the_conversation_is_exported_as_openai_style_messages(env: Any) -> None:
    with ChatServer([FIX, Reply.call("submit")]) as server:
        agent = agent_for(server)
        run_episode(env, agent)
    messages = agent.conversation()
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    call = messages[2]["tool_calls"][0]
    assert call["type"] == "function" and call["function"]["name"] == "edit"
    assert messages[3]["tool_call_id"] == call["id"]


def test_prose_and_unknown_tools_become_error_observations(env: Any) -> None:
    with ChatServer([Reply.say("Thinking..."), Reply.call("frobnicate"), FIX, Reply.call("submit")]) as server:
        agent = agent_for(server)
        outcome = run_episode(env, agent)
        third = server.requests[2].body["messages"]
    assert outcome.total_reward == 1.0
    assert [m["role"] for m in third] == ["user", "assistant", "user", "assistant", "user"]
    assert "Invalid action" in third[2]["content"][0]["text"]
    assert "unknown action kind 'frobnicate'" in third[4]["content"][0]["content"]


def test_anthropic_messages_merge_tool_results_and_fill_empty_texts() -> None:
    call = {"id": "toolu_1", "type": "function", "function": {"name": "edit", "arguments": "{oops"}}
    call2 = {"id": "toolu_2", "type": "function", "function": {"name": "read", "arguments": '{"path": "a"}'}}
    system, messages = anthropic_messages([
        {"role": "system", "content": "S"}, {"role": "user", "content": "task"},
        {"role": "assistant", "content": "", "tool_calls": [call, call2]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "bad"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": ""},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "Invalid action"},
    ])
    assert system == "S"
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert [b["input"] for b in messages[1]["content"]] == [{}, {"path": "a"}]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["toolu_1", "toolu_2"]
    assert messages[2]["content"][1]["content"] == "(empty)"
    assert messages[3]["content"] == [{"type": "text", "text": "(no answer)"}]


@pytest.mark.parametrize(("reply", "error"), [(Reply.error(529), AgentInfraError), (Reply.error(500), AgentInfraError),
                                              (Reply.error(401), AgentError)], ids=["529", "500", "401"])
def test_server_failures_are_typed_by_whose_problem_they_are(reply: Reply, error: type[Exception]) -> None:
    with ChatServer([reply]) as server:
        agent = agent_for(server)
        with pytest.raises(error, match="claude-test") as info:
            agent.act({"text": "task"}, {})
    assert isinstance(info.value, AgentInfraError) == (error is AgentInfraError)


def sent_key(headers: dict[str, str]) -> str:
    """The API key of a request (SDK versions send it as x-api-key or as a bearer token)."""
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def test_the_key_is_sent_and_temperature_only_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOGYM_TEST_KEY", "sk-ant-test")
    with ChatServer([Reply.call("submit"), Reply.call("submit")]) as server:
        ClaudeAgent("c", base_url=server.anthropic_base_url, api_key_env="REPOGYM_TEST_KEY").act({"text": "t"}, {})
        agent_for(server, temperature=0.5).act({"text": "t"}, {})
        first, second = server.requests
    assert sent_key(first.headers) == "sk-ant-test" and "temperature" not in first.body
    assert sent_key(second.headers) == "EMPTY" and second.body["temperature"] == 0.5


def test_without_a_key_or_a_base_url_construction_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(AgentError, match=f"{UNSET} is not set"):
        ClaudeAgent("c", api_key_env=UNSET)
