"""``repogym gym list``: the registered Gymnasium ids."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import gymnasium as gym
import typer
from rich.table import Table

from repogym_gym.cli.output import stdout_console

from repogym_gym.gym import register_suite, registered_ids

gym_app = typer.Typer(help="Gymnasium ids of the bundled and your own suites.", no_args_is_help=True)


@gym_app.command("list")
def list_ids(
    suite: Annotated[list[Path] | None, typer.Option(help="Also register this suite directory (repeatable).")] = None,
) -> None:
    """Print every registered RepoGym/... id with its task and step budget."""
    for path in suite or []:
        register_suite(path)
    ids = registered_ids()
    table = Table(title="RepoGym ids")
    table.add_column("id", no_wrap=True, min_width=max((len(i) for i in ids), default=2))
    table.add_column("task", overflow="fold")
    table.add_column("max_episode_steps")
    for env_id in ids:
        spec = gym.spec(env_id)
        target = spec.kwargs.get("task") or (f"suite: {spec.kwargs['suite']}" if "suite" in spec.kwargs else "task=<path or id>")
        table.add_row(env_id, str(target), str(spec.max_episode_steps or "-"))
    stdout_console().print(table)
