"""A suite as a dataset of prompts: the input TRL, verifiers and SkyRL take for an env.

Each row is one episode to play: ``prompt`` (chat messages: the system prompt and the task's heading,
how the env's first observation begins), ``env_id`` (a registered ``RepoGym/<task>-v0``; the suite is
registered if it was not), ``task_id`` and ``seed`` (``seed + k`` for the k-th row of a task, so
``gym.make(row["env_id"]).reset(seed=row["seed"])`` replays it).

Example:
    >>> rows = dataset("starter", as_hf=False)                                # doctest: +SKIP
    >>> rows[0]["env_id"], rows[0]["prompt"][1]["content"].splitlines()[0]   # doctest: +SKIP
    ('RepoGym/dedupe-contacts-perf-v0', 'Task dedupe-contacts-perf (perf).')
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from typing import Any

from repogym_gym.conversation import SYSTEM_PROMPT
from repogym_gym.episode import task_heading
from repogym_gym.gym.registration import gym_id, register_suite
from repogym_gym.task import load_tasks, resolve_suite

__all__ = ["dataset", "row_env_id"]


def dataset(suite: str | os.PathLike[str], *, repeats: int = 1, seed: int = 0, as_hf: bool | None = None,
            system_prompt: str = SYSTEM_PROMPT) -> Any:
    """The rows of ``suite``: ``repeats`` per task, in task-id order.

    Args:
        suite: A bundled suite name or a suite directory.
        repeats: Rows per task (1 or more), seeds ``seed`` to ``seed + repeats - 1``.
        seed: The first row's seed.
        as_hf: True: a Hugging Face ``datasets.Dataset``; False: a list of dicts; None (default):
            the Dataset where ``datasets`` is installed, else the list.
        system_prompt: The first message of each prompt.

    Returns:
        ``datasets.Dataset`` or ``list[dict]`` with columns ``prompt``, ``env_id``, ``task_id``, ``seed``.

    Raises:
        ValueError: when ``repeats`` is not an integer of 1 or more, or ``seed`` not one of 0 or more.
        ImportError: when ``as_hf=True`` and ``datasets`` is not installed (``pip install datasets``).
        TaskNotFoundError, TaskSpecError: for a suite that does not exist or a task that does not load.
    """
    for name, value, least in (("repeats", repeats, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an integer of {least} or more, got {value!r}")
    path = resolve_suite(suite)
    registered = set(register_suite(path))
    rows = []
    for task in sorted(load_tasks(path), key=lambda t: t.id):
        env_id = gym_id(task.id)
        assert env_id in registered
        prompt = [{"role": "system", "content": system_prompt}, {"role": "user", "content": task_heading(task)}]
        rows += [{"prompt": prompt, "env_id": env_id, "task_id": task.id, "seed": seed + k} for k in range(repeats)]
    if as_hf is None:
        as_hf = importlib.util.find_spec("datasets") is not None
    if not as_hf:
        return rows
    try:
        import datasets
    except ImportError as exc:
        raise ImportError(f"as_hf=True needs Hugging Face datasets (pip install datasets): {exc}") from None
    return datasets.Dataset.from_list(rows)


def row_env_id(row: Mapping[str, Any]) -> str:
    """The gym id a dataset row plays: its ``env_id``, else ``gym_id(row["task_id"])``.

    Raises:
        ValueError: when the row has neither (the adapters' rows come from :func:`dataset`).
    """
    if row.get("env_id"):
        return str(row["env_id"])
    if row.get("task_id"):
        return gym_id(str(row["task_id"]))
    raise ValueError(f"a RepoGym row needs env_id or task_id (from repogym_gym.dataset); got keys {sorted(row)}")
