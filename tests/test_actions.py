"""Tests for repogym_gym.actions: every accepted action form, and errors that name the field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from repogym_gym.actions import (
    ACTION_KINDS,
    ActionError,
    EditAction,
    ListFilesAction,
    Observation,
    ReadAction,
    RunAction,
    SubmitAction,
    TestAction,
    WriteAction,
    action_to_dict,
    parse_action,
)
from repogym_gym.errors import RepoGymError

READ = ReadAction(path="pkg/mod.py")


# -- accepted forms ----------------------------------------------------------------------------


def test_a_dict_parses() -> None:
    assert parse_action({"kind": "read", "path": "pkg/mod.py"}) == READ


def test_an_action_model_is_returned_as_is() -> None:
    assert parse_action(READ) is READ


def test_json_text_parses() -> None:
    assert parse_action('  {"kind": "read", "path": "pkg/mod.py"}\n') == READ


def test_an_openai_tool_call_with_dict_arguments_parses() -> None:
    action = parse_action({"name": "edit", "arguments": {"path": "a.py", "old": "x", "new": "y"}})
    assert action == EditAction(path="a.py", old="x", new="y")


def test_an_openai_tool_call_with_json_string_arguments_parses() -> None:
    arguments = json.dumps({"path": "a.py", "content": "print('hi')\n"})
    assert parse_action({"name": "write", "arguments": arguments}) == WriteAction(path="a.py", content="print('hi')\n")


def test_a_tool_call_as_json_text_parses() -> None:
    text = json.dumps({"name": "run", "arguments": json.dumps({"command": "ls"})})
    assert parse_action(text) == RunAction(command="ls")


@pytest.mark.parametrize("arguments", ["", "  ", "{}", {}])
def test_a_tool_call_with_empty_arguments_parses(arguments: Any) -> None:
    assert parse_action({"name": "submit", "arguments": arguments}) == SubmitAction()


def test_a_function_wrapper_parses() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path": "pkg/mod.py"}'}}
    assert parse_action(call) == READ


def test_tool_call_tags_parse_with_surrounding_text() -> None:
    text = 'I will look at it.\n<tool_call>\n{"name": "read", "arguments": {"path": "pkg/mod.py"}}\n</tool_call> done'
    assert parse_action(text) == READ


def test_only_the_first_tool_call_tag_is_used() -> None:
    text = '<tool_call>{"kind": "test"}</tool_call><tool_call>{"kind": "submit"}</tool_call>'
    assert parse_action(text) == TestAction()


@pytest.mark.parametrize("index", range(len(ACTION_KINDS)))
def test_an_integer_kind_indexes_action_kinds(index: int) -> None:
    gym_action = {"kind": index, "path": "a.py", "content": "c", "old": "o", "new": "n", "command": "ls"}
    action = parse_action(gym_action)
    assert action.kind == ACTION_KINDS[index]


def test_an_integer_kind_drops_fields_the_kind_does_not_have() -> None:
    gym_action = {"kind": ACTION_KINDS.index("run"), "command": "ls", "path": "", "content": "", "old": "", "new": ""}
    assert parse_action(gym_action) == RunAction(command="ls")


def test_a_numpy_integer_kind_parses() -> None:
    np = pytest.importorskip("numpy")
    assert parse_action({"kind": np.int64(0), "path": "pkg/mod.py"}) == READ
    assert parse_action({"kind": np.int32(ACTION_KINDS.index("submit"))}) == SubmitAction()


def test_action_kinds_order_is_the_gym_index() -> None:
    """A new kind is appended (bash, issue 14): recorded Dict-space actions keep their meaning."""
    assert ACTION_KINDS == ("read", "write", "edit", "run", "test", "list_files", "submit", "bash")


def test_list_files_path_defaults_to_the_root() -> None:
    assert parse_action({"kind": "list_files"}) == ListFilesAction(path=".")


@pytest.mark.parametrize(
    "action",
    [READ, WriteAction(path="a", content=""), EditAction(path="a", old="x", new=""), RunAction(command="ls"),
     TestAction(), ListFilesAction(path="src"), SubmitAction()],
    ids=lambda a: a.kind,
)
def test_action_to_dict_round_trips(action: Any) -> None:
    data = action_to_dict(action)
    assert json.loads(json.dumps(data)) == data
    assert parse_action(data) == action


def test_actions_are_frozen() -> None:
    with pytest.raises(ValidationError):
        READ.path = "other.py"  # type: ignore[misc]


# -- errors ------------------------------------------------------------------------------------


def test_action_error_is_a_repogym_error_and_a_value_error() -> None:
    assert issubclass(ActionError, RepoGymError) and issubclass(ActionError, ValueError)


@pytest.mark.parametrize("index", [len(ACTION_KINDS), -1, 10**12])
def test_an_out_of_range_kind_index_is_refused(index: int) -> None:
    with pytest.raises(ActionError, match=rf"kind index {index} is out of range 0\.\.{len(ACTION_KINDS) - 1}"):
        parse_action({"kind": index})


def test_a_numpy_out_of_range_kind_index_is_refused() -> None:
    np = pytest.importorskip("numpy")
    with pytest.raises(ActionError, match="out of range"):
        parse_action({"kind": np.int64(len(ACTION_KINDS))})


@pytest.mark.parametrize("kind", [True, False, 1.0])
def test_bool_and_float_kinds_are_not_indexes(kind: Any) -> None:
    with pytest.raises(ActionError, match="unknown action kind"):
        parse_action({"kind": kind, "path": "a.py", "content": "x"})


def test_an_unknown_kind_lists_the_valid_kinds() -> None:
    with pytest.raises(ActionError, match=r"unknown action kind 'fly'; valid kinds are \['read', 'write'"):
        parse_action({"kind": "fly"})


def test_a_missing_kind_is_refused() -> None:
    with pytest.raises(ActionError, match="unknown action kind None"):
        parse_action({"path": "a.py"})


def test_a_missing_field_is_named() -> None:
    with pytest.raises(ActionError, match=r"invalid 'read' action: path: Field required"):
        parse_action({"kind": "read"})


def test_a_wrong_type_is_named() -> None:
    with pytest.raises(ActionError, match=r"invalid 'write' action: content:"):
        parse_action({"kind": "write", "path": "a.py", "content": 5})


def test_an_extra_field_is_named() -> None:
    with pytest.raises(ActionError, match=r"mode: unknown field \(known fields: \['kind', 'path'\]\)"):
        parse_action({"kind": "read", "path": "a.py", "mode": "rb"})


def test_an_empty_edit_old_text_is_refused() -> None:
    with pytest.raises(ActionError, match=r"invalid 'edit' action: old:"):
        parse_action({"kind": "edit", "path": "a.py", "old": "", "new": "x"})


def test_an_empty_run_command_is_refused() -> None:
    with pytest.raises(ActionError, match=r"invalid 'run' action: command:"):
        parse_action({"kind": "run", "command": ""})


def test_every_problem_is_named() -> None:
    with pytest.raises(ActionError) as excinfo:
        parse_action({"kind": "edit", "path": 1})
    message = str(excinfo.value)
    assert all(name in message for name in ("path", "old", "new"))


def test_text_that_is_not_json_is_refused_with_an_example() -> None:
    with pytest.raises(ActionError, match=r"action text is not JSON .*at character 0\); send e\.g\. \{\"kind\": \"read\""):
        parse_action("read the file please")


def test_a_five_thousand_digit_integer_is_refused_as_an_action_error() -> None:
    """Issue 13: json.loads raises a plain ValueError past 4,300 digits, which escaped the parser."""
    digits = "9" * 5000
    with pytest.raises(ActionError, match=r"action text is not JSON \(Exceeds the limit \(4300 digits\)"):
        parse_action('{"kind": "read", "path": ' + digits + "}")
    with pytest.raises(ActionError, match=r"tool call arguments are not valid JSON: Exceeds the limit"):
        parse_action({"name": "read", "arguments": '{"path": ' + digits + "}"})


def test_a_numpy_array_as_kind_is_refused_as_an_action_error() -> None:
    """Issue 13: an ndarray has __index__, and operator.index raised TypeError out of the parser."""
    np = pytest.importorskip("numpy")
    with pytest.raises(ActionError, match="kind must be a kind name or an integer index, got a ndarray"):
        parse_action({"kind": np.array([1, 2]), "path": "a.py"})


@pytest.mark.parametrize(("field", "action"), [
    ("command", {"kind": "run", "command": "echo " + "a" * 1_000_000}),
    ("path", {"kind": "read", "path": "a" * 5000}),
    ("old", {"kind": "edit", "path": "a.py", "old": "x" * 200_001, "new": ""}),
])
def test_a_field_past_its_text_limit_is_refused_naming_the_limit(field: str, action: dict[str, Any]) -> None:
    """Issue 13: checking a 1 MB Run command took 28 s; the limits are the action space's own."""
    from repogym_gym.actions import TEXT_LIMITS

    with pytest.raises(ActionError, match=f"{field}: String should have at most {TEXT_LIMITS[field]} characters"):
        parse_action(action)


