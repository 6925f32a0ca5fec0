"""SkyRL-gym 0.4: full episodes through ``skyrl_gym.make`` / ``init`` / ``step``, as SkyRL's generator drives them."""

from __future__ import annotations

import json
from typing import Any

import pytest

import repogym_gym
from repogym_gym.gym import register_suite
from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE, MakeTask
from tests.integrations.helpers import require_library


@pytest.fixture
def skyrl_gym() -> Any:
    library = require_library("skyrl_gym", "skyrl")
    import repogym_gym.integrations.skyrl  # noqa: F401 - registers "repogym"

    return library


def _row(task: Task, **more: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    [row] = repogym_gym.dataset(task.root.parent, as_hf=False)
    prompt = row.pop("prompt")
    return prompt, {**row, **more}


def _call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def test_the_golden_edit_scores_1_in_one_turn(skyrl_gym: Any, tiny_task: Task) -> None:
    prompt, extras = _row(tiny_task)
    env = skyrl_gym.make("repogym", env_config={"sandbox": "local"}, extras=extras)
    try:
        messages, _ = env.init(prompt)
        assert messages[-1]["content"].startswith(prompt[-1]["content"] + "\n\nRepository files:")
        assert len(messages) == len(prompt)
        out = env.step("I will fix add.\n" + _call("write", path="calc/__init__.py", content=FIXED_SOURCE) + _call("submit"))
    finally:
        env.close()
    assert (out["reward"], out["done"], out["observations"]) == (1.0, True, [])
    assert out["metadata"]["passed"] is True and out["metadata"]["infra_error"] is None
    assert env.get_metrics() == {"turns": 1, "reward": 1.0, "score": 1.0, "infra_error": 0}


def test_a_rollout_that_only_reads_is_graded_0_at_max_turns(skyrl_gym: Any, tiny_task: Task) -> None:
    """SkyRL never asks a running env for a reward: the last turn grades what is there."""
    prompt, extras = _row(tiny_task, extra_info={"max_turns": 2})
    env = skyrl_gym.make("repogym", env_config={"sandbox": "local"}, extras=extras)
    try:
        env.init(prompt)
        first = env.step(_call("read", path="calc/__init__.py"))
        assert not first["done"] and "return a - b" in first["observations"][0]["content"]
        last = env.step(_call("list_files", path="."))
    finally:
        env.close()
    assert (last["reward"], last["done"], last["metadata"]["score"]) == (0.0, True, 0.0)
    assert last["metadata"]["infra_error"] is None


def test_an_infrastructure_failure_is_reported_for_masking(skyrl_gym: Any, make_task: MakeTask) -> None:
    broken = make_task(id="broken-setup", repo={"setup": ["exit 3"]})
    register_suite(broken.root.parent)
    prompt, extras = _row(broken)
    env = skyrl_gym.make("repogym", env_config={"sandbox": "local"}, extras=extras)
    try:
        env.init(prompt)
        out = env.step(_call("submit"))
    finally:
        env.close()
    assert out["done"] and out["reward"] == 0.0 and "exit 3" in out["metadata"]["infra_error"]
    assert env.get_metrics()["infra_error"] == 1


def test_a_row_without_an_env_is_named(skyrl_gym: Any) -> None:
    with pytest.raises(ValueError, match="needs env_id or task_id"):
        skyrl_gym.make("repogym", env_config={}, extras={"seed": 0})


def test_bad_env_config_and_max_turns_are_named(skyrl_gym: Any, tiny_task: Task) -> None:
    _, extras = _row(tiny_task)
    with pytest.raises(ValueError, match=r"env_config keys \['max_turn'\] are not RepoGym's"):
        skyrl_gym.make("repogym", env_config={"max_turn": 20}, extras=extras)
    for bad in (0, "x"):
        with pytest.raises(ValueError, match="max_turns must be an integer of 1 or more"):
            skyrl_gym.make("repogym", env_config={"max_turns": bad}, extras=extras)
