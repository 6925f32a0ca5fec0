"""SkyRL-gym: a RepoGym task as a ``skyrl_gym`` ``BaseTextEnv`` (text in, chat messages out).

SkyRL's generator makes one env per rollout with ``skyrl_gym.make("repogym", env_config=...,
extras=row)``, where ``row`` is the dataset row without its prompt (``repogym_gym.dataset(suite)``
gives ``env_id``, ``task_id`` and ``seed``; they may also sit in ``row["extra_info"]``, SkyRL's own
place for them), then calls ``init(prompt)`` once and ``step(completion)`` per turn:

- ``init`` resets the episode; the prompt's last user message, the task's heading, becomes the
  whole first observation (the heading and the repository's files);
- ``step`` runs every tool call of the completion (:meth:`~repogym_gym.episode.Episode.step`);
  the episode ends at a submit, at the step budget, or at ``max_turns`` (the row's, else
  ``env_config["max_turns"]``), where the workspace is graded: SkyRL never asks an env that is
  still running for a reward, so an unfinished rollout would otherwise score nothing;
- the reward is the gym reward (the grade, plus opt-in shaping). An infrastructure failure has
  no reward to give; SkyRL-gym has no per-rollout mask, so the step reports 0 with
  ``metadata["infra_error"]`` and ``get_metrics()["infra_error"] = 1`` for the trainer to drop it.

``env_config`` (SkyRL's ``environment.skyrl_gym.repogym`` section) may hold ``sandbox``,
``max_turns``, ``reward_shaping`` and ``reward`` (the reward kind; README "Choosing a reward").

Example:
    >>> import skyrl_gym, repogym_gym.integrations.skyrl                                # doctest: +SKIP
    >>> env = skyrl_gym.make("repogym", env_config={"sandbox": "bwrap"}, extras=row)    # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import skyrl_gym
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from repogym_gym.gym import make_env, row_env_id

__all__ = ["SKYRL_ID", "RepoGymTextEnv", "register"]

#: What ``env_config`` may hold.
_CONFIG_KEYS = frozenset({"sandbox", "max_turns", "reward_shaping", "reward"})

#: The id SkyRL's ``environment.env_class`` names.
SKYRL_ID = "repogym"


class RepoGymTextEnv(BaseTextEnv):
    """One rollout of a RepoGym task for SkyRL.

    Args:
        env_config: ``sandbox``, ``max_turns``, ``reward_shaping``, ``reward`` (all optional).
        extras: The dataset row: ``env_id`` (or ``task_id``) and ``seed``, optionally ``max_turns``;
            at the top or under ``extra_info``.

    Raises:
        ValueError: when the row names no ``env_id`` or ``task_id``, ``max_turns`` is not an integer of 1 or
            more, or ``env_config`` has a key of none of the above.
    """

    def __init__(self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config, row = dict(env_config or {}), dict(extras or {})
        unknown = sorted(str(k) for k in config if k not in _CONFIG_KEYS)
        if unknown:
            raise ValueError(f"env_config keys {unknown} are not RepoGym's; it takes {sorted(_CONFIG_KEYS)}")
        row = {**dict(row.get("extra_info") or {}), **row}
        env_id = row_env_id(row)
        max_turns = row.get("max_turns", config.get("max_turns", 10**6))
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be an integer of 1 or more, got {max_turns!r}")
        self.max_turns = max_turns
        self.seed = row.get("seed")
        self.env = make_env(env_id, sandbox=config.get("sandbox"), reward_shaping=bool(config.get("reward_shaping", False)),
                            reward=config.get("reward"))
        self.infra_error: str | None = None
        self.episode_reward = 0.0
        self.score: float | None = None

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset the episode; return the prompt with the first observation as its last user message."""
        obs, info = self.env.reset(seed=self.seed)
        self.infra_error = info.get("infra_error")
        messages = [dict(m) for m in prompt]
        if messages and messages[-1].get("role") == "user" and obs["text"].startswith(str(messages[-1].get("content", ""))):
            messages[-1]["content"] = obs["text"]
        else:
            messages.append({"role": "user", "content": obs["text"]})
        return messages, {"task_id": info.get("task_id"), "episode_id": info.get("episode_id")}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Run every tool call of ``action`` (the whole completion); grade at the end of the episode."""
        self.turns += 1
        obs, reward, terminated, truncated, info = self.env.step(action)
        if not (terminated or truncated) and self.turns >= self.max_turns:
            more_obs, more_reward, terminated, truncated, info = self.env.get_wrapper_attr("truncate")(f"max_turns ({self.max_turns})")
            obs, reward = more_obs, reward + more_reward
        done = bool(terminated or truncated)
        self.episode_reward += float(reward)
        metadata: dict[str, Any] = {"action_error": info.get("action_error"), "tool_results": info.get("tool_results")}
        if done:
            self.infra_error = info.get("infra_error") or self.infra_error
            self.score = info.get("score")
            metadata |= {"score": self.score, "passed": info.get("passed"), "infra_error": self.infra_error}
        observations = [] if done else [{"role": "user", "content": obs["text"]}]
        return BaseTextEnvStepOutput(observations=observations, reward=0.0 if self.infra_error else float(reward),
                                     done=done, metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        """``turns``, ``reward`` (the episode's), ``score`` (None before grading), ``infra_error`` (0 or 1)."""
        return {"turns": self.turns, "reward": self.episode_reward, "score": self.score,
                "infra_error": int(self.infra_error is not None)}

    def close(self) -> None:
        self.env.close()


def register(env_class: str = SKYRL_ID) -> None:
    """Register :class:`RepoGymTextEnv` with ``skyrl_gym`` as ``env_class`` (idempotent; importing this
    module registers ``"repogym"``)."""
    if env_class not in skyrl_gym.registry:
        skyrl_gym.register(id=env_class, entry_point=f"{__name__}:RepoGymTextEnv")


register()
