"""A task names the sandbox (and Docker image) its episodes need: ``environment:`` in task.yaml."""

from __future__ import annotations

import pytest

from repogym_gym.errors import TaskSpecError
from repogym_gym.gym import RepoGymEnv
from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE, MakeTask
from tests.sandbox.helpers import require_bwrap, require_docker

FIX = {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}


def play_fix(env: RepoGymEnv) -> tuple[float, dict]:
    env.reset(seed=0)
    env.step(FIX)
    _, reward, terminated, _, info = env.step({"kind": "submit"})
    assert terminated
    return reward, info


def test_a_task_naming_bwrap_runs_in_it_unless_the_env_names_another(make_task: MakeTask) -> None:
    require_bwrap()
    task = make_task(environment={"sandbox": "bwrap"})
    env = RepoGymEnv(task=task)
    try:
        assert env.sandbox_name == "bwrap"
        reward, info = play_fix(env)
        assert reward == 1.0 and "infra_error" not in info
    finally:
        env.close()
    for given, used in (("local", "local"), ("auto", "bwrap")):
        other = RepoGymEnv(task=task, sandbox=given)
        assert other.sandbox_name == used
        other.close()


def test_a_task_naming_no_sandbox_is_confined_by_default(tiny_task: Task) -> None:
    """No sandbox named by the env nor the task: ``auto``, bubblewrap where it runs (the policy is untrusted)."""
    require_bwrap()
    env = RepoGymEnv(task=tiny_task)
    assert tiny_task.spec.environment.sandbox is None and env.sandbox_name == "bwrap"
    env.close()
    local = RepoGymEnv(task=tiny_task, sandbox="local")  # only when asked for by name
    assert local.sandbox_name == "local"
    local.close()


def test_an_unknown_sandbox_in_task_yaml_is_an_error_naming_the_field(make_task: MakeTask) -> None:
    with pytest.raises(TaskSpecError, match=r"environment\.sandbox.*'vm'"):
        make_task(environment={"sandbox": "vm"})


def test_the_task_image_is_what_its_docker_episodes_run_in(make_task: MakeTask) -> None:
    require_docker().close()
    missing = make_task(environment={"sandbox": "docker", "image": "repogym/absent:none"})
    env = RepoGymEnv(task=missing)
    try:
        _, info = env.reset(seed=0)
        assert env.sandbox_name == "docker"
        assert "repogym/absent:none" in info["infra_error"] and "repogym envs build" in info["infra_error"]
    finally:
        env.close()
    base = make_task(environment={"sandbox": "docker", "image": "repogym/base:bookworm"})
    env = RepoGymEnv(task=base)
    try:
        reward, info = play_fix(env)
        assert reward == 1.0 and "infra_error" not in info
    finally:
        env.close()


def test_a_sandbox_configuration_with_options_is_what_the_episode_runs_in(tiny_task: Task) -> None:
    from repogym_gym.errors import SandboxConfigError

    require_bwrap()
    env = RepoGymEnv(task=tiny_task, sandbox={"type": "bwrap", "limits": {"max_processes": 40}})
    try:
        assert env.sandbox_name == "bwrap" and env._sandbox.limits.max_processes == 40
        reward, info = play_fix(env)
        assert reward == 1.0 and "infra_error" not in info
    finally:
        env.close()
    with pytest.raises(SandboxConfigError, match=r"invalid 'docker' sandbox: cpu: unknown field \(did you mean 'cpus'\?\)"):
        RepoGymEnv(task=tiny_task, sandbox={"type": "docker", "cpu": 1})
