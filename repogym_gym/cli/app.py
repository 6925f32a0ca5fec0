"""The ``repogym`` command: a thin Typer app that parses, calls one library function, and prints.

Exit codes: 0 success; 1 the command ran and found a problem (an unsound task); 2 bad input
(a malformed task.yaml, an unknown id, a missing path) or a failed download/install, printed as
one message, no traceback; 3 an internal error (one line; ``REPOGYM_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import os
import sys

import typer
from rich.console import Console
from rich.markup import escape

from repogym_gym.cli.envs import envs_app
from repogym_gym.cli.export import export_command
from repogym_gym.cli.gym import gym_app
from repogym_gym.cli.mine import mine_app
from repogym_gym.cli.realcode import realcode_command
from repogym_gym.cli.report import leaderboard_command, report_command
from repogym_gym.cli.run import run_command
from repogym_gym.cli.tasks import tasks_app
from repogym_gym.cli.validate import validate_command
from repogym_gym.errors import RepoGymError

__all__ = ["app", "main"]

app = typer.Typer(
    name="repogym",
    help="Coding tasks as RL environments: validate tasks, inspect them, grade patches.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(tasks_app, name="tasks")
app.add_typer(gym_app, name="gym")
app.add_typer(mine_app, name="mine")
app.add_typer(envs_app, name="envs")
app.command("validate")(validate_command)
app.command("realcode")(realcode_command)
app.command("run")(run_command)
app.command("export")(export_command)
app.command("report")(report_command)
app.command("leaderboard")(leaderboard_command)

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``repogym`` script; turns library errors into exit code 2."""
    try:
        app(args=argv, prog_name="repogym")
    except RepoGymError as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_BAD_INPUT)
    except Exception as exc:  # noqa: BLE001 - a bug: one line for users, the traceback on request
        if os.environ.get("REPOGYM_DEBUG"):
            raise
        Console(stderr=True).print(f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))} "
                                   "(set REPOGYM_DEBUG=1 for the traceback)", highlight=False, soft_wrap=True)
        sys.exit(EXIT_INTERNAL)
