"""Reports over a results directory: a Rich terminal view, Markdown, and a self-contained HTML page.

:func:`~repogym_gym.report.tables.load_report` computes the figures once; the renderers only
format them. matplotlib is imported only when an HTML page is drawn.

Example:
    >>> report = load_report(Path("runs/starter"))                       # doctest: +SKIP
    >>> write_report(report, "html")                                     # doctest: +SKIP
    PosixPath('runs/starter/report/index.html')
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from repogym_gym.errors import RunError
from repogym_gym.private import write_private
from repogym_gym.report.html import render_html
from repogym_gym.report.markdown import render_markdown
from repogym_gym.report.tables import (
    LeaderboardRow,
    Report,
    leaderboard_rows,
    load_report,
)
from repogym_gym.report.terminal import print_leaderboard, print_report

__all__ = [
    "LeaderboardRow",
    "Report",
    "default_report_path",
    "leaderboard_rows",
    "load_report",
    "print_leaderboard",
    "print_report",
    "render_html",
    "render_markdown",
    "write_report",
]

FileFormat = Literal["markdown", "html"]


def default_report_path(results_dir: Path, fmt: FileFormat) -> Path:
    """``<results_dir>/report/index.html`` or ``<results_dir>/report/report.md``."""
    return results_dir / "report" / ("index.html" if fmt == "html" else "report.md")


def write_report(report: Report, fmt: FileFormat, out: Path | None = None) -> Path:
    """Render ``report`` as ``fmt`` and write it (whole, through a temporary file) to ``out``.

    Args:
        report: The report.
        fmt: ``markdown`` or ``html``.
        out: Destination file (default: :func:`default_report_path`).

    Returns:
        The path written.

    Raises:
        RunError: when the file cannot be written.
    """
    path = out if out is not None else default_report_path(Path(report.results_dir), fmt)
    text = render_html(report) if fmt == "html" else render_markdown(report)
    try:
        write_private(path, text)  # 0600, in directories made 0700: it quotes episodes
    except OSError as exc:
        raise RunError(f"{path}: cannot write the report: {exc.strerror or exc}") from None
    return path
