"""Text an agent or a record receives is valid UTF-8: the one rule, in one place.

Python carries bytes that are not UTF-8 as lone surrogates: a file name ``b"bad\\xff.py"``
listed with :func:`os.scandir` is ``"bad\\udcff.py"``, and JSON's ``"\\ud800"`` escape decodes
to a lone surrogate too. Such a string cannot be encoded as UTF-8, so it would crash whatever
writes it (a trajectory, a result file, a tokenizer). The rule, everywhere text reaches an
observation, ``info``, a grade or a record: **every lone surrogate becomes U+FFFD** (the
replacement character), exactly as undecodable bytes of file content and of command output
already do (they are decoded with ``errors="replace"``). Messages that must name such a file
exactly quote its bytes (``b'bad\\xff.py'``), which is ASCII.

Actions are the other direction: an action whose text holds a lone surrogate is refused
(:mod:`repogym_gym.actions`), so nothing the agent sends needs repairing.

Example:
    >>> safe_text("bad\\udcff.py")
    'bad\\ufffd.py'
    >>> safe_json({"k\\ud800": ["ok", 1, ("x\\udcff",)]})
    {'k\\ufffd': ['ok', 1, ('x\\ufffd',)]}
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["first_surrogate", "replace_paths", "safe_json", "safe_text", "short_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def first_surrogate(text: str) -> int | None:
    """Index of the first lone surrogate in ``text``, or None when it encodes as UTF-8."""
    if text.isascii():
        return None
    match = _SURROGATE.search(text)
    return match.start() if match else None


def safe_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (unchanged when it is valid UTF-8)."""
    if text.isascii() or first_surrogate(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def safe_json(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, tuples, scalars) with :func:`safe_text` applied to every
    string, dict keys included. Other values are returned as they are."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_text(k) if isinstance(k, str) else k: safe_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [safe_json(v) for v in value]
    if isinstance(value, tuple):
        return tuple(safe_json(v) for v in value)
    return value


def short_text(text: str, limit: int) -> str:
    """``text`` as printable ASCII, at most ``limit`` characters (``...`` marks a cut).

    For text that code under test can choose and that reaches the agent (a violation naming a
    function of the submission, a parser's complaint about a report the judged process wrote, a
    crash message): a grade is an observation, so what such text carries is kept to a few hundred
    bytes, never a hidden test file.

    Example:
        >>> short_text("caf\\u00e9\\nline two", 12)
        'caf??line...'
    """
    cleaned = "".join(c if " " <= c <= "~" else "?" for c in text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


def replace_paths(text: str | None, shown: Mapping[str | os.PathLike[str], str]) -> str | None:
    """``text`` with each directory of ``shown`` (as given and as its real path) followed by ``/``
    replaced by what ``shown`` maps it to: a host path in a message the agent or trainer reads
    becomes a repository path (``{copy: ""}``) or a placeholder. None stays None.

    >>> replace_paths("test module /tmp/g/repo/tests/t.py: x", {"/tmp/g/repo": "", "/tmp/g/scratch": "<scratch>/"})
    'test module tests/t.py: x'
    """
    if text is None:
        return None
    for root, replacement in shown.items():
        for form in dict.fromkeys((os.fspath(root), os.path.realpath(root))):
            text = text.replace(form + "/", replacement)
    return text
