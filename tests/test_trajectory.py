"""Tests for repogym_gym.trajectory: the JSON record Episode writes for every finished episode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from repogym_gym.actions import Observation
from repogym_gym.episode import Episode, StepResult
from repogym_gym.task import Task
from repogym_gym.trajectory import Trajectory, TrajectoryStep
from tests.helpers import FIXED_SOURCE, MakeTask

FIX: dict[str, Any] = {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}
ENV_SPEC = '{"id": "RepoGym/tiny-calc-v0", "max_episode_steps": 10}'


def play(env: Episode, actions: list[Any]) -> list[StepResult]:
    env.reset()
    results = []
    for action in actions:
        results.append(env.step(action))
        if results[-1].terminated or results[-1].truncated:
            break
    return results


def load(result: StepResult) -> Trajectory:
    return Trajectory.model_validate_json(Path(result.info["trajectory_path"]).read_text())


@pytest.fixture
def traj_dir(tmp_path: Path) -> Path:
    return tmp_path / "trajectories"


def test_a_submitted_episode_records_every_step(tiny_task: Task, traj_dir: Path) -> None:
    env = Episode(tiny_task, trajectory_dir=traj_dir, env_spec_json=ENV_SPEC)
    actions: list[Any] = [{"kind": "read", "path": "calc/__init__.py"}, "not an action", None, FIX, {"kind": "submit"}]
    try:
        results = play(env, actions)
    finally:
        env.close()
    path = Path(results[-1].info["trajectory_path"])
    assert path.parent == traj_dir and list(traj_dir.iterdir()) == [path]
    traj = load(results[-1])
    assert (traj.task_id, traj.episode_id) == ("tiny-calc", results[-1].info["episode_id"])
    assert path.name == f"tiny-calc-{traj.episode_id}.json"
    assert traj.env_spec == ENV_SPEC
    assert [s.step for s in traj.steps] == [1, 2, 3, 4, 5]
    assert [s.observation for s in traj.steps] == [r.observation for r in results]
    assert [s.reward for s in traj.steps] == [r.reward for r in results] == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert traj.steps[0].action == {"kind": "read", "path": "calc/__init__.py"}
    assert traj.steps[3].action == FIX
    assert traj.steps[4].action == {"kind": "submit"}
    assert (traj.terminated, traj.truncated, traj.infra_error) == (True, False, None)
    assert traj.grade is not None and traj.grade.score == 1.0 and traj.grade.passed
    assert traj.grade.model_dump(mode="json") == results[-1].info["grade"]
    assert traj.duration_s > 0 and traj.started_at


def test_unparseable_actions_are_recorded_raw(tiny_task: Task, traj_dir: Path) -> None:
    env = Episode(tiny_task, trajectory_dir=traj_dir)
    try:
        results = play(env, ["not an action", None, {"kind": "fly"}, {"kind": "submit"}])
    finally:
        env.close()
    steps = load(results[-1]).steps
    assert [(s.action, s.raw_action) for s in steps[:3]] == [
        (None, "not an action"),
        (None, "None"),
        (None, "{'kind': 'fly'}"),
    ]
    assert all(s.observation.error for s in steps[:3])
    assert steps[3].raw_action is None


def test_a_huge_raw_action_is_capped(tiny_task: Task, traj_dir: Path) -> None:
    env = Episode(tiny_task, trajectory_dir=traj_dir)
    try:
        results = play(env, ["x" * 1_000_000, {"kind": "submit"}])
    finally:
        env.close()
    raw = load(results[-1]).steps[0].raw_action
    assert raw is not None and len(raw) == 10_000 and raw.startswith("xxx")


def test_a_truncated_episode_is_recorded_as_truncated(tiny_task: Task, traj_dir: Path) -> None:
    env = Episode(tiny_task, trajectory_dir=traj_dir, max_steps=2)
    try:
        results = play(env, [FIX, {"kind": "list_files"}])
    finally:
        env.close()
    traj = load(results[-1])
    assert (traj.terminated, traj.truncated) == (False, True)
    assert len(traj.steps) == 2 and traj.steps[-1].reward == 1.0
    assert traj.grade is not None and traj.grade.score == 1.0


def test_an_infra_error_episode_is_recorded_without_a_grade(make_task: MakeTask, traj_dir: Path) -> None:
    env = Episode(make_task(repo={"setup": ["exit 3"]}), trajectory_dir=traj_dir)
    try:
        results = play(env, [{"kind": "submit"}])
    finally:
        env.close()
    traj = load(results[-1])
    assert traj.grade is None
    assert traj.infra_error is not None and "exit 3" in traj.infra_error
    assert traj.terminated and [s.reward for s in traj.steps] == [0.0]


def test_the_file_round_trips(tiny_task: Task, traj_dir: Path) -> None:
    env = Episode(tiny_task, trajectory_dir=traj_dir, env_spec_json=ENV_SPEC)
    try:
        results = play(env, [{"kind": "test"}, {"kind": "run", "command": "echo hi"}, "junk", {"kind": "submit"}])
    finally:
        env.close()
    text = Path(results[-1].info["trajectory_path"]).read_text()
    traj = Trajectory.model_validate_json(text)
    assert Trajectory.model_validate_json(traj.model_dump_json()) == traj
    assert traj.steps[1].observation.exit_code == 0


def test_each_episode_writes_its_own_file(tiny_task: Task, traj_dir: Path) -> None:
    env = Episode(tiny_task, trajectory_dir=traj_dir)
    try:
        first = play(env, [{"kind": "submit"}])[-1]
        second = play(env, [{"kind": "submit"}])[-1]
    finally:
        env.close()
    assert first.info["trajectory_path"] != second.info["trajectory_path"]
    assert len(list(traj_dir.iterdir())) == 2


def test_no_file_without_a_trajectory_dir(tiny_task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    env = Episode(tiny_task)
    try:
        result = play(env, [{"kind": "submit"}])[-1]
    finally:
        env.close()
    assert "trajectory_path" not in result.info
    assert list(cwd.iterdir()) == []


def test_trajectory_models_are_strict() -> None:
    obs = Observation(text="", step=1, steps_left=0)
    with pytest.raises(ValidationError):
        TrajectoryStep(step=1, action=None, observation=obs, extra=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Trajectory(task_id="t", episode_id="e", started_at="now", bogus=True)  # type: ignore[call-arg]


def test_trajectory_write_names_the_file_after_task_and_episode(tmp_path: Path) -> None:
    traj = Trajectory(task_id="tiny-calc", episode_id="abc123", started_at="2024-01-01T00:00:00+00:00")
    path = traj.write(tmp_path / "new" / "dir")
    assert path == tmp_path / "new" / "dir" / "tiny-calc-abc123.json"
    assert Trajectory.model_validate_json(path.read_text()) == traj


def test_a_raw_action_is_held_as_valid_utf8() -> None:
    step = TrajectoryStep(step=1, action=None, raw_action="<tool_call>\ud800",
                          observation=Observation(text="Invalid action", step=1, steps_left=0))
    assert step.raw_action == "<tool_call>\ufffd"
    step.model_dump_json()
