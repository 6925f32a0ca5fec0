"""verifiers 0.4: full episodes through verifiers' own eval runner against a scripted chat model.

``run_eval(EvalConfig)`` is what ``vf-eval repogym --env.taskset.suite ...`` runs: it loads the taskset
by its id, the taskset's env plays each task, and the player seat is verifiers' own chat program (the
``null`` harness) talking to the model through verifiers' interception proxy. The model is a scripted
OpenAI-compatible server on loopback that answers each chat completion with the next scripted reply.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE, MakeTask
from tests.integrations.helpers import require_library


def _call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


class ScriptedModel:
    """An OpenAI-compatible ``/v1/chat/completions`` on loopback answering with ``replies`` in turn
    (the last one again once they run out); ``requests`` holds every request body."""

    def __init__(self) -> None:
        import uvicorn
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        self.replies: list[str] = []
        self.requests: list[dict[str, Any]] = []

        async def complete(request: Request) -> Response:
            body = await request.json()
            self.requests.append(body)
            reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
            head = {"id": f"chatcmpl-{len(self.requests)}", "created": int(time.time()), "model": body.get("model")}
            usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
            if not body.get("stream"):
                return JSONResponse({**head, "object": "chat.completion", "usage": usage, "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}]})
            chunk = {**head, "object": "chat.completion.chunk"}
            events = [  # the reply in one delta, its finish, the usage, then the [DONE] sentinel
                {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": reply}, "finish_reason": None}]},
                {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {**chunk, "choices": [], "usage": usage},
            ]
            sse = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
            return Response(sse, media_type="text/event-stream")

        app = Starlette(routes=[Route("/v1/chat/completions", complete, methods=["POST"])])
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the scripted model server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    @property
    def base_url(self) -> str:
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"


def chat_program_in_this_venv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Run verifiers' chat program (the ``null`` harness's) with this interpreter, where uv would download
    the packages it declares (openai, mcp, httpx2, ...; this venv has them), and keep the subprocess
    runtime's working directories in ``tmp_path`` (``~/.cache/verifiers`` otherwise)."""
    from verifiers.v1.runtimes.subprocess import SubprocessRuntime

    async def venv_script(self: Any, script: str | bytes, env: Any = None, *, activate: bool = True) -> list[str]:
        path = tmp_path / "vf-chat-program.py"
        path.write_bytes(script.encode() if isinstance(script, str) else script)
        return [sys.executable, str(path)]

    monkeypatch.setattr(SubprocessRuntime, "prepare_uv_script", venv_script)
    monkeypatch.setattr("verifiers.v1.runtimes.subprocess.CACHE_DIR", tmp_path / "vf-cache")


@pytest.fixture
def verifiers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    library = require_library("verifiers", "verifiers")
    import repogym_gym.integrations.verifiers  # noqa: F401 - registers the taskset id "repogym"

    chat_program_in_this_venv(monkeypatch, tmp_path)
    monkeypatch.setenv("REPOGYM_SCRIPTED_KEY", "not-a-secret")
    return library


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    require_library("uvicorn", "serve")
    with ScriptedModel() as server:
        yield server


def _workspaces() -> set[Path]:
    """This process's RepoGym workspaces (``repogym-workspace-<pid>.*`` in the temp dir)."""
    return set(Path(tempfile.gettempdir()).glob(f"repogym-workspace-{os.getpid()}.*"))


def _eval(model: ScriptedModel, output: Path, player: dict[str, Any] | None = None, **taskset: Any) -> Any:
    """One rollout of every task of the taskset, as ``vf-eval repogym --env.taskset.* ... --no-push``
    runs it; the episodes. No workspace is left behind."""
    from verifiers.v1.cli.eval.runner import run_eval
    from verifiers.v1.configs.cli.eval import EvalConfig

    before = _workspaces()
    config = EvalConfig.model_validate({
        "env": {"taskset": {"id": "repogym", "sandbox": "local", **taskset}, "player": player or {}},
        "model": "scripted", "client": {"base_url": model.base_url, "api_key_var": "REPOGYM_SCRIPTED_KEY"},
        "push": False, "rich": None, "output_dir": str(output),
    })
    episodes = asyncio.run(run_eval(config))
    assert _workspaces() <= before
    return episodes


