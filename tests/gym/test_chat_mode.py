"""Issue 14: ``observation_mode="chat"``: chat messages next to the Dict observation."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from repogym_gym.actions import tool_schema
from repogym_gym.conversation import SYSTEM_PROMPT
from repogym_gym.gym import RepoGymEnv
from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE


def _call(call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_reset_gives_the_system_prompt_and_tools_and_each_call_a_tool_message(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id, sandbox="local", observation_mode="chat")
    try:
        messages, info = env.reset(seed=0)
        assert [m["role"] for m in messages] == ["system", "user"] and messages[0]["content"] == SYSTEM_PROMPT
        assert messages[1]["content"].startswith("Task tiny-calc (bugfix).") and info["tools"] == tool_schema(bash=False)  # local
        assert env.observation_space.contains(messages)
        messages, reward, terminated, _, _ = env.step({"role": "assistant", "content": None, "tool_calls": [
            _call("a1", "read", path="calc/__init__.py"), _call("a2", "write", path="calc/__init__.py", content=FIXED_SOURCE),
            _call("a3", "submit")]})
        assert env.observation_space.contains(messages)
    finally:
        env.close()
    assert [(m["role"], m["tool_call_id"]) for m in messages] == [("tool", "a1"), ("tool", "a2"), ("tool", "a3")]
    assert "return a - b" in messages[0]["content"] and messages[1]["content"].startswith("Wrote ")
    assert "Grade:" in messages[2]["content"] and (reward, terminated) == (1.0, True)


def test_truncate_check_env_and_a_bad_mode(tiny_gym_id: str, tiny_task: Task) -> None:
    env = gym.make(tiny_gym_id, sandbox="local", observation_mode="chat")
    try:
        env.reset(seed=0)
        messages, reward, _, truncated, _ = env.get_wrapper_attr("truncate")("trainer stop")
        assert truncated and reward == 0.0 and [m["role"] for m in messages] == ["user"]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
    finally:
        env.close()
    with pytest.raises(ValueError, match="observation_mode 'text' is not one of 'dict', 'chat'"):
        RepoGymEnv(task=tiny_task, sandbox="local", observation_mode="text")
