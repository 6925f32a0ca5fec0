"""Issue 15: typed answer contracts and expression equivalence (the ``answer`` reward kind)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from repogym_gym.equivalence import MAX_ANSWER_BYTES, equivalent, read_answer
from repogym_gym.spec_grading import AnswerSpec


def spec(expected: str, contract: str, **more: Any) -> AnswerSpec:
    return AnswerSpec(expected=expected, contract=contract, **more)


@pytest.mark.parametrize(("contract", "expected", "answer", "same"), [
    ("int", "31", " 31\n", True),
    ("int", "31", "+31", True),
    ("int", "31", "31.0", False),
    ("int", "31", "thirty-one", False),
    ("int", "31", "9" * 5000, False),  # past the digit bound: unparseable, never a crash
    ("float", "0.1", "0.1000000000001", True),
    ("float", "0.1", "0.11", False),
    ("float", "0.1", "nan", False),
    ("float", "0.1", "inf", False),
    ("string", "Paris", "  Paris \n", True),
    ("string", "Paris", "paris", False),
    ("set", "a, b, c", "c\nb\na\na", True),
    ("set", "a, b, c", '["a", "b", "c"]', True),
    ("set", "a, b, c", "a, b", False),
    ("json", '{"a": [1, 2]}', '{ "a" : [1,2] }', True),
    ("json", '{"a": [1, 2]}', '{"a": [1.0, 2]}', False),  # types count: 1 and 1.0 differ
    ("json", '{"a": true}', '{"a": 1}', False),
    ("json", '{"a": 1}', "[" * 100_000, False),  # nested too deep: unparseable
])
def test_each_contract_compares_by_its_own_rule(contract: str, expected: str, answer: str, same: bool) -> None:
    assert equivalent(answer, spec(expected, contract))[0] is same


def test_string_normalisation_is_the_task_s_choice() -> None:
    loose = spec("New  York", "string", normalise=["strip", "lower", "collapse_whitespace"])
    assert equivalent(" new york ", loose)[0] is True
    assert equivalent("new york", spec("New York", "string"))[0] is False


def test_a_float_tolerance_is_the_task_s() -> None:
    assert equivalent("3.2", spec("3.14159", "float", abs_tol=0.1))[0] is True
    assert equivalent("3.3", spec("3.14159", "float", abs_tol=0.1))[0] is False


@pytest.mark.slow
@pytest.mark.parametrize(("answer", "expected", "same"), [
    ("2*(x+1)", "2*x+2", True),
    ("x^2 - 1", "(x-1)*(x+1)", True),
    ("sin(x)**2 + cos(x)**2", "1", True),
    ("2*x", "2*x + 1", False),
    ("sqrt(8)", "2*sqrt(2)", True),
])
def test_expressions_are_equivalent_symbolically(answer: str, expected: str, same: bool) -> None:
    assert equivalent(answer, spec(expected, "expression", variables=["x"])) == (
        same, "equivalent" if same else "not equivalent (expression)")


@pytest.mark.parametrize(("answer", "why"), [
    ("__import__('os').system('true')", "only calls of"),
    ("x.__class__", "Attribute is not allowed"),
    ("lambda: 1", "Lambda is not allowed"),
    ("y + 1", "unknown name 'y'"),
    ("'x'", "only numbers"),
    ("x if x else 1", "IfExp is not allowed"),
    ("x" + "+x" * 2000, "longer than 2000 characters"),
    ("2x", "not an expression"),
])
def test_an_expression_is_parsed_by_an_allowlist_never_run(answer: str, why: str) -> None:
    same, reason = equivalent(answer, spec("x", "expression", variables=["x"]))
    assert same is False and reason.startswith("unparseable expression") and why in reason


@pytest.mark.slow
def test_an_expression_that_takes_forever_to_simplify_is_cut_at_the_time_limit() -> None:
    same, reason = equivalent("2*x + 2 + ((x+1)**5000 - (x**2+2*x+1)**2500)",  # right, but a degree-5000 expansion
                              spec("2*(x+1)", "expression", variables=["x"], timeout_s=3))
    assert same is False and reason in ("the symbolic check took longer than 3 s",
                                        "the symbolic check ran out of memory (1 GiB)"), reason


def test_a_reference_that_does_not_parse_is_refused_at_load() -> None:
    with pytest.raises(ValidationError, match="expected 'thirty' is not a valid int answer: not an integer"):
        spec("thirty", "int")
    with pytest.raises(ValidationError, match="unknown name 'y'"):
        spec("y + 1", "expression", variables=["x"])
    with pytest.raises(ValidationError, match="must be relative"):
        AnswerSpec(path="/etc/answer", expected="1", contract="int")


def test_an_answer_file_must_be_a_small_regular_utf8_file(tmp_path: Path) -> None:
    (tmp_path / "answer.txt").write_text("31\n")
    assert read_answer(tmp_path, "answer.txt") == ("31\n", "")
    assert read_answer(tmp_path, "missing.txt") == (None, "no answer: missing.txt does not exist")
    (tmp_path / "link.txt").symlink_to(tmp_path / "answer.txt")
    assert read_answer(tmp_path, "link.txt")[0] is None and "regular file" in read_answer(tmp_path, "link.txt")[1]
    os.mkfifo(tmp_path / "fifo.txt")  # opening must not wait for a writer
    assert read_answer(tmp_path, "fifo.txt") == (None, "no answer: fifo.txt is not a regular file")
    (tmp_path / "huge.txt").write_bytes(b"1" * (MAX_ANSWER_BYTES + 1))
    assert read_answer(tmp_path, "huge.txt") == (None, f"no answer: huge.txt is larger than {MAX_ANSWER_BYTES} bytes")
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9")
    assert read_answer(tmp_path, "latin.txt") == (None, "no answer: latin.txt is not UTF-8 text (byte 3)")
    (tmp_path / "dir.txt").mkdir()
    assert read_answer(tmp_path, "dir.txt") == (None, "no answer: dir.txt is not a regular file")
