"""The new agents by name through the registry, and the lazy import of the LLM SDKs."""

from __future__ import annotations

import re
import subprocess
import sys
import time
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


def test_an_option_the_agent_does_not_take_is_an_agent_error_suggesting_the_right_one() -> None:
    with pytest.raises(AgentError, match=r"^agent 'openai': unknown option 'temprature' \(did you mean 'temperature'\?\); "
                                         r"its options are \['api_key_env', 'base_url', "):
        make_agent("openai", model="m", base_url="http://127.0.0.1:9/v1", temprature=0.2)


def test_a_missing_required_option_is_named() -> None:
    with pytest.raises(AgentError, match=r"^agent 'shell': option 'command' is required; its options are "):
        make_agent("shell")


def write_agent(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "message"), [
    ("type: openai\nlabel: [x\n", "line 3, column 1: invalid YAML: expected ',' or ']', but got '<stream end>' "
                                   "(while parsing a flow sequence at line 2, column 8)"),
    ("type: openai\ntype: noop\n", "line 2, column 1: duplicate key 'type' (first at line 1); each field may appear once"),
    ("type: gpt\n", "type: unknown agent type 'gpt'; valid types are ['claude', 'golden', 'noop', 'openai', 'scripted', 'shell']"),
    ("type: openai\nlabel: a/b\nmodel: m\n", "label: agent label 'a/b' must be 1-64 letters"),
    ("type: openai\nmodel: m\ntemprature: 0.2\n", "agent 'openai': unknown option 'temprature' (did you mean 'temperature'?)"),
    ("type: openai\nlabel: q\n", "agent 'openai': option 'model' is required"),
    ("", "an agent file is a mapping with a 'type' field, got an empty file"),
    ("label: q\n", "an agent file is a mapping with a 'type' field, got a mapping without it"),
])
def test_a_bad_agent_file_is_one_line_naming_the_file_and_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = write_agent(tmp_path, text)
    with pytest.raises(AgentError) as info:
        AgentSpec.parse(str(path))
    assert str(info.value) == f"{path}: {message}" or str(info.value).startswith(f"{path}: {message}")
    assert "\n" not in str(info.value) and "pydantic" not in str(info.value)


#: An agent file's worst inputs (issue 13): each is one AgentError naming the file, quickly, never a traceback.
_BOMB = "type: openai\nmodel: m\na: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))


@pytest.mark.parametrize(("data", "message"), [
    (_BOMB.encode(), r"line 4, column 8: an alias \(\*a\) is not allowed here; write the value out"),
    (b"type: openai\nmodel: \x07m\n", r"line 2, column 8: invalid YAML: the character U\+0007 is not allowed"),
    ("type: openai\n".encode("utf-16"), r"not UTF-8 text \(byte 0xff at offset 0\)"),
    (b"type: openai\nmodel: \xc3\x28\n", r"not UTF-8 text \(byte 0xc3 at offset 20\)"),
    (b"type: openai\nmodel: m\n" + b"x: " + b"[" * 5000 + b"]" * 5000 + b"\n", r"line 3, column 67: nested deeper than 64 levels"),
], ids=["alias-bomb", "control-character", "utf-16", "invalid-utf-8", "deep-nesting"])
def test_an_agent_file_of_hostile_bytes_is_one_agent_error(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "agent.yaml"
    path.write_bytes(data)
    started = time.perf_counter()
    with pytest.raises(AgentError, match=rf"^{re.escape(str(path))}: {message}") as info:
        AgentSpec.parse(str(path))
    assert "\n" not in str(info.value)
    assert time.perf_counter() - started < 10, "a hostile agent file is refused without expanding it"


def test_an_agent_file_whose_agent_refuses_its_options_is_named(tmp_path: Path) -> None:
    from repogym_gym.runner.run import resolve_agents

    path = write_agent(tmp_path, "type: scripted\nlabel: s\nactions: [{kind: fly}]\n")
    with pytest.raises(AgentError, match=rf"^{re.escape(str(path))}: agent 'scripted': actions: entry 0 is not a valid action"):
        resolve_agents([str(path)])


def test_importing_the_agents_package_imports_no_llm_sdk() -> None:
    code = ("import sys, repogym_gym.agents as a; assert 'openai' not in sys.modules and 'anthropic' not in sys.modules; "
            "a.OpenAIChatAgent; assert 'openai' in sys.modules and 'anthropic' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
