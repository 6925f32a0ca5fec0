"""Episodes as OpenAI-style chat messages: the one format LLM agents talk in and exports carry.

A trajectory becomes::

    {"role": "system", "content": SYSTEM_PROMPT}
    {"role": "user", "content": <reset observation>}
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "read", "arguments": "{\\"path\\": \\"a.py\\"}"}}]}
    {"role": "tool", "tool_call_id": "call_1", "content": <observation>}
    ...

An action that did not parse is an assistant message with the raw text as ``content``,
answered by a user message carrying the error observation.

Example:
    >>> tool_call_message("call_1", "read", {"path": "a.py"})["tool_calls"][0]["function"]["name"]
    'read'
"""

from __future__ import annotations

import json
from typing import Any

from repogym_gym.trajectory import Trajectory

__all__ = ["SYSTEM_PROMPT", "tool_call_message", "tool_result_message", "trajectory_messages"]

#: The system prompt of the LLM agents and of exported conversations.
SYSTEM_PROMPT = (
    "You are a software engineer working in a repository to resolve a task. Use the tools to read "
    "files, edit them, run allowlisted commands and the visible tests. When the repository is "
    "ready, call submit: the repository is then graded by hidden tests, and you cannot act again. "
    "Call one or more tools in every answer."
)


def tool_call_message(call_id: str, name: str, arguments: dict[str, Any], content: str = "") -> dict[str, Any]:
    """An assistant message calling one tool (``arguments`` is JSON-encoded, as the protocol wants)."""
    return {"role": "assistant", "content": content,
            "tool_calls": [{"id": call_id, "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}]}


def tool_result_message(call_id: str, content: str) -> dict[str, Any]:
    """The ``tool`` message answering the call ``call_id``."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def trajectory_messages(trajectory: Trajectory, system_prompt: str = SYSTEM_PROMPT) -> list[dict[str, Any]]:
    """The episode as chat messages (see the module docstring); driver truncations are left out."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}]
    if trajectory.reset_observation is not None:
        messages.append({"role": "user", "content": trajectory.reset_observation.text})
    for step in trajectory.steps:
        if step.action is not None:
            call_id = f"call_{step.step}"
            arguments = {k: v for k, v in step.action.items() if k != "kind"}
            messages.append(tool_call_message(call_id, step.action["kind"], arguments))
            messages.append(tool_result_message(call_id, step.observation.text))
        elif step.raw_action is not None:
            messages.append({"role": "assistant", "content": step.raw_action})
            messages.append({"role": "user", "content": step.observation.text})
    return messages
