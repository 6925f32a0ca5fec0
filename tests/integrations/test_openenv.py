"""OpenEnv core 0.3: ``repogym serve --openenv`` in a subprocess, driven by OpenEnv's own client over its WebSocket."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE, MakeTask
from tests.integrations.helpers import require_library, start_openenv_server


@pytest.fixture
def openenv() -> Any:
    return require_library("openenv.core", "openenv")


def _workspaces(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("repogym-workspace-*"))


def _serve(tmp: Path, suite: Path, *more: str) -> tuple[subprocess.Popen[bytes], str]:
    return start_openenv_server(tmp, "--suite", str(suite), *more)


@pytest.fixture
def server(openenv: Any, tmp_path_factory: pytest.TempPathFactory, tiny_task: Task,
           request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    """``repogym serve --openenv`` for tiny_task's suite (its TMPDIR private, so workspaces can be counted)."""
    tmp = tmp_path_factory.mktemp("served")
    proc, url = _serve(tmp, tiny_task.root.parent, "--idle-timeout", str(getattr(request, "param", 600)))
    try:
        yield url, tmp
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def _submit_text() -> str:
    return '<tool_call>{"name": "submit", "arguments": {}}</tool_call>'


def _client(openenv: Any, url: str) -> Any:
    return openenv.GenericEnvClient(base_url=url).sync()


def test_the_golden_edit_scores_1_and_a_read_only_episode_0(openenv: Any, server: tuple[str, Path]) -> None:
    url, tmp = server
    with _client(openenv, url) as env:
        first = env.reset(task_id="tiny-calc", seed=0)
        assert first.observation["text"].startswith("Task tiny-calc (bugfix).") and first.done is False
        assert first.reward is None
        wrote = env.step({"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE,
                          "old": None, "new": None, "command": None, "text": None})  # every field, as typed clients send
        assert wrote.observation["info"]["action_error"] is None and wrote.done is False and wrote.reward == 0.0
        done = env.step({"text": _submit_text()})
        assert (done.reward, done.done, done.observation["info"]["score"]) == (1.0, True, 1.0)
        assert env.state()["step_count"] == 2 and env.state()["env_id"] == "RepoGym/tiny-calc-v0"
        after = env.step({"text": _submit_text()})
        assert "after the episode ended" in after.observation["info"]["action_error"] and after.reward is None

        env.reset(env_id="RepoGym/tiny-calc-v0", seed=1)  # the same session, a new episode
        read = env.step({"kind": "read", "path": "calc/__init__.py"})
        assert "return a - b" in read.observation["text"]
        done = env.step({"kind": "submit"})
        assert (done.reward, done.done, done.observation["info"]["passed"]) == (0.0, True, False)
    deadline = time.monotonic() + 30
    while _workspaces(tmp) and time.monotonic() < deadline:  # OpenEnv closes the session as the socket closes
        time.sleep(0.2)
    assert _workspaces(tmp) == []


def test_16_concurrent_sessions_get_their_own_rewards(openenv: Any, server: tuple[str, Path]) -> None:
    url, tmp = server

    def episode(k: int) -> tuple[float | None, bool]:
        with _client(openenv, url) as env:
            env.reset(task_id="tiny-calc", seed=k)
            if k % 2 == 0:
                env.step({"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE})
            result = env.step({"text": _submit_text()})
            return result.reward, result.done

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(episode, range(16)))
    assert results == [(1.0, True), (0.0, True)] * 8
    deadline = time.monotonic() + 30
    while _workspaces(tmp) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _workspaces(tmp) == []


@pytest.mark.parametrize("server", [1], indirect=True)
def test_an_idle_session_is_closed_and_its_workspace_removed(openenv: Any, server: tuple[str, Path]) -> None:
    url, tmp = server
    with _client(openenv, url) as env:
        env.reset(task_id="tiny-calc", seed=0)
        assert len(_workspaces(tmp)) == 1
        deadline = time.monotonic() + 30  # OpenEnv sweeps every max(timeout / 4, 5) s
        while _workspaces(tmp) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _workspaces(tmp) == []


def test_an_infrastructure_failure_has_no_reward(openenv: Any, make_task: MakeTask, tmp_path: Path) -> None:
    broken = make_task(id="broken-setup", repo={"setup": ["exit 3"]})
    proc, url = _serve(tmp_path, broken.root.parent)
    try:
        with _client(openenv, url) as env:
            first = env.reset(task_id="broken-setup", seed=0)
            assert first.done is True and first.reward is None
            assert "exit 3" in first.observation["info"]["infra_error"]
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_bad_actions_and_resets_are_named(openenv: Any, server: tuple[str, Path]) -> None:
    url, _ = server
    stateless = httpx.post(f"{url}/step", json={"action": {"kind": "submit"}}).json()  # OpenEnv's HTTP /step: no session
    assert "reset first" in stateless["observation"]["info"]["action_error"] and stateless["reward"] is None
    with _client(openenv, url) as env:
        with pytest.raises(Exception, match=r"reset\(\) takes seed.*\['colour'\]"):
            env.reset(task_id="tiny-calc", colour="red")
        with pytest.raises(Exception, match="needs env_id or task_id: this server has no default task"):
            env.reset()
        with pytest.raises(Exception, match="'unittest.__main__:X-v0' is not a RepoGym id registered on this server"):
            env.reset(env_id="unittest.__main__:X-v0")  # round 47: gym.make imported the module on the server
        env.reset(task_id="tiny-calc", seed=0)
        both = env.step({"text": "x", "kind": "submit"})
        assert "send text or kind, not both" in both.observation["info"]["action_error"] and both.done is False
        wrong = env.step({"kind": "frobnicate"})
        assert "frobnicate" in wrong.observation["info"]["action_error"] and wrong.done is False
    assert json.loads(json.dumps(wrong.observation))  # plain JSON data


def test_serve_flags_of_openenv_need_openenv(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "repogym_gym.cli", "serve", "--sandbox", "bwrap"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "belong to --openenv" in out.stderr


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--sandbox", "nonsense", "unknown sandbox 'nonsense'"),
    ("--env-id", "RepoGym/nope-v0", "env_id 'RepoGym/nope-v0' is not registered"),
    ("--reward", "exact", "reward='exact' is not a reward kind"),
])
def test_a_bad_openenv_option_is_refused_at_start(openenv: Any, flag: str, value: str, message: str) -> None:
    """New-user trial: the server started with them, and every session then failed."""
    out = subprocess.run([sys.executable, "-m", "repogym_gym.cli", "serve", "--openenv", flag, value, "--port", "1"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and message in out.stderr, out.stderr
