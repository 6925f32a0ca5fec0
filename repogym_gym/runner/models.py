"""What a run writes: one :class:`RunResult` per episode, and a :class:`RunSummary` per run.

A results directory looks like this (``<label>`` is the agent's label, ``<k>`` the sample index)::

    <out>/run.json                                   RunConfig: what was asked for
    <out>/results/<label>/<task_id>/<k>.json         RunResult: one episode
    <out>/trajectories/<label>/<task_id>-<episode>.json   Trajectory: every step of it
    <out>/summary.json                               RunSummary: per-agent scores and pass@k

"A bad rollout is data": an episode whose infrastructure failed (workspace setup, sandbox,
grader crash, an unreachable model server) is recorded with ``status="infra_error"`` and no
score, and is never counted in a mean or a pass@k.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from repogym_gym.agents.registry import AgentSpec, check_agent_label
from repogym_gym.errors import RunError, validation_summary
from repogym_gym.results import GradeResult
from repogym_gym.safetext import safe_json
from repogym_gym.spec import check_task_id

_log = logging.getLogger(__name__)

__all__ = ["AgentStats", "RunConfig", "RunResult", "RunSummary", "load_results", "result_path"]

Status = Literal["graded", "infra_error"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunResult(_Model):
    """One episode of one agent on one task.

    Attributes:
        agent: The agent's label.
        task_id: The task.
        sample: 0-based sample index among the ``k`` samples of this agent and task.
        seed: The reset seed (the sample index unless the run set a base seed).
        status: ``graded`` (``score`` is the reward) or ``infra_error`` (no score; mask it).
        score: The graded score in [0, 1]; None for ``infra_error``.
        passed: The grade's pass verdict; None for ``infra_error``.
        reward: Total reward of the episode (score plus any shaping); None for ``infra_error``.
        grade: The full grade (components, patch, per-test outcomes); None for ``infra_error``.
        steps: Steps taken.
        terminated: Ended by Submit.
        truncated: Ended by the step budget, the time limit or an agent error.
        timed_out: The per-episode time limit ended it.
        agent_error: ``"<Type>: <message>"`` when the agent raised; the episode was graded as it stood.
        infra_error: The last attempt's infrastructure failure, for ``infra_error`` episodes.
        attempts: Attempts made (1 + retries after infrastructure failures).
        duration_s: Wall-clock seconds of the last attempt, reset to grade.
        started_at: ISO 8601 UTC time the last attempt started.
        trajectory: Path of the trajectory JSON, relative to the results directory (None if none).
        conversation: The episode as OpenAI-style chat messages, when the agent kept one.
        sampling: How the agent sampled (its ``sampling()``: model, temperature with None meaning the
            server's default, max_tokens); None for an agent that does not sample.
        worker: Where it ran (``thread``/``serial`` or the Ray node's IP address).
        sandbox: The sandbox its commands and grading ran in (``local``, ``bwrap`` ...; "" when
            the episode could not start).
    """

    agent: str
    task_id: str
    sample: int = Field(ge=0)
    seed: int
    status: Status
    score: float | None = None
    passed: bool | None = None
    reward: float | None = None
    grade: GradeResult | None = None
    steps: int = Field(0, ge=0)
    terminated: bool = False
    truncated: bool = False
    timed_out: bool = False
    agent_error: str | None = None
    infra_error: str | None = None
    attempts: int = Field(1, ge=1)
    duration_s: float = Field(0.0, ge=0)
    started_at: str = ""
    trajectory: str | None = None
    conversation: list[dict[str, Any]] | None = None
    sampling: dict[str, Any] | None = None
    worker: str = ""
    sandbox: str = ""

    @field_validator("task_id")
    @classmethod
    def _task_id(cls, value: str) -> str:
        return check_task_id(value)  # a '/' would file the result where load_results never looks

    @field_validator("conversation", "agent_error", "infra_error")
    @classmethod
    def _valid_utf8(cls, value: Any) -> Any:
        # a model's reply can carry lone surrogates (JSON "\\ud800"); results are written as UTF-8 JSON
        return safe_json(value)

    @field_validator("agent")
    @classmethod
    def _agent_label(cls, value: str) -> str:
        return check_agent_label(value)

    @field_validator("score")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and (not math.isfinite(value) or not 0.0 <= value <= 1.0):
            raise ValueError(f"score must be a finite number in [0, 1] or None, got {value!r}")
        return value

    def model_post_init(self, context: Any) -> None:
        if self.status == "graded" and (self.score is None or self.passed is None):
            raise ValueError("a graded RunResult needs score and passed")
        if self.status == "infra_error" and (self.score is not None or not self.infra_error):
            raise ValueError("an infra_error RunResult has no score and names its infra_error")

    @property
    def key(self) -> tuple[str, str, int]:
        """(agent, task_id, sample): the episode's identity within a run."""
        return (self.agent, self.task_id, self.sample)


class RunConfig(_Model):
    """What a run was asked to do (``run.json``); a resumed run must ask for the same.

    Attributes:
        suite: The task directory or suite path as given.
        task_ids: The tasks run, in order.
        agents: The agents.
        samples: Episodes per agent and task (the ``n`` of pass@k).
        seed: Base reset seed; sample ``i`` uses ``seed + i``.
        time_limit_s: Wall-clock limit per episode, seconds (None: none).
        max_retries: Retries of an episode after an infrastructure failure.
        backend: ``serial``, ``thread`` or ``ray``.
        jobs: Concurrent episodes (threads; for Ray, in-flight tasks).
        sandbox: The sandbox asked for (``auto``: local for trusted agents, else bubblewrap
            where it runs).
        reward: The reward kind asked for (None: each task's default).
    """

    suite: str
    task_ids: list[str]
    agents: list[AgentSpec]
    samples: int = Field(1, ge=1)
    seed: int = 0
    time_limit_s: float | None = Field(None, gt=0)
    max_retries: int = Field(2, ge=0)
    backend: Literal["serial", "thread", "ray"] = "thread"
    jobs: int = Field(1, ge=1)
    sandbox: str = "auto"
    reward: str | None = None


class AgentStats(_Model):
    """One agent's scores over a run.

    Attributes:
        agent: The agent's label.
        episodes: Episodes recorded (graded plus infra errors).
        graded: Episodes with a score.
        infra_errors: Episodes without one (excluded from every figure below).
        mean_score: Mean score over graded episodes (None if none).
        pass_at_1: Unbiased pass@1, averaged over tasks (None if no task was graded).
        pass_at_k: Unbiased pass@k per k, averaged over tasks with at least k graded samples.
        tasks_solved: Tasks with at least one passing sample.
        mean_duration_s: Mean seconds per graded episode.
    """

    agent: str
    episodes: int
    graded: int
    infra_errors: int
    mean_score: float | None
    pass_at_1: float | None
    pass_at_k: dict[int, float] = Field(default_factory=dict)
    tasks_solved: int = 0
    mean_duration_s: float | None = None


class RunSummary(_Model):
    """A run's outcome (``summary.json``).

    Attributes:
        config: The run's configuration.
        episodes: Episodes recorded.
        agents: Per-agent figures, in the config's agent order.
        wall_s: Wall-clock seconds of the run (the last invocation, when resumed).
        resumed: Episodes found finished and not rerun.
    """

    config: RunConfig
    episodes: int
    agents: list[AgentStats]
    wall_s: float = Field(0.0, ge=0)
    resumed: int = Field(0, ge=0)


def result_path(out: Path, agent: str, task_id: str, sample: int) -> Path:
    """``<out>/results/<agent>/<task_id>/<sample>.json``."""
    return out / "results" / agent / task_id / f"{sample}.json"


def load_results(out: Path, *, quarantine: bool = False) -> list[RunResult]:
    """Every RunResult under ``out/results``, sorted by (agent, task_id, sample).

    Args:
        out: The results directory.
        quarantine: Move a file that does not validate (cut short by a full disk, edited by hand) to
            ``out/quarantine/`` (same relative path, a numbered suffix if taken) and leave it out, so
            a resumed run runs its episode again; without it such a file is an error.

    Raises:
        RunError: when ``out`` has no ``results`` directory, or (without ``quarantine``) a file does
            not validate: the message names the file and how to go on.
    """
    root = out / "results"
    if not root.is_dir():
        raise RunError(f"{out}: not a results directory (no results/ inside); run `repogym run ... --out {out}` first")
    results = []
    for path in sorted(root.glob("*/*/*.json")):
        try:
            results.append(RunResult.model_validate_json(path.read_bytes()))
        except (ValidationError, OSError) as exc:
            if quarantine:
                _quarantine(out, path)
                continue
            raise RunError(f"{path}: not a valid RunResult: {validation_summary(exc)}; resuming the run (the same "
                           f"`repogym run` with --out {out}) moves it to {out / 'quarantine'} and runs its episode "
                           "again") from None
    return sorted(results, key=lambda r: r.key)


def _quarantine(out: Path, path: Path) -> Path:
    """Move ``path`` (under ``out/results``) to ``out/quarantine`` at the same relative path; the new path."""
    target = out / "quarantine" / path.relative_to(out / "results")
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    candidate, number = target, 1
    while candidate.exists():
        candidate = target.with_name(f"{target.stem}.{number}{target.suffix}")
        number += 1
    path.replace(candidate)
    _log.warning("%s did not validate; moved to %s, and its episode runs again", path, candidate)
    return candidate
