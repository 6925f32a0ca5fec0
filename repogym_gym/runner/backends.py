"""Where episodes run: serially, in a thread pool, or as Ray tasks; records stream back as they finish.

Every backend runs the same function, :func:`~repogym_gym.runner.episode.run_job`, and yields
its :class:`~repogym_gym.runner.episode.EpisodeRecord` in completion order; the caller (in
its own thread) writes the files. Ray lives in :mod:`repogym_gym.runner.ray_backend` and is
imported only when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Literal

from repogym_gym.runner.episode import EpisodeJob, EpisodeRecord, run_job

__all__ = ["Backend", "execute"]

Backend = Literal["serial", "thread", "ray"]


def _serial(jobs: Sequence[EpisodeJob]) -> Iterator[EpisodeRecord]:
    for job in jobs:
        yield run_job(job)


def _threads(jobs: Sequence[EpisodeJob], workers: int) -> Iterator[EpisodeRecord]:
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="repogym-episode") as pool:
        futures = [pool.submit(run_job, job) for job in jobs]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for future in futures:  # on an early exit, start nothing new; running episodes finish
                future.cancel()


def execute(jobs: Sequence[EpisodeJob], *, backend: Backend, workers: int = 1,
            ray_address: str | None = None) -> Iterator[EpisodeRecord]:
    """Run ``jobs`` on ``backend`` and yield their records as they finish.

    Args:
        jobs: The episodes; their ``backend`` field should name the same backend.
        backend: ``serial`` (one at a time, in order), ``thread`` (a pool of ``workers``
            threads) or ``ray`` (at most ``workers`` Ray tasks in flight).
        workers: Concurrent episodes (at least 1).
        ray_address: The Ray cluster to connect to (None: a local Ray started for the run,
            unless Ray is already initialised in this process).

    Raises:
        RunError: for the Ray backend when Ray is not installed or cannot be reached.
    """
    if not jobs:
        return iter(())
    if backend == "serial":
        return _serial(jobs)
    if backend == "thread":
        return _threads(jobs, max(workers, 1))
    from repogym_gym.runner.ray_backend import ray_records  # noqa: PLC0415 - Ray is an optional extra

    return ray_records(jobs, in_flight=max(workers, 1), address=ray_address)
