"""Issue 14: ``repogym serve`` and RemoteEnv, a real uvicorn server on loopback and real concurrent clients."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from repogym_gym.episode import EpisodeError
from repogym_gym.gym.remote import RemoteEnv
from repogym_gym.task import Task
from tests.gym.helpers import gym_action
from tests.helpers import FIXED_SOURCE


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _workspaces(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("repogym-workspace-*"))


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    """``repogym serve`` in a subprocess (its TMPDIR private, so its workspaces can be counted): (url, TMPDIR)."""
    idle = getattr(request, "param", 600)
    tmp = tmp_path_factory.mktemp("served")
    port = _free_port()
    env = {**os.environ, "TMPDIR": str(tmp)}
    log = tmp_path_factory.mktemp("server-log") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "repogym_gym.cli", "serve", "--port", str(port), "--idle-timeout", str(idle)],
                                env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).json()["ok"]:
                    break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the server did not start: {log.read_text()[-3000:]}") from None
                time.sleep(0.2)
        yield url, tmp
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_16_concurrent_sessions_get_their_own_rewards_and_leave_no_workspace(server: tuple[str, Path], tiny_task: Task) -> None:
    url, tmp = server

    def episode(k: int) -> tuple[float, bool]:
        env = RemoteEnv(url, "RepoGym/Task-v0", task=str(tiny_task.root), sandbox="local")
        try:
            obs, _ = env.reset(seed=k)
            assert obs["text"].startswith("Task tiny-calc (bugfix).") and env.observation_space.contains(obs)
            if k % 2 == 0:
                env.step(gym_action("write", path="calc/__init__.py", content=FIXED_SOURCE))  # a Dict-space action
            obs, reward, terminated, _, info = env.step('<tool_call>{"name": "submit", "arguments": {}}</tool_call>')
            assert env.observation_space.contains(obs) and info["tool_results"][0]["name"] == "submit"
            return reward, terminated
        finally:
            env.close()

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(episode, range(16)))
    assert results == [(1.0, True), (0.0, True)] * 8
    assert httpx.get(f"{url}/health").json() == {"ok": True, "sessions": 0, "idle_s": []}
    assert _workspaces(tmp) == []


@pytest.mark.parametrize("server", [1], indirect=True)
def test_an_idle_session_expires_and_its_workspace_is_removed(server: tuple[str, Path], tiny_task: Task) -> None:
    url, tmp = server
    env = RemoteEnv(url, "RepoGym/Task-v0", task=str(tiny_task.root), sandbox="local")
    try:
        env.reset(seed=0)
        assert len(_workspaces(tmp)) == 1
        deadline = time.monotonic() + 30
        while httpx.get(f"{url}/health").json()["sessions"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _workspaces(tmp) == []
        with pytest.raises(EpisodeError, match=r"\(404\): no session .* expired after 1 s idle"):
            env.step({"kind": "submit"})
    finally:
        env.close()


def test_bad_requests_are_named(server: tuple[str, Path], tiny_task: Task) -> None:
    url, _ = server
    assert RemoteEnv.__init__.__kwdefaults__["timeout_s"] is None  # a long step is never cut off (round 45)
    with pytest.raises(EpisodeError, match=r"\(422\): cannot make 'RepoGym/nope-v0'"):
        RemoteEnv(url, "RepoGym/nope-v0")
    with pytest.raises(EpisodeError, match=r"\(422\): kwargs \['trajectory_dir'\] are not allowed"):
        RemoteEnv(url, "RepoGym/Task-v0", task=str(tiny_task.root), trajectory_dir="/tmp/x")
    chat = RemoteEnv(url, "RepoGym/Task-v0", task=str(tiny_task.root), sandbox="local", observation_mode="chat")
    try:
        messages, info = chat.reset(seed=0)
        assert chat.observation_space.contains(messages) and [m["role"] for m in messages] == ["system", "user"]
        assert [t["function"]["name"] for t in info["tools"]][-1] == "submit"
    finally:
        chat.close()
    env = RemoteEnv(url, "RepoGym/Task-v0", task=str(tiny_task.root), sandbox="local")
    try:
        with pytest.raises(EpisodeError, match=r"\(422\): .*step\(\) called before reset\(\)"):
            env.step({"kind": "submit"})
        with pytest.raises(EpisodeError, match=r"\(422\): unknown reset option"):
            env.reset(options={"nope": 1})
    finally:
        env.close()
    assert httpx.get(f"{url}/health").json()["sessions"] == 0
    assert httpx.get(f"{url}/sessions").status_code in (404, 405)  # session ids are never listed (round 45)
