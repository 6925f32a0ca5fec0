"""The results directory of a run: ``run.json``, one file per result and trajectory, ``summary.json``.

Every file is written atomically (a temporary file in the same directory, then ``os.replace``),
so an interrupted run leaves whole files only and can be resumed: episodes with a ``graded``
result are kept, ``infra_error`` ones are run again (see :func:`open_run`). The layout is in
:mod:`repogym_gym.runner.models`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from pydantic import ValidationError

from repogym_gym.agents.registry import AgentSpec
from repogym_gym.errors import RunError, validation_summary
from repogym_gym.private import write_private
from repogym_gym.runner.episode import EpisodeRecord
from repogym_gym.runner.models import RunConfig, RunResult, RunSummary, load_results, result_path

__all__ = ["RESUME_FIELDS", "open_run", "reward_details_path", "run_lock", "save_record", "write_atomic", "write_summary"]

#: RunConfig fields a resumed run must repeat; the others (jobs, backend, limits) may change.
RESUME_FIELDS = ("suite", "task_ids", "agents", "samples", "seed", "reward")


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (utf-8) to ``path`` through a temporary file and ``os.replace``, mode 0600, in
    directories created 0700 (:func:`~repogym_gym.private.write_private`: results hold patches).

    Raises:
        OSError: when the directory cannot be created or written.
    """
    write_private(path, text)


@contextlib.contextmanager
def run_lock(out: Path) -> Iterator[None]:
    """Hold ``out/.lock`` (an exclusive ``flock``) for the block: one run per results directory.

    Two runs on one ``--out`` would each run every episode and orphan each other's trajectories.
    The lock goes with the process, so a killed run never leaves ``out`` locked.

    Raises:
        RunError: when another run holds it, or ``out`` cannot be created.
    """
    try:
        out.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise RunError(f"{out}: cannot create the results directory: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunError(f"{out} is in use by another run; wait for it to end, or use a new --out directory") from None
        yield
    finally:
        os.close(fd)


def _show(value: object) -> str:
    """A config value for an error message; agents as their labels, with type and options when they say more."""
    if isinstance(value, list) and value and all(isinstance(v, AgentSpec) for v in value):
        return repr([a.label if a.type == a.label and not a.options else f"{a.label} ({a.type}, {a.options})"
                     for a in value])
    return repr(value)


def open_run(out: Path, config: RunConfig) -> dict[tuple[str, str, int], RunResult]:
    """Check ``out`` against ``config``, write ``run.json``, and return the results already there.

    Args:
        out: The results directory (created if missing).
        config: What this run asks for.

    Returns:
        (agent, task_id, sample) -> RunResult for every result file found (empty for a new run).

    Raises:
        RunError: when ``out/run.json`` asks for a different run (the message names the
            differing fields and says to use a new ``--out``), or cannot be read. A result file
            that does not validate is moved to ``out/quarantine`` and its episode is run again.
    """
    run_file = out / "run.json"
    previous: dict[tuple[str, str, int], RunResult] = {}
    if run_file.is_file():
        try:
            old = RunConfig.model_validate_json(run_file.read_bytes())
        except (ValidationError, OSError) as exc:
            raise RunError(f"{run_file}: not a valid run file: {validation_summary(exc)}; "
                           "use a new --out directory") from None
        differing = [name for name in RESUME_FIELDS if getattr(old, name) != getattr(config, name)]
        if differing:
            shown = "; ".join(f"{name}: {_show(getattr(old, name))} before, {_show(getattr(config, name))} now"
                              for name in differing)
            raise RunError(f"{out} holds a different run ({', '.join(differing)} differ: {shown}); "
                           "use a new --out directory to start another run")
        if (out / "results").is_dir():  # a result cut short is set aside and its episode runs again
            previous = {r.key: r for r in load_results(out, quarantine=True)}
    write_atomic(run_file, config.model_dump_json(indent=1) + "\n")
    return previous


def save_record(out: Path, record: EpisodeRecord, previous: RunResult | None = None,
                calibration: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None) -> RunResult:
    """Write a record's trajectory and, beside it, its ``<trajectory>.reward-details.json``
    (:meth:`GradeResult.reward_details <repogym_gym.results.GradeResult.reward_details>`), then its
    result; drop the files of the result it replaces. ``calibration`` (task id -> reward kind -> ``noop`` /
    ``golden`` scores, from ``repogym validate --json``) puts the task's calibration of the graded kind in the
    reward details.

    Returns:
        The stored RunResult.
    """
    result = record.result
    if result.trajectory and record.trajectory_json is not None:
        write_atomic(out / result.trajectory, record.trajectory_json)
        if result.grade is not None:
            known = (calibration or {}).get(result.task_id, {}).get(result.grade.reward_kind)
            details = result.grade.reward_details(known)
            write_atomic(out / reward_details_path(result.trajectory), json.dumps(details, indent=1) + "\n")
    write_atomic(result_path(out, result.agent, result.task_id, result.sample), result.model_dump_json(indent=1) + "\n")
    if previous is not None and previous.trajectory and previous.trajectory != result.trajectory:
        for stale in (out / previous.trajectory, out / reward_details_path(previous.trajectory)):
            if stale.resolve().is_relative_to((out / "trajectories").resolve()):
                stale.unlink(missing_ok=True)
    return result


def reward_details_path(trajectory: str) -> str:
    """Where the reward details of the trajectory at ``trajectory`` (relative to the run) are written."""
    return str(Path(trajectory).with_suffix(".reward-details.json"))


def write_summary(out: Path, summary: RunSummary) -> Path:
    """Write ``out/summary.json`` and return its path."""
    path = out / "summary.json"
    write_atomic(path, summary.model_dump_json(indent=1) + "\n")
    return path
