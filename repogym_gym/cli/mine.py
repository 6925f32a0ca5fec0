"""``repogym mine mutate|history``: mine bugfix tasks from a pinned sdist or from fix commits."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from repogym_gym.cli.output import stdout_console
from repogym_gym.errors import TaskSpecError, validation_problems
from repogym_gym.mine.history import HistoryOptions, mine_history
from repogym_gym.mine.mutation import MutationReport, operator_yield
from repogym_gym.paths import default_cache_dir
from repogym_gym.spec import PythonEnvSpec, TestSpec
from repogym_gym.suites import DEFAULT_PYTEST, PackageRecipe, build_suite, load_recipe, mine_package, with_pytest
from repogym_gym.venvs import ensure_venv

__all__ = ["from_recipe", "history", "mine_app", "mutate", "tasks_table", "yield_table"]

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


def tasks_table(report: MutationReport) -> Table:
    """Each mined task's figures: operator, function, the bug's size, the share of the suite it moves."""
    table = Table(title=f"{report.package}: the tasks ({report.tests} tests in the suite)")
    for name in ("task", "operator", "function"):
        table.add_column(name, no_wrap=True)
    for name in ("lines", "fail_to_pass", "pass_to_pass"):
        table.add_column(name, justify="right")
    suite = max(report.tests, 1)
    for row in report.summaries:
        table.add_row(row.id, row.operator, row.function, str(row.lines_changed),
                      f"{row.fail_to_pass} ({row.fail_to_pass / suite:.1%})", f"{row.pass_to_pass} ({row.pass_to_pass / suite:.0%})")
    return table


@mine_app.command("mutate")
def mutate(
    package: Annotated[str, typer.Option(help="Package name on the index.")],
    version: Annotated[str, typer.Option(help="Pinned version.")],
    sha256: Annotated[str, typer.Option(help="sha256 of the sdist.")],
    tests: Annotated[list[str], typer.Option("--tests", help="Test path inside the sdist (repeatable).")],
    file: Annotated[list[str], typer.Option("--file", help="Source file to mutate (repeatable).")],
    out: Annotated[Path, typer.Option(help="Directory to write the tasks into.")],
    requirement: Annotated[list[str] | None, typer.Option(
        "--requirement", help=f"Test environment requirement (repeatable), added to {DEFAULT_PYTEST} "
                              "unless one names pytest.")] = None,
    pythonpath: Annotated[list[str] | None, typer.Option(
        "--pythonpath", help="Import root inside the sdist (repeatable; default '.'; 'src' for a src layout).")] = None,
    tasks: Annotated[int, typer.Option(min=1, help="Tasks to keep.")] = 6,
    seed: Annotated[int, typer.Option(help="Seed of the candidate order.")] = 0,
    python: Annotated[str | None, typer.Option(
        help="CPython version of the test environment (major.minor, e.g. 3.12; one the judge runs on: "
             "3.11 or 3.12); default: the interpreter running repogym.")] = None,
) -> None:
    """Mine bugfix tasks by injecting faults into a pinned sdist; prints the yield per operator.

    Every path is checked in the unpacked sdist before any environment is built or test run.
    ``repogym mine recipe`` does the same from a recipe file (the recommended way: it is kept).
    """
    try:
        recipe = PackageRecipe(package=package, version=version, sha256=sha256, requirements=with_pytest(requirement or []),
                               tests=tests, files=file, pythonpath=pythonpath or ["."], tasks=tasks, seed=seed,
                               python=python)
    except ValidationError as exc:  # one line naming the option and its value, exit 2
        raise TaskSpecError("; ".join(f"--{line}" for line in validation_problems(exc, model=PackageRecipe))) from None
    out.mkdir(parents=True, exist_ok=True)
    err = Console(stderr=True)
    report = mine_package(recipe, out, progress=lambda line: err.print(line, highlight=False))
    stdout_console().print(yield_table(report))
    stdout_console().print(tasks_table(report))
    stdout_console().print(f"{len(report.tasks)} tasks written to {out}")
    raise typer.Exit(0 if report.tasks else 1)


@mine_app.command("recipe")
def from_recipe(
    recipe: Annotated[Path, typer.Argument(help="A suite recipe (task_suites/realcode/recipe.yaml is one).")],
    jobs: Annotated[int, typer.Option(min=1, help="Packages mined at once (default: one per core).")] = os.cpu_count() or 1,
) -> None:
    """Build the suite a recipe names into the cache (or find it built) and print each package's
    yield; the suite's path is the last line (``repogym validate`` and ``run`` take it)."""
    if not recipe.is_file():
        raise typer.BadParameter(f"{recipe} is not a file", param_hint="RECIPE")
    load_recipe(recipe)  # a malformed recipe is one error before anything is fetched
    err = Console(stderr=True)
    suite = build_suite(recipe, jobs=jobs, progress=lambda line: err.print(line, highlight=False))
    summary = json.loads((suite / "suite.json").read_text(encoding="utf-8"))
    reports = [MutationReport.model_validate(r) for r in summary["reports"]]
    for report in reports:
        stdout_console().print(yield_table(report))
        stdout_console().print(tasks_table(report))
    stdout_console().print(f"{sum(len(r.tasks) for r in reports)} tasks from {len(reports)} packages in {suite}",
                           highlight=False, soft_wrap=True)
    raise typer.Exit(0 if any(r.tasks for r in reports) else 1)


