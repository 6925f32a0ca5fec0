"""The step budget ``gym.make(..., max_episode_steps=N)`` asks for, enforced where grading happens.

Gymnasium's ``TimeLimit`` truncates from outside the env, so an episode it cuts short would end
ungraded: a fixed bug scored 0 with no grade in ``info``. Every ``RepoGym/...`` id is registered
with :class:`GradeOnTimeLimit` as an additional wrapper; ``gym.make`` applies it above
``TimeLimit``, and on each reset it hands the limit that ``TimeLimit`` enforces (the spec's
``max_episode_steps`` as seen through the wrappers) to :class:`~repogym_gym.gym.env.RepoGymEnv`,
whose episode then grades on that step (``truncated=True``, the grade in ``info``), the step on
which ``TimeLimit`` also truncates.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import WrapperSpec

__all__ = ["GRADE_ON_TIME_LIMIT", "GradeOnTimeLimit"]


class GradeOnTimeLimit(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Hands the wrapped ``TimeLimit``'s step count to the RepoGym env at every reset."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        spec = self.env.spec
        limit = spec.max_episode_steps if spec is not None else None
        setter = getattr(self.unwrapped, "limit_steps", None)
        if setter is not None:
            setter(limit)
        return self.env.reset(seed=seed, options=options)


#: The registrations' ``additional_wrappers`` entry.
GRADE_ON_TIME_LIMIT = WrapperSpec(name="GradeOnTimeLimit", entry_point="repogym_gym.gym.budget:GradeOnTimeLimit", kwargs={})
