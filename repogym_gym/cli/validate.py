"""``repogym validate PATH...``: prove tasks are sound reward signals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from repogym_gym.cli.output import stdout_console
from repogym_gym.errors import RunError, TaskNotFoundError
from repogym_gym.task import discover_tasks, load_tasks, resolve_location
from repogym_gym.validate import TaskValidation, validate_task

__all__ = ["validate_command"]


def _scores(scores: list[float]) -> str:
    if scores and len(set(scores)) == 1:
        return f"{scores[0]:.3f} x{len(scores)}"
    return " ".join(f"{s:.3f}" for s in scores)


def _check_writable(path: Path) -> None:
    """Raise RunError unless ``path`` can be written (it is created empty, then filled at the end)."""
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise RunError(f"--json {path} cannot be written: {exc.strerror or exc}") from None


def validate_command(
    paths: Annotated[list[Path], typer.Argument(help="Task or suite directories, bundled suite names (starter) or "
                                                "bundled task ids.", show_default=False)],
    repeats: Annotated[int, typer.Option(min=1, help="Golden grades per task; all must be identical.")] = 3,
    task_id: Annotated[list[str] | None, typer.Option("--id", help="Only this task id (repeatable).")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the verdicts as JSON to this file.")] = None,
) -> None:
    """Check every task: baseline fails fail_to_pass and passes pass_to_pass, noop scores 0,
    golden scores 1, repeated golden grades agree, the golden patch also scores 1 in the task's own
    sandbox under its limits, and no file visible inside that sandbox holds a golden version of a
    changed file; each other reward kind the task offers scores 0 for the noop and 1 for the golden patch. Exit code 0
    only if all are sound."""
    paths = [resolve_location(p) for p in paths]
    for path in paths:  # a mistyped path must not pass as "0/0 tasks sound", exit 0
        if not discover_tasks(path):
            what = "is not a directory" if path.exists() and not path.is_dir() else "does not exist" if not path.exists() \
                else "holds no task.yaml at or below it"
            raise TaskNotFoundError(f"{path} {what}; give a task directory or a suite of them")
    tasks = load_tasks(paths, ids=task_id or None)
    if json_out is not None:  # refused now, not after every task was validated (it ended as an internal error)
        _check_writable(json_out)
    results: list[TaskValidation] = []
    err = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        job = bar.add_task("validating", total=len(tasks))
        for task in tasks:
            def show(label: str, task_id: str = task.id) -> None:
                bar.update(job, description=f"{task_id}: {label}")

            results.append(validate_task(task, repeats=repeats, progress=show))
            bar.advance(job)
    table = Table(title="repogym validate")
    table.add_column("task", no_wrap=True, min_width=max((len(t.id) for t in tasks), default=4))
    for name in ("type", "baseline", "noop", "golden", "repeatable", "rewards", "own sandbox", "answer hidden"):
        table.add_column(name, no_wrap=True)
    table.add_column("seconds", justify="right")
    for task, res in zip(tasks, results, strict=False):
        marks = {c.name: ("[green]ok[/]" if c.ok else "[red]FAIL[/]") for c in res.checks}
        table.add_row(task.id, task.spec.type, marks.get("baseline", "-"), f"{marks.get('noop', '-')} {res.noop_score:.3f}",
                      f"{marks.get('golden', '-')} {_scores(res.golden_scores)}",
                      marks.get("repeatable", "-"), _rewards(res), marks.get("own_sandbox", "-"), marks.get("answer_hidden", "-"),
                      f"{res.duration_s:.1f}")
    out = stdout_console()
    out.print(table)
    bad = [r for r in results if not r.ok]
    for res in bad:
        for line in res.failures():
            out.print(f"[red]{res.task_id}[/] {line}", highlight=False, soft_wrap=True)
    for res in results:
        for flag in res.flags:
            out.print(f"[yellow]{res.task_id}[/] flag: {flag}", highlight=False, soft_wrap=True)
    if json_out is not None:
        try:
            json_out.write_text("[" + ",\n".join(r.model_dump_json() for r in results) + "]\n")
        except OSError as exc:
            raise RunError(f"--json {json_out} cannot be written: {exc.strerror or exc}") from None
    out.print(f"{len(results) - len(bad)}/{len(results)} tasks sound")
    raise typer.Exit(1 if bad else 0)


def _rewards(result: TaskValidation) -> str:
    """The reward kinds checked besides ``tests``, each marked ok or FAIL ("-" for none)."""
    marks = [f"{c.name.removeprefix('reward:')} {'[green]ok[/]' if c.ok else '[red]FAIL[/]'}"
             for c in result.checks if c.name.startswith("reward:")]
    return ", ".join(marks) or "-"
