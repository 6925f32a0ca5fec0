"""``repogym gym list``: the registered Gymnasium ids."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from repogym_gym.cli.output import stdout_console
from repogym_gym.gym import register_suite, registered_rows

__all__ = ["gym_app", "list_ids"]

gym_app = typer.Typer(help="Gymnasium ids of the bundled and your own suites.", no_args_is_help=True)


@gym_app.command("list")
def list_ids(
    suite: Annotated[list[Path] | None, typer.Option(help="Also register this suite directory (repeatable).")] = None,
) -> None:
    """Print every registered RepoGym/... id with its task and step budget."""
    for path in suite or []:
        register_suite(path)
    rows = registered_rows()
    table = Table(title="RepoGym ids")
    table.add_column("id", no_wrap=True, min_width=max((len(row[0]) for row in rows), default=2))
    table.add_column("task", overflow="fold")
    table.add_column("max_episode_steps")
    for env_id, target, max_steps in rows:
        table.add_row(env_id, target, str(max_steps or "-"))
    stdout_console().print(table)
