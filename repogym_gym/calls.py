"""Tool calls in one completion: the actions an LLM asked for, in the order it wrote them.

A step of :class:`~repogym_gym.episode.Episode` takes a whole completion, so a model that emits
parallel calls has every one of them run, not just the first. :func:`parse_calls` splits:

- text: every ``<tool_call>...</tool_call>`` block (Qwen, Hermes); else every fenced code block
  (```` ```json ````, or an untagged fence holding ``{`` or ``[``) after prose; else the whole text
  as JSON;
- a JSON list, or a Python list or tuple (an OpenAI message's ``tool_calls``), is one call per item,
  and so is a whole OpenAI assistant message (``{"role": "assistant", "tool_calls": [...]}``; its
  ``content`` as text when it has no calls); the last ``<tool_call>`` may be unclosed (vLLM leaves
  the stop string out of the output by default);
- anything else (a dict, an Action model, a Gymnasium dict action) is one call.

Each call keeps its own id (``id`` or ``tool_call_id`` of an OpenAI tool call) so a trainer can
answer it with a ``tool`` message; a call with none gets ``call_<k>``, k its position in the step
(``call_<k>_<n>`` where the completion itself used that id). A call whose id repeats an earlier
call's, or is not valid UTF-8 (a lone surrogate), is refused: its result could not be told apart.
A call that does not parse is a :class:`ToolCall` with ``error`` set, never an exception; the
other calls of the completion still run.

Example:
    >>> calls = parse_calls('<tool_call>{"name": "test", "arguments": {}}</tool_call>'
    ...                     '<tool_call>{"name": "submit", "arguments": {}}</tool_call>')
    >>> [(c.call_id, c.name) for c in calls]
    [('call_0', 'test'), ('call_1', 'submit')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from repogym_gym.actions import TOOL_CALL_TAG, ActionError, parse_action
from repogym_gym.safetext import first_surrogate

__all__ = ["MAX_CALLS", "ToolCall", "parse_calls"]

#: Most calls one step runs; a completion with more is one refused call (the step budget bounds them too).
MAX_CALLS = 64

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ToolCall:
    """One call of a completion.

    Attributes:
        call_id: The call's own id, or ``call_<k>`` (k: its 0-based position in the step).
        raw: What the completion held for this call (a JSON text, a dict), recorded in trajectories.
        action: The parsed Action; None when the call did not parse.
        error: Why it did not parse (the :class:`~repogym_gym.errors.ActionError` text); None when it did.
    """

    call_id: str
    raw: Any
    action: Any | None = None
    error: str | None = None

    @property
    def name(self) -> str | None:
        """The action kind, None for a call that did not parse."""
        return self.action.kind if self.action is not None else None


def _pieces(action: Any) -> list[Any]:
    """The raw calls of ``action``, one per call (a piece may still fail to parse)."""
    if isinstance(action, Mapping) and "kind" not in action and action.get("role") == "assistant":
        calls = action.get("tool_calls")  # a whole OpenAI assistant message: its calls, else its text
        if isinstance(calls, (list, tuple)) and calls:
            return list(calls)
        content = action.get("content")
        return _pieces(content) if isinstance(content, str) else [action]
    if isinstance(action, (list, tuple)):
        return list(action)
    if not isinstance(action, str):
        return [action]
    text = action.strip()
    blocks = [b.strip() for b in TOOL_CALL_TAG.findall(text)]
    if not blocks:
        blocks = [body.strip() for lang, body in _FENCE.findall(text)
                  if lang.lower() == "json" or (not lang and body.lstrip()[:1] in ("{", "["))]
    if not blocks:
        return [text]
    pieces: list[Any] = []
    for block in blocks:
        try:
            value = json.loads(block)
        except (ValueError, RecursionError):
            value = None  # parse_action names the problem
        pieces.extend(value if isinstance(value, list) else [block])
    outside = TOOL_CALL_TAG.sub(" ", text) if TOOL_CALL_TAG.search(text) else ""
    if _CALL_SHAPE.search(outside):  # a call written beside the blocks: said, not silently dropped
        pieces.append(_Stray(outside.strip()[:300]))
    return pieces


@dataclass(frozen=True)
class _Stray:
    """Text outside a completion's ``<tool_call>`` blocks that looks like a call of its own."""

    text: str


#: The start of a JSON tool call (``{"name": ...``).
_CALL_SHAPE = re.compile(r'\{\s*"name"\s*:')


def _sent_id(piece: Any) -> str | None:
    try:
        if isinstance(piece, Mapping):
            for key in ("id", "tool_call_id"):
                if isinstance(piece.get(key), str) and piece[key]:
                    return str(piece[key])[:200]
    except Exception:  # noqa: BLE001 - a policy's Mapping may raise anything: the call's own read names it
        pass
    return None


def _read_call(piece: Any, k: int, sent: list[str | None]) -> ToolCall:
    """Call ``k`` of the step (``sent``: the ids the completion gave, None where it gave none)."""
    call_id: str | None = None
    if isinstance(piece, _Stray):
        return ToolCall(f"call_{k}", piece.text, error="text outside the <tool_call> blocks looks like a tool call and was "
                                                       "not run; put each call in its own <tool_call>...</tool_call> block")
    try:
        call_id = sent[k]
        if call_id is None:
            call_id, n = f"call_{k}", 1
            while call_id in sent:
                call_id, n = f"call_{k}_{n}", n + 1
        elif first_surrogate(call_id) is not None:
            return ToolCall(f"call_{k}", piece, error="the tool call's id is not valid UTF-8; send it as text")
        elif call_id in sent[:k]:
            return ToolCall(call_id, piece, error=f"tool call id {call_id!r} repeats call {sent.index(call_id) + 1}'s; "
                                                  "each call of a step needs its own id")
        return ToolCall(call_id, piece, action=parse_action(piece))
    except ActionError as exc:
        return ToolCall(call_id or f"call_{k}", piece, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - a bad action is data: a policy's Mapping may raise anything, a field nested 100,000 deep RecursionError
        return ToolCall(call_id or f"call_{k}", piece, error=f"the action could not be read: {type(exc).__name__}")


def _whole_list(action: Any) -> list[Any] | None:
    """``action`` as a JSON list when the whole text is one (``[{"name": ...}, ...]``)."""
    if not isinstance(action, str) or not action.lstrip().startswith("["):
        return None
    try:
        value = json.loads(action)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, list) else None


def parse_calls(action: Any) -> list[ToolCall]:
    """Split ``action`` (a completion, a list of tool calls, or one action) into its calls, in order.

    Returns:
        At least one :class:`ToolCall`; those that did not parse carry ``error``. An empty list of
        calls, or more than :data:`MAX_CALLS`, is one call with an error.
    """
    try:
        whole = _whole_list(action)
        pieces = whole if whole is not None else _pieces(action)
    except Exception as exc:  # noqa: BLE001 - a bad action is data: a policy's Mapping may raise anything
        return [ToolCall("call_0", action, error=f"the action could not be read: {type(exc).__name__}: {exc}")]
    if not pieces:
        return [ToolCall("call_0", action, error="the action is an empty list of tool calls; send at least one")]
    if len(pieces) > MAX_CALLS:
        return [ToolCall("call_0", f"<{len(pieces)} tool calls>",
                         error=f"{len(pieces)} tool calls in one step; at most {MAX_CALLS} run per step")]
    sent = [_sent_id(piece) for piece in pieces]
    return [_read_call(piece, k, sent) for k, piece in enumerate(pieces)]
