"""Mutation-mining throughput for one package: validated tasks per CPU-hour, yield per operator.

Mines ``--tasks`` tasks from one package of the real-code recipe into a temporary directory,
validates each (noop 0, golden 1, ``--repeats`` identical golden grades), and prints the CPU
time (this process and its children: every test run is a child) spent mining and validating,
the validated tasks per CPU-hour, and each operator's outcomes. The sdist and test environment
come from the user cache (the first run downloads them; that time is not counted).

    python benchmarks/mine_throughput.py [--package jmespath] [--tasks 8] [--seed 1]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from repogym_gym.baseline import default_cache_dir
from repogym_gym.cli.mine import yield_table
from repogym_gym.cli.output import stdout_console
from repogym_gym.suites import load_recipe, mine_package
from repogym_gym.task import load_tasks
from repogym_gym.validate import validate_task
from repogym_gym.venvs import ensure_venv

RECIPE = Path(__file__).resolve().parents[1] / "task_suites" / "realcode" / "recipe.yaml"


def cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", default="jmespath")
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    pkg = next(p for p in load_recipe(RECIPE).packages if p.package == args.package)
    pkg = pkg.model_copy(update={"tasks": args.tasks, "seed": args.seed, "max_candidates": 10 * args.tasks})
    ensure_venv(pkg.requirements, cache_dir=default_cache_dir())  # warm caches outside the measurement
    with tempfile.TemporaryDirectory() as tmp:
        cpu0, wall0 = cpu_seconds(), time.monotonic()
        report = mine_package(pkg, Path(tmp))
        cpu1 = cpu_seconds()
        verdicts = [validate_task(t, repeats=args.repeats) for t in load_tasks(Path(tmp))] if report.tasks else []
        cpu2, wall = cpu_seconds(), time.monotonic() - wall0
    sound = sum(v.ok for v in verdicts)
    out = stdout_console()
    out.print(yield_table(report))
    out.print(f"mining: {cpu1 - cpu0:.1f} CPU-s; validation: {cpu2 - cpu1:.1f} CPU-s; wall {wall:.1f} s")
    out.print(f"{sound}/{len(verdicts)} mined tasks sound -> {sound / ((cpu2 - cpu0) / 3600):.0f} validated tasks per CPU-hour")


if __name__ == "__main__":
    main()
