"""GEM 0.1: full episodes through ``gem.make`` / ``gem.make_vec`` and ``spawn(same_state=True)``."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from repogym_gym.gym import register_suite
from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE, MakeTask
from tests.integrations.helpers import require_library


@pytest.fixture
def gem() -> Any:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        library = require_library("gem", "gem")
        import repogym_gym.integrations.gem  # noqa: F401 - registers "repogym"
    finally:  # gem's import calls logging.basicConfig(INFO): other tests of this worker would log to stderr
        root.handlers[:], root.level = handlers, level
    return library


def _call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


FIX = _call("write", path="calc/__init__.py", content=FIXED_SOURCE)


def test_golden_scores_1_and_a_reading_rollout_is_graded_0_at_max_turns(gem: Any, tiny_task: Task) -> None:
    [repogym_id] = register_suite(tiny_task.root.parent)
    env = gem.make("repogym", repogym_id=repogym_id, sandbox="local", max_turns=2)
    try:
        text, _ = env.reset(seed=0)
        assert text.startswith("Task tiny-calc (bugfix).")
        text, reward, terminated, truncated, info = env.step("Fixing it.\n" + FIX + _call("submit"))
        assert (reward, terminated, truncated, info["passed"]) == (1.0, True, False, True)
        env.reset()
        _, reward, terminated, truncated, _ = env.step(_call("read", path="calc/__init__.py"))
        assert (reward, terminated, truncated) == (0.0, False, False)
        _, reward, terminated, truncated, info = env.step(_call("list_files", path="."))
        assert (reward, terminated, truncated, info["score"]) == (0.0, False, True, 0.0)
    finally:
        env.close()


def test_spawn_same_state_forks_the_episode(gem: Any, tiny_task: Task) -> None:
    [repogym_id] = register_suite(tiny_task.root.parent)
    env = gem.make("repogym", repogym_id=repogym_id, sandbox="local")
    try:
        env.reset(seed=0)
        env.step(FIX)
        twin = env.spawn(same_state=True)
        try:
            env.step(_call("write", path="calc/__init__.py", content="def add(a, b):\n    return 0\n"))
            assert twin.step(_call("submit"))[1] == 1.0
            assert env.step(_call("submit"))[1] == 0.0
        finally:
            twin.close()
    finally:
        env.close()


def test_make_vec_members_and_an_infrastructure_failure(gem: Any, make_task: MakeTask) -> None:
    broken = make_task(id="broken-setup", repo={"setup": ["exit 3"]})
    [repogym_id] = register_suite(broken.root.parent)
    envs = gem.make_vec(["repogym"] * 2, repogym_id=repogym_id, sandbox="local")
    try:
        _, infos = envs.reset()
        assert [env.seed for env in envs.envs] == [0, 1]  # GEM's seed per member is the reset seed
        _, rewards, terminated, _, infos = envs.step([_call("submit")] * 2)
    finally:
        for env in envs.envs:  # GEM 0.1's vector env has no close()
            env.close()
    assert list(rewards) == [0.0, 0.0] and all(terminated)
    assert all("exit 3" in info["infra_error"] for info in infos), infos


def test_a_bad_max_turns_is_named(gem: Any, tiny_task: Task) -> None:
    [repogym_id] = register_suite(tiny_task.root.parent)
    with pytest.raises(ValueError, match="max_turns must be an integer of 1 or more, got -1"):
        gem.make("repogym", repogym_id=repogym_id, sandbox="local", max_turns=-1)
