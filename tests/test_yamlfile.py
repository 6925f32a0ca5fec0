"""Tests for repogym_gym.yamlfile: YAML read under limits, every refusal one message naming the file."""

from __future__ import annotations

import doctest
import time
from pathlib import Path

import pytest

from repogym_gym import yamlfile
from repogym_gym.errors import AgentError, TaskSpecError
from repogym_gym.task import load_task
from repogym_gym.yamlfile import MAX_YAML_BYTES, load_yaml, load_yaml_file

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))


def test_an_alias_bomb_is_refused_at_its_first_alias_without_expanding_it() -> None:
    """Nine levels of nine-fold aliases took 265 s in the error-message code; no alias is expanded now."""
    start = time.monotonic()
    with pytest.raises(TaskSpecError, match=r"^bomb.yaml: line 2, column \d+: an alias \(\*a\) is not allowed"):
        load_yaml(BOMB, "bomb.yaml")
    assert time.monotonic() - start < 5  # a guard against expansion, not a timing target


def test_a_mapping_key_given_twice_is_refused_with_both_lines() -> None:
    with pytest.raises(TaskSpecError, match=r"line 3, column 3: duplicate key 'max_steps' \(first at line 2\)"):
        load_yaml("limits:\n  max_steps: 3\n  max_steps: 30\n", "t.yaml")


def test_nesting_past_the_depth_limit_is_refused() -> None:
    load_yaml("[" * yamlfile.MAX_YAML_DEPTH + "]" * yamlfile.MAX_YAML_DEPTH, "t.yaml")
    deeper = yamlfile.MAX_YAML_DEPTH + 1
    with pytest.raises(TaskSpecError, match=f"nested deeper than {yamlfile.MAX_YAML_DEPTH} levels"):
        load_yaml("[" * deeper + "]" * deeper, "t.yaml")
    with pytest.raises(TaskSpecError, match="nested deeper"):  # 5,000 levels overflowed the stack
        load_yaml("[" * 5000 + "]" * 5000, "t.yaml")


@pytest.mark.parametrize(("data", "expected"), [
    ("id: x\n".encode("utf-16"), "not UTF-8 text (byte 0xff at offset 0)"),
    (b"id: \xe9t\xe9\n", "not UTF-8 text (byte 0xe9 at offset 4)"),
    (b"id: [unclosed\n", "invalid YAML: "),
])
def test_bytes_that_are_not_utf8_yaml_are_one_error(data: bytes, expected: str) -> None:
    with pytest.raises(TaskSpecError) as info:
        load_yaml(data, "t.yaml")
    assert str(info.value).startswith("t.yaml: ") and expected in str(info.value)


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """A 50 MB task.yaml took 89 s to parse; only MAX_YAML_BYTES + 1 bytes are read now."""
    big = tmp_path / "task.yaml"
    with open(big, "wb") as handle:
        handle.write(b"id: x\nproblem_statement: |\n")
        handle.write(b"  " + b"y" * 1000 + b"\n")
        handle.truncate(MAX_YAML_BYTES + 10)
    with pytest.raises(TaskSpecError, match=f"over the {MAX_YAML_BYTES:,} bytes"):
        load_task(tmp_path)


def test_an_unreadable_file_and_the_error_class_are_the_callers(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match=r"agent.yaml: cannot read it \(No such file or directory\)"):
        load_yaml_file(tmp_path / "agent.yaml", error=AgentError)


def test_a_task_yaml_in_utf16_is_a_task_spec_error_not_an_internal_error(tmp_path: Path) -> None:
    (tmp_path / "task.yaml").write_bytes("id: x\ntype: bugfix\n".encode("utf-16"))
    with pytest.raises(TaskSpecError, match="task.yaml: not UTF-8 text"):
        load_task(tmp_path)


def test_the_module_examples_run() -> None:
    assert doctest.testmod(yamlfile).failed == 0


