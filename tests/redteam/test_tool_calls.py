"""Tool calls of one completion (red-team round 44): each call runs in order and costs one budget step;
the episode ends at a submit or the last step, and nothing after that runs or is graded.

Each attack sends the real fix after the end, so a call that ran (or a grade of a later tree) would
show as a score of 1.
"""

from __future__ import annotations

import json

from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE
from tests.redteam.helpers import Start, assert_unearned_zero, attack

G = "tool calls"


def _call(name: str, call_id: str | None = None, **arguments: object) -> dict[str, object]:
    call: dict[str, object] = {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return call if call_id is None else {"id": call_id, **call}


FIX = {"path": "calc/__init__.py", "content": FIXED_SOURCE}


@attack(G, "submit, then the fix, in one completion: tagged blocks, an unclosed last block, OpenAI tool_calls "
        "(round 44)", local="score 0", confining="score 0")
def test_calls_after_a_submit_are_not_run_and_not_graded(start: Start, tiny_task: Task) -> None:
    forms = [
        '<tool_call>{"name": "submit", "arguments": {}}</tool_call>\n'
        f'<tool_call>{json.dumps({"name": "write", "arguments": FIX})}</tool_call>',
        '<tool_call>{"name": "submit", "arguments": {}}</tool_call>\n'
        f'<tool_call>{json.dumps({"name": "write", "arguments": FIX})}',
        {"role": "assistant", "content": None, "tool_calls": [_call("submit", "s"), _call("write", "w", **FIX)]},
    ]
    for form in forms:
        env = start(tiny_task)
        result = env.step(form)
        assert result.terminated
        assert_unearned_zero(result)
        assert [r["error"] for r in result.info["tool_results"]] == [None, "not run: the episode ended"]


@attack(G, "more calls than the budget in one completion, the fix after the last step (round 44)",
        local="score 0", confining="score 0")
def test_calls_past_the_budget_are_not_run(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task, max_steps=3)
    listing = _call("list_files")
    result = env.step([listing, listing, listing, _call("write", **FIX), _call("submit")])
    assert result.truncated and not result.terminated
    assert_unearned_zero(result)
    assert [r["error"] is None for r in result.info["tool_results"]] == [True, True, True, False, False]


@attack(G, "a lone-surrogate or repeated tool-call id (round 44: the single-call info kept it; a trainer "
        "encoding the tool message raised)", local="refused call", confining="refused call")
def test_a_bad_call_id_is_refused_and_info_stays_utf8(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    bad = env.step(_call("list_files", "call_\udcff\ud800"))
    json.dumps(bad.info, ensure_ascii=False).encode("utf-8")
    assert "not valid UTF-8" in bad.info["action_error"]
    twice = env.step([_call("list_files", "x"), _call("write", "x", **FIX)])
    assert [r["tool_call_id"] for r in twice.info["tool_results"]] == ["x", "x"]
    assert "repeats call 1's" in twice.info["action_error"]
    assert env.step(_call("read", path="calc/__init__.py")).observation.text.rstrip("\n").endswith("return a - b")
