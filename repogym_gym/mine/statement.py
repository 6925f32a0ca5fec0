"""Problem statements of mined tasks: which tests fail and how, never the fix.

Shared by the mutation and history miners; a statement quotes at most one short line of each
failure, with this machine's paths replaced, so the same task reads the same wherever it was mined.
A statement is framed by what the tests show (:func:`statement_kind`): tests that cannot even
import or find what they call ask for a *feature* ("implement"), tests that run and fail for a
*bugfix* ("find the fault"). History tasks start with the commit's own message (:func:`commit_text`).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Literal

from repogym_gym.paths import default_cache_dir

__all__ = ["MAX_COMMIT_TEXT", "MAX_STATEMENT_MESSAGE", "commit_text", "failing_tests_statement", "statement_kind",
           "statement_message"]

#: Longest failure message quoted in a problem statement, characters.
MAX_STATEMENT_MESSAGE = 200
#: Longest commit message body a history statement quotes, characters.
MAX_COMMIT_TEXT = 2000
#: A failure that says something the tests use does not exist yet (the task asks for a feature).
_MISSING = re.compile(r"^(not collected|(ImportError|ModuleNotFoundError|NameError)\b|AttributeError: .*has no attribute)")
#: ``Merge pull request #12 from user/branch``, ``Merge branch 'x' into y``: a merge's subject, not a problem.
_MERGE = re.compile(r"^Merge (pull request #\d+|branch |remote-tracking branch |tag )")
#: Trailers that say who, not what.
_TRAILER = re.compile(r"^(Signed-off-by|Co-authored-by|Reviewed-by|Acked-by|Tested-by|Reported-by|Change-Id|Cc):", re.I)

StatementKind = Literal["bugfix", "feature"]


def statement_message(message: str | None) -> str | None:
    """A failure message fit for a problem statement: its first line, at most
    :data:`MAX_STATEMENT_MESSAGE` characters, with this machine's home, temporary and cache
    directories replaced, so a task reads the same whichever machine mined it (an assertion that
    prints ``os.environ`` would otherwise quote the miner's paths and variables)."""
    if not message:
        return None
    line = message.strip().splitlines()[0] if message.strip() else ""
    roots = {str(default_cache_dir()): "<cache>", tempfile.gettempdir(): "<tmp>", str(Path.home()): "<home>"}
    for root, placeholder in sorted(roots.items(), key=lambda item: -len(item[0])):
        if len(root) > 1:
            line = line.replace(root, placeholder)
    if len(line) > MAX_STATEMENT_MESSAGE:
        line = line[: MAX_STATEMENT_MESSAGE - 1] + "…"
    return line or None


def statement_kind(f2p: list[str], messages: dict[str, str]) -> StatementKind:
    """``feature`` when every one of ``f2p`` fails because something it uses does not exist (not
    collected, an ImportError or NameError, an AttributeError for a missing name), else ``bugfix``."""
    if f2p and all(_MISSING.match(messages.get(i) or "not collected") for i in f2p):
        return "feature"
    return "bugfix"


def failing_tests_statement(package: str, f2p: list[str], messages: dict[str, str], kind: StatementKind = "bugfix") -> str:
    """The problem statement of a mined task: the failing ``f2p`` ids (at most 10) with one short
    line of each one's failure message, and what to do (framed by ``kind``)."""
    if kind == "feature":
        lines = [f"`{package}` lacks behaviour that these tests of its own test suite expect:", ""]
    else:
        lines = [f"Some behaviour of `{package}` is broken: these tests of its own test suite fail.", ""]
    for test_id in f2p[:10]:
        message = statement_message(messages.get(test_id))
        lines.append(f"- `{test_id}`" + (f": {message}" if message else ""))
    if len(f2p) > 10:
        lines.append(f"- ... and {len(f2p) - 10} more")
    if kind == "feature":
        lines += ["", "Implement it in the library so these tests pass; do not change the tests."]
    else:
        lines += ["", "Find the fault in the library and fix it so these tests pass again; do not change the tests."]
    return "\n".join(lines)


def commit_text(message: str, branch_subjects: list[str] | None = None) -> str:
    """What a history statement quotes of a commit: its message without trailers (``Signed-off-by``...),
    at most :data:`MAX_COMMIT_TEXT` characters. A merge's subject (``Merge pull request #12 from
    user/branch``) says nothing: its body (GitHub's holds the pull request's title) and the subjects
    of the merged branch's commits (``branch_subjects``, at most 10) stand for it instead.

    >>> commit_text("Merge pull request #7 from a/b\\n\\nParse ISO weeks", ["Add week parsing", "Test weeks"])
    'Parse ISO weeks\\n\\n- Add week parsing\\n- Test weeks'
    """
    lines = [line.rstrip() for line in message.strip().splitlines() if not _TRAILER.match(line.strip())]
    if lines and _MERGE.match(lines[0]):
        lines = lines[1:]
        subjects = [f"- {s.strip()}" for s in (branch_subjects or [])[:10] if s.strip() and not _MERGE.match(s.strip())]
        lines = [*lines, "", *subjects] if subjects else lines
    text = "\n".join(lines).strip()
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    if len(text) > MAX_COMMIT_TEXT:
        text = text[: MAX_COMMIT_TEXT - 1] + "…"
    return text
