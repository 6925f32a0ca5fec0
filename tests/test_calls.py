"""Tests for repogym_gym.calls: a completion split into the tool calls it holds, in order.

Issue 14 found that of two ``<tool_call>`` blocks only the first ran (the second, a submit, was
silently lost), and that fenced JSON and Llama's ``parameters`` were refused.
"""

from __future__ import annotations

import json

import pytest

from repogym_gym.actions import ReadAction, SubmitAction, TestAction, WriteAction
from repogym_gym.calls import MAX_CALLS, parse_calls

READ = ReadAction(path="pkg/mod.py")


def test_every_tool_call_block_is_a_call_in_order() -> None:
    text = ('I will test, then submit.\n<tool_call>\n{"name": "test", "arguments": {}}\n</tool_call>\n'
            '<tool_call>{"name": "submit", "arguments": {}}</tool_call>')
    calls = parse_calls(text)
    assert [(c.call_id, c.action, c.error) for c in calls] == [("call_0", TestAction(), None),
                                                               ("call_1", SubmitAction(), None)]


def test_fenced_json_after_prose_is_a_call_and_other_fences_are_not() -> None:
    text = ("Here is the code I mean:\n```python\nprint('x')\n```\nNow:\n"
            '```json\n{"name": "read", "arguments": {"path": "pkg/mod.py"}}\n```\n'
            '```\n{"kind": "submit"}\n```')
    assert [c.action for c in parse_calls(text)] == [READ, SubmitAction()]


def test_a_json_list_and_a_list_of_openai_tool_calls_keep_their_ids() -> None:
    tool_calls = [{"id": "call_a1", "type": "function", "function": {"name": "read", "arguments": '{"path": "pkg/mod.py"}'}},
                  {"id": "call_b2", "type": "function", "function": {"name": "submit", "arguments": "{}"}}]
    for action in (tool_calls, json.dumps(tool_calls)):
        calls = parse_calls(action)
        assert [(c.call_id, c.name) for c in calls] == [("call_a1", "read"), ("call_b2", "submit")]


def test_call_ids_are_unique_and_valid_utf8_within_a_step() -> None:
    """Red-team round 44: ``[{"name": "list_files"}, {"id": "call_0", ...}]`` gave two results with id
    ``call_0``, and a lone-surrogate id reached ``info`` (UTF-8 encoding of the tool message raised in
    the trainer): a trainer matching results to calls by id lost one."""
    calls = parse_calls([{"name": "test", "arguments": {}}, {"id": "call_0", "name": "submit", "arguments": {}}])
    assert [(c.call_id, c.name, c.error) for c in calls] == [("call_0_1", "test", None), ("call_0", "submit", None)]
    twice = parse_calls([{"id": "x", "name": "test", "arguments": {}}, {"id": "x", "name": "submit", "arguments": {}}])
    assert [c.action for c in twice] == [TestAction(), None]
    assert twice[1].error == "tool call id 'x' repeats call 1's; each call of a step needs its own id"
    [bad] = parse_calls({"id": "call_\udcff\ud800", "name": "submit", "arguments": {}})
    assert bad.action is None and bad.call_id == "call_0" and "not valid UTF-8" in str(bad.error)


def test_an_unclosed_last_tool_call_and_a_whole_assistant_message_parse() -> None:
    """New-user trial: vLLM leaves the stop string ``</tool_call>`` out by default, and an OpenAI assistant
    message passed whole was "unknown action kind None"."""
    calls = parse_calls('<tool_call>{"kind": "test"}</tool_call>\n<tool_call>{"name": "submit", "arguments": {}}')
    assert [c.action for c in calls] == [TestAction(), SubmitAction()]
    message = {"role": "assistant", "content": "reading",
               "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "read", "arguments": '{"path": "pkg/mod.py"}'}}]}
    assert [(c.call_id, c.action) for c in parse_calls(message)] == [("c9", READ)]
    text_only = {"role": "assistant", "content": '```json\n{"kind": "submit"}\n```', "tool_calls": None}
    assert [c.action for c in parse_calls(text_only)] == [SubmitAction()]


def test_llama_parameters_parse_as_arguments() -> None:
    [call] = parse_calls('{"name": "write", "parameters": {"path": "a.py", "content": "x = 1\\n"}}')
    assert call.action == WriteAction(path="a.py", content="x = 1\n") and call.error is None


def test_a_bad_call_is_an_error_and_the_others_still_parse() -> None:
    calls = parse_calls('<tool_call>{"name": "read"</tool_call><tool_call>{"name": "nope", "arguments": {}}</tool_call>'
                        '<tool_call>{"kind": "read", "path": "pkg/mod.py"}</tool_call>')
    assert [c.action for c in calls] == [None, None, READ]
    assert "not JSON" in str(calls[0].error) and "unknown action kind 'nope'" in str(calls[1].error)


def test_one_action_of_any_other_form_is_one_call() -> None:
    for action in (READ, {"kind": "read", "path": "pkg/mod.py"}, '{"kind": "read", "path": "pkg/mod.py"}'):
        assert [(c.call_id, c.action) for c in parse_calls(action)] == [("call_0", READ)]


@pytest.mark.parametrize(("action", "message"), [
    ([], "empty list of tool calls"),
    ([{"kind": "test"}] * (MAX_CALLS + 1), f"{MAX_CALLS + 1} tool calls in one step; at most {MAX_CALLS}"),
    ("[" * 100_000, "nested too deeply"),
])
def test_an_empty_or_oversized_or_deep_list_is_one_refused_call(action: object, message: str) -> None:
    [call] = parse_calls(action)
    assert call.action is None and message in str(call.error)


def test_a_call_written_beside_the_tool_call_blocks_is_an_error_not_dropped() -> None:
    """Stop 39's finding: a bare JSON call after a ``<tool_call>`` block was silently ignored."""
    text = ('<tool_call>{"name": "read", "arguments": {"path": "a.py"}}</tool_call>\n'
            'Now I submit: {"name": "submit", "arguments": {}}')
    first, stray = parse_calls(text)
    assert first.action == ReadAction(path="a.py") and first.error is None
    assert stray.action is None and stray.error is not None and "outside the <tool_call> blocks" in stray.error
    assert '{"name": "submit"' in stray.raw
    assert len(parse_calls('<tool_call>{"name": "submit", "arguments": {}}</tool_call> Done, thanks.')) == 1
