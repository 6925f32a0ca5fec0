"""Consoles for the CLI: tables stay whole in pipes and CI logs."""

from __future__ import annotations

from rich.console import Console

__all__ = ["PIPE_WIDTH", "stdout_console"]

#: Width used when stdout is not a terminal (Rich would assume 80 and cut columns).
PIPE_WIDTH = 160


def stdout_console() -> Console:
    """A Console on stdout; wide when stdout is a pipe or a file."""
    console = Console()
    return console if console.is_terminal else Console(width=PIPE_WIDTH)
