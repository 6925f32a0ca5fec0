"""One episode, start to finish, as plain data in and plain data out: what every backend runs.

:func:`run_job` builds a fresh env and a fresh agent, drives one episode with
:func:`~repogym_gym.agents.base.run_episode`, and retries it after an infrastructure failure.
It writes nothing the caller has to find: the trajectory is written to a private temporary
directory, read back and returned inside the :class:`EpisodeRecord`, so the driver stores both
files whether the episode ran in a thread or on another machine.

Infrastructure failures (retried, then recorded as ``infra_error``, never scored):

- ``info["infra_error"]`` from the env (setup failed, sandbox broken, grader crashed);
- :class:`~repogym_gym.errors.AgentInfraError` from the agent (model server unreachable);
- any other exception escaping the episode (building the env or agent, resetting it).

Any other exception *from the agent* ends the episode, which is graded as it stands and
recorded with ``agent_error`` (the pinned behaviour of ``run_episode``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from repogym_gym.agents.base import EpisodeOutcome, as_agent, run_episode
from repogym_gym.agents.registry import AgentSpec
from repogym_gym.errors import AgentInfraError
from repogym_gym.gym import RepoGymEnv
from repogym_gym.owners import owned_temporary
from repogym_gym.results import GradeResult
from repogym_gym.runner.models import RunResult
from repogym_gym.task import resolve_task

__all__ = ["EpisodeJob", "EpisodeRecord", "infra_record", "run_job", "run_job_data"]


class EpisodeJob(BaseModel):
    """One episode to run: plain data, so it crosses thread, process and machine boundaries.

    Attributes:
        task_dir: The task directory (absolute; must exist at this path wherever the job runs).
        task_id: The task's id.
        agent: The agent to build.
        sample: 0-based sample index.
        seed: Reset seed.
        time_limit_s: Wall-clock seconds per attempt (None: no limit).
        max_retries: Retries after an infrastructure failure.
        retry_backoff_s: Seconds before the first retry; retry ``i`` (0-based) waits
            ``retry_backoff_s * 2**i``.
        cache_dir: Baseline cache directory for the env (None: the worker's default).
        backend: The backend running it (``ray`` jobs report their node's IP as the worker).
        sandbox: Where the episode's commands and grading run: a sandbox name (``local``,
            ``bwrap`` ...) or ``auto``: the task's ``environment.sandbox`` if it names one, else
            ``local`` for a trusted agent (``agent.trusted``: golden, noop, scripted), else
            bubblewrap where it runs (see :func:`~repogym_gym.sandbox.default_sandbox`).
        reward: The reward kind to grade by (None: the task's default).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_dir: str
    task_id: str
    agent: AgentSpec
    sample: int = Field(ge=0)
    seed: int
    time_limit_s: float | None = Field(None, gt=0)
    max_retries: int = Field(2, ge=0)
    retry_backoff_s: float = Field(1.0, ge=0)
    cache_dir: str | None = None
    backend: Literal["serial", "thread", "ray"] = "serial"
    sandbox: str = "auto"
    reward: str | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        """(agent label, task_id, sample), as :attr:`RunResult.key`."""
        return (self.agent.label, self.task_id, self.sample)


class EpisodeRecord(BaseModel):
    """What a job returns: the result and the text of its trajectory file.

    Attributes:
        result: The episode's RunResult; ``result.trajectory`` is where the trajectory belongs,
            relative to the results directory.
        trajectory_json: The trajectory file's text (None when the episode left none).
    """

    model_config = ConfigDict(extra="forbid")

    result: RunResult
    trajectory_json: str | None = None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _worker(backend: str) -> str:
    if backend != "ray":
        return backend
    import ray  # noqa: PLC0415 - only inside a Ray worker

    return str(ray.util.get_node_ip_address())


def infra_record(job: EpisodeJob, message: str, *, attempts: int = 1, worker: str = "") -> EpisodeRecord:
    """An ``infra_error`` record for ``job`` (no score, no trajectory)."""
    return EpisodeRecord(result=RunResult(
        agent=job.agent.label, task_id=job.task_id, sample=job.sample, seed=job.seed, status="infra_error",
        infra_error=message, attempts=attempts, started_at=_now(), worker=worker or job.backend))


def _attempt(job: EpisodeJob, trajectory_dir: Path) -> tuple[EpisodeOutcome, list[dict[str, Any]] | None, str,
                                                          dict[str, Any] | None]:
    """One try: a fresh agent and env, one episode, both closed afterwards."""
    agent = as_agent(job.agent.build())
    try:
        sandbox = job.sandbox
        if sandbox == "auto" and agent.trusted:
            # a trusted agent runs locally unless its task names a sandbox
            sandbox = resolve_task(job.task_dir).spec.environment.sandbox or "local"
        env = RepoGymEnv(task=job.task_dir, trajectory_dir=str(trajectory_dir), cache_dir=job.cache_dir, sandbox=sandbox,
                         reward=job.reward)
        try:
            used = env.sandbox_name  # what its commands and grading really run in
            # run_suite warned once already about an untrusted agent run locally
            outcome = run_episode(env, agent, seed=job.seed, time_limit_s=job.time_limit_s, warn_unconfined_agent=False)
            conversation, sampling = agent.conversation(), agent.sampling()
        finally:
            env.close()
    finally:
        agent.close()
    return outcome, conversation, used, sampling


def run_job(job: EpisodeJob) -> EpisodeRecord:
    """Run ``job``'s episode, retrying infrastructure failures with exponential backoff.

    Returns:
        A ``graded`` record, or after ``1 + max_retries`` failed attempts an ``infra_error``
        record naming the last failure. Never raises for a failing episode.
    """
    worker = _worker(job.backend)
    attempt = 0
    while True:
        started_at, start = _now(), time.monotonic()
        outcome, conversation, trajectory_json, used, sampling = None, None, None, "", None
        with owned_temporary("repogym-episode-", job.task_id) as tmp:
            try:
                outcome, conversation, used, sampling = _attempt(job, tmp)
                infra = outcome.info.get("infra_error")
                if infra is None and "score" not in outcome.info:
                    infra = "the episode ended without a grade"
            except AgentInfraError as exc:
                infra = f"AgentInfraError: {exc}"
            except Exception as exc:  # noqa: BLE001 - an episode that could not run is an infra failure, not a crash of the run
                infra = f"{type(exc).__name__}: {exc}"
            trajectory_file = outcome.info.get("trajectory_path") if outcome is not None else None
            if trajectory_file and Path(trajectory_file).is_file():
                trajectory_json = Path(trajectory_file).read_text(encoding="utf-8")
        if infra is None or attempt >= job.max_retries:
            break
        time.sleep(job.retry_backoff_s * 2**attempt)
        attempt += 1
    trajectory = f"trajectories/{job.agent.label}/{Path(str(trajectory_file)).name}" if trajectory_json else None
    common: dict[str, Any] = dict(
        agent=job.agent.label, task_id=job.task_id, sample=job.sample, seed=job.seed, attempts=attempt + 1,
        started_at=started_at, duration_s=time.monotonic() - start, trajectory=trajectory, worker=worker, sandbox=used,
        sampling=sampling)
    if outcome is not None:
        common |= dict(steps=outcome.steps, terminated=outcome.terminated, truncated=outcome.truncated,
                       timed_out=outcome.timed_out, agent_error=outcome.agent_error, duration_s=outcome.duration_s)
    if infra is not None:
        return EpisodeRecord(result=RunResult(status="infra_error", infra_error=str(infra), **common),
                             trajectory_json=trajectory_json)
    assert outcome is not None
    info = outcome.info
    result = RunResult(status="graded", score=float(info["score"]), passed=bool(info["passed"]),
                       reward=outcome.total_reward, grade=GradeResult.model_validate(info["grade"]),
                       conversation=conversation, **common)
    return EpisodeRecord(result=result, trajectory_json=trajectory_json)


def run_job_data(job: dict[str, Any]) -> dict[str, Any]:
    """:func:`run_job` on and to JSON-able dicts (what a Ray task sends and returns)."""
    return run_job(EpisodeJob.model_validate(job)).model_dump(mode="json")
