"""GEM: a RepoGym task as a ``gem.Env`` (text observations, a whole completion per action).

``gem.make("repogym", repogym_id="RepoGym/<task>-v0", sandbox="bwrap")`` (importing this module
registers ``"repogym"``; GEM sets ``env.env_id`` itself, so the RepoGym id has its own keyword) and
``gem.make_vec(["repogym"] * n, repogym_id=...)`` (GEM's ``seed`` per member is the reset seed).

- ``reset(seed)`` returns the first observation's text; ``step(completion)`` runs every tool call of
  the completion (:meth:`~repogym_gym.episode.Episode.step`) and returns GEM's 5-tuple with the text;
  a submit or the step budget grades, and so does ``max_turns`` (``gym.make``'s ``max_episode_steps``:
  the episode grades on that step, :mod:`repogym_gym.gym.budget`).
- ``spawn(same_state=True)`` forks the running episode (:meth:`~repogym_gym.gym.env.RepoGymEnv.fork`:
  a workspace of its own holding a copy of this one's); ``same_state=False`` makes a fresh env of the
  same configuration.
- An infrastructure failure has no reward: GEM has no mask, so the reward is 0 with
  ``info["infra_error"]`` set, for the trainer to drop the episode.
"""

from __future__ import annotations

from typing import Any

import gem

from repogym_gym.gym import make_env

__all__ = ["GEM_ID", "RepoGymGemEnv", "register"]

#: The id ``gem.make`` takes.
GEM_ID = "repogym"


class RepoGymGemEnv(gem.Env):
    """One RepoGym env for GEM.

    Args:
        repogym_id: A registered ``RepoGym/...`` id (``repogym_gym.dataset(suite)`` rows name them).
        seed: The reset seed when ``reset`` is given none (``gem.make_vec`` passes one per member).
        sandbox: ``auto`` (default), ``local``, ``bwrap`` or ``docker``.
        max_turns: Grade on this step at the latest (default: the task's budget).
        reward_shaping: Opt-in shaping (at most 0.1 per episode).
        reward: The reward kind (README "Choosing a reward"); None: the task's default.

    Raises:
        ValueError: when ``max_turns`` is not an integer of 1 or more.
    """

    def __init__(self, repogym_id: str, seed: int | None = None, sandbox: str | None = None,
                 max_turns: int | None = None, reward_shaping: bool = False, reward: str | None = None,
                 _env: Any = None) -> None:
        super().__init__()
        if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
            raise ValueError(f"max_turns must be an integer of 1 or more, got {max_turns!r}")
        self.config: dict[str, Any] = {"repogym_id": repogym_id, "seed": seed, "sandbox": sandbox, "max_turns": max_turns,
                       "reward_shaping": reward_shaping, "reward": reward}
        limit = {"max_episode_steps": max_turns} if max_turns is not None else {}
        self.env = _env if _env is not None else make_env(repogym_id, sandbox=sandbox, reward_shaping=reward_shaping,
                                                                reward=reward, **limit)
        self.seed = seed

    def reset(self, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed if seed is not None else self.seed)
        return obs["text"], info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs["text"], 0.0 if info.get("infra_error") else float(reward), bool(terminated), bool(truncated), info

    def spawn(self, same_state: bool = False, **kwargs: Any) -> RepoGymGemEnv:
        """A copy of the running episode (``same_state=True``) or a new env of this configuration with
        ``kwargs`` replacing some of it.

        Raises:
            EpisodeError: for ``same_state=True`` before reset or after the episode ended.
        """
        if same_state:
            twin = self.env.get_wrapper_attr("fork")()
            return RepoGymGemEnv(**self.config, _env=twin)
        return RepoGymGemEnv(**{**self.config, **kwargs})

    def close(self) -> None:
        self.env.close()


def register(env_id: str = GEM_ID) -> None:
    """Register :class:`RepoGymGemEnv` with GEM as ``env_id`` (idempotent; importing this module
    registers ``"repogym"``)."""
    from gem.envs.registration import ENV_REGISTRY

    if env_id not in ENV_REGISTRY:
        gem.register(env_id, entry_point=f"{__name__}:RepoGymGemEnv")


register()