def test_tool_call_arguments_that_are_not_json_are_refused() -> None:
    with pytest.raises(ActionError, match="tool call arguments are not valid JSON"):
        parse_action({"name": "read", "arguments": "{path: a.py"})


@pytest.mark.parametrize("arguments", ["[1, 2]", "null", "3", ["path"]])
def test_tool_call_arguments_that_are_not_an_object_are_refused(arguments: Any) -> None:
    with pytest.raises(ActionError, match="tool call arguments must be an object"):
        parse_action({"name": "read", "arguments": arguments})


@pytest.mark.parametrize("action", [None, 42, 1.5, ["read", "a.py"], b'{"kind": "test"}', "[1]", '"read"', "null"])
def test_a_non_object_is_refused(action: Any) -> None:
    with pytest.raises(ActionError, match="an action must be an object with a 'kind'"):
        parse_action(action)


def test_a_megabyte_of_text_is_refused_quickly_with_a_short_message() -> None:
    with pytest.raises(ActionError) as excinfo:
        parse_action("x" * 1_000_000)
    assert len(str(excinfo.value)) < 500


@pytest.mark.parametrize("action", [{"kind": ["read"]}, {"kind": {"a": 1}}, {"name": ["read"], "arguments": {}}])
def test_an_unhashable_kind_is_an_action_error(action: Any) -> None:
    with pytest.raises(ActionError):
        parse_action(action)


