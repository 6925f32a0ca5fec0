"""Problem statements of mined tasks: which tests fail and how, never the fix.

Shared by the mutation and history miners; a statement quotes at most one short line of each
failure, with this machine's paths replaced, so the same task reads the same wherever it was mined.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from repogym_gym.paths import default_cache_dir

__all__ = ["MAX_STATEMENT_MESSAGE", "failing_tests_statement", "statement_message"]

#: Longest failure message quoted in a problem statement, characters.
MAX_STATEMENT_MESSAGE = 200


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


def failing_tests_statement(package: str, f2p: list[str], messages: dict[str, str]) -> str:
    """The problem statement of a mined task: the failing ``f2p`` ids (at most 10) with one short
    line of each one's failure message, and what to do."""
    lines = [f"Some behaviour of `{package}` is broken: these tests of its own test suite fail.", ""]
    for test_id in f2p[:10]:
        message = statement_message(messages.get(test_id))
        lines.append(f"- `{test_id}`" + (f": {message}" if message else ""))
    if len(f2p) > 10:
        lines.append(f"- ... and {len(f2p) - 10} more")
    lines += ["", "Find the fault in the library and fix it so these tests pass again; do not change the tests."]
    return "\n".join(lines)
