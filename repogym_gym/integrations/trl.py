"""TRL: a RepoGym task as an ``environment_factory`` class for ``GRPOTrainer``.

``GRPOTrainer(..., environment_factory=trl_environment(sandbox="bwrap"), train_dataset=repogym_gym.dataset(suite))``:
TRL makes one instance per rollout (pooled, reused through ``reset``), offers every public method but
``reset`` and ``get_reward`` to the model as a tool, and scores a finished rollout with ``get_reward``.

- ``reset(**row)`` takes the dataset row (``env_id``, ``seed``; :func:`repogym_gym.dataset`) and
  returns the rest of the first observation (the repository's files), which TRL appends to the
  row's prompt, whose user message already holds the task's heading;
- one tool per action kind (``read``, ``write``, ``edit``, ``run``, ``test``, ``list_files``,
  ``submit``), generated from the action models with the Google-style docstrings TRL needs for the
  schema; each call is one step and returns the observation's text. TRL has no "done": after a submit
  (or the step budget) every tool answers that the episode has ended;
- ``get_reward()`` grades an unfinished rollout (TRL also ends one when the model stops calling tools
  or reaches ``max_completion_length``), and returns None for an infrastructure failure: TRL turns it
  into NaN and drops it, so a broken sandbox never trains the policy as a 0.

Example:
    >>> from trl import GRPOConfig, GRPOTrainer                                   # doctest: +SKIP
    >>> trainer = GRPOTrainer(model, args=GRPOConfig(...), train_dataset=repogym_gym.dataset("starter"),
    ...                       environment_factory=trl_environment(sandbox="bwrap"))  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

from repogym_gym.actions import ACTION_KINDS, ACTION_MODELS
from repogym_gym.gym import make_env, row_env_id
from repogym_gym.sandbox import sandbox_config
from repogym_gym.spec import REWARD_KINDS

__all__ = ["RepoGymToolEnv", "trl_environment"]


class RepoGymToolEnv:
    """The base of :func:`trl_environment`'s classes: an episode and its reward (tools are added per kind).

    Attributes:
        sandbox: Where commands and grading run (class attribute; ``auto`` when None).
        reward_shaping: Opt-in shaping (class attribute).
        reward: The reward kind (class attribute; None: each task's default).
    """

    sandbox: str | None = None
    reward_shaping: bool = False
    reward: str | None = None

    def __init__(self) -> None:
        self._env: Any = None
        self._env_id: str | None = None
        self._done = True
        self._started = False  # True once a reset worked: a rollout whose reset failed has no reward (None)
        self._reward = 0.0
        self._infra_error: str | None = None

    def reset(self, **row: Any) -> str:
        """Start the row's episode (``env_id`` or ``task_id``, ``seed``); return what TRL appends to the prompt."""
        self._done, self._reward, self._infra_error, self._started = True, 0.0, None, False  # until this reset works
        env_id = row_env_id(row)
        if env_id != self._env_id:
            if self._env is not None:
                self._env.close()
                self._env = self._env_id = None
            self._env, self._env_id = make_env(env_id, sandbox=self.sandbox, reward_shaping=self.reward_shaping,
                                                reward=self.reward), env_id
        obs, info = self._env.reset(seed=row.get("seed"))
        self._done, self._started, self._infra_error = False, True, info.get("infra_error")
        text: str = obs["text"]
        heading = _user_text(row.get("prompt"))
        return "\n\n" + text[len(heading):].lstrip("\n") if heading and text.startswith(heading) else "\n\n" + text

    def get_reward(self) -> float | None:
        """The rollout's reward (grading it now if it has not ended); None for an infrastructure failure."""
        if self._env is None or not self._started:
            return None
        if not self._done:
            self._take(self._env.get_wrapper_attr("truncate")("the trainer ended the rollout"))
        return None if self._infra_error else self._reward

    def _act(self, kind: str, fields: dict[str, Any]) -> str:
        if self._env is None or not self._started:
            return "No episode is running: reset() was not called or did not work."
        if self._done:
            return "The episode has ended (it was submitted or ran out of steps); no tool changes its reward now."
        return self._take(self._env.step({"kind": kind, **fields}))

    def _take(self, out: tuple[Any, float, bool, bool, dict[str, Any]]) -> str:
        obs, reward, terminated, truncated, info = out
        self._reward += float(reward)
        self._done = bool(terminated or truncated)
        self._infra_error = info.get("infra_error") or self._infra_error
        return str(obs["text"])

    def __del__(self) -> None:
        env = getattr(self, "_env", None)
        if env is not None:
            with contextlib.suppress(Exception):  # at interpreter exit modules may be gone: nothing to report to
                env.close()


def _user_text(prompt: Any) -> str:
    """The last user message's text of a chat prompt (the task's heading for dataset rows), or ""."""
    if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict) and prompt[-1].get("role") == "user":
        content = prompt[-1].get("content")
        return content if isinstance(content, str) else ""
    return ""


def _tool(kind: str) -> Any:
    """The tool method of ``kind``: its signature, type hints and Google-style docstring from the action model."""
    model = ACTION_MODELS[kind]
    fields = {name: info for name, info in model.model_fields.items() if name != "kind"}

    def tool(self: RepoGymToolEnv, **arguments: str) -> str:
        return self._act(kind, arguments)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name, info in fields.items():
        default = inspect.Parameter.empty if info.is_required() else info.default
        parameters.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=str))
    tool.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    tool.__annotations__ = {**dict.fromkeys(fields, str), "return": str}
    tool.__name__ = tool.__qualname__ = kind
    summary = (model.__doc__ or kind).strip().splitlines()[0]
    args = "".join(f"\n    {name}: {info.description or name}" for name, info in fields.items())
    tool.__doc__ = f"{summary}\n" + (f"\nArgs:{args}\n" if args else "") + "\nReturns:\n    The observation: what the action did or showed.\n"
    return tool


def trl_environment(sandbox: str | None = "bwrap", *, reward_shaping: bool = False,
                    reward: str | None = None) -> type[RepoGymToolEnv]:
    """A class for ``GRPOTrainer(environment_factory=...)``: :class:`RepoGymToolEnv` with one tool method
    per action kind.

    Args:
        sandbox: ``bwrap`` (default), ``docker``, ``local`` or None (``auto``).
        reward_shaping: Opt-in shaping (at most 0.1 per episode).
        reward: The reward kind (README "Choosing a reward"); None: each task's default. A kind a row's task
            does not offer is a ValueError at that row's reset.

    Raises:
        SandboxConfigError: for an unknown sandbox (a ``ValueError`` too).
        TypeError: when ``reward_shaping`` is not a bool.
        ValueError: when ``reward`` is not a reward kind.
    """
    if sandbox is not None:
        sandbox_config(sandbox)  # an unknown sandbox is named here, not at the trainer's first rollout
    if not isinstance(reward_shaping, bool):
        raise TypeError(f"reward_shaping must be True or False, got {reward_shaping!r}")
    methods = {kind: _tool(kind) for kind in ACTION_KINDS}
    if reward is not None and reward not in REWARD_KINDS:
        raise ValueError(f"reward={reward!r} is not a reward kind; kinds: {list(REWARD_KINDS)}")
    attributes = {"sandbox": sandbox, "reward_shaping": reward_shaping, "reward": reward, "__module__": __name__}
    return type("RepoGymEnvironment", (RepoGymToolEnv,), {**methods, **attributes})
