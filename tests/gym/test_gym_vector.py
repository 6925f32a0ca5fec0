"""Vector envs: sync, async (both shared-memory settings), thread pool, and the GRPO group."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from repogym_gym.gym import (
    GroupVectorEnv,
    ThreadVectorEnv,
    batch_actions,
    group_advantages,
    make_group,
    make_thread_vec,
)
from tests.helpers import FIXED_SOURCE

FIX = {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}
BREAK_SUB = {"kind": "write", "path": "calc/__init__.py", "content": "def add(a, b):\n    return a + b\n"}
FAILING = {"kind": "run", "command": "python -c 'import sys; print(\"boom\"); sys.exit(7)'"}
READ = {"kind": "read", "path": "calc/__init__.py"}
SUBMIT = {"kind": "submit"}


def make(env_id: str, mode: str, n: int = 4) -> gym.vector.VectorEnv:
    if mode == "thread":
        return make_thread_vec(env_id, n)
    if mode == "async-shm-off":
        return gym.make_vec(env_id, n, vectorization_mode="async", vector_kwargs={"shared_memory": False})
    return gym.make_vec(env_id, n, vectorization_mode=mode)


@pytest.mark.parametrize("mode", ["sync", "async", "async-shm-off", "thread"])
def test_four_members_fix_fail_read_and_submit_independently(tiny_gym_id: str, mode: str) -> None:
    envs = make(tiny_gym_id, mode)
    try:
        obs, _ = envs.reset(seed=3)
        assert all("add(2, 3) returns -1" in t for t in obs["text"])
        obs, rewards, term, trunc, _ = envs.step(batch_actions([FIX, FAILING, READ, BREAK_SUB]))
        texts = list(obs["text"])
        assert texts[0].startswith("Wrote") and "boom" in texts[1] and "[exit code 7]" in texts[1]
        assert "return a - b" in texts[2] and texts[3].startswith("Wrote")
        assert obs["exit_code"][1] == 7 and obs["step"].tolist() == [1, 1, 1, 1]
        assert rewards.tolist() == [0.0] * 4 and not term.any() and not trunc.any()
        obs, rewards, term, trunc, infos = envs.step(batch_actions([SUBMIT, SUBMIT, READ, SUBMIT]))
        # member 2 read again: its text is the file, not a stale copy of the previous step
        assert "return a - b" in obs["text"][2] and obs["step"][2] == 2
        assert rewards.tolist() == [1.0, 0.0, 0.0, 0.0]
        assert term.tolist() == [True, True, False, True]
        assert infos["score"][[0, 1, 3]].tolist() == [1.0, 0.0, 0.0]
    finally:
        envs.close()


def test_async_text_observations_are_never_stale_across_many_steps(tiny_gym_id: str) -> None:
    envs = gym.make_vec(tiny_gym_id, 2, vectorization_mode="async")
    try:
        envs.reset(seed=0)
        for i in range(4):
            content = f"x = {i}  # é ünïcode\n"
            obs, *_ = envs.step(batch_actions([{"kind": "write", "path": f"f{i}.py", "content": content},
                                       {"kind": "read", "path": "calc/__init__.py"}]))
            assert obs["text"][0] == f"Wrote {len(content.encode())} bytes to f{i}.py."
            obs, *_ = envs.step(batch_actions([{"kind": "read", "path": f"f{i}.py"}, {"kind": "list_files"}]))
            assert obs["text"][0] == content and f"f{i}.py" not in obs["text"][1]
    finally:
        envs.close()


def test_grpo_group_shares_task_and_seed_freezes_finished_members_and_reports_advantages() -> None:
    group = make_group("RepoGym/Suite-v0", 4)
    try:
        assert isinstance(group, GroupVectorEnv)
        obs, infos = group.reset(seed=5)
        assert len(set(infos["task_id"])) == 1 and len(set(obs["text"])) == 1
        task_id = infos["task_id"][0]
        from repogym_gym.agents import golden_actions
        from repogym_gym.task import resolve_task

        plan = golden_actions(resolve_task(task_id))
        # member 0 submits the untouched repo at once; members 1-3 follow the golden plan,
        # member 2 runs a failing command first, member 3 sends garbage first
        first = [SUBMIT, plan[0], FAILING, {"kind": "read", "path": "../../etc/passwd"}]
        obs, rewards, term, trunc, infos = group.step(batch_actions(first))
        assert term.tolist() == [True, False, False, False] and rewards[0] == 0.0
        assert "[exit code 7]" in obs["text"][2] and obs["text"][3].startswith("Refused")
        frozen_text = obs["text"][0]
        steps = [plan[1:], plan, plan]
        longest = max(len(s) for s in steps)
        total = rewards.copy()
        for k in range(longest):
            actions = [SUBMIT] + [s[k] if k < len(s) else SUBMIT for s in steps]
            obs, rewards, term, trunc, infos = group.step(batch_actions(actions))
            total += rewards
            # frozen: its flags were up on its finishing step only, and it is no longer active
            assert obs["text"][0] == frozen_text and rewards[0] == 0.0 and not term[0] and not infos["active"][0]
            if group.all_done:
                break
        assert group.all_done
        assert total.tolist() == [0.0, 1.0, 1.0, 1.0]
        expected = group_advantages([0.0, 1.0, 1.0, 1.0])
        np.testing.assert_allclose(infos["group_advantages"], expected)
        np.testing.assert_allclose(infos["episode_return"], [0.0, 1.0, 1.0, 1.0])
        assert expected[0] < 0 < expected[1]
    finally:
        group.close()


def test_make_vec_with_no_mode_is_the_sync_vector_env_not_a_group(tiny_gym_id: str) -> None:
    """Issue 14: ``make_vec`` with no mode gave the GRPO group (one seed, no autoreset); it is now what it is
    for any Gymnasium id, and a group is asked for by name."""
    envs = gym.make_vec(tiny_gym_id, 2)
    try:
        assert isinstance(envs, gym.vector.SyncVectorEnv)
        assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    finally:
        envs.close()
    with pytest.raises(gym.error.Error, match="vector_entry_point"):
        gym.make_vec(tiny_gym_id, 2, vectorization_mode="vector_entry_point")


def test_group_is_made_by_name_and_refuses_different_seeds(tiny_gym_id: str) -> None:
    group = make_group(tiny_gym_id, 3)
    try:
        assert isinstance(group, GroupVectorEnv)
        assert [env.task.id for env in group.envs] == ["tiny-calc"] * 3
        assert group.metadata["autoreset_mode"] == gym.vector.AutoresetMode.DISABLED
        with pytest.raises(ValueError, match="shares one seed"):
            group.reset(seed=[1, 2, 3])
        obs, _ = group.reset(seed=[9, 9, 9])
        assert obs["steps_left"].tolist() == [10, 10, 10]
    finally:
        group.close()


def test_group_advantages_formula_and_infra_mask() -> None:
    np.testing.assert_allclose(group_advantages([1.0, 0.0, 0.5, 0.5]), [1.41421, -1.41421, 0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(group_advantages([0.3, 0.3]), [0.0, 0.0])
    adv = group_advantages([1.0, 0.0, 0.0], mask=[True, True, False])
    np.testing.assert_allclose(adv, [1.0, -1.0, 0.0], atol=1e-5)


def test_a_group_counts_each_episode_once_and_refuses_a_reset_mask(tiny_gym_id: str) -> None:
    """Issue 14: finished members reported ``terminated=True`` forever (RecordEpisodeStatistics counted 3
    episodes for 2), and ``reset_mask`` was ignored."""
    group = gym.wrappers.vector.RecordEpisodeStatistics(make_group(tiny_gym_id, 2))
    try:
        group.reset(seed=1)
        _, _, term, trunc, infos = group.step(['{"kind": "submit"}', '{"kind": "list_files"}'])
        assert term.tolist() == [True, False] and infos["active"].tolist() == [False, True]
        _, _, term, trunc, infos = group.step(['{"kind": "list_files"}', '{"kind": "submit"}'])
        assert term.tolist() == [False, True] and infos["active"].tolist() == [False, False]
        assert group.episode_count == 2 and group.unwrapped.all_done
        with pytest.raises(ValueError, match="reset_mask is not supported"):
            group.reset(seed=1, options={"reset_mask": np.array([True, False])})
    finally:
        group.close()


def test_group_member_with_an_infra_error_is_masked(make_task) -> None:
    from repogym_gym.gym import register_suite

    broken = make_task(id="broken-setup", repo={"setup": ["exit 3"]})
    [env_id] = register_suite(broken.root.parent)
    group = make_group(env_id, 2)
    try:
        _, infos = group.reset(seed=0)
        assert all("exit 3" in e for e in infos["infra_error"])
        _, rewards, term, _, infos = group.step(batch_actions([SUBMIT, SUBMIT]))
    finally:
        group.close()
    assert rewards.tolist() == [0.0, 0.0] and term.all()
    assert infos["infra_mask"].tolist() == [True, True]
    assert infos["group_advantages"].tolist() == [0.0, 0.0]


def test_thread_vector_env_autoresets_on_the_next_step(tiny_gym_id: str) -> None:
    envs = make_thread_vec(tiny_gym_id, 2)
    try:
        assert isinstance(envs, ThreadVectorEnv)
        envs.reset(seed=1)
        _, _, term, _, _ = envs.step(batch_actions([SUBMIT, READ]))
        assert term.tolist() == [True, False]
        obs, rewards, term, _, _ = envs.step(batch_actions([READ, READ]))
        assert obs["step"].tolist() == [0, 2] and rewards.tolist() == [0.0, 0.0] and not term.any()
    finally:
        envs.close()


def test_batch_actions_takes_dicts_or_json_and_names_the_member_and_field_it_refuses() -> None:
    batched = batch_actions([{"kind": "write", "path": "a.py", "content": "x = 1\n"}, '{"kind": "submit"}',
                             {"kind": 3, "command": "ls"}])
    assert batched["kind"].tolist() == [1, 6, 3] and batched["kind"].dtype == np.int64
    assert batched["path"] == ("a.py", "", "") and batched["command"] == ("", "", "ls")
    for bad, message in [({"kind": "fly"}, "action 0: kind 'fly' is none of"),
                         ({"kind": "read", "paht": "a.py"}, "action 0: unknown field 'paht'"),
                         ({"kind": "read", "path": 3}, "action 0: path must be text, not int"),
                         ("[1]", "action 0: a dict or a JSON object, not list"),
                         ("{", "action 0: not JSON"),
                         ({"kind": True}, "action 0: kind True is none of"),
                         ("[" * 100_000, "action 0: JSON nested too deep")]:
        with pytest.raises(ValueError, match=message):
            batch_actions([bad])


@pytest.mark.parametrize("mode", ["group", "thread"])
def test_a_batch_of_the_wrong_size_is_refused_and_a_list_of_actions_is_batched(tiny_gym_id: str, mode: str) -> None:
    """A new user's finding: one action for two members stepped member 0 and silently left member 1 behind."""
    envs = make_group(tiny_gym_id, 2) if mode == "group" else make_thread_vec(tiny_gym_id, 2)
    try:
        envs.reset(seed=0)
        for actions in ([READ], [READ, READ, READ]):
            with pytest.raises(ValueError, match=f"holds {len(actions)} member actions, not 2"):
                envs.step(batch_actions(actions))
        obs, *_ = envs.step([READ, '{"kind": "list_files"}'])  # per-member actions, batched for the user
        assert obs["step"].tolist() == [1, 1] and "return a - b" in obs["text"][0] and "calc/" in obs["text"][1]
    finally:
        envs.close()


@pytest.mark.parametrize("mode", ["group", "thread"])
@pytest.mark.parametrize("bad", ["[" * 100_000, "not json at all", '{"kind": "fly"}', '{"kind": "read", "path": 3}'])
def test_a_malformed_member_action_is_that_member_s_observation_never_an_exception(tiny_gym_id: str, mode: str, bad: str) -> None:
    """Red-team round 40: one member's text of 100,000 brackets made ``step`` of the group and the thread
    vector env raise ``RecursionError`` (any non-JSON text a ``ValueError``) for the whole batch."""
    envs = make_group(tiny_gym_id, 2) if mode == "group" else make_thread_vec(tiny_gym_id, 2)
    try:
        envs.reset(seed=0)
        obs, rewards, term, trunc, infos = envs.step([bad, READ])
        assert obs["step"].tolist() == [1, 1] and not term.any() and rewards.tolist() == [0.0, 0.0]
        assert infos["action_error"][0] and not infos["action_error"][1], infos
        assert "return a - b" in obs["text"][1]
    finally:
        envs.close()
