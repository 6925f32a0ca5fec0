"""Controls and lifecycle: honest agents keep their marks in every sandbox, and 200 episodes in a
row leave no process, temporary directory or file descriptor behind."""

from __future__ import annotations

import os
import tempfile
import textwrap
import time
from pathlib import Path

import gymnasium as gym
import pytest

import repogym_gym  # noqa: F401  (registers RepoGym/<task>-v0)
from repogym_gym.agents import GoldenAgent, NoopAgent, run_episode
from tests.helpers import FIXED_SOURCE, MakeTask
from tests.redteam.helpers import attack, processes_in, require_sandbox
from tests.redteam.table import PROJECT_README, README, render_table

G = "controls"


@pytest.mark.parametrize("agent", [GoldenAgent, NoopAgent], ids=["golden", "noop"])
@attack(G, "golden = 1, noop = 0 (gym.make, pagination-off-by-one)", local="golden 1, noop 0", confining="golden 1, noop 0")
def test_golden_scores_1_and_noop_0(sandbox_name: str, agent: type) -> None:
    require_sandbox(sandbox_name)
    env = gym.make("RepoGym/pagination-off-by-one-v0", sandbox=sandbox_name)
    try:
        outcome = run_episode(env, agent())
    finally:
        env.close()
    assert outcome.info.get("infra_error") is None and outcome.agent_error is None
    assert outcome.total_reward == (1.0 if agent is GoldenAgent else 0.0), outcome.info.get("grade")


CHECK = textwrap.dedent(
    """\
    import sys
    from calc import add, sub
    cases = {"test_add": add(2, 3) == 5, "test_sub": sub(5, 3) == 2}
    body = "".join(f'<testcase classname="check" name="{n}">' + ("" if ok else "<failure/>") + "</testcase>"
                   for n, ok in cases.items())
    with open(sys.argv[1], "w") as fh:
        fh.write(f"<testsuite>{body}</testsuite>")
    sys.exit(0 if all(cases.values()) else 1)
    """
)
SLEEPER = "37.25"  # a background `sleep` every other episode leaves behind, if anything lets it live
EPISODES = 200


def _sleepers() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes() == f"sleep\0{SLEEPER}\0".encode():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.slow
@attack("lifecycle", f"{EPISODES} episodes in a row: no leftover process, temp dir or fd", local="clean",
        confining="clean")
def test_200_episodes_leave_nothing_behind(sandbox_name: str, make_task: MakeTask, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    require_sandbox(sandbox_name)
    task = make_task(
        files={"check.py": CHECK},
        tests={"runner": "generic", "command": "python check.py {junit}", "fail_to_pass": ["check::test_add"],
               "pass_to_pass": ["check::test_sub"]},
        constraints={"protected_files": ["check.py"]},
    )
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    env = gym.make("RepoGym/Task-v0", task=str(task.root), sandbox=sandbox_name)
    rewards, fds, started = [], [], time.monotonic()
    try:
        for episode in range(EPISODES):
            env.reset(seed=episode)
            if episode % 2:
                env.step({"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE})
            else:
                env.step({"kind": "run", "command": f"sleep {SLEEPER} & echo started"})
            _, reward, terminated, _, info = env.step({"kind": "submit"})
            assert terminated and info.get("infra_error") is None, info
            rewards.append(reward)
            assert len(list(private.iterdir())) <= 1  # only the running episode's workspace
            if episode in (19, EPISODES - 1):
                fds.append(_fds())
    finally:
        env.close()
    elapsed = time.monotonic() - started
    assert rewards == [0.0, 1.0] * (EPISODES // 2)
    assert list(private.iterdir()) == []
    assert _sleepers() == [] and processes_in(private) == []
    assert fds[1] <= fds[0] + 2, f"open files grew from {fds[0]} to {fds[1]}"
    print(f"{EPISODES} episodes in {elapsed:.0f} s")  # a figure, not a target: speed lives in benchmarks/


def test_the_readme_table_is_the_suites_declared_outcomes() -> None:
    """tests/redteam/README.md and the project's README show the table the attack markers declare
    (regenerate both with ``python -m tests.redteam.table --write``)."""
    assert render_table() in README.read_text(), "run: python -m tests.redteam.table --write"
    assert render_table() in PROJECT_README.read_text(), "run: python -m tests.redteam.table --write"
