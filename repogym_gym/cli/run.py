"""``repogym run SUITE_OR_TASK --agent A [--agent B ...]``: run agents over tasks, print their scores."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from pydantic import TypeAdapter, ValidationError
from rich.table import Table

from repogym_gym.cli.output import stdout_console
from repogym_gym.errors import validation_summary
from repogym_gym.report.tables import plural
from repogym_gym.runner import AgentStats, run_suite
from repogym_gym.runner.models import load_results
from repogym_gym.validate import TaskValidation

__all__ = ["BackendName", "run_command"]


class BackendName(str, Enum):
    """Where episodes run."""

    thread = "thread"
    serial = "serial"
    ray = "ray"


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table(stats: list[AgentStats], samples: int) -> Table:
    table = Table(title="repogym run")
    table.add_column("agent", no_wrap=True, min_width=max((len(s.agent) for s in stats), default=5))
    for name in ("episodes", "mean score", "pass@1", *([f"pass@{samples}"] if samples > 1 else []),
                 "tasks solved", "infra errors", "s/episode"):
        table.add_column(name, justify="right", no_wrap=True)
    for s in stats:
        row = [s.agent, str(s.episodes), _figure(s.mean_score), _figure(s.pass_at_1)]
        if samples > 1:
            row.append(_figure(s.pass_at_k.get(samples)))
        infra = f"[red]{s.infra_errors}[/]" if s.infra_errors else "0"
        duration = "-" if s.mean_duration_s is None else f"{s.mean_duration_s:.1f}"
        table.add_row(*row, str(s.tasks_solved), infra, duration)
    return table


def run_command(
    suite: Annotated[str, typer.Argument(help="A suite directory, a task directory, or a bundled suite name "
                                              "(starter).", show_default=False,
                                       metavar="SUITE_OR_TASK")],
    agent: Annotated[list[str], typer.Option("--agent", "-a", help="An agent type (golden, noop, openai ...) or "
                                             "an agent YAML/JSON file (repeatable).", show_default=False)],
    samples: Annotated[int, typer.Option("--samples", "-k", min=1, help="Episodes per agent and task.")] = 1,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Concurrent episodes.")] = 1,
    backend: Annotated[BackendName, typer.Option(help="Where episodes run.")] = BackendName.thread,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster to use with --backend ray "
                                                    "(default: a local Ray).")] = None,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Wall-clock seconds per episode; "
                                                     "then it is graded as it stands.")] = None,
    max_retries: Annotated[int, typer.Option("--max-retries", min=0, help="Retries of an episode after an "
                                             "infrastructure failure.")] = 2,
    seed: Annotated[int, typer.Option(help="Base reset seed; sample i uses seed + i.")] = 0,
    sandbox: Annotated[str, typer.Option(help="Where commands and grading run: auto (the task's own sandbox; "
                                         "else local for golden, noop and scripted agents and bubblewrap "
                                         "for the others where it runs), local (warns for an untrusted "
                                         "agent), bwrap or docker.")] = "auto",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Results directory; an existing run there is "
                                             "resumed. Default: runs/<timestamp>.", show_default=False)] = None,
    reward: Annotated[str | None, typer.Option(help="The reward kind every episode is graded by (README \"Choosing a "
                                               "reward\"); default: each task's own.")] = None,
    calibration: Annotated[Path | None, typer.Option("--calibration", help="A `repogym validate --json` file: each "
                                                     "task's noop and golden scores go into its episodes' "
                                                     "reward-details.json.")] = None,
) -> None:
    """Run every agent on every task (k samples each), write one result per episode, print per-agent
    scores. Exit code 0 once the run completed, whatever the scores; 2 on bad input."""
    if time_limit is not None and not time_limit > 0:
        raise typer.BadParameter(f"must be more than 0 seconds, got {time_limit:g}", param_hint="'--time-limit'")
    known = _calibration(calibration) if calibration is not None else None
    out = out if out is not None else Path("runs") / datetime.now().strftime("%Y%m%d-%H%M%S")
    summary = run_suite(suite, agent, out=out, samples=samples, seed=seed, jobs=jobs, backend=backend.value,
                        ray_address=ray_address, time_limit_s=time_limit, max_retries=max_retries, progress=True,
                        sandbox=sandbox, calibration=known, reward=reward)
    console = stdout_console()
    console.print(_table(summary.agents, samples))
    resumed = f" ({summary.resumed} resumed)" if summary.resumed else ""
    console.print(f"{plural(summary.episodes, 'episode')}{resumed} in {summary.wall_s:.1f} s; results in {out}",
                  highlight=False, soft_wrap=True)
    reasons = Counter(r.infra_error or "(no reason recorded)" for r in load_results(out) if r.status == "infra_error")
    for reason, count in reasons.most_common(5):  # masked episodes: what to fix before their results mean anything
        console.print(f"infra error ({plural(count, 'episode')}): {reason}", highlight=False, soft_wrap=True, markup=False)


def _calibration(path: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Task id -> reward kind -> scores, from ``repogym validate --json`` output."""
    try:
        reports = TypeAdapter(list[TaskValidation]).validate_json(path.read_bytes())
    except OSError as exc:
        raise typer.BadParameter(f"{path} cannot be read: {exc.strerror or exc}", param_hint="'--calibration'") from None
    except ValidationError as exc:
        raise typer.BadParameter(f"{path} is not `repogym validate --json` output: {validation_summary(exc)}",
                                 param_hint="'--calibration'") from None
    return {report.task_id: report.calibration for report in reports}

