"""The main job: build (or load) a real-code suite, validate it, and play every task through gym.make.

For each task of the suite: :func:`~repogym_gym.validate.validate_task` (baseline, noop 0, golden
1, repeated golden grades identical), then a golden and a noop episode through
``gym.make("RepoGym/<task>-v0")``. The job is sound only if every golden episode earns 1.0 and
every noop episode 0.0 and every task validates.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from repogym_gym.agents import GoldenAgent, NoopAgent, run_episode
from repogym_gym.gym import make_task_env, register_suite
from repogym_gym.suites import build_suite
from repogym_gym.task import Task, load_tasks
from repogym_gym.validate import validate_task

__all__ = ["MainJobRow", "run_main_job"]


@dataclass(frozen=True)
class MainJobRow:
    """One task's outcome.

    Attributes:
        task_id: The task.
        package: The source package (first ``realcode`` tag after the generic ones).
        golden: Reward of the golden episode through gym.make.
        noop: Reward of the noop episode through gym.make.
        sound: validate_task's verdict.
        problems: validate_task's failure messages.
        seconds: Wall-clock seconds for validation and both episodes.
    """

    task_id: str
    package: str
    golden: float
    noop: float
    sound: bool
    problems: tuple[str, ...]
    seconds: float

    @property
    def ok(self) -> bool:
        return self.sound and self.golden == 1.0 and self.noop == 0.0


def run_main_job(recipe: Path, *, repeats: int = 3, jobs: int = 1,
                 on_task: Callable[[int, int, str], None] | None = None,
                 on_build: Callable[[str], None] | None = None) -> tuple[Path, list[MainJobRow]]:
    """Build or load the suite of ``recipe``, then validate and play every task.

    Args:
        recipe: A suite recipe (``task_suites/<name>/recipe.yaml``).
        repeats: Golden grades per validation.
        jobs: Packages mined, and tasks validated and played, at once (threads driving test
            subprocesses: one per core suits). The rows and every reward are the same for any
            ``jobs``; only ``seconds`` (wall clock, shared cores) changes.
        on_task: Called with (tasks finished, total, task id) as each task starts (from worker
            threads when ``jobs`` > 1).
        on_build: Called with mining progress lines.

    Returns:
        The suite directory and one row per task, in the suite's task order.

    Raises:
        ValueError: when ``jobs`` < 1.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    suite = build_suite(recipe, progress=on_build, jobs=jobs)
    register_suite(suite)
    tasks = load_tasks(suite)
    finished = 0
    lock = threading.Lock()

    def play(task: Task) -> MainJobRow:
        nonlocal finished
        if on_task:
            with lock:
                on_task(finished, len(tasks), task.id)
        start = time.monotonic()
        verdict = validate_task(task, repeats=repeats)
        env = make_task_env(task.id)
        try:
            golden = run_episode(env, GoldenAgent(), seed=0)
            noop = run_episode(env, NoopAgent(), seed=0)
        finally:
            env.close()
        package = next((t for t in task.spec.tags if t not in ("realcode", "mutation", "history")), "?")
        with lock:
            finished += 1
        return MainJobRow(task.id, package, golden.total_reward, noop.total_reward, verdict.ok,
                          tuple(verdict.failures()), time.monotonic() - start)

    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="repogym-mainjob")
    try:
        rows = list(pool.map(play, tasks))
    finally:  # an exception stops the tasks not started yet
        pool.shutdown(wait=True, cancel_futures=True)
    return suite, rows
