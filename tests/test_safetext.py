"""Tests for repogym_gym.safetext: the one rule making text valid UTF-8."""

from __future__ import annotations

import doctest
import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from repogym_gym import safetext
from repogym_gym.safetext import first_surrogate, safe_json, safe_text


@pytest.mark.parametrize(("text", "expected"), [
    ("plain ascii", "plain ascii"),
    ("déjà vu ✓ 😀", "déjà vu ✓ 😀"),
    (os.fsdecode(b"bad\xff.py"), "bad\ufffd.py"),                 # a file name that is not UTF-8
    (os.fsdecode(b"\xe2\x82"), "\ufffd\ufffd"),                   # a truncated sequence: one per byte
    ("\ud83d\ude00", "\ufffd\ufffd"),                             # a pair left unjoined is two lone halves
    ("\ud800x\udfff", "\ufffdx\ufffd"),
])
def test_safe_text_replaces_each_lone_surrogate_and_nothing_else(text: str, expected: str) -> None:
    assert safe_text(text) == expected


@given(st.text())
def test_safe_text_always_encodes_is_idempotent_and_keeps_valid_text(text: str) -> None:
    out = safe_text(text)
    out.encode("utf-8")
    assert safe_text(out) == out and len(out) == len(text)
    assert (out == text) == (first_surrogate(text) is None)


@given(st.binary())
def test_any_file_name_bytes_become_valid_utf8_keeping_every_decodable_character(raw: bytes) -> None:
    name = os.fsdecode(raw)
    shown = safe_text(name)
    shown.encode("utf-8")
    assert len(shown) == len(name)
    assert all(s == n for s, n in zip(shown, name, strict=False) if not 0xD800 <= ord(n) <= 0xDFFF)


@given(st.recursive(st.text() | st.integers() | st.none(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner) | st.tuples(inner), max_leaves=20))
def test_safe_json_makes_every_string_valid_and_keeps_the_shape(value: object) -> None:
    out = safe_json(value)
    json.dumps(out, ensure_ascii=False).encode("utf-8")
    assert type(out) is type(value)


def test_safetext_docstring_examples_run() -> None:
    assert doctest.testmod(safetext).failed == 0
