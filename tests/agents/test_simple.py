"""Tests for repogym_gym.agents: the noop and golden controls, and the golden plan of every starter task.

``run_episode`` through a Gymnasium env is covered by the gym tests; here the golden plan is
checked against the golden patch itself, in real workspaces.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from repogym_gym.agents import Agent, GoldenAgent, NoopAgent, golden_actions
from repogym_gym.commands import check_command
from repogym_gym.episode import Episode
from repogym_gym.errors import (
    AgentInfraError,
    DiskFullError,
    GitMetadataError,
    PatchError,
    SetupError,
    TaskNotFoundError,
)
from repogym_gym.task import Task
from repogym_gym.workspace import Snapshot, Workspace
from tests.helpers import CALC_SOURCE, FIXED_SOURCE, GOLDEN_PATCH, STARTER, MakeTask, make_patch

STARTER_IDS = sorted(p.name for p in STARTER.iterdir() if (p / "task.yaml").is_file())
SUBMIT = {"kind": "submit"}


def delete_patch(path: str, text: str = "x = 1\n") -> str:
    lines = "".join(f"-{line}\n" for line in text.splitlines())
    count = len(text.splitlines())
    return f"diff --git a/{path} b/{path}\ndeleted file mode 100644\n--- a/{path}\n+++ /dev/null\n@@ -1,{count} +0,0 @@\n{lines}"


def carried(snapshot: Snapshot) -> list[tuple[str, str, bytes | None]]:
    return sorted((c.path, c.status, c.data) for c in snapshot.changes.carried)


def golden_snapshot(task: Task) -> tuple[str, list[tuple[str, str, bytes | None]]]:
    with Workspace.create(task) as ws:
        ws.apply_patch(task.golden_patch())
        snap = ws.snapshot()
        return snap.patch, carried(snap)


def replayed_snapshot(task: Task, actions: list[dict[str, Any]]) -> tuple[str, list[tuple[str, str, bytes | None]]]:
    """Carry out the plan's writes and runs in a fresh workspace (runs checked by the allowlist)."""
    with Workspace.create(task) as ws:
        for action in actions:
            if action["kind"] == "write":
                ws.write(action["path"], action["content"])
            elif action["kind"] == "run":
                check_command(action["command"])
                subprocess.run(["bash", "-c", action["command"]], cwd=ws.path, check=True, timeout=30)
        snap = ws.snapshot()
        return snap.patch, carried(snap)


# -- golden_actions ----------------------------------------------------------------------------


def test_golden_actions_of_the_tiny_task(tiny_task: Task) -> None:
    assert golden_actions(tiny_task) == [
        {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE},
        SUBMIT,
    ]


@pytest.mark.parametrize("task_id", STARTER_IDS)
def test_golden_actions_of_a_starter_task_end_with_a_single_submit(starter_tasks: list[Task], task_id: str) -> None:
    task = next(t for t in starter_tasks if t.id == task_id)
    actions = golden_actions(task)
    assert actions[-1] == SUBMIT
    assert [a["kind"] for a in actions].count("submit") == 1
    assert len(actions) >= 2
    assert {a["kind"] for a in actions[:-1]} <= {"write", "run"}


@pytest.mark.parametrize("task_id", STARTER_IDS)
def test_golden_actions_of_a_starter_task_reproduce_the_golden_patch(starter_tasks: list[Task], task_id: str) -> None:
    task = next(t for t in starter_tasks if t.id == task_id)
    expected_patch, expected_changes = golden_snapshot(task)
    assert expected_patch
    assert replayed_snapshot(task, golden_actions(task)) == (expected_patch, expected_changes)


def test_golden_actions_delete_removed_files_with_an_allowed_command(make_task: MakeTask) -> None:
    task = make_task(files={"calc/old.py": "x = 1\n"}, patch=GOLDEN_PATCH + delete_patch("calc/old.py"))
    actions = golden_actions(task)
    runs = [a for a in actions if a["kind"] == "run"]
    assert len(runs) == 1 and "calc/old.py" in runs[0]["command"]
    check_command(runs[0]["command"])
    assert replayed_snapshot(task, actions) == golden_snapshot(task)


