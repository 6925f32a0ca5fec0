"""Actions an agent takes and observations it gets back.

Actions form one union discriminated on ``kind``; the order of :data:`ACTION_KINDS` is the
index used by the Gymnasium ``Discrete`` kind field. Three forms parse to the same action:

- a model or dict: ``{"kind": "read", "path": "pkg/mod.py"}``;
- a JSON text: the same dict as JSON, or an OpenAI-style tool call
  ``{"name": "read", "arguments": {"path": "pkg/mod.py"}}`` (``arguments`` may be a JSON
  string; Llama's ``parameters`` for ``arguments``, a ``{"function": {...}}`` wrapper and
  ``<tool_call>...</tool_call>`` tags are accepted; a completion holding several calls is split by
  :mod:`repogym_gym.calls`);
- a Gymnasium dict action with an integer ``kind`` (see :mod:`repogym_gym.gym.spaces`).

Parsing never guesses: anything else raises :class:`ActionError` naming the field and value. A field
of another action kind (``content`` on a read) is unused, as with an integer kind; a field that no
kind has is refused, so a misspelt one names itself.
Text with a lone surrogate (``"\\udcff"``, e.g. from a JSON ``\\udcff`` escape) is not valid
Unicode and is refused the same way: it cannot be written to a file, a trajectory or a tokenizer.

Example:
    >>> parse_action('{"name": "edit", "arguments": {"path": "a.py", "old": "x", "new": "y"}}')
    EditAction(kind='edit', path='a.py', old='x', new='y')
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from repogym_gym.errors import ActionError, validation_problems
from repogym_gym.safetext import first_surrogate, safe_text

__all__ = [
    "ACTION_KINDS",
    "TEXT_LIMITS",
    "TOOL_CALL_TAG",
    "Action",
    "ActionError",
    "BashAction",
    "EditAction",
    "ListFilesAction",
    "Observation",
    "ReadAction",
    "RunAction",
    "SubmitAction",
    "TestAction",
    "WriteAction",
    "action_to_dict",
    "parse_action",
    "tool_schema",
]


#: Most characters of each text field of an action (the gym action space declares the same): a Run
#: command of 1 MB took 28 s to check, and no field is read past these.
TEXT_LIMITS = {"path": 4096, "content": 2_000_000, "old": 200_000, "new": 2_000_000, "command": 20_000}


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_lone_surrogate(cls, data: Any) -> Any:
        for name, value in data.items() if isinstance(data, Mapping) else ():
            if isinstance(value, str) and (at := first_surrogate(value)) is not None:
                raise ValueError(f"{name}: the text holds a lone surrogate (U+{ord(value[at]):04X} at character {at}), "
                                 "which is not valid Unicode text; send UTF-8 text (to create a file whose name or "
                                 "content is not UTF-8, use a run command)")
        return data


class ReadAction(_Action):
    """Read a file of the repository."""

    kind: Literal["read"] = "read"
    path: str = Field(max_length=TEXT_LIMITS["path"], description="File path relative to the repository root.")


class WriteAction(_Action):
    """Create or overwrite a file with the given content."""

    kind: Literal["write"] = "write"
    path: str = Field(max_length=TEXT_LIMITS["path"], description="File path relative to the repository root.")
    content: str = Field(max_length=TEXT_LIMITS["content"], description="The complete new content of the file.")


class EditAction(_Action):
    """Replace the one exact occurrence of ``old`` in a file with ``new``."""

    kind: Literal["edit"] = "edit"
    path: str = Field(max_length=TEXT_LIMITS["path"], description="File path relative to the repository root.")
    old: str = Field(min_length=1, max_length=TEXT_LIMITS["old"],
                     description="Exact text to replace; must occur exactly once in the file.")
    new: str = Field(max_length=TEXT_LIMITS["new"], description="Replacement text.")


class RunAction(_Action):
    """Run a shell command in the repository (allowlisted programs only)."""

    kind: Literal["run"] = "run"
    command: str = Field(min_length=1, max_length=TEXT_LIMITS["command"], description="Shell command, e.g. 'grep -rn parse_ src'.")


class BashAction(_Action):
    """Run any shell command in the repository (confining sandboxes only: bwrap or docker)."""

    kind: Literal["bash"] = "bash"
    command: str = Field(min_length=1, max_length=TEXT_LIMITS["command"],
                         description="Shell command run by bash, e.g. 'pip list | grep req'. Output is capped and timed out.")


class TestAction(_Action):
    """Run the task's visible tests and report per-test outcomes."""

    __test__ = False
    kind: Literal["test"] = "test"


