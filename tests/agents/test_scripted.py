"""ScriptedAgent: a list of actions from code or a YAML/JSON file, checked when built."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

from repogym_gym.agents import ScriptedAgent, run_episode
from repogym_gym.errors import AgentError
from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE

SUBMIT = {"kind": "submit"}


def test_a_scripted_fix_from_a_yaml_file_scores_one(tiny_task: Task, tmp_path: Path) -> None:
    script = tmp_path / "fix.yaml"
    script.write_text(yaml.safe_dump([{"kind": "read", "path": "calc/__init__.py"},
                                      {"name": "edit", "arguments": {"path": "calc/__init__.py",
                                                                     "old": "add(a, b):\n    return a - b",
                                                                     "new": "add(a, b):\n    return a + b"}}]))
    env = gym.make("RepoGym/Task-v0", task=str(tiny_task.root))
    try:
        outcome = run_episode(env, ScriptedAgent(actions_file=script))
    finally:
        env.close()
    assert (outcome.total_reward, outcome.steps, outcome.terminated, outcome.agent_error) == (1.0, 3, True, None)


def test_a_scripted_write_plays_in_order_then_submits_forever(tiny_task: Task) -> None:
    agent = ScriptedAgent(actions=[{"kind": "read", "path": "calc/__init__.py"},
                                   {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}])
    agent.begin(tiny_task)
    played = [agent.act({}, {}) for _ in range(4)]
    assert played == [{"kind": "read", "path": "calc/__init__.py"},
                      {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}, SUBMIT, SUBMIT]
    agent.begin(tiny_task)
    assert agent.act({}, {})["kind"] == "read"


def test_tool_call_and_index_kinds_are_normalised_to_action_dicts() -> None:
    agent = ScriptedAgent(actions=[{"name": "list_files", "arguments": "{}"}, {"kind": 6}])
    assert agent.actions == [{"kind": "list_files", "path": "."}, SUBMIT]


def test_a_json_file_works_like_yaml(tmp_path: Path) -> None:
    script = tmp_path / "plan.json"
    script.write_text(json.dumps([{"kind": "test"}]))
    assert ScriptedAgent(actions_file=str(script)).actions == [{"kind": "test"}]


def test_a_malformed_entry_names_the_file_and_its_index(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text(yaml.safe_dump([{"kind": "read", "path": "a.py"}, {"kind": "teleport"}]))
    with pytest.raises(AgentError, match=rf"{script}: entry 1 is not a valid action: unknown action kind 'teleport'"):
        ScriptedAgent(actions_file=script)


def test_an_entry_missing_a_field_names_the_field() -> None:
    with pytest.raises(AgentError, match=r"actions: entry 0 .*invalid 'write' action: content"):
        ScriptedAgent(actions=[{"kind": "write", "path": "a.py"}])


@pytest.mark.parametrize(("text", "message"), [("kind: read\n", "must be a list of actions, got dict"),
                                               ("[unclosed", "cannot read actions_file")])
def test_a_file_that_is_not_a_list_of_actions_is_refused(tmp_path: Path, text: str, message: str) -> None:
    script = tmp_path / "plan.yaml"
    script.write_text(text)
    with pytest.raises(AgentError, match=message) as info:
        ScriptedAgent(actions_file=script)
    assert str(script) in str(info.value)


def test_a_missing_file_is_refused_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="cannot read actions_file .*nope.yaml"):
        ScriptedAgent(actions_file=tmp_path / "nope.yaml")


@pytest.mark.parametrize("options", [{}, {"actions": [], "actions_file": "x.yaml"}])
def test_exactly_one_source_of_actions_is_required(options: dict) -> None:
    with pytest.raises(AgentError, match="exactly one of actions= .* and actions_file="):
        ScriptedAgent(**options)
