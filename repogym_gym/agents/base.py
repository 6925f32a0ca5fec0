"""The Agent protocol and a driver that runs one episode of any Gymnasium-API env.

An agent is told the task at the start of an episode (``begin``), then asked for one action
per step (``act``). Actions are whatever the env accepts: dicts with a string ``kind`` work for
both :class:`~repogym_gym.env.RepoEnv`-backed gym envs and the text wrapper's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from repogym_gym.task import Task

__all__ = ["Agent", "EpisodeOutcome", "run_episode"]


@runtime_checkable
class Agent(Protocol):
    """Something that drives an episode to its end."""

    name: str

    def begin(self, task: Task) -> None:
        """Called after reset with the episode's task."""
        ...

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        """The next action."""
        ...


@dataclass
class EpisodeOutcome:
    """How an episode went.

    Attributes:
        task_id: The task.
        total_reward: Sum of rewards (the grade, plus shaping if enabled).
        steps: Steps taken.
        terminated: Ended by Submit.
        truncated: Ended by the step budget (or the driver's own limit).
        info: The last step's info (``score``, ``grade``, ``infra_error`` ...).
    """

    task_id: str
    total_reward: float
    steps: int
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)


def run_episode(env: Any, agent: Agent, *, seed: int | None = None, options: dict[str, Any] | None = None,
                max_steps: int = 10_000) -> EpisodeOutcome:
    """Reset ``env``, let ``agent`` act until the episode ends, and return the outcome.

    Args:
        env: A ``gymnasium.Env`` made from a repogym id (wrappers allowed).
        agent: The agent.
        seed: Reset seed.
        options: Reset options.
        max_steps: A safety limit of this driver (the env's own budget normally ends first).
    """
    obs, info = env.reset(seed=seed, options=options)
    task = env.get_wrapper_attr("task")
    agent.begin(task)
    total, steps = 0.0, 0
    terminated = truncated = False
    while not (terminated or truncated) and steps < max_steps:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        total += float(reward)
        steps += 1
    return EpisodeOutcome(task.id, total, steps, bool(terminated), bool(truncated or not terminated), info)
