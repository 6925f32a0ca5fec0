"""``repogym report RESULTS_DIR`` and ``repogym leaderboard RESULTS_DIR...``."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from repogym_gym.cli.output import stdout_console
from repogym_gym.report import (
    leaderboard_rows,
    load_report,
    print_leaderboard,
    print_report,
    write_report,
)

__all__ = ["ReportFormat", "leaderboard_command", "report_command"]

KOption = Annotated[int | None, typer.Option("-k", min=1, help="The k of pass@k.",
                                             show_default="the run's samples per task")]


class ReportFormat(str, Enum):
    terminal = "terminal"
    markdown = "markdown"
    html = "html"


def report_command(
    results_dir: Annotated[Path, typer.Argument(help="A results directory written by `repogym run --out`.", show_default=False)],
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="terminal (Rich tables), markdown or html.")] = ReportFormat.terminal,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File to write (markdown, html).",
                                             show_default="RESULTS_DIR/report/index.html or report.md")] = None,
    k: KOption = None,
) -> None:
    """Report a run: the leaderboard (mean score, pass@1, pass@k), scores per task and agent, and,
    in HTML, plots of the score distribution, per-task scores and time per episode."""
    report = load_report(results_dir, k=k)
    console = stdout_console()
    if fmt is ReportFormat.terminal:
        print_report(report, console)
        return
    path = write_report(report, fmt.value, out)
    console.print(f"wrote {path}", highlight=False, soft_wrap=True, markup=False)


def leaderboard_command(
    results_dirs: Annotated[list[Path], typer.Argument(help="One or more results directories.", show_default=False)],
    k: KOption = None,
) -> None:
    """Rank the agents of one or several runs by pass@1, then mean score."""
    k_used, rows = leaderboard_rows(results_dirs, k=k)
    print_leaderboard(rows, k_used, stdout_console(), show_run=len(results_dirs) > 1)
