"""Issue 14: ``fork()`` copies a running episode into a workspace of its own; ``areset``/``astep``
run many episodes from one event loop."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import gymnasium as gym
import pytest

from repogym_gym.episode import Episode, EpisodeError
from repogym_gym.gym import RepoGymEnv
from repogym_gym.sandbox import make_sandbox
from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE, FIXED_SOURCE
from tests.sandbox.helpers import require_bwrap, require_docker

FIX = {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}
SUBMIT = {"kind": "submit"}


def _sandbox(name: str) -> object:
    if name == "bwrap":
        require_bwrap()
    elif name == "docker":
        require_docker().close()
    return name


@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
def test_a_fork_goes_on_alone_and_each_copy_is_graded_on_its_own_tree(tiny_task: Task, sandbox: str, tmp_path: Path) -> None:
    env = RepoGymEnv(task=tiny_task, sandbox=_sandbox(sandbox), trajectory_dir=str(tmp_path))
    twin = None
    try:
        env.reset(seed=0)
        env.step(FIX)
        twin = env.fork()
        assert twin.sandbox_name == sandbox
        # the original undoes the fix after the fork: the twin keeps it, and the reverse
        env.step({"kind": "write", "path": "calc/__init__.py", "content": CALC_SOURCE})
        twin.step({"kind": "write", "path": "extra.txt", "content": "only in the twin\n"})
        listing = env.step({"kind": "list_files", "path": "."})[0]["text"]
        assert "extra.txt" not in listing
        obs, reward, terminated, _, info = twin.step(SUBMIT)
        assert (reward, terminated, obs["step"]) == (1.0, True, 3)  # the write before the fork, its own write, submit
        steps = json.loads(Path(info["trajectory_path"]).read_text())
        _, original_reward, _, _, original_info = env.step(SUBMIT)
        assert original_reward == 0.0 and original_info.get("infra_error") is None
        assert steps["forked_from"] == [json.loads(Path(original_info["trajectory_path"]).read_text())["episode_id"], 1]
        assert [s["action"]["kind"] for s in steps["steps"]] == ["write", "write", "submit"]
        forked_root = twin.episode.workspace.root
        assert forked_root.is_dir()
    finally:
        env.close()
        if twin is not None:
            twin.close()
    assert not forked_root.exists()  # removed with its env


def test_fork_copies_special_files_and_refuses_an_ended_episode(tiny_task: Task) -> None:
    episode = Episode(tiny_task, sandbox=make_sandbox("local"))
    try:
        with pytest.raises(EpisodeError, match="fork\\(\\) needs a running episode"):
            episode.fork()
        episode.reset()
        os.mkfifo(episode.workspace.path / "pipe")  # cp -a makes a FIFO, never reads it (shutil.copytree would block)
        twin = episode.fork()
        try:
            assert (twin.workspace.path / "pipe").is_fifo() and twin.workspace.path != episode.workspace.path
            assert twin.step(SUBMIT).terminated
            with pytest.raises(EpisodeError, match="this one is done"):
                twin.fork()
        finally:
            twin.close()
    finally:
        episode.close()


def test_a_gym_make_fork_keeps_max_episode_steps_grading(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id, sandbox="local", max_episode_steps=2)
    try:
        env.reset(seed=0)
        env.step(FIX)
        twin = env.unwrapped.fork()
        try:
            _, reward, terminated, truncated, info = twin.step({"kind": "list_files", "path": "."})
            assert (terminated, truncated, reward, info["score"]) == (False, True, 1.0, 1.0)
        finally:
            twin.close()
    finally:
        env.close()


def test_async_episodes_run_concurrently_from_one_loop(tiny_task: Task) -> None:
    envs = [RepoGymEnv(task=tiny_task, sandbox="local") for _ in range(4)]

    async def episode(env: RepoGymEnv, fixed: bool) -> float:
        await env.areset(seed=0)
        if fixed:
            await env.astep(FIX)
        _, reward, terminated, _, _ = await env.astep(SUBMIT)
        assert terminated
        return reward

    async def main() -> list[float]:
        try:
            return await asyncio.gather(*(episode(env, k % 2 == 0) for k, env in enumerate(envs)))
        finally:
            await asyncio.gather(*(env.aclose() for env in envs))

    assert asyncio.run(main()) == [1.0, 0.0, 1.0, 0.0]


def test_two_concurrent_calls_of_one_env_are_refused(tiny_task: Task) -> None:
    env = RepoGymEnv(task=tiny_task, sandbox="local")

    async def main() -> list[object]:
        await env.areset(seed=0)
        return await asyncio.gather(env.astep({"kind": "test"}), env.astep({"kind": "test"}), return_exceptions=True)

    try:
        results = asyncio.run(main())
    finally:
        env.close()
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], EpisodeError) and "still running" in str(errors[0])
