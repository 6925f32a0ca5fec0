"""``repogym realcode``: the main job on real code (build or load, validate, play through gym.make)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from repogym_gym.cli.output import stdout_console
from repogym_gym.mainjob import run_main_job
from repogym_gym.paths import realcode_recipe
from repogym_gym.suites import load_recipe

__all__ = ["DEFAULT_RECIPE", "realcode_command"]

DEFAULT_RECIPE = realcode_recipe()


def realcode_command(
    recipe: Annotated[Path, typer.Option(help="Suite recipe to build.")] = DEFAULT_RECIPE,
    repeats: Annotated[int, typer.Option(min=1, help="Golden grades per task validation.")] = 3,
    jobs: Annotated[int, typer.Option(min=1, help="Packages mined and tasks validated at once (default: one per core).")]
    = os.cpu_count() or 1,
) -> None:
    """Build (or load from the cache) the real-code suite, validate every task, and run the golden
    and noop agents through gym.make. Exit code 0 only if every golden earns 1 and every noop 0."""
    load_recipe(recipe)  # a missing or malformed recipe is one error line, before any progress bar is drawn
    err = Console(stderr=True)
    started = time.monotonic()

    def log(text: str) -> None:
        """A line per event where no bar is drawn (a CI log, nohup): 35 minutes of silence looked hung."""
        if not err.is_terminal:
            err.print(f"[{time.monotonic() - started:5.0f} s] {text}", highlight=False, markup=False, soft_wrap=True)

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        job = bar.add_task("building the suite", total=None)

        def on_task(finished: int, total: int, task_id: str) -> None:
            bar.update(job, total=total, completed=finished, description=f"{task_id}: validate, golden, noop")
            log(f"checking {task_id} ({finished}/{total} tasks done)")

        def on_build(line: str) -> None:
            bar.update(job, description=f"mining {line}"[:100])
            log(f"mining {line}")

        suite, rows = run_main_job(recipe, repeats=repeats, jobs=jobs, on_task=on_task, on_build=on_build)
        bar.update(job, completed=len(rows))
    table = Table(title=f"repogym realcode ({suite.name})")
    table.add_column("task", no_wrap=True)
    for name in ("package", "golden", "noop", "sound"):
        table.add_column(name, no_wrap=True)
    table.add_column("seconds", justify="right")
    for row in rows:
        good = "[green]ok[/]" if row.sound else "[red]FAIL[/]"
        table.add_row(row.task_id, row.package, f"{row.golden:.3f}", f"{row.noop:.3f}", good, f"{row.seconds:.1f}")
    out = stdout_console()
    out.print(table)
    bad = [r for r in rows if not r.ok]
    for row in bad:
        out.print(f"[red]{row.task_id}[/] golden {row.golden:.3f} noop {row.noop:.3f} " + "; ".join(row.problems),
                  highlight=False, soft_wrap=True)
    packages = sorted({r.package for r in rows})
    out.print(f"{len(rows) - len(bad)}/{len(rows)} tasks from {len(packages)} packages ({', '.join(packages)}): "
              "golden 1.000 and noop 0.000" if not bad else f"{len(bad)} of {len(rows)} tasks failed")
    raise typer.Exit(1 if bad or not rows else 0)
