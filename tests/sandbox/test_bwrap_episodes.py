"""Episodes and grading inside the bubblewrap sandbox: the controls, the Test action, hidden secrets."""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path

import pytest

from repogym_gym.agents import GoldenAgent, NoopAgent, run_episode
from repogym_gym.baseline import BaselineStore
from repogym_gym.episode import Episode
from repogym_gym.graders.testrun import judge_dir, pycache_dir, warm_pycache
from repogym_gym.grading import confined
from repogym_gym.gym.env import RepoGymEnv
from repogym_gym.sandbox import LocalSandbox, Sandbox
from repogym_gym.sandbox.bwrap import BubblewrapSandbox
from repogym_gym.task import Task, load_task
from repogym_gym.venvs import grader_venv_dir, venv_dir
from tests.helpers import FIXED_SOURCE, STARTER, MakeTask
from tests.sandbox.helpers import require_bwrap

STARTER_IDS = sorted(p.name for p in STARTER.iterdir() if (p / "task.yaml").is_file())


@pytest.mark.slow
@pytest.mark.parametrize("task_id", STARTER_IDS)
def test_starter_controls_score_golden_1_and_noop_0_in_bwrap(task_id: str) -> None:
    require_bwrap()
    rewards = {}
    for agent in (GoldenAgent(), NoopAgent()):
        env = RepoGymEnv(task_id, sandbox="bwrap")
        try:
            outcome = run_episode(env, agent)
        finally:
            env.close()
        assert outcome.info.get("infra_error") is None and outcome.agent_error is None
        rewards[type(agent).__name__] = outcome.total_reward
    assert rewards == {"GoldenAgent": 1.0, "NoopAgent": 0.0}


def test_the_test_action_runs_the_visible_tests_in_bwrap(tiny_task: Task) -> None:
    env = Episode(tiny_task, sandbox=require_bwrap())
    try:
        env.reset()
        before = env.step({"kind": "test"}).observation
        env.step({"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE})
        after = env.step({"kind": "test"}).observation
    finally:
        env.close()
    assert "Visible tests: 2 passed, 1 failed" in before.text and before.exit_code == 1
    assert "Visible tests: 3 passed" in after.text and after.exit_code == 0, after.text


def test_a_run_action_cannot_read_the_tasks_secrets_or_the_cache() -> None:
    """The task directory (hidden tests, golden patch) and the baseline cache are hidden from
    commands; both live outside /tmp here, so only the hiding stands in the way."""
    sandbox = require_bwrap()
    task = load_task(STARTER / "pagination-off-by-one")
    cache = Path("/var/cache") / f"repogym-test-{secrets.token_hex(4)}"
    command = (f"cat {task.root}/solution.patch | head -c 40; ls {task.root}/hidden/tests; "
               f"ls {cache}/baselines | sed s/^/entry:/; echo done")
    try:
        store = BaselineStore(cache)
        outputs = {}
        for name, sb in (("local", LocalSandbox()), ("bwrap", sandbox)):
            env = Episode(task, sandbox=sb, store=store)
            try:
                env.reset()
                outputs[name] = env.step({"kind": "run", "command": command}).observation.text
            finally:
                env.close()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    for secret in ("diff --git", "test_paginator_hidden.py", "entry:pagination-off-by-one-"):
        assert secret in outputs["local"]  # readable without the sandbox
        assert secret not in outputs["bwrap"]
    assert "done" in outputs["bwrap"]


def test_confined_hides_the_task_and_the_cache_and_applies_the_task_limits(make_task: MakeTask, tmp_path: Path) -> None:
    task = make_task(limits={"max_steps": 10, "test_timeout_s": 60, "max_processes": 99})
    local = LocalSandbox()
    assert confined(local, task) is local
    narrowed = confined(BubblewrapSandbox(), task, tmp_path / "cache")
    assert isinstance(narrowed, BubblewrapSandbox)
    assert narrowed.hide == (str(task.root.resolve()), str((tmp_path / "cache").resolve()))
    # only the environment the task's commands use, never the cache's other environments
    assert narrowed.reveal == (str(grader_venv_dir(tmp_path / "cache").resolve()), str(pycache_dir().resolve()),
                               str(judge_dir().resolve()))
    assert narrowed.limits.max_processes == 99
    with_env = make_task(repo={"env": {"requirements": ["pytest==9.0.3"]}})
    own = confined(BubblewrapSandbox(), with_env, tmp_path / "cache")
    assert own.reveal == (str(venv_dir(["pytest==9.0.3"], cache_dir=tmp_path / "cache").resolve()), str(pycache_dir().resolve()),
                          str(judge_dir().resolve()))


def test_the_grader_bytecode_cache_is_warmed_on_the_host_and_read_only_inside(tiny_task: Task, tmp_path: Path) -> None:
    """Commands of a confined sandbox cannot plant bytecode a later grading would load; the
    grader fills the cache itself (pytest's modules) so sandboxed runs need not compile them."""
    sandbox = confined(require_bwrap(), tiny_task)
    warm_pycache({})
    cache = pycache_dir()
    assert any(cache.rglob("_pytest/*.pyc"))
    result = sandbox.run(["bash", "-c", f"touch {cache}/planted.pyc"], cwd=tmp_path, timeout_s=30)
    assert result.exit_code != 0 and "Read-only file system" in result.stderr
    assert not (cache / "planted.pyc").exists()


@pytest.mark.parametrize("sandbox", [LocalSandbox(), BubblewrapSandbox()], ids=["local", "bwrap"])
def test_every_sandbox_takes_writable_directories(sandbox: Sandbox, tmp_path: Path) -> None:
    if isinstance(sandbox, BubblewrapSandbox):
        require_bwrap()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    result = sandbox.run(["bash", "-c", f"echo ok > {scratch}/report.xml"], cwd=tmp_path, timeout_s=30, writable=[scratch])
    assert isinstance(sandbox, Sandbox) and result.exit_code == 0
    assert (scratch / "report.xml").read_text() == "ok\n"
