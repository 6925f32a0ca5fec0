"""Reports as Rich tables: the leaderboard and the per-task scores of every agent.

Every cell is a :class:`rich.text.Text`, so a task id or an error message is printed as it is
and never read as Rich markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from rich.console import Console
from rich.table import Table
from rich.text import Text

from repogym_gym.report.tables import (
    MISSING,
    LeaderboardRow,
    Report,
    TaskCell,
    fmt_rate,
    fmt_seconds,
    metric_notes,
    pass_at_k_note,
    run_counts,
)

__all__ = ["leaderboard_table", "print_leaderboard", "print_report", "run_names", "task_table"]


def run_names(runs: Sequence[str]) -> dict[str, str]:
    """A short name per results directory: its last path part when those are unique, else the path."""
    names = {run: PurePath(run).name or run for run in runs}
    return names if len(set(names.values())) == len(names) else {run: run for run in runs}


def leaderboard_table(rows: Sequence[LeaderboardRow], k: int, *, show_run: bool = False, title: str = "leaderboard") -> Table:
    """The leaderboard (rows in the order given); a ``run`` column (see :func:`run_names`) when ``show_run``."""
    table = Table(title=title)
    names = run_names(list(dict.fromkeys(row.run for row in rows)))
    if show_run:
        table.add_column("run", overflow="fold")
    table.add_column("agent", no_wrap=True)
    for name in ("episodes", "graded", "infra errors", "mean score", "pass@1", *([f"pass@{k}"] if k != 1 else []),
                 "tasks solved", "s/episode"):
        table.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        infra = Text(str(row.infra_errors), style="yellow" if row.infra_errors else "")
        cells = [Text(row.agent), Text(str(row.episodes)), Text(str(row.graded)), infra,
                 Text(fmt_rate(row.mean_score)), Text(fmt_rate(row.pass_at_1)),
                 *([Text(fmt_rate(row.pass_at_k))] if k != 1 else []),
                 Text(f"{row.tasks_solved}/{row.tasks}"), Text(fmt_seconds(row.mean_duration_s))]
        table.add_row(*([Text(names[row.run])] if show_run else []), *cells)
    return table


def _cell(cell: TaskCell | None) -> Text:
    if cell is None:
        return Text(MISSING, style="dim")
    if cell.graded == 0:
        return Text(f"infra error x{cell.infra_errors}", style="yellow")
    score = cell.mean_score or 0.0
    text = Text(f"{score:.2f}", style="green" if cell.passed == cell.graded else "red" if cell.passed == 0 else "")
    text.append(f" {cell.passed}/{cell.graded} passed", style="dim")
    if cell.infra_errors:
        text.append(f" +{cell.infra_errors} infra", style="yellow")
    return text


def task_table(report: Report) -> Table:
    """Tasks as rows, agents as columns: mean score, passing/graded samples, infra errors."""
    table = Table(title="mean score per task (passed/graded samples)")
    table.add_column("task", overflow="fold", min_width=min(40, max((len(t) for t in report.task_ids), default=4)))
    for agent in report.agents:
        table.add_column(agent, no_wrap=True)
    for task_id in report.task_ids:
        table.add_row(Text(task_id), *(_cell(report.cell(task_id, agent)) for agent in report.agents))
    return table


def print_leaderboard(rows: Sequence[LeaderboardRow], k: int, console: Console, *, show_run: bool = False) -> None:
    """Print the leaderboard of one or several runs, and what pass@k means."""
    if not rows:
        console.print("no agents: the results directories hold no episodes", highlight=False)
        return
    console.print(leaderboard_table(rows, k, show_run=show_run))
    for n in sorted({1, k}):
        console.print(Text(pass_at_k_note(n), style="dim"))


def print_report(report: Report, console: Console) -> None:
    """Print a run's report: leaderboard, per-task scores and what the columns mean."""
    console.print(Text(f"{report.results_dir}: {run_counts(report).replace(' · ', ', ')}"))
    if not report.episodes:
        console.print("no episodes recorded yet", highlight=False)
        return
    console.print(leaderboard_table(report.leaderboard, report.k))
    console.print(task_table(report))
    for note in metric_notes(report.k):
        console.print(Text(note, style="dim"))
