"""Registering repogym ids with Gymnasium, cheaply.

At ``import repogym_gym``: ``RepoGym/<task>-v0`` for every task of the bundled suites, and of
every recipe-built suite (``task_suites/<name>/recipe.yaml``) already built in the cache (only
each task.yaml's id and step budget are read: nothing is validated or materialised until
``gym.make``), plus ``RepoGym/Task-v0`` (task given as a keyword) and ``RepoGym/Suite-v0``
(samples a task per reset; ``suite="starter"`` by default). ``register_suite(path)`` registers a
user's suite the same way. Entry points are strings, so ``env.spec.to_json()`` works.

Every id is registered ``nondeterministic=True``: resets are deterministic for a seed, but a
step's info carries timings (grade durations) and test output carries run times.

Each task id is registered with ``max_episode_steps`` equal to its ``limits.max_steps``; the
env itself grades on that step, so ``TimeLimit`` and the env agree on the last step, and every id
carries :class:`~repogym_gym.gym.budget.GradeOnTimeLimit`, so a smaller
``gym.make(id, max_episode_steps=N)`` grades on step N too. No id has a vector entry point:
``gym.make_vec(id, n)`` with no mode is Gymnasium's sync vector env, and a GRPO group is asked for
by name (:func:`~repogym_gym.gym.vector.make_group`).
"""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import yaml

from repogym_gym.errors import TaskSpecError
from repogym_gym.gym.budget import GRADE_ON_TIME_LIMIT
from repogym_gym.paths import bundled_suites_dir
from repogym_gym.spec import LimitsSpec, check_task_id
from repogym_gym.task import discover_tasks, resolve_suite
from repogym_gym.yamlfile import load_yaml_file

__all__ = [
    "ENTRY_POINT",
    "NAMESPACE",
    "gym_id",
    "make_env",
    "make_task_env",
    "register_bundled",
    "register_suite",
    "registered_ids",
    "registered_rows",
]

NAMESPACE = "RepoGym"
ENTRY_POINT = "repogym_gym.gym.env:RepoGymEnv"
_DEFAULT_MAX_STEPS = LimitsSpec().max_steps


def gym_id(task_id: str) -> str:
    """``RepoGym/<task_id>-v0``."""
    return f"{NAMESPACE}/{task_id}-v0"


def _peek(task_dir: Path) -> tuple[str, int]:
    """A task's id and max_steps from its task.yaml, without full validation."""
    source = task_dir / "task.yaml"
    try:
        data = load_yaml_file(source)
        task_id = data["id"]
        max_steps = int((data.get("limits") or {}).get("max_steps", _DEFAULT_MAX_STEPS))
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise TaskSpecError(f"{source}: cannot read id and limits.max_steps to register it: {exc}") from None
    try:
        check_task_id(task_id)
    except ValueError as exc:
        raise TaskSpecError(f"{source}: id: {exc}") from None
    return task_id, max_steps


def register_suite(path: str | os.PathLike[str]) -> list[str]:
    """Register ``RepoGym/<task>-v0`` for every task under ``path``; return the ids.

    Raises:
        TaskNotFoundError: when ``path`` is neither a directory nor a bundled suite.
        TaskSpecError: when a task.yaml has no readable id, or an unsafe one.
    """
    ids = []
    for task_dir in discover_tasks(resolve_suite(path)):
        task_id, max_steps = _peek(task_dir)
        env_id = gym_id(task_id)
        kwargs = {"task": str(Path(task_dir).resolve())}  # a relative path would change meaning with the cwd
        existing = gym.registry.get(env_id)
        if existing is not None and existing.kwargs != kwargs:
            raise TaskSpecError(f"{task_dir}: {env_id} is already registered for {existing.kwargs.get('task')}")
        if existing is None:  # no passive checker or order wrapper: RepoGymEnv names step-before-reset itself
            # (EpisodeError) and survives a failed reset, which Gymnasium's checker does not (new-user trial)
            gym.register(env_id, entry_point=ENTRY_POINT,
                         kwargs=kwargs, max_episode_steps=max_steps, nondeterministic=True,
                         disable_env_checker=True, order_enforce=False, additional_wrappers=(GRADE_ON_TIME_LIMIT,))
        ids.append(env_id)
    return ids


def register_bundled() -> list[str]:
    """Register the generic ids and every bundled suite's tasks (idempotent)."""
    if f"{NAMESPACE}/Task-v0" not in gym.registry:
        gym.register(f"{NAMESPACE}/Task-v0", entry_point=ENTRY_POINT, nondeterministic=True,
                     disable_env_checker=True, order_enforce=False, additional_wrappers=(GRADE_ON_TIME_LIMIT,))
        gym.register(f"{NAMESPACE}/Suite-v0", entry_point=ENTRY_POINT, kwargs={"suite": "starter"}, nondeterministic=True,
                     disable_env_checker=True, order_enforce=False, additional_wrappers=(GRADE_ON_TIME_LIMIT,))
    ids = []
    if bundled_suites_dir().is_dir():
        for suite in sorted(p for p in bundled_suites_dir().iterdir() if p.is_dir()):
            recipe = suite / "recipe.yaml"
            if recipe.is_file():
                from repogym_gym.suites import (
                    built_suite,  # only suites with a recipe need the miner's modules
                )

                built = built_suite(recipe)
                ids += register_suite(built) if built is not None else []
            else:
                ids += register_suite(suite)
    return ids


def registered_ids() -> list[str]:
    """Every registered ``RepoGym/...`` id, sorted."""
    return sorted(i for i in gym.registry if i.startswith(f"{NAMESPACE}/"))


def registered_rows() -> list[tuple[str, str, int | None]]:
    """(id, what it runs, max_episode_steps or None) of every registered ``RepoGym/...`` id, sorted.

    What it runs is the task directory, ``suite: <name or dir>``, or ``task=<path or id>`` for the
    generic id that takes its task at ``gym.make``.
    """
    rows = []
    for env_id in registered_ids():
        spec = gym.spec(env_id)
        target = spec.kwargs.get("task") or (f"suite: {spec.kwargs['suite']}" if "suite" in spec.kwargs else "task=<path or id>")
        rows.append((env_id, str(target), spec.max_episode_steps))
    return rows


def make_task_env(task_id: str, **kwargs: object) -> gym.Env:
    """``gym.make(gym_id(task_id), **kwargs)``: the registered env of a task (its time limit included).

    Raises:
        gymnasium.error.Error: when ``task_id`` is not registered (register its suite first).
    """
    return gym.make(gym_id(task_id), **kwargs)  # type: ignore[arg-type]  # gym.make's own keywords pass through


def make_env(env_id: str, **kwargs: object) -> gym.Env:
    """``gym.make(env_id, **kwargs)`` for callers outside the gym layer (the integrations), which do not
    import gymnasium themselves.

    Raises:
        gymnasium.error.Error: when ``env_id`` is not registered (register its suite first).
    """
    return gym.make(env_id, **kwargs)  # type: ignore[arg-type]  # gym.make's own keywords pass through
