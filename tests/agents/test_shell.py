"""ShellAgent: a real external command edits the episode's workspace, then the agent submits."""

from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from repogym_gym.agents import ShellAgent, run_episode
from repogym_gym.errors import AgentError, UnconfinedWarning
from repogym_gym.task import Task
from tests.sandbox.helpers import require_bwrap

FIX_SCRIPT = (
    "import pathlib, sys\n"
    "ws, problem, task_id = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]\n"
    "src = ws / 'calc' / '__init__.py'\n"
    "src.write_text(src.read_text().replace('return a - b', 'return a + b', 1))\n"
    "print('task', task_id, 'cwd-is-workspace', pathlib.Path.cwd() == ws, 'problem-outside', ws not in problem.parents)\n"
    "print('problem:', problem.read_text())\n"
)


def python(code: str, *args: str) -> str:
    """A command template running ``code`` with the ``python`` the episode's sandbox puts on PATH."""
    return shlex.join(["python", "-c", code]) + "".join(f" {a}" for a in args)


@pytest.fixture
def env(tiny_task: Task) -> Iterator[Any]:
    """The tiny task through gym.make with no sandbox named: confined (bubblewrap) by default."""
    env = gym.make("RepoGym/Task-v0", task=str(tiny_task.root))
    yield env
    env.close()


def test_a_command_that_fixes_the_task_scores_one(env: Any) -> None:
    agent = ShellAgent(python(FIX_SCRIPT, "{workspace}", "{problem_file}", "{task_id}"))
    outcome = run_episode(env, agent)
    assert (outcome.total_reward, outcome.steps, outcome.terminated) == (1.0, 1, True)
    assert "task tiny-calc cwd-is-workspace True problem-outside True" in agent.log
    assert "problem: add(2, 3) returns -1 instead of 5." in agent.log
    assert "exit code 0" in agent.log
    conversation = agent.conversation()
    assert conversation is not None
    assert [m["role"] for m in conversation] == ["user", "assistant"] and conversation[1]["content"] == agent.log


def test_a_placeholder_inside_an_argument_stays_one_argument(env: Any) -> None:
    agent = ShellAgent(python("import sys; print(len(sys.argv), sys.argv[1])", "--task={task_id}"))
    run_episode(env, agent)
    assert "2 --task=tiny-calc" in agent.log


def test_a_command_past_its_timeout_is_killed_and_the_workspace_graded(env: Any) -> None:
    agent = ShellAgent("sleep 30", timeout_s=0.5)
    outcome = run_episode(env, agent)
    assert (outcome.total_reward, outcome.agent_error) == (0.0, None)
    assert "timed out after 0.5 s" in agent.log
    assert outcome.duration_s < 20


def test_the_episode_time_limit_bounds_the_command(env: Any) -> None:
    agent = ShellAgent("sleep 30", timeout_s=600)
    outcome = run_episode(env, agent, time_limit_s=1.0)
    assert "timed out" in agent.log and outcome.duration_s < 20


def test_only_listed_variables_pass_through(env: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOGYM_TEST_TOOL_KEY", "passed")
    monkeypatch.setenv("REPOGYM_TEST_SECRET", "leaked")
    code = "import os; print(os.environ.get('REPOGYM_TEST_TOOL_KEY'), os.environ.get('REPOGYM_TEST_SECRET'))"
    agent = ShellAgent(python(code), env_passthrough=["REPOGYM_TEST_TOOL_KEY"])
    run_episode(env, agent)
    assert "passed None" in agent.log and "leaked" not in agent.log


def test_output_is_capped_with_a_visible_marker(env: Any) -> None:
    agent = ShellAgent(python("print('x' * 100000)"), output_limit_bytes=1000)
    run_episode(env, agent)
    assert "truncated by repogym" in agent.log and len(agent.log) < 3000


def test_the_command_runs_in_the_episodes_confining_sandbox(env: Any, tmp_path: Path) -> None:
    """Not as root on the host: as the sandbox's unprivileged uid, seeing neither the host's
    directories nor repogym_gym's own interpreter."""
    require_bwrap()
    outside = Path(tempfile.mkdtemp(prefix="repogym-shell-outside-", dir="/var/cache"))
    try:
        outside.chmod(0o777)  # world-writable: only the sandbox stands in the way
        code = (f"import os, pathlib, sys; print('uid', os.getuid(), 'prefix', sys.prefix); "
                f"print('sees-outside', pathlib.Path({str(outside)!r}).exists())")
        agent = ShellAgent(python(code))
        run_episode(env, agent)
        assert env.unwrapped.sandbox_name == "bwrap"
    finally:
        shutil.rmtree(outside)
    uid = int(agent.log.split("uid ", 1)[1].split()[0])
    assert uid != 0 and "sees-outside False" in agent.log, agent.log
    prefix = agent.log.split("prefix ", 1)[1].split()[0]
    assert prefix != sys.prefix and "/envs/grader-" in prefix  # the grader's test environment, not the host's venv


def test_under_the_local_sandbox_the_agent_says_it_is_unconfined(tiny_task: Task) -> None:
    env = gym.make("RepoGym/Task-v0", task=str(tiny_task.root), sandbox="local")
    try:
        with pytest.warns(UnconfinedWarning, match=r"agent 'shell' runs in an env made with sandbox='local'"):
            outcome = run_episode(env, ShellAgent(python("print('hi')")))
    finally:
        env.close()
    assert outcome.terminated and outcome.info.get("infra_error") is None


def test_a_program_missing_from_path_is_refused_when_built() -> None:
    with pytest.raises(AgentError, match="program 'no-such-agent-cli' of command .* is not on PATH"):
        ShellAgent("no-such-agent-cli --yes {workspace}")


@pytest.mark.parametrize(("command", "message"), [("aider {repo}", r"unknown placeholder\(s\) \['repo'\]"),
                                                  ("echo 'unclosed", "not a valid template"), ("", "command is empty")])
def test_a_bad_template_is_refused_when_built(command: str, message: str) -> None:
    with pytest.raises(AgentError, match=message):
        ShellAgent(command)


def test_acting_without_a_workspace_is_an_agent_error(tiny_task: Task) -> None:
    agent = ShellAgent("true")
    agent.begin(tiny_task)
    with pytest.raises(AgentError, match="needs the episode's workspace"):
        agent.act({}, {})
