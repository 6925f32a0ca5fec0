"""OpenAIChatAgent against the shipped ChatServer: a starter task solved end to end through
gym.make + run_episode, malformed answers survived as error observations, and server failures
typed as infrastructure (retried) or configuration (not)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

from repogym_gym.agents import run_episode
from repogym_gym.agents.openai_chat import OpenAIChatAgent
from repogym_gym.errors import AgentError, AgentInfraError
from repogym_gym.gym import tool_schema
from repogym_gym.testing import ChatServer, Reply

TASK = "pagination-off-by-one"
OLD = "        # one page per full batch, plus one for the remainder\n        return self.count // self.per_page + 1\n"
NEW = "        return -(-self.count // self.per_page)\n"
FIX = Reply.call("edit", path="pagekit/paginator.py", old=OLD, new=NEW)
UNSET = "REPOGYM_TEST_NO_SUCH_KEY"


@pytest.fixture
def env() -> Iterator[Any]:
    env = gym.make(f"RepoGym/{TASK}-v0")
    yield env
    env.close()


def agent_for(server: ChatServer, **options: Any) -> OpenAIChatAgent:
    return OpenAIChatAgent("test-model", base_url=server.base_url, api_key_env=UNSET, max_retries=0, **options)


def test_the_agent_solves_a_starter_task_end_to_end(env: Any) -> None:
    with ChatServer([Reply.call("read", path="pagekit/paginator.py"), FIX, Reply.call("submit")]) as server:
        agent = agent_for(server)
        outcome = run_episode(env, agent)
        requests = server.requests
    assert (outcome.total_reward, outcome.terminated, outcome.steps) == (1.0, True, 3)
    assert outcome.agent_error is None
    first = requests[0].body
    assert first["model"] == "test-model" and "temperature" not in first  # the server's default, not a silent 0
    assert first["tools"] == tool_schema()
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert "Paginator" in first["messages"][1]["content"]


def test_tool_results_go_back_with_the_id_of_their_call(env: Any) -> None:
    with ChatServer([Reply.call("read", path="pagekit/paginator.py"), FIX, Reply.call("submit")]) as server:
        run_episode(env, agent_for(server))
        second, third = server.requests[1].body["messages"], server.requests[2].body["messages"]
    call_id = second[2]["tool_calls"][0]["id"]
    assert second[3] == {"role": "tool", "tool_call_id": call_id, "content": second[3]["content"]}
    assert "def num_pages" in second[3]["content"]
    assert third[-1]["tool_call_id"] == third[-2]["tool_calls"][0]["id"] != call_id
    assert "Edited pagekit/paginator.py" in third[-1]["content"]


def test_several_tool_calls_in_one_answer_are_played_in_order_with_one_model_call(env: Any) -> None:
    both = Reply(tool_calls=FIX.tool_calls + Reply.call("submit").tool_calls)
    with ChatServer([both]) as server:
        agent = agent_for(server)
        outcome = run_episode(env, agent)
        assert len(server.requests) == 1
    assert outcome.total_reward == 1.0
    assert [m["role"] for m in agent.conversation()] == ["system", "user", "assistant", "tool"]


def test_malformed_answers_become_error_observations_and_the_episode_goes_on(env: Any) -> None:
    script = [
        Reply.call("edit", '{"path": "pagekit/paginator.py", "old": '),     # arguments are not JSON
        Reply.call("frobnicate", path="x"),                                # no such tool
        Reply.say("The bug is in num_pages."),                             # prose, no tool call
        Reply(body=json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []})),
        FIX,
        Reply.call("submit"),
    ]
    with ChatServer(script) as server:
        agent = agent_for(server)
        outcome = run_episode(env, agent)
        assert server.remaining == 0
    assert (outcome.total_reward, outcome.steps, outcome.agent_error) == (1.0, 6, None)
    messages = agent.conversation()
    answers = [m for m in messages[2:] if m["role"] in ("tool", "user")]
    assert "not valid JSON" in answers[0]["content"] and answers[0]["role"] == "tool"
    assert "unknown action kind 'frobnicate'" in answers[1]["content"]
    assert answers[2]["role"] == "user" and "Invalid action" in answers[2]["content"]
    assert messages[6] == {"role": "assistant", "content": "The bug is in num_pages."}
    assert answers[3]["role"] == "user" and "Invalid action" in answers[3]["content"]
    assert "Edited" in answers[4]["content"]


def test_the_model_call_budget_ends_in_a_submit(env: Any) -> None:
    with ChatServer([Reply.call("read", path="README.md"), Reply.call("read", path="README.md")]) as server:
        agent = agent_for(server, max_model_calls=2)
        outcome = run_episode(env, agent)
        assert len(server.requests) == 2
    assert (outcome.terminated, outcome.steps, outcome.total_reward) == (True, 3, 0.0)
    assert agent.conversation()[-1]["role"] == "tool"


@pytest.mark.parametrize("reply", [Reply.error(500), Reply.error(503), Reply.error(429), Reply(body="<html>bad gateway</html>")],
                         ids=["500", "503", "429", "garbage-body"])
def test_server_failures_are_infrastructure_errors(env: Any, reply: Reply) -> None:
    with ChatServer([reply]) as server, pytest.raises(AgentInfraError, match="test-model"):
        run_episode(env, agent_for(server))


def test_an_unreachable_server_is_an_infrastructure_error_naming_its_url(env: Any) -> None:
    server = ChatServer([]).start()
    url = server.base_url
    server.close()
    agent = OpenAIChatAgent("test-model", base_url=url, api_key_env=UNSET, max_retries=0)
    with pytest.raises(AgentInfraError, match="no answer from the model server") as info:
        run_episode(env, agent)
    assert url.removesuffix("/v1") in str(info.value)


def test_a_request_timeout_is_an_infrastructure_error(env: Any) -> None:
    with ChatServer([Reply(delay_s=1.0)]) as server, pytest.raises(AgentInfraError, match="no answer"):
        run_episode(env, agent_for(server, request_timeout_s=0.2))


def test_the_client_retries_a_5xx_before_giving_up(env: Any) -> None:
    with ChatServer([Reply.error(502), FIX, Reply.call("submit")]) as server:
        agent = OpenAIChatAgent("test-model", base_url=server.base_url, api_key_env=UNSET, max_retries=1)
        assert run_episode(env, agent).total_reward == 1.0


def test_a_refused_key_is_a_configuration_error_naming_the_variable() -> None:
    with ChatServer([Reply.error(401)]) as server:
        agent = agent_for(server)
        agent.begin(None)
        with pytest.raises(AgentError, match=f"refused the API key.*{UNSET}") as info:
            agent.act({"text": "task"}, {})
    assert not isinstance(info.value, AgentInfraError)


def test_a_rejected_request_ends_the_episode_as_an_agent_error_and_grades_it(env: Any) -> None:
    with ChatServer([Reply.error(400)]) as server:
        outcome = run_episode(env, agent_for(server))
    assert outcome.agent_error is not None and "HTTP 400" in outcome.agent_error
    assert (outcome.truncated, outcome.total_reward) == (True, 0.0)


def test_the_key_comes_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOGYM_TEST_KEY", "sk-test-123")
    with ChatServer([Reply.call("submit"), Reply.call("submit")]) as server:
        for api_key_env in ("REPOGYM_TEST_KEY", UNSET):
            agent = OpenAIChatAgent("m", base_url=server.base_url, api_key_env=api_key_env)
            agent.act({"text": "task"}, {})
        keys = [r.headers["authorization"] for r in server.requests]
    assert keys == ["Bearer sk-test-123", "Bearer EMPTY"]


def test_without_a_key_or_a_base_url_construction_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(AgentError, match=f"{UNSET} is not set"):
        OpenAIChatAgent("m", api_key_env=UNSET)


def test_the_base_url_can_come_from_openai_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    with ChatServer([Reply.call("submit")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        agent = OpenAIChatAgent("m", api_key_env=UNSET)
        agent.act({"text": "task"}, {})
        assert len(server.requests) == 1


def test_max_tokens_and_temperature_are_sent_only_when_set() -> None:
    with ChatServer([Reply.call("submit"), Reply.call("submit")]) as server:
        agent_for(server).act({"text": "t"}, {})
        agent_for(server, max_tokens=64, temperature=0.7).act({"text": "t"}, {})
        default, limited = (r.body for r in server.requests)
    assert "max_tokens" not in default and "temperature" not in default
    assert limited["max_tokens"] == 64 and limited["temperature"] == 0.7
