r"""A git-style unified diff of one file, as ``git apply`` accepts it.

Lines are split on ``\n`` only, as git does: a ``\r`` stays part of its line, so CRLF files
round-trip. A last line without a newline is marked ``\ No newline at end of file``.

Example:
    >>> print(unified_diff("a = 1\n", "a = 2\n", "pkg/mod.py"), end="")
    diff --git a/pkg/mod.py b/pkg/mod.py
    --- a/pkg/mod.py
    +++ b/pkg/mod.py
    @@ -1 +1 @@
    -a = 1
    +a = 2
"""

from __future__ import annotations

import difflib
import re

__all__ = ["unified_diff"]

_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")
_UNSAFE_PATH = re.compile(r'[\s"\\\x00-\x1f\x7f]')


def _check_path(path: str) -> None:
    parts = path.split("/")
    if not path or path.startswith("/") or ".." in parts or "" in parts or _UNSAFE_PATH.search(path):
        raise ValueError(
            f"path {path!r} cannot appear in a patch: use a relative posix path such as "
            "'pkg/mod.py', without '..', empty parts, whitespace, quotes or backslashes"
        )


def unified_diff(original: str, mutated: str, path: str) -> str:
    """The patch that turns ``original`` into ``mutated``, with 3 lines of context.

    Args:
        original: The file's text before.
        mutated: The file's text after.
        path: The file's path relative to the repository root, posix separators.

    Returns:
        ``diff --git a/<path> b/<path>``, ``---``/``+++`` headers and hunks; ``""`` when the
        texts are equal. ``unified_diff(mutated, original, path)`` is the reverse patch.

    Raises:
        ValueError: ``path`` is absolute, climbs out with ``..``, or holds characters git
            would quote (whitespace, quotes, backslashes, control characters).
    """
    _check_path(path)
    if original == mutated:
        return ""
    out = [f"diff --git a/{path} b/{path}\n"]
    hunks = difflib.unified_diff(
        _LINES.findall(original),
        _LINES.findall(mutated),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=3,
        lineterm="\n",
    )
    for line in hunks:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