class ListFilesAction(_Action):
    """List files of the repository under a directory."""

    kind: Literal["list_files"] = "list_files"
    path: str = Field(".", max_length=TEXT_LIMITS["path"], description="Directory relative to the repository root ('.' for all).")


class SubmitAction(_Action):
    """Finish the episode and have the current state of the repository graded."""

    kind: Literal["submit"] = "submit"


Action = Annotated[
    ReadAction | WriteAction | EditAction | RunAction | TestAction | ListFilesAction | SubmitAction | BashAction,
    Field(discriminator="kind"),
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(Action)

#: Action kinds in the order of the Gymnasium ``Discrete`` kind index.
ACTION_KINDS: tuple[str, ...] = ("read", "write", "edit", "run", "test", "list_files", "submit", "bash")
ACTION_MODELS: dict[str, type[_Action]] = {
    "read": ReadAction, "write": WriteAction, "edit": EditAction, "run": RunAction,
    "test": TestAction, "list_files": ListFilesAction, "submit": SubmitAction, "bash": BashAction,
}
#: Every field of some action kind: a field of another kind than the action's is unused, not an error.
_ALL_FIELDS = frozenset(name for model in ACTION_MODELS.values() for name in model.model_fields)
#: A ``<tool_call>`` block; the last may be unclosed (vLLM leaves the stop string ``</tool_call>`` out by default).
TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|(?=<tool_call>)|\Z)", re.DOTALL)


