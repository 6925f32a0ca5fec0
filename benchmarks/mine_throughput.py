"""Mining throughput, both miners: validated tasks per CPU-hour (and, for mutation, the yield per operator).

``--miner mutation`` (default) mines ``--tasks`` tasks from one package of the real-code recipe;
``--miner history`` mines the commits of ``--range`` in a local clone (``--repo``). Either way the
tasks go into a temporary directory, each is validated (``repogym validate``'s checks, ``--repeats``
golden grades), and the CPU time (this process and its children: every test run is a child) spent
mining and validating is printed with the validated tasks per CPU-hour. The sdist and test
environment come from the user cache (the first run downloads them; that time is not counted).

    python benchmarks/mine_throughput.py [--package jmespath] [--tasks 8] [--seed 1]
    python benchmarks/mine_throughput.py --miner history --repo ~/src/toolz --range 5eee30e~40..5eee30e \
        --package toolz --command "python -m pytest -q --junitxml={junit} toolz/tests"
    python benchmarks/mine_throughput.py --miner history --repo ~/src/cachetools --range HEAD~80..HEAD \
        --package cachetools --pythonpath src
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
from repogym_gym.mine.history import HistoryOptions, mine_history
from repogym_gym.spec import PythonEnvSpec, TestSpec
from repogym_gym.suites import load_recipe, mine_package, with_pytest
from repogym_gym.task import load_tasks
from repogym_gym.validate import validate_task
from repogym_gym.venvs import ensure_venv

RECIPE = Path(__file__).resolve().parents[1] / "task_suites" / "realcode" / "recipe.yaml"


def cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def report(kind: str, cpu: tuple[float, float, float], wall: float, verdicts: list) -> None:  # noqa: ANN001 - TaskValidation
    sound = sum(v.ok for v in verdicts)
    out = stdout_console()
    out.print(f"{kind} mining: {cpu[1] - cpu[0]:.1f} CPU-s; validation: {cpu[2] - cpu[1]:.1f} CPU-s; wall {wall:.1f} s")
    for verdict in verdicts:
        if not verdict.ok:
            out.print(f"  unsound {verdict.task_id}: {'; '.join(verdict.failures())[:300]}", highlight=False)
    per_hour = sound / ((cpu[2] - cpu[0]) / 3600) if cpu[2] > cpu[0] else 0.0
    out.print(f"{sound}/{len(verdicts)} mined tasks sound -> {per_hour:.0f} validated tasks per CPU-hour")


def mutation(args: argparse.Namespace) -> None:
    pkg = next(p for p in load_recipe(RECIPE).packages if p.package == args.package)
    pkg = pkg.model_copy(update={"tasks": args.tasks, "seed": args.seed, "max_candidates": 10 * args.tasks})
    ensure_venv(pkg.requirements, cache_dir=default_cache_dir())  # warm caches outside the measurement
    with tempfile.TemporaryDirectory() as tmp:
        cpu0, wall0 = cpu_seconds(), time.monotonic()
        mined = mine_package(pkg, Path(tmp))
        cpu1 = cpu_seconds()
        verdicts = [validate_task(t, repeats=args.repeats) for t in load_tasks(Path(tmp))] if mined.tasks else []
        cpu2, wall = cpu_seconds(), time.monotonic() - wall0
    stdout_console().print(yield_table(mined))
    report(f"mutation ({args.package})", (cpu0, cpu1, cpu2), wall, verdicts)


def history(args: argparse.Namespace) -> None:
    env = PythonEnvSpec(requirements=with_pytest(args.requirement or []), python=args.python)
    env_dir = ensure_venv(env.requirements, cache_dir=default_cache_dir(), python=env.python)  # warm caches outside the measurement
    tests = TestSpec(command=args.command, hidden="hidden", pythonpath=args.pythonpath or ["."])
    options = HistoryOptions(package=args.package)
    with tempfile.TemporaryDirectory() as tmp:
        cpu0, wall0 = cpu_seconds(), time.monotonic()
        tasks, mined = mine_history(Path(args.repo), args.range, tests, {"repo": {"env": env.model_dump(exclude_none=True)}}, options,
                                    Path(tmp), env_dir=env_dir)
        cpu1 = cpu_seconds()
        verdicts = [validate_task(t, repeats=args.repeats) for t in load_tasks(Path(tmp))] if tasks else []
        cpu2, wall = cpu_seconds(), time.monotonic() - wall0
        kinds = [t.spec.type for t in load_tasks(Path(tmp))] if tasks else []
    stdout_console().print(f"{mined.commits} commits, {mined.candidates} candidates, {len(tasks)} tasks "
                           f"({kinds.count('bugfix')} bugfix, {kinds.count('feature')} feature); skipped {mined.skipped}",
                           highlight=False)
    report(f"history ({args.package})", (cpu0, cpu1, cpu2), wall, verdicts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--miner", choices=["mutation", "history"], default="mutation")
    parser.add_argument("--package", default="jmespath")
    parser.add_argument("--tasks", type=int, default=8, help="mutation: tasks to keep")
    parser.add_argument("--seed", type=int, default=1, help="mutation: candidate order")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--repo", help="history: a local clone")
    parser.add_argument("--range", help="history: the commits, e.g. v1.0..main")
    parser.add_argument("--command", default="python -m pytest -q --junitxml={junit} tests", help="history: test command")
    parser.add_argument("--requirement", action="append", help="history: test environment requirement (repeatable)")
    parser.add_argument("--pythonpath", action="append", help="history: import root (repeatable)")
    parser.add_argument("--python", help="history: CPython version of the test environment (3.11 or 3.12)")
    args = parser.parse_args()
    if args.miner == "history":
        if not args.repo or not args.range:
            parser.error("--miner history needs --repo and --range")
        history(args)
    else:
        mutation(args)


if __name__ == "__main__":
    main()
