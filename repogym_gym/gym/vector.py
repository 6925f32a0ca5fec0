"""Vector environments for subprocess-bound steps and for GRPO groups.

- :class:`ThreadVectorEnv`: ``SyncVectorEnv`` semantics (same autoreset modes, same batching)
  with every member's reset/step run in a thread pool; steps here wait on subprocesses
  (tests, commands), so threads overlap them without pickling anything.
- :class:`GroupVectorEnv`: a GRPO group. N members of the same task and seed (one cached
  baseline; each member's workspace is a cheap copy of it), no autoreset, members that finished
  are frozen (their last observation, reward 0) until all are done. A member's ``terminated`` or
  ``truncated`` is True on the step it finishes only, so a vector wrapper counts each episode once
  (``RecordEpisodeStatistics`` counted 5 episodes for 2 when the flags stayed up), and
  ``info["active"]`` says which members still run after the step. The step on which the last member
  finishes carries group-relative advantages in ``info``::

      advantage_i = (R_i - mean(R)) / (std(R) + eps)        R_i = episode return of member i

  over members without an infrastructure error (population std, ddof=0, as in GRPO); members
  with ``infra_error`` get advantage 0 and ``info["infra_mask"]`` True so trainers can drop them.

A group is asked for by name, ``make_group(id, n)``: ``gym.make_vec(id, n)`` with no mode is
Gymnasium's sync vector env (autoreset, independent seeds), as it is for any other id.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import Env
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from repogym_gym.gym.env import RepoGymEnv

__all__ = ["GroupVectorEnv", "ThreadVectorEnv", "group_advantages", "make_group", "make_thread_vec"]


def group_advantages(returns: Sequence[float] | np.ndarray, mask: Sequence[bool] | np.ndarray | None = None,
                     eps: float = 1e-6) -> np.ndarray:
    """``(R - mean) / (std + eps)`` over the members where ``mask`` is True (others get 0).

    Args:
        returns: Episode return per member.
        mask: Members to include (default all).
        eps: Added to the population standard deviation.

    Example:
        >>> group_advantages([1.0, 0.0]).round(3).tolist()
        [1.0, -1.0]
    """
    r = np.asarray(returns, dtype=np.float64)
    keep = np.ones(len(r), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    out = np.zeros(len(r), dtype=np.float64)
    if keep.any():
        mean, std = r[keep].mean(), r[keep].std()
        out[keep] = (r[keep] - mean) / (std + eps)
    return out


def _per_member(space: Any, actions: Any, n: int) -> list[Any]:
    """The batched ``actions`` split into ``n`` member actions. A list or tuple holds one action per member
    (a dict, JSON or tool-call text) and each goes to its member as it is, so a malformed one is that
    member's observation (``action_error``), as in the single env, never an exception for the batch
    (round 40: 100,000 nested brackets in one member's text raised ``RecursionError`` from ``step``).

    Raises:
        ValueError: when the batch does not hold exactly ``n`` actions (a member would silently not be stepped).
    """
    per_env = list(actions) if isinstance(actions, list | tuple) else list(iterate(space, actions))
    if len(per_env) != n:
        raise ValueError(f"the action batch holds {len(per_env)} member actions, not {n}: one per member")
    return per_env

class ThreadVectorEnv(SyncVectorEnv):
    """``SyncVectorEnv`` whose members reset and step concurrently in threads.

    Args:
        env_fns: Callables that each make one env.
        max_workers: Threads (default: one per member).
        copy: Return copies of the batched observations.
        autoreset_mode: As for SyncVectorEnv (default NEXT_STEP).
    """

    def __init__(self, env_fns: Sequence[Callable[[], Env]], *, max_workers: int | None = None, copy: bool = True,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP) -> None:
        super().__init__(env_fns, copy=copy, autoreset_mode=autoreset_mode)
        self._pool = ThreadPoolExecutor(max_workers or self.num_envs, thread_name_prefix="repogym-vec")

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        seeds = [None] * self.num_envs if seed is None else [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"seed list has {len(seeds)} entries for {self.num_envs} envs")
        options = dict(options or {})
        mask = options.pop("reset_mask", np.ones(self.num_envs, dtype=np.bool_))
        chosen = [i for i in range(self.num_envs) if mask[i]]
        results = list(self._pool.map(lambda i: self.envs[i].reset(seed=seeds[i], options=options), chosen))
        infos: dict[str, Any] = {}
        for i, (obs, info) in zip(chosen, results, strict=False):
            self._env_obs[i] = obs
            self._terminations[i] = self._truncations[i] = self._autoreset_envs[i] = False
            infos = self._add_info(infos, info, i)
        self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)
        return (deepcopy(self._observations) if self.copy else self._observations), infos

    def _advance(self, i: int, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any], dict[str, Any] | None]:
        env = self.envs[i]
        if self.autoreset_mode == AutoresetMode.NEXT_STEP and self._autoreset_envs[i]:
            obs, info = env.reset()
            return obs, 0.0, False, False, info, None
        obs, reward, terminated, truncated, info = env.step(action)
        final = None
        if self.autoreset_mode == AutoresetMode.SAME_STEP and (terminated or truncated):
            final = {"final_obs": obs, "final_info": info}
            obs, info = env.reset()
        return obs, float(reward), terminated, truncated, info, final

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        per_env = _per_member(self.action_space, actions, self.num_envs)
        if self.autoreset_mode == AutoresetMode.DISABLED and self._autoreset_envs.any():
            raise ValueError("autoreset is disabled: reset the finished envs with options={'reset_mask': ...} first")
        results = list(self._pool.map(self._advance, range(self.num_envs), per_env))
        infos: dict[str, Any] = {}
        for i, (obs, reward, term, trunc, info, final) in enumerate(results):
            self._env_obs[i], self._rewards[i], self._terminations[i], self._truncations[i] = obs, reward, term, trunc
            if final is not None:
                infos = self._add_info(infos, final, i)
            infos = self._add_info(infos, info, i)
        self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)
        self._autoreset_envs = np.logical_or(self._terminations, self._truncations)
        return ((deepcopy(self._observations) if self.copy else self._observations), np.copy(self._rewards),
                np.copy(self._terminations), np.copy(self._truncations), infos)

    def close_extras(self, **kwargs: Any) -> None:
        self._pool.shutdown(wait=True)
        super().close_extras(**kwargs)


class GroupVectorEnv(VectorEnv):
    """A GRPO group: ``num_envs`` members of one task and seed (see the module docstring).

    Args:
        num_envs: Group size.
        max_episode_steps: Step budget (:func:`make_group` passes the registration's), lowering ``max_steps``.
        eps: Added to the group's standard deviation.
        max_workers: Threads stepping members (default: one per member).
        **env_kwargs: For :class:`~repogym_gym.gym.env.RepoGymEnv` (``task`` or ``suite``, ...).
    """

    def __init__(self, num_envs: int, *, max_episode_steps: int | None = None, eps: float = 1e-6,
                 max_workers: int | None = None, **env_kwargs: Any) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        if max_episode_steps is not None:
            env_kwargs["max_steps"] = min(env_kwargs.get("max_steps") or max_episode_steps, max_episode_steps)
        self.envs = [RepoGymEnv(**env_kwargs) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.eps = eps
        self.metadata = {**RepoGymEnv.metadata, "autoreset_mode": AutoresetMode.DISABLED}
        self.render_mode = self.envs[0].render_mode
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._pool = ThreadPoolExecutor(max_workers or num_envs, thread_name_prefix="repogym-group")
        self._obs: list[Any] = [None] * num_envs
        self._done = np.zeros(num_envs, dtype=np.bool_)
        self._terminated = np.zeros(num_envs, dtype=np.bool_)
        self._truncated = np.zeros(num_envs, dtype=np.bool_)
        self._returns = np.zeros(num_envs, dtype=np.float64)
        self._infra = np.zeros(num_envs, dtype=np.bool_)
        self._reported = False
        self._buffer: Any = create_empty_array(self.single_observation_space, n=num_envs)

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset every member with the same seed (so a suite env picks the same task for all).

        Args:
            seed: One int for the group (a list must hold one value repeated); None draws one.
            options: Passed to every member's reset.

        Raises:
            ValueError: for seeds that differ, or a ``reset_mask`` option (members reset together).
        """
        if options and "reset_mask" in options:
            raise ValueError("a group resets all its members together (one task, one seed): reset_mask is not "
                             "supported; call reset() for a new group episode, or use make_thread_vec for members "
                             "that reset on their own")
        if isinstance(seed, list):
            if len(set(seed)) != 1 or len(seed) != self.num_envs:
                raise ValueError(f"a group shares one seed; got {seed}")
            seed = seed[0]
        if seed is None:
            seed = int.from_bytes(secrets.token_bytes(4), "big")
        self._np_random_seed = seed
        results = list(self._pool.map(lambda env: env.reset(seed=seed, options=options), self.envs))
        self._done[:] = self._terminated[:] = self._truncated[:] = self._infra[:] = False
        self._returns[:] = 0.0
        self._reported = False
        infos: dict[str, Any] = {}
        for i, (obs, info) in enumerate(results):
            self._obs[i] = obs
            self._infra[i] = bool(info.get("infra_error"))
            infos = self._add_info(infos, info, i)
        return self._batch(), infos

    def _member_step(self, i: int, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._done[i]:
            return self._obs[i], 0.0, False, False, {"frozen": True}
        try:
            return self.envs[i].step(action)
        except Exception as exc:  # noqa: BLE001 - one member's failure must not stop the group
            message = f"{type(exc).__name__}: {exc}"
            return self._obs[i], 0.0, True, False, {"infra_error": message}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        per_env = _per_member(self.action_space, actions, self.num_envs)
        results = list(self._pool.map(self._member_step, range(self.num_envs), per_env))
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        for i, (obs, reward, term, trunc, info) in enumerate(results):
            was_done = self._done[i]
            self._obs[i] = obs
            rewards[i] = reward
            if not was_done:
                self._returns[i] += reward
                terminated[i], truncated[i] = term, trunc
                self._terminated[i], self._truncated[i] = term, trunc
                self._done[i] = term or trunc
                self._infra[i] |= bool(info.get("infra_error"))
            infos = self._add_info(infos, {**info, "active": not self._done[i]}, i)
        if self._done.all() and not self._reported:
            self._reported = True
            mask = ~self._infra
            extra = {"group_advantages": group_advantages(self._returns, mask, self.eps),
                     "episode_return": self._returns.copy(), "infra_mask": self._infra.copy()}
            for i in range(self.num_envs):
                infos = self._add_info(infos, {k: v[i] for k, v in extra.items()}, i)
        return self._batch(), rewards, terminated, truncated, infos

    @property
    def all_done(self) -> bool:
        """True once every member finished its episode."""
        return bool(self._done.all())

    def _batch(self) -> Any:
        self._buffer = concatenate(self.single_observation_space, self._obs, self._buffer)
        return deepcopy(self._buffer)

    def render(self) -> tuple[Any, ...]:
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        self._pool.shutdown(wait=True)
        for env in self.envs:
            env.close()


def make_thread_vec(env_id: str, num_envs: int, *, max_workers: int | None = None,
                    autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP, **kwargs: Any) -> ThreadVectorEnv:
    """``num_envs`` copies of ``gym.make(env_id, **kwargs)`` stepped in a thread pool."""
    return ThreadVectorEnv([lambda: gym.make(env_id, **kwargs) for _ in range(num_envs)], max_workers=max_workers,
                           autoreset_mode=autoreset_mode)


def make_group(env_id: str, group_size: int, **kwargs: Any) -> GroupVectorEnv:
    """A GRPO group of ``group_size`` members of ``env_id`` (same task, same seed).

    ``kwargs`` go to each member's :class:`~repogym_gym.gym.env.RepoGymEnv` over the registration's;
    ``max_episode_steps`` (default: the registration's) bounds each member's step budget.

    Raises:
        gymnasium.error.NameNotFound: for an id that is not registered.

    Example:
        >>> group = make_group("RepoGym/parse-duration-v0", 4)           # doctest: +SKIP
    """
    spec = gym.spec(env_id)
    max_episode_steps = kwargs.pop("max_episode_steps", spec.max_episode_steps)
    return GroupVectorEnv(group_size, max_episode_steps=max_episode_steps, **{**spec.kwargs, **kwargs})
