"""The shipped ChatServer test double: both protocols, scripted errors, recorded requests."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from repogym_gym.testing import CannedCall, ChatServer, Reply


def post(url: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def test_openai_reply_carries_tool_calls_with_string_arguments() -> None:
    reply = Reply(text="let me look", tool_calls=(CannedCall(name="read", arguments={"path": "a.py"}),
                                                  CannedCall(name="edit", arguments="{not json", id="mine")))
    with ChatServer([reply]) as server:
        status, body = post(server.base_url + "/chat/completions", {"model": "m", "messages": []})
    assert status == 200
    [choice] = body["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "let me look"
    calls = choice["message"]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == ['{"path": "a.py"}', "{not json"]
    assert calls[1]["id"] == "mine" and calls[0]["id"].startswith("call_")


def test_anthropic_reply_carries_text_and_tool_use_blocks() -> None:
    with ChatServer([Reply(text="ok", tool_calls=(CannedCall(name="submit"),))]) as server:
        status, body = post(server.anthropic_base_url + "/v1/messages", {"model": "claude-x", "messages": []})
    assert status == 200
    assert body["model"] == "claude-x" and body["stop_reason"] == "tool_use"
    assert [b["type"] for b in body["content"]] == ["text", "tool_use"]
    assert body["content"][1]["input"] == {} and body["content"][1]["id"].startswith("toolu_")


def test_scripted_status_and_raw_body_are_sent_as_given() -> None:
    with ChatServer([Reply.error(503), Reply(body='{"choices": []}')]) as server:
        assert post(server.base_url + "/chat/completions", {})[0] == 503
        assert post(server.base_url + "/chat/completions", {}) == (200, {"choices": []})


def test_an_exhausted_script_answers_500_saying_so() -> None:
    with ChatServer([]) as server:
        status, body = post(server.base_url + "/chat/completions", {})
    assert status == 500
    assert "no reply left for request 1" in body["error"]["message"]


def test_an_unknown_path_is_404_and_keeps_the_reply_for_the_next_request() -> None:
    with ChatServer([Reply.say("hi")]) as server:
        assert post(server.base_url + "/completions", {})[0] == 404
        status, body = post(server.base_url + "/chat/completions", {})
        assert (status, body["choices"][0]["message"]["content"]) == (200, "hi")
        assert server.remaining == 0


def test_every_request_body_is_recorded_in_order() -> None:
    with ChatServer([Reply.say("a"), Reply.say("b")]) as server:
        post(server.base_url + "/chat/completions", {"n": 1})
        post(server.anthropic_base_url + "/v1/messages", {"n": 2})
        recorded = server.requests
    assert [(r.path, r.body) for r in recorded] == [("/v1/chat/completions", {"n": 1}), ("/v1/messages", {"n": 2})]
    assert recorded[0].headers["content-type"] == "application/json"


def test_base_url_before_start_raises_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        _ = ChatServer([]).base_url
