"""The attack × sandbox table, built from the suite's ``@attack`` markers.

Every test of the suite asserts the outcome its marker declares for the sandbox it runs in, so
the table is what a green run of the suite shows. A column whose sandbox is not in
:data:`~tests.redteam.helpers.SANDBOXES` yet reads "pending".

Usage::

    python -m tests.redteam.table            # print the table
    python -m tests.redteam.table --write    # rewrite it in tests/redteam/README.md and README.md
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import pytest

from tests.redteam.helpers import SANDBOXES, TABLE_SANDBOXES, outcome_in

README = Path(__file__).with_name("README.md")
#: The project's README, which carries the same table.
PROJECT_README = Path(__file__).parents[2] / "README.md"
#: The suite's modules, in table order (any other test module follows, by name).
ORDER = ("test_tampering", "test_leaks", "test_escapes", "test_resources", "test_controls")
BEGIN, END = "<!-- attack-table:begin -->", "<!-- attack-table:end -->"


def attacks() -> list[tuple[str, pytest.Mark]]:
    """(``module::test``, marker) of every attack test, in file order."""
    found = []
    present = sorted(p.stem for p in README.parent.glob("test_*.py"))
    for name in [*[m for m in ORDER if m in present], *[m for m in present if m not in ORDER]]:
        module = importlib.import_module(f"tests.redteam.{name}")
        functions = [f for n, f in vars(module).items() if n.startswith("test_") and inspect.isfunction(f)]
        for function in sorted(functions, key=lambda f: f.__code__.co_firstlineno):
            marks = [m for m in getattr(function, "pytestmark", []) if m.name == "attack"]
            if marks:
                found.append((f"{name}.py::{function.__name__}", marks[0]))
    return found


def render_table() -> str:
    """The Markdown table: one row per attack, one column per sandbox."""
    head = ["group", "attack", *TABLE_SANDBOXES, "test"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for test, mark in attacks():
        cells = [mark.kwargs["group"], mark.kwargs["name"]]
        cells += [outcome_in(mark, s) if s in SANDBOXES else "pending" for s in TABLE_SANDBOXES]
        rows.append("| " + " | ".join([*cells, f"`{test}`"]) + " |")
    return "\n".join(rows) + "\n"


def write_readme() -> None:
    """Rewrite the table between the markers of this suite's README and of the project's."""
    for readme in (README, PROJECT_README):
        text = readme.read_text()
        before, rest = text.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
        readme.write_text(f"{before}{BEGIN}\n{render_table()}{END}{after}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write_readme()
    else:
        print(render_table(), end="")
