"""RepoGymEnv: a ``gymnasium.Env`` over :class:`~repogym_gym.episode.Episode`.

One class serves three kinds of ids (see :mod:`repogym_gym.gym.registration`):

- ``RepoGym/<task>-v0``: ``task`` is fixed by the registration;
- ``RepoGym/Task-v0``: ``gym.make("RepoGym/Task-v0", task="path/or/id")``;
- ``RepoGym/Suite-v0``: ``suite`` names a bundled suite or a directory; every ``reset`` draws a
  task with the env's seeded RNG (same seed → same task → same first observation), and
  ``reset(options={"task_id": ..., "type": ..., "tags": [...]})`` narrows the draw.

Actions are dicts of the :data:`~repogym_gym.gym.spaces.ACTION_SPACE` (integer ``kind``),
action dicts with a string ``kind``, Action models, or JSON / tool-call text; a bad action is
an observation with ``info["parse_error"]``, never an exception.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from repogym_gym.actions import Observation, tool_schema
from repogym_gym.baseline import BaselineStore
from repogym_gym.conversation import SYSTEM_PROMPT
from repogym_gym.episode import Episode, EpisodeError, StepResult, check_max_steps
from repogym_gym.errors import TaskNotFoundError
from repogym_gym.grading import default_grader, reward_kind
from repogym_gym.gym.aio import run_blocking
from repogym_gym.gym.spaces import NO_EXIT_CODE, action_space, chat_observation_space, observation_space
from repogym_gym.sandbox import Sandbox, SandboxConfig, make_sandbox, sandbox_config
from repogym_gym.task import Task, load_tasks, resolve_suite, resolve_task

__all__ = ["RepoGymEnv"]

#: Why a live env is neither copied nor pickled: a copy would share its workspace, sandbox and episode.
_NO_COPY = ("a RepoGym env cannot be copied or pickled: it owns a live workspace and sandbox, which a copy would "
            "share; env.unwrapped.fork() copies the running episode into a workspace of its own, and "
            "gym.make(env.spec.id, ...) makes another (Gymnasium's AsyncVectorEnv pickles the env "
            "functions, not envs, so it works)")

#: What ``reset(options=...)`` may hold: the filters of a suite env's draw.
_RESET_OPTIONS = ("task_id", "type", "tags")


def _message(role: str, content: str, tool_call_id: str = "") -> dict[str, str]:
    return {"role": role, "content": content, "tool_call_id": tool_call_id}


class RepoGymEnv(gym.Env[Any, Any]):
    """A coding task as a Gymnasium environment.

    Args:
        task: A Task, task directory or bundled task id (exclusive with ``suite``).
        suite: A bundled suite name or a suite directory to draw tasks from.
        render_mode: None or ``"ansi"``.
        sandbox: Sandbox name: ``"local"``, ``"bwrap"``, ``"docker"``, or ``"auto"`` (the
            default, also for None: a task's ``environment.sandbox`` when it names one, else
            bubblewrap where it runs, else local with an
            :class:`~repogym_gym.errors.UnconfinedWarning`: the policy is untrusted), or a
            configuration with options (``{"type": "docker", "cpus": 1}``, see
            :mod:`repogym_gym.sandbox.config`). Only an explicit ``"local"`` runs a policy's
            commands unconfined on purpose. :attr:`sandbox_name` says which one the current task runs in.
        reward_shaping: Opt-in shaping (at most 0.1 per episode).
        max_steps: Step budget (default: each task's ``limits.max_steps``).
        trajectory_dir: Write a trajectory JSON per episode here.
        cache_dir: Baseline cache directory (default: ``$REPOGYM_CACHE_DIR`` or the user cache).
        observation_mode: ``"dict"`` (default: text, step, steps_left, exit_code) or ``"chat"``: a
            tuple of chat messages, the system prompt and the first observation at reset (with the
            tool schema in ``info["tools"]``), then one ``tool`` message per call of the step, keyed by
            its ``tool_call_id`` (:func:`~repogym_gym.gym.spaces.chat_observation_space`).
        reward: The reward kind to grade by, one the task offers (``grading.rewards``: ``tests``,
            ``graded``, ``binary``, ``diff_similarity``); None: the task's default (the first).

    Raises:
        ValueError: when neither or both of ``task`` and ``suite`` are given, ``max_steps`` is not 1 to
            1,000,000 (the observation space's bound), or the task does not offer ``reward`` (for a
            suite: at the reset that draws such a task).
        SandboxConfigError: for an unknown sandbox or a bad option (a ``ValueError`` too).
        SandboxUnavailableError: when the sandbox cannot run on this machine.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        task: str | os.PathLike[str] | Task | None = None,
        *,
        suite: str | os.PathLike[str] | None = None,
        render_mode: str | None = None,
        sandbox: str | Mapping[str, Any] | SandboxConfig | None = None,
        reward_shaping: bool = False,
        max_steps: int | None = None,
        trajectory_dir: str | None = None,
        cache_dir: str | None = None,
        observation_mode: str = "dict",
        reward: str | None = None,
    ) -> None:
        if (task is None) == (suite is None):
            raise ValueError("give exactly one of task= (a task path or id) and suite= (a suite name or path)")
        if max_steps is not None:
            check_max_steps(max_steps)
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r} is not supported; use None or 'ansi'")
        if observation_mode not in ("dict", "chat"):
            raise ValueError(f"observation_mode {observation_mode!r} is not one of 'dict', 'chat'")
        self.render_mode = render_mode
        self.observation_mode = observation_mode
        self.observation_space = chat_observation_space() if observation_mode == "chat" else observation_space()
        self.action_space = action_space()
        self._fixed = resolve_task(task) if task is not None else None
        self._reward = reward
        if self._fixed is not None:
            reward_kind(self._fixed, reward)
        self._suite = resolve_suite(suite) if suite is not None else None
        self._suite_tasks: list[Task] | None = None
        self._options = {"reward_shaping": reward_shaping, "max_steps": max_steps, "trajectory_dir": trajectory_dir}
        self._requested = sandbox_config(sandbox) if sandbox is not None else None
        self._sandboxes: dict[str, Sandbox] = {}
        self._sandbox = self._sandbox_for(self._fixed)  # an unknown or unavailable sandbox fails here
        self._store = BaselineStore(Path(cache_dir)) if cache_dir else None
        self._episode: Episode | None = None
        self._time_limit: int | None = None
        self._busy = threading.Lock()  # one call at a time: areset/astep from two tasks of a loop must not interleave

    @property
    def sandbox_name(self) -> str:
        """The name of the sandbox the current task's commands and grading run in (``local``, ``bwrap`` ...)."""
        return self._sandbox.name

    def _sandbox_for(self, task: Task | None) -> Sandbox:
        """The sandbox ``task`` runs in: an explicit name, else the task's ``environment.sandbox``,
        else ``auto``; each made once per env."""
        wanted = task.spec.environment.sandbox if task is not None else None
        requested = self._requested
        config = requested if requested is not None and requested.type != "auto" else sandbox_config(wanted or requested or "auto")
        key = config.model_dump_json()
        if key not in self._sandboxes:
            self._sandboxes[key] = make_sandbox(config)
        return self._sandboxes[key]

    # -- gymnasium API -----------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start an episode; ``options`` narrow a suite env's draw (``task_id``, ``type``, ``tags``).

        Raises:
            ValueError: for an option that is not one of those, or any of them on a one-task env
                (silently ignored before, so a typo drew from the whole suite).
        """
        self._check_options(options or {})
        super().reset(seed=seed)
        task = self._choose(options or {})
        if self._episode is None or self._episode.task.id != task.id:
            grader = default_grader(task, self._reward) if self._reward is not None else None  # may refuse: before any close
            if self._episode is not None:
                self._episode.close()
            self._sandbox = self._sandbox_for(task)
            self._episode = Episode(task, sandbox=self._sandbox, store=self._store, grader=grader,
                                    env_spec_json=self._spec_json(), **self._options)  # type: ignore[arg-type]
        self._episode.max_steps = self._budget(task)
        obs, info = self._episode.reset()
        if self.observation_mode == "chat":
            info["tools"] = tool_schema(bash=self._sandbox.confining, tests=task.spec.tests is not None)
            return (_message("system", SYSTEM_PROMPT), _message("user", obs.text)), info
        return self._to_space(obs), info

    def _budget(self, task: Task) -> int:
        """The episode's step budget: ``max_steps`` (else the task's), lowered to ``max_episode_steps``
        when ``gym.make``'s ``TimeLimit`` enforces a smaller one, so the episode grades on the step where
        ``TimeLimit`` truncates (it truncates from outside and would end the episode ungraded)."""
        budget = int(self._options["max_steps"] or task.spec.limits.max_steps)
        limit = self._time_limit
        return min(budget, limit) if limit is not None and limit > 0 else budget

    def limit_steps(self, max_episode_steps: int | None) -> None:
        """Grade on step ``max_episode_steps`` when it is below the budget, from the next reset on
        (called by :class:`~repogym_gym.gym.budget.GradeOnTimeLimit`, which ``gym.make`` applies
        above its ``TimeLimit``); None: the budget alone."""
        self._time_limit = max_episode_steps

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._episode is None:
            raise EpisodeError("step() called before reset()")
        return self._out(self._episode.step(action))

    def truncate(self, reason: str) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """End the running episode from outside; the workspace is graded as when the step budget
        runs out (``truncated=True``, ``info["truncated_by"] = reason``). Returns the step 5-tuple.

        Raises:
            EpisodeError: when no episode is running.
        """
        if self._episode is None:
            raise EpisodeError("truncate() called before reset()")
        return self._out(self._episode.truncate(reason))

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return self._episode.render() if self._episode is not None else "not started"

    def close(self) -> None:
        if self._episode is not None:
            self._episode.close()
            self._episode = None
        for sandbox in self._sandboxes.values():
            sandbox.close()  # made by this env (make_sandbox); Docker's holds a client and containers
        super().close()

    def fork(self) -> RepoGymEnv:
        """A new env whose running episode is a copy of this one's (:meth:`Episode.fork
        <repogym_gym.episode.Episode.fork>`: the work tree as it is now, the steps taken, the budget);
        the two go on independently and are graded on their own trees. It has its own sandbox and
        the same options, seed state and draw; close it like any env. Wrappers are not copied:
        ``env.unwrapped.fork()`` of a ``gym.make`` env keeps its ``max_episode_steps`` grading, which
        lives in the episode's budget.

        Raises:
            EpisodeError: before reset, after the episode ended, or when the work tree cannot be copied.
        """
        if self._episode is None:
            raise EpisodeError("fork() called before reset()")
        twin = RepoGymEnv(self._fixed, suite=self._suite, render_mode=self.render_mode, sandbox=self._requested,
                          observation_mode=self.observation_mode, reward=self._reward,
                          **self._options)  # type: ignore[arg-type]
        try:
            twin._store, twin._time_limit, twin._suite_tasks, twin.spec = self._store, self._time_limit, self._suite_tasks, self.spec
            twin._np_random, twin._np_random_seed = copy.deepcopy(self._np_random), self._np_random_seed
            twin._sandbox = twin._sandbox_for(self._episode.task)
            twin._episode = self._episode.fork(sandbox=twin._sandbox)
        except BaseException:
            twin.close()
            raise
        return twin

    # -- async API: each call on the shared thread pool (repogym_gym.gym.aio) ------------------

    async def areset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """:meth:`reset`, awaited: the workspace is made on a thread of the shared pool."""
        return await run_blocking(self._alone, self.reset, seed=seed, options=options)

    async def astep(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """:meth:`step`, awaited: commands, tests and grading run on a thread of the shared pool, so one
        event loop drives many episodes (``asyncio.gather`` over envs).

        Raises:
            EpisodeError: as :meth:`step`, or when another call of this env is still running.
        """
        return await run_blocking(self._alone, self.step, action)

    async def aclose(self) -> None:
        """:meth:`close`, awaited."""
        await run_blocking(self.close)

    def _alone(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not self._busy.acquire(blocking=False):
            raise EpisodeError("another call of this env is still running; await it before the next (one env, one episode)")
        try:
            return call(*args, **kwargs)
        finally:
            self._busy.release()

    def __deepcopy__(self, memo: dict[int, Any]) -> RepoGymEnv:
        raise TypeError(_NO_COPY)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(_NO_COPY)

    # -- helpers -----------------------------------------------------------------------------

    @property
    def task(self) -> Task | None:
        """The current episode's task (None before the first reset)."""
        return self._episode.task if self._episode is not None else self._fixed

    @property
    def episode(self) -> Episode | None:
        """The underlying Episode (workspace, last grade)."""
        return self._episode

    def _spec_json(self) -> str | None:
        try:
            return self.spec.to_json() if self.spec is not None else None
        except (ValueError, TypeError):
            return None

    def _check_options(self, options: Mapping[str, Any]) -> None:
        unknown = sorted(str(k) for k in options if k not in _RESET_OPTIONS)
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; the options are {list(_RESET_OPTIONS)} (a suite env's draw)")
        if options and self._fixed is not None:
            raise ValueError(f"reset options {sorted(options)} narrow a suite's draw, but this env always plays "
                             f"{self._fixed.id!r}; use RepoGym/Suite-v0 (suite=...) to draw tasks")

    def _choose(self, options: dict[str, Any]) -> Task:
        if self._fixed is not None:
            return self._fixed
        if self._suite_tasks is None:
            assert self._suite is not None
            self._suite_tasks = load_tasks(self._suite)
        candidates = self._suite_tasks
        if "task_id" in options:
            candidates = [t for t in candidates if t.id == options["task_id"]]
        if "type" in options:
            candidates = [t for t in candidates if t.spec.type == options["type"]]
        if "tags" in options:
            candidates = [t for t in candidates if set(options["tags"]) & set(t.spec.tags)]
        if not candidates:
            raise TaskNotFoundError(f"no task of suite {self._suite} matches reset options {options}")
        return candidates[int(self.np_random.integers(len(candidates)))]

    def _out(self, result: StepResult) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The step 5-tuple of ``result`` in this env's observation mode."""
        if self.observation_mode == "chat":
            results = result.info.get("tool_results") or []
            obs: Any = tuple(_message("tool", r["content"], r["tool_call_id"]) for r in results) or \
                (_message("user", result.observation.text),)  # truncate(): no call
        else:
            obs = self._to_space(result.observation)
        return obs, float(result.reward), bool(result.terminated), bool(result.truncated), result.info

    @staticmethod
    def _to_space(obs: Observation) -> dict[str, Any]:
        return {
            "text": obs.text,
            "step": np.asarray(obs.step, dtype=np.int64),
            "steps_left": np.asarray(obs.steps_left, dtype=np.int64),
            "exit_code": np.asarray(NO_EXIT_CODE if obs.exit_code is None else obs.exit_code, dtype=np.int64),
        }