def test_the_golden_plan_scores_one_through_repo_env(make_task: MakeTask) -> None:
    task = make_task(files={"calc/old.py": "x = 1\n"}, patch=GOLDEN_PATCH + delete_patch("calc/old.py"))
    env = Episode(task)
    try:
        env.reset()
        results = [env.step(action) for action in golden_actions(task)]
        assert all(r.observation.error is None for r in results)
        assert results[-1].terminated and results[-1].reward == 1.0
        assert results[-1].info["grade"]["files_changed"] == ["calc/__init__.py", "calc/old.py"]
    finally:
        env.close()


def test_golden_actions_delete_a_file_whose_name_has_a_quote(make_task: MakeTask) -> None:
    task = make_task(files={"calc/it's.py": "x = 1\n"}, patch=GOLDEN_PATCH + delete_patch("calc/it's.py"))
    env = Episode(task)
    try:
        env.reset()
        results = [env.step(action) for action in golden_actions(task)]
        assert all(r.observation.error is None for r in results)
        assert results[-1].info["grade"]["files_changed"] == ["calc/__init__.py", "calc/it's.py"]
    finally:
        env.close()


def test_golden_actions_without_a_golden_patch_raise(make_task: MakeTask) -> None:
    with pytest.raises(TaskNotFoundError, match="has no golden patch"):
        golden_actions(make_task(patch=None))


def test_golden_actions_with_a_patch_that_does_not_apply_raise(make_task: MakeTask) -> None:
    with pytest.raises(PatchError):
        golden_actions(make_task(patch=GOLDEN_PATCH.replace("-    return a - b", "-    return a * b")))


# -- agents ------------------------------------------------------------------------------------


def test_noop_agent_always_submits(tiny_task: Task) -> None:
    agent = NoopAgent()
    agent.begin(tiny_task)
    assert [agent.act({}, {}) for _ in range(3)] == [SUBMIT] * 3
    assert agent.name == "noop"


def test_golden_agent_plays_the_plan_then_keeps_submitting(tiny_task: Task) -> None:
    agent = GoldenAgent()
    agent.begin(tiny_task)
    plan = golden_actions(tiny_task)
    assert [agent.act({}, {}) for _ in range(len(plan) + 2)] == plan + [SUBMIT, SUBMIT]
    assert agent.name == "golden"


def test_golden_agent_begin_restarts_the_plan(tiny_task: Task) -> None:
    agent = GoldenAgent()
    agent.begin(tiny_task)
    first = agent.act({}, {})
    agent.begin(tiny_task)
    assert agent.act({}, {}) == first == {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}


def test_golden_agent_before_begin_submits() -> None:
    assert GoldenAgent().act({}, {}) == SUBMIT


@pytest.mark.parametrize("agent", [NoopAgent(), GoldenAgent()], ids=["noop", "golden"])
def test_agents_satisfy_the_agent_protocol(agent: Any) -> None:
    assert isinstance(agent, Agent)


def test_as_agent_gives_a_duck_typed_agent_the_hooks_it_lacks() -> None:
    """Capabilities are types: built-in agents inherit AgentBase; an agent written to the older
    duck-typed contract is adapted in one place, its own hooks kept and the rest no-ops."""
    from repogym_gym.agents import GoldenAgent
    from repogym_gym.agents.base import AgentBase, as_agent

    closed = []

    class Minimal:
        name = "minimal"

        def begin(self, task):
            pass

        def act(self, observation, info):
            return {"kind": "submit"}

        def close(self):
            closed.append(True)

    adapted = as_agent(Minimal())
    assert isinstance(adapted, AgentBase) and adapted.name == "minimal" and adapted.trusted is False
    assert adapted.conversation() is None and adapted.attach(None, None) is None
    adapted.close()
    assert closed == [True]
    golden = GoldenAgent()
    assert as_agent(golden) is golden and golden.trusted is True


