"""``repogym mine mutate|history``: mine bugfix tasks from a pinned sdist or from fix commits."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from repogym_gym.cli.output import stdout_console
from repogym_gym.mine.history import HistoryOptions, mine_history
from repogym_gym.mine.mutation import MutationReport, operator_yield
from repogym_gym.spec import TestSpec
from repogym_gym.suites import PackageRecipe, mine_package

__all__ = ["history", "mine_app", "mutate", "yield_table"]

mine_app = typer.Typer(help="Mine tasks from real code.", no_args_is_help=True)


def yield_table(report: MutationReport) -> Table:
    """Outcomes per operator (task, survived, equivalent, too_broad, ...) and the yield."""
    outcomes = sorted({o for row in report.per_operator.values() for o in row})
    table = Table(title=f"{report.package}: {len(report.tasks)} tasks from {report.candidates} candidates "
                        f"in {report.duration_s:.0f} s")
    table.add_column("operator", no_wrap=True)
    for outcome in outcomes:
        table.add_column(outcome, justify="right")
    table.add_column("yield", justify="right")
    shares = operator_yield(report)
    for operator, row in sorted(report.per_operator.items()):
        table.add_row(operator, *[str(row.get(o, 0)) for o in outcomes], f"{shares[operator]:.0%}")
    return table


@mine_app.command("mutate")
def mutate(
    package: Annotated[str, typer.Option(help="Package name on the index.")],
    version: Annotated[str, typer.Option(help="Pinned version.")],
    sha256: Annotated[str, typer.Option(help="sha256 of the sdist.")],
    tests: Annotated[list[str], typer.Option("--tests", help="Test path inside the sdist (repeatable).")],
    file: Annotated[list[str], typer.Option("--file", help="Source file to mutate (repeatable).")],
    out: Annotated[Path, typer.Option(help="Directory to write the tasks into.")],
    requirement: Annotated[list[str] | None, typer.Option("--requirement", help="Test environment requirement (repeatable).")] = None,
    tasks: Annotated[int, typer.Option(min=1, help="Tasks to keep.")] = 6,
    seed: Annotated[int, typer.Option(help="Seed of the candidate order.")] = 0,
) -> None:
    """Mine bugfix tasks by injecting faults into a pinned sdist; prints the yield per operator."""
    recipe = PackageRecipe(package=package, version=version, sha256=sha256, requirements=requirement or ["pytest"],
                           tests=tests, files=file, tasks=tasks, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    err = Console(stderr=True)
    report = mine_package(recipe, out, progress=lambda line: err.print(line, highlight=False))
    stdout_console().print(yield_table(report))
    stdout_console().print(f"{len(report.tasks)} tasks written to {out}")
    raise typer.Exit(0 if report.tasks else 1)


@mine_app.command("history")
def history(
    repo: Annotated[Path, typer.Argument(help="A local git repository (clone or bare).")],
    rev_range: Annotated[str, typer.Argument(help="Commit range, e.g. v1.0..main.")],
    out: Annotated[Path, typer.Option(help="Directory to write the tasks into.")],
    package: Annotated[str, typer.Option(help="Name used in task ids and problem statements.")],
    test_command: Annotated[str, typer.Option(help="Test command with {junit}.")] = "python -m pytest -q --junitxml={junit} tests",
    max_files: Annotated[int, typer.Option(min=1, help="Most source files a fix may change.")] = 10,
    max_lines: Annotated[int, typer.Option(min=1, help="Most source lines a fix may change.")] = 300,
) -> None:
    """Mine bugfix tasks from fix commits: each commit changing source and tests is tried three
    ways (parent, parent + new tests, parent + new tests + fix); the new tests become hidden tests."""
    out.mkdir(parents=True, exist_ok=True)
    options = HistoryOptions(package=package, max_files_changed=max_files, max_lines_changed=max_lines)
    tests = TestSpec(command=test_command, hidden="hidden")
    err = Console(stderr=True)
    mined, report = mine_history(repo, rev_range, tests, {"tags": ["history", package]}, options, out, env_dir=None,
                                 progress=lambda line: err.print(line, highlight=False))
    table = Table(title=f"{package}: {len(mined)} tasks from {report.candidates} candidate commits")
    table.add_column("commit", no_wrap=True)
    table.add_column("outcome")
    for commit, outcome in report.outcomes.items():
        table.add_row(commit[:12], outcome)
    stdout_console().print(table)
    raise typer.Exit(0 if mined else 1)
