"""The Gymnasium layer: the only package that imports gymnasium.

Importing :mod:`repogym_gym` registers ``RepoGym/<task>-v0`` for every bundled task plus
``RepoGym/Task-v0`` and ``RepoGym/Suite-v0``::

    import gymnasium as gym
    import repogym_gym  # registers the ids

    env = gym.make("RepoGym/parse-duration-v0")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step({"kind": 6, "path": "", "content": "",
                                                         "old": "", "new": "", "command": ""})
"""

from repogym_gym.gym.dataset import dataset, row_env_id
from repogym_gym.gym.env import RepoGymEnv
from repogym_gym.gym.registration import (
    gym_id,
    make_env,
    make_task_env,
    register_bundled,
    register_suite,
    registered_ids,
    registered_rows,
)
from repogym_gym.gym.spaces import (
    ACTION_SPACE,
    NO_EXIT_CODE,
    OBSERVATION_SPACE,
    UnicodeText,
    batch_actions,
)
from repogym_gym.gym.tools import TextActionWrapper, tool_schema
from repogym_gym.gym.vector import (
    GroupVectorEnv,
    ThreadVectorEnv,
    group_advantages,
    make_group,
    make_thread_vec,
)

__all__ = [
    "ACTION_SPACE",
    "NO_EXIT_CODE",
    "OBSERVATION_SPACE",
    "GroupVectorEnv",
    "RepoGymEnv",
    "TextActionWrapper",
    "ThreadVectorEnv",
    "UnicodeText",
    "batch_actions",
    "dataset",
    "group_advantages",
    "gym_id",
    "make_env",
    "make_task_env",
    "make_group",
    "make_thread_vec",
    "register_bundled",
    "register_suite",
    "registered_ids",
    "registered_rows",
    "row_env_id",
    "tool_schema",
]