class _BeginFails:
    """An agent whose ``begin`` raises ``exc`` (what the golden agent's scratch workspace raises on a full disk)."""

    name, trusted = "begin-fails", True

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def begin(self, task: Task) -> None:
        raise self.exc

    def act(self, observation: Any, info: Any) -> Any:
        return {"kind": "submit"}


@pytest.mark.parametrize("exc", [
    OSError(28, "No space left on device"),
    DiskFullError("no space left to apply a patch"),
    SetupError("setup command failed"),
    GitMetadataError("git metadata missing"),
])
def test_an_agent_setup_that_fails_outside_the_agent_is_an_infra_error(tiny_task: Task, exc: Exception) -> None:
    """Issue 13: a crash inside an agent's own setup (the golden agent building its plan on a full disk) was graded 0."""
    import gymnasium as gym

    from repogym_gym.agents import run_episode

    env = gym.make("RepoGym/Task-v0", task=str(tiny_task.root))
    try:
        with pytest.raises(AgentInfraError, match="the agent's setup failed for a reason outside the agent"):
            run_episode(env, _BeginFails(exc))
    finally:
        env.close()


def test_an_agent_setup_that_fails_on_its_own_is_the_agent_s_error_and_graded(tiny_task: Task) -> None:
    import gymnasium as gym

    from repogym_gym.agents import run_episode

    env = gym.make("RepoGym/Task-v0", task=str(tiny_task.root))
    try:
        outcome = run_episode(env, _BeginFails(PatchError("the golden patch does not apply")))
    finally:
        env.close()
    assert outcome.agent_error == "PatchError: the golden patch does not apply"
    assert (outcome.total_reward, outcome.info["score"]) == (0.0, 0.0)


def test_a_golden_patch_that_is_not_utf8_is_carried_byte_exact_and_scores_one(make_task: MakeTask) -> None:
    """Issue 13: a golden patch writing a Latin-1 byte graded 1.0 by ``grade_patch`` and validated as sound,
    but the golden agent refused it ("changes binary file": a write action carries text only). The plan
    writes such a file with the shell's printf, byte-exact, in chunks within the command limit."""
    latin1 = FIXED_SOURCE.replace("return a + b", "return a + b  # caf\udce9", 1)
    task = make_task(patch=None)
    line = bytes(range(0x20, 0x7F)) + bytes(range(0x80, 0x100)) + b"\n"  # every printable and high byte
    blob = (line * 40).decode("utf-8", "surrogateescape")  # 8,960 bytes: three printf chunks
    added = "".join(f"+{row}\n" for row in blob.splitlines())
    patch = make_patch("calc/__init__.py", CALC_SOURCE, latin1) + (
        "diff --git a/calc/blob.txt b/calc/blob.txt\nnew file mode 100644\n--- /dev/null\n+++ b/calc/blob.txt\n"
        f"@@ -0,0 +1,40 @@\n{added}")
    task.solution_path.write_bytes(patch.encode("utf-8", "surrogateescape"))
    actions = golden_actions(task)
    printfs = [a for a in actions if a["kind"] == "run"]
    assert len(printfs) == 4 and all(a["command"].split(" && ")[-1].startswith("printf '") for a in printfs), printfs
    assert max(len(a["command"]) for a in printfs) < 20_000
    assert replayed_snapshot(task, actions) == golden_snapshot(task)
    env = Episode(task)
    try:
        env.reset()
        results = [env.step(action) for action in actions]
        assert all(r.observation.error is None for r in results), [r.observation.error for r in results]
        assert results[-1].terminated and results[-1].reward == 1.0
        assert results[-1].info["grade"]["files_changed"] == ["calc/__init__.py", "calc/blob.txt"]
    finally:
        env.close()
