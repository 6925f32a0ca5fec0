"""``repogym tasks list|show|schema``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, get_args

import typer
from rich.table import Table

from repogym_gym.cli.output import stdout_console
from repogym_gym.errors import TaskSpecError
from repogym_gym.spec import TaskType, spec_json_schema
from repogym_gym.task import dump_yaml, load_task, load_tasks, resolve_location

__all__ = ["list_tasks", "schema", "show_task", "tasks_app"]

tasks_app = typer.Typer(help="List, show and describe tasks.", no_args_is_help=True)

PathsArg = Annotated[list[Path], typer.Argument(help="Task or suite directories, bundled suite names (starter) or "
                                                   "bundled task ids.", show_default=False)]


@tasks_app.command("list")
def list_tasks(
    paths: PathsArg,
    type_: Annotated[list[str] | None, typer.Option("--type", help="Keep tasks of this type (repeatable).")] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Keep tasks with this tag (repeatable).")] = None,
) -> None:
    """List tasks with their type, test counts and tags."""
    valid = get_args(TaskType)
    bad = [t for t in type_ or [] if t not in valid]
    if bad:
        raise TaskSpecError(f"--type {bad[0]!r} is not a task type; valid types are {list(valid)}")
    tasks = load_tasks([resolve_location(p) for p in paths], types=type_ or None, tags=tag or None)  # type: ignore[arg-type]
    table = Table(title=f"{len(tasks)} task{'' if len(tasks) == 1 else 's'}")
    table.add_column("id", no_wrap=True, min_width=max((len(t.id) for t in tasks), default=2))
    for name in ("type", "fail_to_pass", "pass_to_pass", "tags"):
        table.add_column(name)
    for task in tasks:
        spec = task.spec
        table.add_row(task.id, spec.type, str(len(spec.tests.fail_to_pass) if spec.tests else "-"),
                      str(len(spec.tests.pass_to_pass) if spec.tests else "-"), ", ".join(spec.tags))
    stdout_console().print(table)


@tasks_app.command("show")
def show_task(path: Annotated[Path, typer.Argument(help="A task directory or a bundled task's id.")]) -> None:
    """Print a task's validated spec as YAML (defaults filled in)."""
    task = load_task(resolve_location(path))
    typer.echo(dump_yaml(task.spec.model_dump(mode="json")))


@tasks_app.command("schema")
def schema() -> None:
    """Print the JSON Schema of task.yaml."""
    typer.echo(json.dumps(spec_json_schema(), indent=2))