class Observation(BaseModel):
    """What the agent sees after reset or a step.

    Observation text is always valid UTF-8: undecodable bytes of files and output are U+FFFD,
    and so is every lone surrogate (a file name that is not UTF-8) (:mod:`repogym_gym.safetext`).

    Attributes:
        text: The observation text (file content, command output, test summary, an error).
        step: Steps taken so far in the episode.
        steps_left: Steps left before the episode is graded and truncated.
        exit_code: Exit code of the command the step ran; None when it ran none.
        error: Set when the action was refused or failed (then ``text`` explains it).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    step: int = Field(ge=0)
    steps_left: int = Field(ge=0)
    exit_code: int | None = None
    error: str | None = None

    @field_validator("text", "error")
    @classmethod
    def _valid_utf8(cls, v: str | None) -> str | None:
        return safe_text(v) if v is not None else None


def _from_mapping(data: Mapping[str, Any]) -> Any:
    if "kind" not in data and isinstance(data.get("name"), str) and "parameters" in data and "arguments" not in data:
        data = {"name": data["name"], "arguments": data["parameters"]}  # Llama 3.1's spelling of a tool call
    if "kind" not in data and isinstance(data.get("name"), str) and "arguments" in data:
        args = data["arguments"]
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except (ValueError, RecursionError) as exc:  # JSONDecodeError; an integer of over 4,300 digits
                raise ActionError(f"tool call arguments are not valid JSON: {_json_problem(exc)}") from None
        if not isinstance(args, Mapping):
            raise ActionError(f"tool call arguments must be an object, got {type(args).__name__}")
        data = {"kind": data["name"], **args}
    if "kind" not in data and isinstance(data.get("function"), Mapping):
        return _from_mapping(data["function"])
    kind = data.get("kind")
    if hasattr(kind, "__index__") and not isinstance(kind, bool):  # int, numpy integer
        try:
            index = operator.index(kind)  # type: ignore[arg-type]  # it has __index__, checked above
        except (TypeError, ValueError):  # a numpy array has __index__ and refuses it
            raise ActionError(f"kind must be a kind name or an integer index, got a {type(kind).__name__}") from None
        if not 0 <= index < len(ACTION_KINDS):
            raise ActionError(f"kind index {index} is out of range 0..{len(ACTION_KINDS) - 1}")
        model = ACTION_MODELS[ACTION_KINDS[index]]
        fields = {k: v for k, v in data.items() if k in model.model_fields and k != "kind"}
        data = {"kind": ACTION_KINDS[index], **fields}
    if not isinstance(data.get("kind"), str) or data["kind"] not in ACTION_MODELS:
        raise ActionError(f"unknown action kind {data.get('kind')!r}; valid kinds are {list(ACTION_KINDS)}")
    own = ACTION_MODELS[data["kind"]].model_fields
    # a field of another kind is unused, as with an integer kind (OpenEnv's pydantic actions send every field);
    # a field no kind has is refused below, so a misspelt one names itself
    data = {k: v for k, v in data.items() if k in own or k not in _ALL_FIELDS}
    try:
        return _ADAPTER.validate_python(dict(data))
    except ValidationError as exc:
        problems = "; ".join(validation_problems(exc, model=ACTION_MODELS[data["kind"]], skip=1))
        raise ActionError(f"invalid {data['kind']!r} action: {problems}") from None


def _json_problem(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at character {exc.pos}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).split(";")[0]  # "Exceeds the limit (4300 digits) for integer string conversion"


def parse_action(action: Any) -> Any:
    """Turn a model, dict, Gymnasium dict or JSON/tool-call text into an Action.

    Raises:
        ActionError: naming the problem (unknown kind, missing field, bad JSON, wrong type).
    """
    if isinstance(action, _Action):
        return action
    if isinstance(action, str):
        text = action.strip()
        tagged = TOOL_CALL_TAG.search(text)
        if tagged:
            text = tagged.group(1)
        try:
            action = json.loads(text)
        except RecursionError:
            raise ActionError("action text is nested too deeply to be an action") from None
        except ValueError as exc:  # JSONDecodeError; an integer of over 4,300 digits
            raise ActionError(f"action text is not JSON ({_json_problem(exc)}); send e.g. "
                              '{"kind": "read", "path": "README.md"}') from None
    if not isinstance(action, Mapping):
        raise ActionError(f"an action must be an object with a 'kind', got {type(action).__name__}")
    return _from_mapping(action)


def action_to_dict(action: Any) -> dict[str, Any]:
    """The JSON-ready dict of an Action (for trajectories)."""
    return action.model_dump(mode="json")


def tool_schema(*, bash: bool = True, tests: bool = True) -> list[dict[str, Any]]:
    """OpenAI-style tool definitions, one per action kind, in :data:`ACTION_KINDS` order.

    Args:
        bash: Include ``bash`` (an episode in the local guardrail refuses it: leave it out there).
        tests: Include ``test`` (an answer or optimization task has no tests: leave it out there).

    Example:
        >>> [t["function"]["name"] for t in tool_schema()][:3]
        ['read', 'write', 'edit']
    """
    tools = []
    for kind in ACTION_KINDS:
        if (kind == "bash" and not bash) or (kind == "test" and not tests):
            continue
        model = ACTION_MODELS[kind]
        schema = model.model_json_schema()
        properties = {k: {key: v[key] for key in ("type", "description", "minLength") if key in v}
                      for k, v in schema.get("properties", {}).items() if k != "kind"}
        required = [k for k in schema.get("required", []) if k != "kind"]
        tools.append({
            "type": "function",
            "function": {
                "name": kind,
                "description": (model.__doc__ or kind).strip().splitlines()[0],
                "parameters": {"type": "object", "properties": properties, "required": required,
                               "additionalProperties": False},
            },
        })
    return tools
