"""``repogym export RESULTS_DIR``: a run's episodes as a JSONL dataset (one chat conversation per line)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from repogym_gym.errors import RunError
from repogym_gym.export import equal_reward_groups, write_jsonl
from repogym_gym.report.tables import read_results

__all__ = ["export_command"]


def export_command(
    results_dir: Annotated[Path, typer.Argument(help="A results directory written by `repogym run --out`.", show_default=False)],
    out: Annotated[str | None, typer.Option("--out", "-o", help="JSONL file to write, or '-' for stdout.",
                                            show_default="RESULTS_DIR/episodes.jsonl")] = None,
    include_infra_errors: Annotated[bool, typer.Option(
        "--include-infra-errors", help="Also export infrastructure-error episodes (with score null).")] = False,
    drop_equal_groups: Annotated[bool, typer.Option(
        "--drop-equal-groups", help="Leave out every (agent, task) group of samples whose rewards are all equal "
                                    "(GRPO advantage 0 for each: no signal).")] = False,
) -> None:
    """Write one JSON line per episode: task, agent, score, passed, components, patch, and the
    conversation as OpenAI chat messages with the tool schema, ready for SFT or offline RL."""
    _, results = read_results(results_dir)
    if out == "":
        raise RunError("--out is empty; give a file path or '-' for stdout")
    dest = sys.stdout if out == "-" else Path(out) if out else results_dir / "episodes.jsonl"
    groups = equal_reward_groups(results) if drop_equal_groups else set()
    written = write_jsonl(results, results_dir, dest, include_infra_errors=include_infra_errors, drop_groups=groups)
    infra = sum(1 for r in results if r.status == "infra_error")
    where = "stdout" if out == "-" else str(dest)
    note = "" if include_infra_errors or not infra else \
        f"; left out {infra} infrastructure-error episodes (no score; --include-infra-errors keeps them)"
    if drop_equal_groups:
        episodes = sum(1 for r in results if (r.agent, r.task_id) in groups
                       and (r.status == "graded" or include_infra_errors))
        note += f"; dropped {len(groups)} groups ({episodes} episodes) whose rewards were all equal (no GRPO signal)"
    # the count goes to stderr when the dataset itself is on stdout
    console = Console(stderr=True) if out == "-" else Console()
    console.print(f"exported {written} episodes to {where}{note}", highlight=False, soft_wrap=True, markup=False)
