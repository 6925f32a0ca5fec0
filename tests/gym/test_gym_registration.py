"""Registration: ids at import, generic ids, user suites, spec JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import repogym_gym
from repogym_gym.errors import TaskNotFoundError, TaskSpecError
from repogym_gym.gym import register_suite, registered_ids

STARTER_IDS = ["dedupe-contacts-perf", "pagination-off-by-one", "parse-duration", "shipping-quote-refactor"]


def test_import_registers_every_bundled_task_and_the_generic_ids() -> None:
    ids = registered_ids()
    for task_id in STARTER_IDS:
        assert f"RepoGym/{task_id}-v0" in ids
    assert "RepoGym/Task-v0" in ids and "RepoGym/Suite-v0" in ids


def test_ids_exist_in_a_fresh_interpreter_only_after_importing_the_package() -> None:
    code = (
        "import gymnasium as gym\n"
        "before = 'RepoGym/parse-duration-v0' in gym.registry\n"
        "import repogym_gym\n"
        "print(before, 'RepoGym/parse-duration-v0' in gym.registry)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["False", "True"]


def test_module_prefix_registers_on_make_in_a_fresh_interpreter() -> None:
    code = "import gymnasium as gym\nenv = gym.make('repogym_gym:RepoGym/parse-duration-v0')\nprint(env.spec.id)\nenv.close()\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "RepoGym/parse-duration-v0"


def test_registered_max_episode_steps_matches_the_task_budget(starter_tasks) -> None:
    for task in starter_tasks:
        assert gym.spec(f"RepoGym/{task.id}-v0").max_episode_steps == task.spec.limits.max_steps


def test_spec_to_json_works_and_names_a_string_entry_point() -> None:
    env = gym.make("RepoGym/parse-duration-v0")
    try:
        data = json.loads(env.spec.to_json())
    finally:
        env.close()
    assert data["entry_point"] == "repogym_gym.gym.env:RepoGymEnv"
    assert data["id"] == "RepoGym/parse-duration-v0"


def test_register_suite_registers_a_users_tasks(tiny_task) -> None:
    ids = register_suite(tiny_task.root.parent)
    assert ids == ["RepoGym/tiny-calc-v0"]
    assert register_suite(tiny_task.root.parent) == ids  # idempotent, no override warning
    env = gym.make("RepoGym/tiny-calc-v0")
    obs, _ = env.reset(seed=0)
    env.close()
    assert "add(2, 3) returns -1" in obs["text"]


def test_register_suite_refuses_an_id_already_taken_by_another_directory(make_task, tmp_path) -> None:
    first = make_task(id="clash-task")
    register_suite(first.root.parent)
    other = tmp_path / "elsewhere"
    (other / "clash").mkdir(parents=True)
    (other / "clash" / "task.yaml").write_text(yaml.safe_dump({"id": "clash-task"}))
    with pytest.raises(TaskSpecError, match="already registered"):
        register_suite(other)


def test_register_suite_rejects_an_unsafe_id(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.yaml").write_text(yaml.safe_dump({"id": "sympy-v2"}))
    with pytest.raises(TaskSpecError, match="sympy_v2"):
        register_suite(tmp_path)


def test_task_v0_takes_a_path_or_a_bundled_id(tiny_task) -> None:
    by_path = gym.make("RepoGym/Task-v0", task=str(tiny_task.root))
    by_id = gym.make("RepoGym/Task-v0", task="parse-duration")
    try:
        assert by_path.unwrapped.task.id == "tiny-calc"
        assert by_id.unwrapped.task.id == "parse-duration"
    finally:
        by_path.close()
        by_id.close()
    with pytest.raises(TaskNotFoundError, match="no task 'no-such-task'"):
        gym.make("RepoGym/Task-v0", task="no-such-task")


def test_suite_v0_same_seed_same_task_same_first_observation() -> None:
    env = gym.make("RepoGym/Suite-v0")
    try:
        firsts = [env.reset(seed=s)[0]["text"] for s in (11, 12, 11)]
        drawn = {env.reset(seed=s)[1]["task_id"] for s in range(20)}
    finally:
        env.close()
    assert firsts[0] == firsts[2]
    assert drawn == set(STARTER_IDS)


def test_suite_v0_options_pin_the_task_id_type_or_tags() -> None:
    env = gym.make("RepoGym/Suite-v0")
    try:
        assert env.reset(seed=1, options={"task_id": "parse-duration"})[1]["task_id"] == "parse-duration"
        assert env.reset(seed=2, options={"type": "refactor"})[1]["task_id"] == "shipping-quote-refactor"
        assert env.reset(seed=3, options={"tags": ["perf"]})[1]["task_id"] == "dedupe-contacts-perf"
        with pytest.raises(TaskNotFoundError, match="matches reset options"):
            env.reset(seed=4, options={"task_id": "nope"})
    finally:
        env.close()


def test_exactly_one_of_task_and_suite() -> None:
    from repogym_gym.gym.env import RepoGymEnv

    with pytest.raises(ValueError, match="exactly one of task="):
        RepoGymEnv()
    with pytest.raises(ValueError, match="exactly one of task="):
        RepoGymEnv(task="parse-duration", suite="starter")


def test_register_envs_documents_the_import() -> None:
    gym.register_envs(repogym_gym)  # a no-op that documents where the ids come from
    assert "RepoGym/parse-duration-v0" in gym.registry


def test_a_suite_registered_by_a_relative_path_is_the_same_suite_from_anywhere(tiny_task, monkeypatch) -> None:
    """A new user registered task_suites/starter relatively and then absolutely (or the bundled
    suite was already registered): the second call raised "already registered", and a chdir broke
    gym.make. The registered path is resolved."""
    monkeypatch.chdir(tiny_task.root.parent.parent)
    relative = Path(tiny_task.root.parent.name)
    ids = register_suite(relative)
    assert register_suite(tiny_task.root.parent.resolve()) == ids
    monkeypatch.chdir("/")
    env = gym.make(ids[0])
    try:
        env.reset(seed=0)
    finally:
        env.close()
