"""Issue 14: ``repogym_gym.dataset(suite)``, the rows TRL, verifiers and SkyRL take as input."""

from __future__ import annotations

import datasets
import gymnasium as gym
import pytest

import repogym_gym
from repogym_gym.conversation import SYSTEM_PROMPT
from repogym_gym.task import Task, resolve_suite


def test_rows_name_a_registered_env_whose_first_observation_begins_with_the_prompt(tiny_task: Task) -> None:
    rows = repogym_gym.dataset(tiny_task.root.parent, repeats=3, seed=7, as_hf=False)
    assert [(r["task_id"], r["seed"]) for r in rows] == [("tiny-calc", 7), ("tiny-calc", 8), ("tiny-calc", 9)]
    row = rows[1]
    assert row["env_id"] == "RepoGym/tiny-calc-v0" and row["env_id"] in gym.registry
    assert row["prompt"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    user = row["prompt"][1]
    assert user["role"] == "user" and user["content"].startswith("Task tiny-calc (bugfix).\n\nadd(2, 3) returns -1")
    env = gym.make(row["env_id"], sandbox="local")
    try:
        obs, _ = env.reset(seed=row["seed"])
    finally:
        env.close()
    assert obs["text"].startswith(user["content"] + "\n\nRepository files:")


def test_a_hugging_face_dataset_where_the_library_is_installed() -> None:
    hf = repogym_gym.dataset("starter")
    assert isinstance(hf, datasets.Dataset) and hf.column_names == ["prompt", "env_id", "task_id", "seed"]
    assert hf["task_id"] == sorted(hf["task_id"]) and len(hf) == len(repogym_gym.load_tasks(resolve_suite("starter")))
    assert hf[0]["prompt"] == repogym_gym.dataset("starter", as_hf=False)[0]["prompt"]


def test_bad_repeats_and_a_missing_suite_are_named() -> None:
    with pytest.raises(ValueError, match="repeats must be an integer of 1 or more, got 0"):
        repogym_gym.dataset("starter", repeats=0)
    with pytest.raises(ValueError, match="seed must be an integer of 0 or more, got 'x'"):
        repogym_gym.dataset("starter", seed="x")
    with pytest.raises(repogym_gym.TaskNotFoundError):
        repogym_gym.dataset("no-such-suite")
