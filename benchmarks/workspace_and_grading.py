"""Workspace creation from a cached baseline vs rebuilding it, and grading time per task.

Prints medians (seconds) and ratios measured in this run; the machine is shared and noisy, so
runs are interleaved and medians, not means, are reported.

    python benchmarks/workspace_and_grading.py [--pairs 7]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import repogym_gym as rg
from repogym_gym.baseline import BaselineStore

STARTER = Path(__file__).resolve().parents[1] / "task_suites" / "starter"


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args()
    tasks = rg.load_tasks(STARTER)
    with tempfile.TemporaryDirectory() as tmp:
        cached_store = BaselineStore(Path(tmp) / "cached")
        print(f"{'task':28} {'cached ws':>10} {'rebuilt':>10} {'ratio':>7} {'grade golden':>13} {'grade noop':>11}")
        for task in tasks:
            cached_store.get(task)
            cached, rebuilt, golden, noop = [], [], [], []
            for i in range(args.pairs):
                cached.append(timed(lambda: rg.Workspace.create(task, store=cached_store).close()))
                fresh = BaselineStore(Path(tmp) / f"fresh-{task.id}-{i}")  # no cache: copy + setup + commit
                rebuilt.append(timed(lambda: rg.Workspace.create(task, store=fresh).close()))
                if task.spec.type != "perf" or i < 2:  # perf grades run benchmarks for seconds
                    golden.append(timed(lambda: rg.grade_patch(task, task.golden_patch(), store=cached_store)))
                    noop.append(timed(lambda: rg.grade_patch(task, "", store=cached_store)))
            c, r = statistics.median(cached), statistics.median(rebuilt)
            print(f"{task.id:28} {c:10.4f} {r:10.4f} {c / r:7.2f} {statistics.median(golden):13.3f} {statistics.median(noop):11.3f}")


if __name__ == "__main__":
    main()