@mine_app.command("history")
def history(
    repo: Annotated[Path, typer.Argument(help="A local git repository (clone or bare).")],
    rev_range: Annotated[str, typer.Argument(help="Commit range, e.g. v1.0..main.")],
    out: Annotated[Path, typer.Option(help="Directory to write the tasks into.")],
    package: Annotated[str, typer.Option(help="Name used in task ids and problem statements.")],
    test_command: Annotated[str, typer.Option(help="Test command with {junit}.")] = "python -m pytest -q --junitxml={junit} tests",
    max_files: Annotated[int, typer.Option(min=1, help="Most source files a fix may change.")] = 10,
    max_lines: Annotated[int, typer.Option(min=1, help="Most source lines a fix may change.")] = 300,
    url: Annotated[str | None, typer.Option(
        help="The repository's URL the tasks record (e.g. https://github.com/o/r.git); default: REPO's local path, "
             "which works on this machine only.")] = None,
    requirement: Annotated[list[str] | None, typer.Option(
        "--requirement", help=f"The tasks' test environment (repeatable), recorded in task.yaml and added to "
                              f"{DEFAULT_PYTEST} unless one names pytest.")] = None,
    pythonpath: Annotated[list[str] | None, typer.Option(
        "--pythonpath", help="Import root inside the repository (repeatable; default '.'; 'src' for a src layout).")] = None,
    writer_model: Annotated[str | None, typer.Option(
        help="Rewrite each statement as an issue with this model of an OpenAI-compatible server (off by default; "
             "never shown the golden patch; recorded in statement.json).")] = None,
    writer_base_url: Annotated[str | None, typer.Option(help="The writer's server (default $OPENAI_BASE_URL).")] = None,
    python: Annotated[str | None, typer.Option(
        help="CPython version of the test environment (major.minor, e.g. 3.12; one the judge runs on: "
             "3.11 or 3.12); default: the interpreter running repogym.")] = None,
) -> None:
    """Mine tasks from fix commits: each commit changing source and tests is tried three ways (parent,
    parent + new tests, parent + new tests + fix); the new tests become hidden tests. Every task records
    its source (--url) and its pinned test environment (--requirement), so it runs on other machines."""
    try:
        options = HistoryOptions(package=package, max_files_changed=max_files, max_lines_changed=max_lines)
        tests = TestSpec(command=test_command, hidden="hidden", pythonpath=pythonpath or ["."])
        env = PythonEnvSpec(requirements=with_pytest(requirement or []), python=python)
    except ValidationError as exc:  # one line naming the option and its value, exit 2
        raise TaskSpecError("; ".join(f"--{line}" for line in validation_problems(exc))) from None
    writer = None
    if writer_model:  # its key, first; the LLM SDK loads only then
        from repogym_gym.mine.writer import StatementWriter  # noqa: PLC0415

        writer = StatementWriter(writer_model, base_url=writer_base_url)
    out.mkdir(parents=True, exist_ok=True)
    err = Console(stderr=True)
    if url is None:
        err.print(f"note: the tasks name {repo.resolve()} as their source; pass --url for tasks that run elsewhere",
                  highlight=False, soft_wrap=True)
    err.print(f"building the test environment {env.requirements}", highlight=False)
    env_dir = ensure_venv(env.requirements, cache_dir=default_cache_dir(), python=env.python)
    template = {"tags": ["history", package], "repo": {"env": env.model_dump(exclude_none=True)}}
    mined, report = mine_history(repo, rev_range, tests, template, options, out, env_dir=env_dir, url=url,
                                 progress=lambda line: err.print(line, highlight=False), writer=writer)
    table = Table(title=f"{package}: {len(mined)} tasks from {report.candidates} candidate commits")
    table.add_column("commit", no_wrap=True)
    table.add_column("outcome")
    for commit, outcome in report.outcomes.items():
        table.add_row(commit[:12], outcome)
    stdout_console().print(table)
    raise typer.Exit(0 if mined else 1)
