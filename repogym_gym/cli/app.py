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
from repogym_gym.cli.serve import serve_command
from repogym_gym.cli.tasks import tasks_app
from repogym_gym.cli.validate import validate_command
from repogym_gym.errors import RepoGymError

__all__ = ["app", "main"]

app = typer.Typer(
    name="repogym",
    help="Coding tasks as RL environments: validate, inspect and mine tasks; run agents on them; "
         "report, rank and export the results.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        from repogym_gym import __version__

        typer.echo(f"repogym_gym {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                          help="Print the package's version and exit.")) -> None:
    """Coding tasks as RL environments."""


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
app.command("serve")(serve_command)

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


def _error(message: str) -> None:
    Console(stderr=True).print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def _is(exc: BaseException, name: str) -> bool:
    """Whether ``exc`` is a click exception called ``name`` (click's own, or the copy Typer vendors)."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def _usage_message(exc: Exception) -> str:
    """A usage error as one line: click's message (without pydantic's "Value error, "), and where help is."""
    format_message = getattr(exc, "format_message", None)
    message = format_message() if callable(format_message) else str(exc)
    message = " ".join(message.replace("Value error, ", "").split())
    command_path = getattr(getattr(exc, "ctx", None), "command_path", None)
    return f"{message} (see '{command_path} --help')" if command_path else message


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``repogym`` script; bad input (library errors and usage errors alike)
    is one ``error:`` line and exit code 2."""
    try:
        code = app(args=argv, prog_name="repogym", standalone_mode=False)
    except RepoGymError as exc:
        _error(str(exc))
        sys.exit(EXIT_BAD_INPUT)
    except Exception as exc:  # noqa: BLE001 - a usage error, or a bug: one line for users
        if _is(exc, "NoArgsIsHelpError"):  # `repogym`, `repogym tasks`: the help is already printed
            sys.exit(EXIT_BAD_INPUT)
        if _is(exc, "ClickException"):  # a missing or malformed option or argument, an unknown command
            _error(_usage_message(exc))
            sys.exit(EXIT_BAD_INPUT if _is(exc, "UsageError") else getattr(exc, "exit_code", 1))
        if _is(exc, "Abort"):
            _error("aborted")
            sys.exit(1)
        if os.environ.get("REPOGYM_DEBUG"):
            raise
        Console(stderr=True).print(f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))} "
                                   "(set REPOGYM_DEBUG=1 for the traceback)", highlight=False, soft_wrap=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else 0)  # a command's typer.Exit(code), or 0
