"""Trajectories: the record of one episode, written as one JSON file.

A trajectory holds the environment spec (Gymnasium ``EnvSpec.to_json()`` when made through the
gym layer), every action as sent (parsed, or the raw text when it did not parse) and every
observation, the rewards, and the final grade, so an episode can be audited or replayed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from repogym_gym.actions import Observation
from repogym_gym.private import write_private
from repogym_gym.results import GradeResult
from repogym_gym.safetext import safe_json, safe_text

__all__ = ["Trajectory", "TrajectoryStep"]


class TrajectoryStep(BaseModel):
    """One step: what the agent sent, what it saw, what it earned.

    Attributes:
        step: 1-based step number.
        action: The parsed action as a dict, or None when it did not parse (or the driver ended the episode).
        raw_action: The action as sent, when it did not parse (the text itself, or the repr of
            anything else; at most 10,000 characters); None for a driver's truncation.
        observation: The observation returned.
        reward: Reward of this step (shaping, or the grade on the last step).
    """

    model_config = ConfigDict(extra="forbid")

    step: int
    action: dict[str, Any] | None
    raw_action: str | None = None
    observation: Observation
    reward: float = 0.0

    @field_validator("raw_action")
    @classmethod
    def _valid_utf8(cls, value: str | None) -> str | None:
        # what did not parse may be any text, lone surrogates included (exports, chat messages)
        return safe_text(value) if value is not None else None


class Trajectory(BaseModel):
    """One episode.

    Attributes:
        task_id: The task.
        episode_id: Random id of the episode (hex).
        env_spec: The Gymnasium spec as JSON, or None outside the gym layer.
        started_at: ISO 8601 UTC time of reset.
        reset_observation: What reset returned (the problem statement and file tree).
        duration_s: Seconds from reset to the end of the episode.
        steps: Every step, in order.
        grade: The final grade (None if the episode ended without one).
        infra_error: Set when infrastructure failed (the reward is then 0 and should be masked).
        terminated: Ended by Submit.
        truncated: Ended by the step budget.
        forked_from: ``[episode_id, step]`` of the episode this one was forked from (its steps up to
            then are this one's first steps), or None.
    """

    model_config = ConfigDict(extra="forbid")

    task_id: str
    episode_id: str
    env_spec: str | None = None
    started_at: str
    reset_observation: Observation | None = None
    duration_s: float = 0.0
    steps: list[TrajectoryStep] = Field(default_factory=list)
    grade: GradeResult | None = None
    infra_error: str | None = None
    terminated: bool = False
    truncated: bool = False
    forked_from: tuple[str, int] | None = None

    def write(self, directory: Path) -> Path:
        """Write ``<directory>/<task_id>-<episode_id>.json`` (UTF-8) and return its path.

        Whatever the episode held, the file is valid UTF-8 JSON: a lone surrogate in a raw action
        becomes U+FFFD (:mod:`repogym_gym.safetext`). The file is mode 0600 and the directories
        made for it 0700 (it holds the episode's patch: see :mod:`repogym_gym.private`).

        Raises:
            OSError: when the directory or the file cannot be written.
        """
        path = Path(directory) / f"{self.task_id}-{self.episode_id}.json"
        write_private(path, json.dumps(safe_json(self.model_dump(mode="json")), indent=1, ensure_ascii=False))
        return path