def test_the_golden_edit_scores_1_in_one_reply(verifiers: Any, model: ScriptedModel, tiny_task: Task,
                                              tmp_path: Path) -> None:
    model.replies = ["I will fix add.\n" + _call("write", path="calc/__init__.py", content=FIXED_SOURCE) + _call("submit")]
    [episode] = _eval(model, tmp_path / "out", suite=str(tiny_task.root.parent))
    [trace] = episode.traces
    assert episode.ok and trace.ok and not trace.errors
    assert trace.rewards["repogym_reward"].score == 1.0 and trace.reward == 1.0
    assert trace.info["repogym"] | {"truncated_by": None} == {"task_id": "tiny-calc", "score": 1.0, "passed": True,
                                                             "turns": 1, "truncated_by": None}
    [request] = model.requests
    system, user = request["messages"][0], request["messages"][-1]
    assert system["role"] == "system" and system["content"].startswith("You are a software engineer")
    assert '"name": "submit"' in system["content"] and "<tool_call>" in system["content"]
    assert '"name": "bash"' not in system["content"]  # the local sandbox refuses it
    assert user["role"] == "user" and "Repository files:" in user["content"]
    [traces] = (tmp_path / "out").rglob("traces.jsonl")  # what vf-eval writes, the reward with it
    assert '"repogym_reward"' in traces.read_text()


def test_a_rollout_that_only_reads_is_graded_0_at_max_turns(verifiers: Any, model: ScriptedModel, tiny_task: Task,
                                                          tmp_path: Path) -> None:
    model.replies = [_call("read", path="calc/__init__.py"), _call("list_files", path=".")]
    [episode] = _eval(model, tmp_path / "out", suite=str(tiny_task.root.parent), max_turns=2)
    [trace] = episode.traces
    assert episode.ok and trace.ok
    assert trace.rewards["repogym_reward"].score == 0.0
    assert trace.info["repogym"]["score"] == 0.0 and trace.info["repogym"]["turns"] == 2
    assert trace.info["repogym"]["truncated_by"] == "max_turns (2)"
    assert len(model.requests) == 2
    assert "return a - b" in model.requests[1]["messages"][-1]["content"]  # the read's result came back as the user turn


def test_a_rollout_verifiers_stops_is_graded(verifiers: Any, model: ScriptedModel, tiny_task: Task,
                                             tmp_path: Path) -> None:
    """verifiers' own turn limit ends the exchange before RepoGym's: the workspace is graded as it stands."""
    model.replies = [_call("write", path="calc/__init__.py", content=FIXED_SOURCE)]
    [episode] = _eval(model, tmp_path / "out", player={"max_turns": 1}, suite=str(tiny_task.root.parent))
    [trace] = episode.traces
    assert episode.ok and trace.ok and trace.stop_condition == "max_turns"
    assert trace.rewards["repogym_reward"].score == 1.0 and trace.info["repogym"]["passed"] is True
    assert trace.info["repogym"]["truncated_by"] == "verifiers stopped: max_turns"
    assert len(model.requests) == 1


def test_an_infrastructure_failure_fails_the_rollout_and_is_masked(verifiers: Any, model: ScriptedModel,
                                                                   make_task: MakeTask, tmp_path: Path) -> None:
    broken = make_task(id="broken-setup", repo={"setup": ["exit 3"]})
    model.replies = [_call("submit")]
    [episode] = _eval(model, tmp_path / "out", suite=str(broken.root.parent))
    [trace] = episode.traces
    assert not episode.ok and not trace.ok and trace.has_error
    assert trace.stop_condition == "sandbox_error" and "exit 3" in trace.last_error.message
    assert "repogym_reward" not in trace.rewards and "repogym" not in trace.info
    assert model.requests == []  # no turn was played on a broken setup


def test_bad_config_is_named(verifiers: Any, tiny_task: Task) -> None:
    """As ``vf-eval`` parses ``--env.taskset.*``: pydantic's ValidationError (a ValueError) names the field and value."""
    from verifiers.v1.configs.cli.eval import EvalConfig

    def parse(**taskset: Any) -> None:
        EvalConfig.model_validate({"env": {"taskset": {"id": "repogym", "suite": str(tiny_task.root.parent), **taskset}},
                                   "push": False})

    with pytest.raises(ValueError, match=r"env\.taskset\.max_turn\n.*Extra inputs are not permitted.*input_value=20"):
        parse(max_turn=20)
    for bad in (0, "x", True):
        with pytest.raises(ValueError, match=rf"env\.taskset\.max_turns\n.*input_value={bad!r}"):
            parse(max_turns=bad)
    with pytest.raises(ValueError, match=r"env\.taskset\.suite\n.*suite 'no-such-suite': no suite 'no-such-suite'"):
        parse(suite="no-such-suite")
    with pytest.raises(ValueError, match=r"env\.taskset\.sandbox\n.*input_value='bwrapp'"):
        parse(sandbox="bwrapp")