def test_the_fast_reader_agrees_with_the_bounded_one_and_leaves_every_refusal_to_it() -> None:
    """libyaml reads a valid file (25x faster: importing the package reads every built task's
    task.yaml); anything it cannot vouch for goes to the bounded reader, which names the problem."""
    for path in sorted((Path(__file__).parents[1] / "task_suites" / "starter").glob("*/task.yaml")):
        text = path.read_text(encoding="utf-8")
        fast, value = yamlfile._read_fast(text)
        assert fast and value == yamlfile._BoundedLoader(text).get_single_data(), path
    for bad in (BOMB, "a: 1\na: 2\n", "k: {0x1: a, 1: b}\n", "[" * 70 + "]" * 70):
        assert yamlfile._read_fast(bad)[0] is False, bad
    with pytest.raises(TaskSpecError, match="line 1, column 13: duplicate key '1'"):
        load_yaml("k: {0x1: a, 1: b}\n", "t.yaml")


@pytest.mark.parametrize("char", ["\x07", "\x00", "\x1b", "\ufffe"])
def test_a_control_character_is_a_task_spec_error_naming_its_line_and_column(char: str) -> None:
    """Issue 13's audit: the slow reader's constructor raised for a control character before its ``try``,
    so ``repogym validate`` exited 3 with a traceback instead of naming the file's problem."""
    with pytest.raises(TaskSpecError, match=r"^task.yaml: line 2, column 4: invalid YAML: the character U\+[0-9A-F]{4} "):
        load_yaml(f"id: x\nb: {char}b\n", "task.yaml")


@pytest.mark.parametrize(("tail", "message"), [
    ("bad: [1, 2\n", r"line 100002, column 1: invalid YAML: did not find expected ',' or ']'"),
    ("id: again\n", r"line 100001, column 1: duplicate key 'id'; each field may appear once"),
    ("x: " + "[" * 70 + "]" * 70 + "\n", r"line 100001, column 67: nested deeper than 64 levels"),
])
def test_a_large_refused_file_is_named_from_libyaml_without_the_slow_reader(tail: str, message: str) -> None:
    """Issue 13's audit: a task.yaml just under the size limit that libyaml refused went to the pure-Python
    reader for its message, 32 to 56 s. Past SLOW_READER_CHARS libyaml's own reason and place are given."""
    text = "id: x\n" + "".join(f"k{i}: value {i}\n" for i in range(99_999)) + tail
    assert len(text) > yamlfile.SLOW_READER_CHARS
    started = time.perf_counter()
    with pytest.raises(TaskSpecError, match=rf"^task.yaml: {message}"):
        load_yaml(text, "task.yaml")
    assert time.perf_counter() - started < 10  # the slow reader alone takes over 10 s on this file


def test_a_file_with_more_values_than_the_node_limit_is_refused_where_it_passes_it() -> None:
    """Issue 13's audit: a 4 MiB task.yaml holding a flow list of 2 million items took 43 s to read (every
    value composed, then built). The values are counted from the parser's events first, and the count
    stops at the one past MAX_YAML_NODES, named by line and column."""
    many = "id: x\ntags: [" + ",".join(["a"] * (yamlfile.MAX_YAML_NODES + 10)) + "]\n"
    with pytest.raises(TaskSpecError, match=r"^task.yaml: line 2, column \d+: more than 250,000 values; a YAML file "
                                            r"here holds fewer$"):
        load_yaml(many, "task.yaml")
    # the value past the limit: the root mapping, "id", "x", "tags" and the list are five, so the 249,996th
    # tag, after "tags: [" and "a," per tag before it
    column = 8 + 2 * (yamlfile.MAX_YAML_NODES + 1 - 5 - 1)
    with pytest.raises(TaskSpecError, match=rf"line 2, column {column}: "):
        load_yaml(many, "task.yaml")
    ids = [f"tests/test_module_{i % 97}.py::test_case_{i}" for i in range(40_000)]  # a large real suite's ids
    assert load_yaml("id: x\npass_to_pass: [" + ", ".join(ids) + "]\n", "task.yaml")["pass_to_pass"] == ids
