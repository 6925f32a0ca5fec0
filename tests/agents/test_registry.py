"""The new agents by name through the registry, and the lazy import of the LLM SDKs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from repogym_gym.agents import ScriptedAgent, ShellAgent
from repogym_gym.agents.registry import AGENTS, AgentSpec, make_agent
from repogym_gym.errors import AgentError, AgentNotFoundError
from repogym_gym.testing import ChatServer, Reply

UNSET = "REPOGYM_TEST_NO_SUCH_KEY"


def test_make_agent_openai_builds_an_agent_that_talks_to_the_given_server() -> None:
    with ChatServer([Reply.call("submit")]) as server:
        agent = make_agent("openai", model="qwen", base_url=server.base_url, api_key_env=UNSET)
        assert type(agent).__name__ == "OpenAIChatAgent" and agent.name == "openai"
        assert agent.act({"text": "task"}, {}) == '{"name": "submit", "arguments": "{}"}'
        assert server.requests[0].body["model"] == "qwen"


def test_make_agent_claude_scripted_and_shell() -> None:
    assert type(make_agent("claude", model="c", base_url="http://127.0.0.1:9", api_key_env=UNSET)).__name__ == "ClaudeAgent"
    assert isinstance(make_agent("scripted", actions=[{"kind": "test"}]), ScriptedAgent)
    assert isinstance(make_agent("shell", command="true"), ShellAgent)


def test_an_agent_file_builds_a_labelled_openai_agent(tmp_path: Path) -> None:
    path = tmp_path / "qwen.yaml"
    path.write_text(yaml.safe_dump({"type": "openai", "label": "qwen-7b", "model": "Qwen2.5-7B",
                                    "base_url": "http://127.0.0.1:9/v1", "api_key_env": UNSET}))
    agent = AgentSpec.parse(str(path)).build()
    assert agent.name == "qwen-7b"


def test_an_unknown_agent_name_lists_the_valid_ones() -> None:
    with pytest.raises(AgentNotFoundError) as info:
        make_agent("gpt")
    assert all(name in str(info.value) for name in AGENTS)
    assert sorted(AGENTS) == ["claude", "golden", "noop", "openai", "scripted", "shell"]


def test_an_option_the_agent_does_not_take_is_an_agent_error() -> None:
    with pytest.raises(AgentError, match="agent 'openai': .*unexpected keyword argument 'temprature'"):
        make_agent("openai", model="m", base_url="http://127.0.0.1:9/v1", temprature=0.2)


def test_importing_the_agents_package_imports_no_llm_sdk() -> None:
    code = ("import sys, repogym_gym.agents as a; assert 'openai' not in sys.modules and 'anthropic' not in sys.modules; "
            "a.OpenAIChatAgent; assert 'openai' in sys.modules and 'anthropic' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
