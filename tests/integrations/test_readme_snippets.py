"""Each "Train with …" block of the README runs as written (the model's completion given)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from tests.integrations.helpers import require_library, start_openenv_server

README = Path(__file__).resolve().parents[2] / "README.md"


def _block(heading: str) -> str:
    section = README.read_text().split(f"### {heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    return code


def test_the_skyrl_block_plays_an_episode() -> None:
    require_library("skyrl_gym", "skyrl")
    submit = f"<tool_call>{json.dumps({'name': 'submit', 'arguments': {}})}</tool_call>"
    scope: dict[str, object] = {"completion": "Submitting as it is.\n" + submit}
    exec(compile(_block("SkyRL-gym"), "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    out = scope["out"]
    assert isinstance(out, dict) and out["done"] is True and out["reward"] == 0.0
    assert out["metadata"]["infra_error"] is None and out["metadata"]["score"] == 0.0
    messages = scope["messages"]
    assert isinstance(messages, list) and "Repository files:" in messages[-1]["content"]


def test_the_gem_block_plays_an_episode() -> None:
    require_library("gem", "gem")
    submit = f"<tool_call>{json.dumps({'name': 'submit', 'arguments': {}})}</tool_call>"
    scope: dict[str, object] = {"completion": submit}
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        exec(compile(_block("GEM"), "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    finally:  # gem's import calls logging.basicConfig(INFO)
        root.handlers[:], root.level = handlers, level
    assert scope["terminated"] is True and scope["reward"] == 0.0
    assert isinstance(scope["text"], str) and "Grade:" in scope["text"]


def test_the_openenv_block_plays_an_episode(tmp_path: Path) -> None:
    require_library("openenv.core", "openenv")
    proc, url = start_openenv_server(tmp_path)
    submit = f"<tool_call>{json.dumps({'name': 'submit', 'arguments': {}})}</tool_call>"
    scope: dict[str, object] = {"url": url, "completion": submit}
    try:
        exec(compile(_block("OpenEnv"), "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert (scope["reward"], scope["done"]) == (0.0, True)
    observation = scope["result"].observation  # type: ignore[attr-defined]
    assert observation["info"].get("infra_error") is None and "Grade:" in observation["text"]


def test_the_verifiers_block_plays_an_episode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    require_library("verifiers", "verifiers")
    from tests.integrations.test_verifiers import ScriptedModel, chat_program_in_this_venv

    chat_program_in_this_venv(monkeypatch, tmp_path)  # verifiers' chat program without uv's downloads
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-secret")
    monkeypatch.chdir(tmp_path)  # vf-eval writes its run to outputs/<run>/ in the working directory
    submit = f"<tool_call>{json.dumps({'name': 'submit', 'arguments': {}})}</tool_call>"
    with ScriptedModel() as server:
        server.replies = ["Submitting as it is.\n" + submit]
        scope: dict[str, object] = {"model": "scripted", "base_url": server.base_url}
        exec(compile(_block("verifiers"), "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    assert scope["rewards"] == [0.0, 0.0] and len(server.requests) == 2
    assert list(tmp_path.glob("outputs/*/traces.jsonl"))
