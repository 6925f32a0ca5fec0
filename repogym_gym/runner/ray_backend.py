"""The Ray backend: each episode a Ray task, records streamed back with ``ray.wait`` as they finish.

A Ray task runs :func:`~repogym_gym.runner.episode.run_job_data` (the function the serial and
thread backends run) on plain dicts and returns the record, trajectory text included, so the
driver writes every result and trajectory file: results need no shared filesystem.

What every node needs:

- ``repogym_gym`` installed (``pip install 'repogym_gym[ray]'``) in the Python Ray runs;
- the task directories readable at the same absolute paths as on the driver (a shared or
  synced filesystem, or the same checkout at the same path). To ship them with Ray instead,
  call ``ray.init(address=..., runtime_env={...})`` yourself before running: an initialised
  Ray is reused as it is and never shut down by the runner;
- a baseline cache: the driver's ``cache_dir`` (or its ``$REPOGYM_CACHE_DIR``) is passed to
  the tasks as ``REPOGYM_CACHE_DIR``; it should be a path the node can write to.

Without an address and without an initialised Ray, a local Ray with ``num_cpus=in_flight``
is started for the run, quietly (no dashboard, no worker log forwarding, errors only), and
shut down at the end; a reaper (:func:`repogym_gym.owners.reaper`) kills its processes if the
driver dies first (SIGKILL left Ray's two agents running about a minute).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from repogym_gym.errors import RunError
from repogym_gym.owners import descendants, reaper
from repogym_gym.runner.episode import EpisodeJob, EpisodeRecord, infra_record, run_job_data

__all__ = ["check_address", "import_ray", "ray_records", "ray_session"]

_AUTH_MODE = "RAY_AUTH_MODE"


def import_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        RunError: when Ray is not installed (the message says how to install it).
    """
    try:
        import ray  # noqa: PLC0415 - an optional extra
    except ImportError:
        raise RunError("backend 'ray' needs Ray, which is not installed; install it with: "
                       "pip install 'repogym_gym[ray]' (or use --backend thread)") from None
    return ray


def check_address(address: str, timeout_s: float = 10.0) -> None:
    """Fail fast when a ``host:port`` (or ``ray://host:port``) Ray address does not accept connections.

    ``ray.init`` would otherwise retry an unreachable address for many minutes. Other forms
    (``auto``) are left to Ray.

    Raises:
        RunError: naming the address and the connection error.
    """
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise RunError(f"cannot reach the Ray cluster at --ray-address {address!r}: {exc.strerror or exc}; "
                       "give the head node's host:port (GCS port, 6379 by default)") from None


@contextmanager
def ray_session(address: str | None, num_cpus: int) -> Iterator[ModuleType]:
    """Ray, initialised for the duration of the block.

    An already initialised Ray is used as it is and left running. Otherwise Ray is started
    (``address=None``: a local instance with ``num_cpus`` CPUs) or connected to (``address``),
    and shut down (disconnected, for a remote cluster) when the block ends.

    Raises:
        RunError: when Ray is missing or ``ray.init`` fails (the message names the address).
    """
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    auth_mode = os.environ.get(_AUTH_MODE)  # a local ray.init sets it for this process; restored below
    quiet: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    try:
        if address:
            check_address(address)
            ray.init(address=address, **quiet)
        else:
            ray.init(num_cpus=max(num_cpus, 1), **quiet)
    except RunError:
        raise
    except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError, ValueError ...
        where = f"the Ray cluster at {address!r}" if address else "a local Ray"
        raise RunError(f"could not start {where}: {type(exc).__name__}: {exc}") from None
    # the local Ray's processes (started by this one) die with it, even by SIGKILL
    watcher = None if address else reaper(descendants(os.getpid()))
    try:
        yield ray
    finally:
        ray.shutdown()
        if watcher is not None:
            watcher.communicate(timeout=30)  # closes its stdin: it kills what shutdown left
        if auth_mode is None:
            os.environ.pop(_AUTH_MODE, None)
        else:
            os.environ[_AUTH_MODE] = auth_mode


def _runtime_env(jobs: Sequence[EpisodeJob]) -> dict[str, Any] | None:
    cache = jobs[0].cache_dir or os.environ.get("REPOGYM_CACHE_DIR")
    return {"env_vars": {"REPOGYM_CACHE_DIR": cache}} if cache else None


def ray_records(jobs: Sequence[EpisodeJob], *, in_flight: int, address: str | None) -> Iterator[EpisodeRecord]:
    """Run ``jobs`` as Ray tasks, at most ``in_flight`` at a time; yield records as they finish.

    A task that Ray itself loses (worker or node died, object lost; retried by Ray up to the
    job's ``max_retries``) yields an ``infra_error`` record, never a score.

    Raises:
        RunError: when Ray is missing or cannot be started or reached.
    """
    with ray_session(address, in_flight) as ray:
        options: dict[str, Any] = {"num_cpus": 1, "max_retries": jobs[0].max_retries}
        if (runtime_env := _runtime_env(jobs)) is not None:
            options["runtime_env"] = runtime_env
        remote = ray.remote(run_job_data).options(**options)
        pending = list(reversed(jobs))
        running: dict[Any, EpisodeJob] = {}
        try:
            while pending or running:
                while pending and len(running) < in_flight:
                    job = pending.pop()
                    running[remote.remote(job.model_dump(mode="json"))] = job
                done, _ = ray.wait(list(running), num_returns=1)
                for ref in done:
                    job = running.pop(ref)
                    try:
                        data = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                        yield infra_record(job, f"ray: {type(exc).__name__}: {first}", worker="ray")
                    else:
                        yield EpisodeRecord.model_validate(data)
        finally:
            for ref in running:  # an early exit (Ctrl-C, a failing callback): stop what is in flight
                ray.cancel(ref, force=True)