def test_deeply_nested_json_is_an_action_error() -> None:
    with pytest.raises(ActionError):
        parse_action("[" * 100_000 + "]" * 100_000)


# -- Observation -------------------------------------------------------------------------------


def test_observation_is_strict_and_frozen() -> None:
    obs = Observation(text="hi", step=1, steps_left=2)
    assert (obs.exit_code, obs.error) == (None, None)
    with pytest.raises(ValidationError):
        Observation(text="hi", step=1, steps_left=2, reward=1.0)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        obs.text = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(("step", "steps_left"), [(-1, 0), (0, -1)])
def test_observation_refuses_negative_counts(step: int, steps_left: int) -> None:
    with pytest.raises(ValidationError):
        Observation(text="", step=step, steps_left=steps_left)


# -- text that is not valid Unicode ------------------------------------------------------------------

SURROGATE_ACTIONS = [
    ("read", {"path": "a\udcff.py"}, "path"),
    ("write", {"path": "a.py", "content": "x\udcff"}, "content"),
    ("write", {"path": "\ud800", "content": "x"}, "path"),
    ("edit", {"path": "a.py", "old": "x", "new": "\udfff"}, "new"),
    ("edit", {"path": "a.py", "old": "\udc80", "new": "y"}, "old"),
    ("run", {"command": "echo \udcff"}, "command"),
    ("list_files", {"path": "\udcff"}, "path"),
]


@pytest.mark.parametrize(("kind", "fields", "field"), SURROGATE_ACTIONS)
def test_a_lone_surrogate_in_any_text_field_is_refused_naming_the_field(kind: str, fields: dict[str, str], field: str) -> None:
    for form in ({"kind": kind, **fields}, json.dumps({"kind": kind, **fields}),
                 {"name": kind, "arguments": json.dumps(fields)}):
        with pytest.raises(ActionError, match=rf"invalid '{kind}' action: {field}: the text holds a lone surrogate"):
            parse_action(form)


def test_observation_text_is_always_valid_utf8() -> None:
    obs = Observation(text="ls: bad\udcff.py", step=1, steps_left=0, error="\ud800")
    assert obs.text == "ls: bad\ufffd.py" and obs.error == "\ufffd"
    obs.model_dump_json()


def test_a_field_of_another_kind_is_unused_and_a_field_of_no_kind_is_refused() -> None:
    """Issue 14: OpenEnv's pydantic actions send every field; with a string kind they were refused.
    A field that no action kind has still names itself (a misspelling is not silently dropped)."""
    every_field = {"kind": "read", "path": "pkg/mod.py", "content": "", "old": "", "new": "", "command": ""}
    assert parse_action(every_field) == READ
    with pytest.raises(ActionError, match="pathh: unknown field"):
        parse_action({"kind": "read", "path": "pkg/mod.py", "pathh": "x"})


def test_a_llama_style_tool_call_parses() -> None:
    assert parse_action('{"name": "read", "parameters": {"path": "pkg/mod.py"}}') == READ
