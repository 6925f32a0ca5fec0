"""RepoGymEnv through gym.make: controls, check_env, spaces, truncation, random actions."""

from __future__ import annotations

import copy
import json
import pickle
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from repogym_gym.agents import GoldenAgent, NoopAgent, run_episode
from repogym_gym.episode import EpisodeError
from repogym_gym.gym import NO_EXIT_CODE, TextActionWrapper, UnicodeText, tool_schema
from repogym_gym.gym.spaces import ACTION_SPACE, OBSERVATION_SPACE
from tests.gym.helpers import gym_action
from tests.helpers import FIXED_SOURCE

STARTER_IDS = ["dedupe-contacts-perf", "pagination-off-by-one", "parse-duration", "shipping-quote-refactor"]


@pytest.mark.slow
@pytest.mark.parametrize("task_id", STARTER_IDS)
def test_bundled_task_golden_scores_1_noop_scores_0_and_check_env_passes(task_id: str) -> None:
    env = gym.make(f"RepoGym/{task_id}-v0")
    try:
        golden = run_episode(env, GoldenAgent(), seed=0)
        noop = run_episode(env, NoopAgent(), seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
    finally:
        env.close()
    assert (golden.total_reward, golden.terminated, golden.info["passed"]) == (1.0, True, True)
    assert (noop.total_reward, noop.terminated, noop.info["passed"]) == (0.0, True, False)


def test_unicode_text_accepts_any_string_within_its_length() -> None:
    space = UnicodeText(5)
    assert space.contains("é \n{}")
    assert space.contains("")
    assert not space.contains("toolong")
    assert not space.contains(b"bytes")
    assert all(space.contains(space.sample()) for _ in range(50))


def test_observations_are_in_the_observation_space(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id)
    try:
        obs, _ = env.reset(seed=0)
        assert obs in OBSERVATION_SPACE
        obs, *_ = env.step(gym_action("read", path="calc/__init__.py"))
        assert obs in OBSERVATION_SPACE
        assert obs["text"] == env.unwrapped.episode.workspace.read("calc/__init__.py")
        assert int(obs["exit_code"]) == NO_EXIT_CODE
        obs, *_ = env.step(gym_action("run", command="python -c 'raise SystemExit(3)'"))
        assert int(obs["exit_code"]) == 3 and int(obs["step"]) == 2
    finally:
        env.close()


def test_truncation_grades_the_workspace(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id, max_steps=2)
    try:
        env.reset(seed=0)
        _, reward, terminated, truncated, _ = env.step(gym_action("write", path="calc/__init__.py", content=FIXED_SOURCE))
        assert (reward, terminated, truncated) == (0.0, False, False)
        _, reward, terminated, truncated, info = env.step(gym_action("list_files"))
    finally:
        env.close()
    assert (reward, terminated, truncated) == (1.0, False, True)
    assert info["grade"]["score"] == 1.0 and info["passed"] is True


def test_registered_time_limit_and_env_budget_agree_on_the_last_step(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id)  # TimeLimit(max_episode_steps=10) wraps an env with the same budget
    try:
        env.reset(seed=0)
        for _ in range(9):
            assert env.step(gym_action("list_files"))[3] is False
        _, reward, _, truncated, info = env.step(gym_action("list_files"))
    finally:
        env.close()
    assert truncated is True and "grade" in info and reward == 0.0


def test_a_smaller_max_episode_steps_grades_on_the_step_it_truncates(tiny_gym_id: str) -> None:
    """Issue 14: ``gym.make(id, max_episode_steps=N)`` below the task's budget truncated from outside without
    grading, so a fixed bug scored 0 with no grade in ``info``."""
    env = gym.make(tiny_gym_id, max_episode_steps=2)
    try:
        for _ in range(2):  # the limit holds for every episode, not only the first
            env.reset(seed=0)
            fix = {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}
            assert env.step(fix)[2:4] == (False, False)
            _, reward, terminated, truncated, info = env.step(gym_action("list_files"))
            assert (terminated, truncated, reward, info["passed"]) == (False, True, 1.0, True)
    finally:
        env.close()


def test_a_live_env_is_neither_copied_nor_pickled_and_its_budget_fits_the_space(tiny_gym_id: str) -> None:
    """Issue 14: ``deepcopy``/``pickle`` of a live env failed on a lock deep inside (a copy would share the
    workspace), and a ``max_steps`` past the space's bound put ``steps_left`` outside it."""
    env = gym.make(tiny_gym_id)
    try:
        env.reset(seed=0)
        for copy_it in (copy.deepcopy, pickle.dumps):
            with pytest.raises(TypeError, match=r"cannot be copied or pickled: it owns a live workspace.*env.unwrapped.fork\(\)"):
                copy_it(env.unwrapped)
    finally:
        env.close()
    with pytest.raises(ValueError, match="max_steps must be 1 to 1,000,000"):
        gym.make(tiny_gym_id, max_steps=1_000_001)


def test_200_random_actions_never_raise(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id)
    env.action_space.seed(123)
    try:
        env.reset(seed=123)
        episodes = errors = 0
        for _ in range(200):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            assert obs in env.observation_space and 0.0 <= reward <= 1.0
            errors += "parse_error" in info or obs["text"].startswith(("Refused", "Failed", "Invalid", "Edit failed"))
            if terminated or truncated:
                episodes += 1
                env.reset()
    finally:
        env.close()
    assert episodes > 5 and errors > 20


def test_step_after_done_raises_a_clear_error(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id)
    try:
        env.reset(seed=0)
        assert env.step(gym_action("submit"))[2] is True
        with pytest.raises(EpisodeError, match="after the episode ended"):
            env.unwrapped.step(gym_action("list_files"))
    finally:
        env.close()


def test_close_is_idempotent_and_removes_the_workspace(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id)
    env.reset(seed=0)
    root = env.unwrapped.episode.workspace.root
    assert root.is_dir()
    env.close()
    env.close()
    assert not root.exists()


def test_render_ansi_returns_the_last_observation(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id, render_mode="ansi")
    try:
        env.reset(seed=0)
        env.step(gym_action("list_files"))
        text = env.render()
    finally:
        env.close()
    assert text.startswith("[tiny-calc] step 1/10") and "calc/__init__.py" in text


def test_trajectory_json_holds_the_env_spec(tiny_gym_id: str, tmp_path) -> None:
    env = gym.make(tiny_gym_id, trajectory_dir=str(tmp_path))
    try:
        env.reset(seed=0)
        *_, info = env.step(gym_action("submit"))
    finally:
        env.close()
    data = json.loads(Path(info["trajectory_path"]).read_text())
    assert json.loads(data["env_spec"])["id"] == tiny_gym_id
    assert data["grade"]["score"] == 0.0 and data["terminated"] is True


def test_text_action_wrapper_parses_json_and_tool_calls_and_reports_parse_errors(tiny_gym_id: str) -> None:
    env = TextActionWrapper(gym.make(tiny_gym_id))
    try:
        env.reset(seed=0)
        assert env.action_space.contains('{"kind": "read"}')
        obs, _, _, _, info = env.step('{"kind": "read", "path": "calc/__init__.py"}')
        assert "def add" in obs["text"] and "parse_error" not in info
        obs, *_ = env.step('<tool_call>{"name": "write", "arguments": "{\\"path\\": \\"calc/__init__.py\\", '
                           '\\"content\\": \\"def add(a, b):\\\\n    return a + b\\\\n\\\\n\\\\ndef sub(a, b):\\\\n    return a - b\\\\n\\"}"}</tool_call>')
        assert obs["text"].startswith("Wrote")
        obs, reward, _, _, info = env.step("submit please")
        assert info["parse_error"].startswith("action text is not JSON") and reward == 0.0
        *_, info = env.step({"kind": "submit"})
    finally:
        env.close()
    assert info["score"] == 1.0


def test_tool_schema_lists_every_action_with_json_schema_parameters() -> None:
    tools = tool_schema()
    names = [t["function"]["name"] for t in tools]
    assert names == ["read", "write", "edit", "run", "test", "list_files", "submit", "bash"]
    edit = tools[2]["function"]["parameters"]
    assert edit["required"] == ["path", "old", "new"] and edit["additionalProperties"] is False
    assert all(t["type"] == "function" and t["function"]["description"] for t in tools)
    json.dumps(tools)


def test_action_space_is_the_same_for_every_task() -> None:
    a = gym.make("RepoGym/parse-duration-v0")
    b = gym.make("RepoGym/dedupe-contacts-perf-v0")
    try:
        assert a.action_space == b.action_space == ACTION_SPACE
        assert a.observation_space == b.observation_space == OBSERVATION_SPACE
    finally:
        a.close()
        b.close()


def test_observation_numbers_are_numpy_int64_scalars(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id)
    try:
        obs, _ = env.reset(seed=0)
    finally:
        env.close()
    for key in ("step", "steps_left", "exit_code"):
        assert isinstance(obs[key], np.ndarray) and obs[key].dtype == np.int64 and obs[key].shape == ()


def test_a_long_problem_statement_is_cut_into_the_observation_space(make_task) -> None:  # noqa: ANN001
    """The reset observation was the whole statement: 60,000 characters fell outside the space."""
    from repogym_gym.gym import RepoGymEnv

    task = make_task(problem_statement="The fault is in add(). " * 3000)
    env = RepoGymEnv(task=task, sandbox="local")
    try:
        obs, _ = env.reset(seed=0)
        assert len(task.spec.problem_statement) > 60_000
        assert env.observation_space.contains(obs) and "characters cut" in obs["text"]
    finally:
        env.close()


def test_reset_options_that_select_nothing_are_an_error(tiny_gym_id: str, tiny_task) -> None:  # noqa: ANN001
    """An unknown option, or a suite filter on a one-task env, was silently ignored."""
    env = gym.make(tiny_gym_id, sandbox="local")
    try:
        with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['task_ide'\]; the options are \['task_id'"):
            env.reset(seed=0, options={"task_ide": "tiny-calc"})
        with pytest.raises(ValueError, match="this env always plays 'tiny-calc'; use RepoGym/Suite-v0"):
            env.reset(seed=0, options={"task_id": "tiny-calc"})
        obs, _ = env.reset(seed=0, options={})
        assert obs["step"] == 0
    finally:
        env.close()
    suite = gym.make("RepoGym/Suite-v0", suite=str(tiny_task.root.parent), sandbox="local")
    try:
        _, info = suite.reset(seed=0, options={"task_id": "tiny-calc", "tags": ["tiny"]})
        assert info["task_id"] == "tiny-calc"
    finally:
        suite.close()


def test_every_step_says_whether_its_action_worked(tiny_gym_id: str) -> None:
    """A refused or failed action was known only by the observation text's prefix."""
    env = gym.make(tiny_gym_id, sandbox="local")
    try:
        env.reset(seed=0)
        worked = env.step({"kind": "read", "path": "calc/__init__.py"})[4]
        missing = env.step({"kind": "read", "path": "calc/nope.py"})[4]
        refused = env.step({"kind": "run", "command": "curl http://example.com"})[4]
        unparsed = env.step("not an action")[4]
        assert worked["action_error"] is None
        assert "nope.py" in missing["action_error"] and "curl" in refused["action_error"]
        assert unparsed["action_error"] == unparsed["parse_error"]
        done = env.step({"kind": "submit"})[4]
        assert "action_error" in done and done["action_error"] is None
    finally:
        env.close()


def test_a_write_to_a_directory_is_a_failed_action_not_a_deletion(tiny_gym_id: str) -> None:
    env = gym.make(tiny_gym_id, sandbox="local")
    try:
        env.reset(seed=0)
        obs, _, _, _, info = env.step({"kind": "write", "path": "calc", "content": "x"})
        assert obs["text"].startswith("Failed: is a directory") and info["action_error"] and "infra_error" not in info
        assert "calc/__init__.py" in env.step({"kind": "list_files"})[0]["text"]
    finally:
        env.close()


def test_truncate_is_reachable_through_any_wrapper_chain_and_grades(tiny_gym_id: str) -> None:
    """Issue 14: a trainer's stop grades through whatever wrappers it added over gym.make's."""
    env = gym.wrappers.RecordEpisodeStatistics(TextActionWrapper(gym.make(tiny_gym_id, sandbox="local")))
    try:
        env.reset(seed=0)
        env.step(json.dumps({"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}))
        _, reward, terminated, truncated, info = env.get_wrapper_attr("truncate")("the trainer stopped")
    finally:
        env.close()
    assert (reward, terminated, truncated, info["score"]) == (1.0, False, True, 1.0)


def test_a_failed_first_reset_does_not_break_the_env(tiny_gym_id: str) -> None:
    """New-user trial: gym.make's PassiveEnvChecker kept the failed first reset's None, and every later
    step raised TypeError even after a good reset (a bad seed in one TRL row broke a pooled instance)."""
    env = gym.make(tiny_gym_id, sandbox="local")
    try:
        with pytest.raises(EpisodeError, match=r"step\(\) called before reset\(\)"):  # the env's own error, no wrapper's
            env.step({"kind": "submit"})
        with pytest.raises(gym.error.Error, match="Seed must be"):
            env.reset(seed=-1)
        env.reset(seed=0)
        obs, _, _, truncated, info = env.get_wrapper_attr("truncate")("the driver")
        assert truncated and "Graded as it stands" in obs["text"] and "Out of steps" not in obs["text"]
    finally:
        env.close()
