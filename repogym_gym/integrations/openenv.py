"""OpenEnv: RepoGym episodes as an OpenEnv ``Environment``, served by OpenEnv's own server (HTTP and WebSocket).

``repogym serve --openenv`` (or :func:`create_openenv_app` under uvicorn) serves
:class:`RepoGymEnvironment` with ``openenv.core.env_server.create_fastapi_app``. Each WebSocket
session (``/ws``; ``GenericEnvClient(base_url=...)`` connects there) is one env and one workspace;
OpenEnv closes it, workspace and all, when the client disconnects or after ``idle_timeout_s``
without a message. Its HTTP ``/reset`` and ``/step`` are stateless in OpenEnv (an env per request),
so an episode needs the WebSocket.

- ``reset(env_id=..., seed=...)`` (or ``task_id=``: the fields of a :func:`repogym_gym.dataset`
  row) starts an episode of a registered task; the server's sandbox and step budget apply, the
  client chooses neither. ``done`` is True at reset only when the workspace could not be set up.
- ``step`` takes a :class:`RepoGymAction`: ``text`` (a whole completion or tool calls, every call
  run in order, as ``env.step(text)``) or ``kind`` with that kind's fields (unused fields are
  ignored, as OpenEnv clients send every field of a model).
- The observation's ``reward`` is the gym reward of the step (the grade at the end, plus opt-in
  shaping); OpenEnv has no mask, so an infrastructure failure gives ``reward=None`` with
  ``info["infra_error"]`` saying why: a client that adds ``reward or 0.0`` should drop such an
  episode instead (verifiers' bundled OpenEnv taskset sums ``reward or 0.0``).

Example:
    >>> from openenv.core import GenericEnvClient                                  # doctest: +SKIP
    >>> with GenericEnvClient(base_url="http://127.0.0.1:8000").sync() as env:     # doctest: +SKIP
    ...     env.reset(env_id="RepoGym/pagination-off-by-one-v0", seed=0)
    ...     result = env.step({"text": '<tool_call>{"name": "submit", "arguments": {}}</tool_call>'})
    ...     result.reward, result.done
"""

from __future__ import annotations

import functools
from typing import Any

from fastapi import FastAPI
from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app
from openenv.core.env_server.types import ConcurrencyConfig
from pydantic import Field

from repogym_gym.actions import TEXT_LIMITS
from repogym_gym.errors import EpisodeError
from repogym_gym.gym import make_env, registered_ids, row_env_id
from repogym_gym.gym.spaces import json_data
from repogym_gym.sandbox import sandbox_config
from repogym_gym.spec import REWARD_KINDS

__all__ = ["RepoGymAction", "RepoGymEnvironment", "RepoGymObservation", "create_openenv_app"]

#: What a structured action may carry besides ``kind`` (the union of the action kinds' fields).
_FIELDS = ("path", "content", "old", "new", "command")


class RepoGymAction(Action):
    """One step: ``text`` (a completion or tool calls) or ``kind`` and its fields (``read``, ``write``,
    ``edit``, ``run``, ``bash``, ``test``, ``list_files``, ``submit``; see :mod:`repogym_gym.actions`).

    Both ``text`` and ``kind`` is refused at the step (``info["action_error"]``), not by validation:
    OpenEnv 0.3 cannot serialise a validator's error and would answer a bare ``SESSION_ERROR``.

    Raises:
        pydantic.ValidationError: when a text is longer than the action space allows.
    """

    text: str | None = Field(None, max_length=TEXT_LIMITS["content"], description="A whole completion or tool calls.")
    kind: str | None = Field(None, max_length=64, description="An action kind, e.g. 'write' or 'submit'.")
    path: str | None = Field(None, max_length=TEXT_LIMITS["path"])
    content: str | None = Field(None, max_length=TEXT_LIMITS["content"])
    old: str | None = Field(None, max_length=TEXT_LIMITS["old"])
    new: str | None = Field(None, max_length=TEXT_LIMITS["new"])
    command: str | None = Field(None, max_length=TEXT_LIMITS["command"])

    def to_step(self) -> str | dict[str, str]:
        """What ``env.step`` takes: the text, or the kind and the fields that were given (``{}`` for neither)."""
        if self.text is not None:
            return self.text
        given = {name: getattr(self, name) for name in ("kind", *_FIELDS) if getattr(self, name) is not None}
        return given


class RepoGymObservation(Observation):
    """The observation's text and the step's ``info`` as JSON data (``action_error``, ``tool_results``;
    at the end ``score``, ``passed``, ``infra_error``); ``reward`` and ``done`` are OpenEnv's own fields."""

    text: str = ""
    info: dict[str, Any] = Field(default_factory=dict)


class RepoGymEnvironment(Environment[RepoGymAction, RepoGymObservation, State]):
    """One session: a RepoGym env whose task is chosen at each reset.

    Args:
        env_id: The task a reset plays when it names none (None: a reset must name one).
        sandbox: Where commands and grading run (``auto`` when None), for every session.
        reward_shaping: Opt-in shaping of the gym reward.
        reward: The reward kind of every session (README "Choosing a reward"); None: each task's default.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own env and workspace

    def __init__(self, env_id: str | None = None, *, sandbox: str | None = None, reward_shaping: bool = False,
                 reward: str | None = None) -> None:
        super().__init__()
        self.default_env_id = env_id
        self.sandbox = sandbox
        self.reward_shaping = reward_shaping
        self.reward = reward
        self.env: Any = None
        self.env_id: str | None = None
        self._state = State()

    def reset(self, seed: int | None = None, episode_id: str | None = None, env_id: str | None = None,
              task_id: str | None = None, **kwargs: Any) -> RepoGymObservation:
        """Start an episode of ``env_id`` (else ``task_id``'s id, else the server's default task).

        Other fields of a dataset row (``prompt``) are ignored; any other keyword is an error.

        Raises:
            ValueError: when no task is named and the server has no default, the id is not a RepoGym id
                registered on the server (round 47's ``unittest.__main__:X-v0`` imported a module there), or
                for an unknown keyword.
        """
        unknown = sorted(set(kwargs) - {"prompt"})
        if unknown:
            raise ValueError(f"reset() takes seed, episode_id, env_id, task_id (and a row's prompt); got {unknown}")
        if not (env_id or task_id or self.default_env_id):
            raise ValueError("reset() needs env_id or task_id: this server has no default task (repogym serve --openenv "
                             "--env-id ID gives it one)")
        wanted = row_env_id({"env_id": env_id or (None if task_id else self.default_env_id), "task_id": task_id})
        if wanted not in registered_ids():  # never handed to gym.make: "module:Env" would import the module here
            raise ValueError(f"env_id {wanted!r} is not a RepoGym id registered on this server")
        if wanted != self.env_id:
            self.close()
            self.env = make_env(wanted, sandbox=self.sandbox, reward_shaping=self.reward_shaping, reward=self.reward)
            self.env_id = wanted
        obs, info = self.env.reset(seed=seed)
        self._state = State(episode_id=episode_id or info.get("episode_id"), step_count=0, env_id=wanted,
                            task_id=info.get("task_id"))
        infra_error = info.get("infra_error")
        return RepoGymObservation(text=obs["text"], info=json_data(info), done=infra_error is not None, reward=None)

    def step(self, action: RepoGymAction, timeout_s: float | None = None, **kwargs: Any) -> RepoGymObservation:
        """Run the action; ``reward`` is None for an infrastructure failure (``info["infra_error"]``).

        A step with no running episode (before a reset, after the end, or on OpenEnv's stateless
        HTTP ``/step``), or with both ``text`` and ``kind``, is answered with ``info["action_error"]``
        saying so, not an exception; the episode goes on.
        """
        if self.env is None:
            return _refused("no episode: reset first (OpenEnv's HTTP /step is stateless; keep a WebSocket session)")
        if action.text is not None and action.kind is not None:
            return _refused(f"send text or kind, not both (text={action.text[:40]!r}, kind={action.kind!r})")
        try:
            obs, reward, terminated, truncated, info = self.env.step(action.to_step())
        except EpisodeError as exc:
            return _refused(str(exc))
        self._state.step_count += 1
        done = bool(terminated or truncated)
        masked = info.get("infra_error") is not None
        return RepoGymObservation(text=obs["text"], info=json_data(info), done=done,
                                  reward=None if masked else float(reward))

    @property
    def state(self) -> State:
        """``episode_id``, ``step_count``, ``env_id`` and ``task_id`` of the session's episode."""
        return self._state

    def close(self) -> None:
        """Close the env (its workspace is removed); the session may reset again."""
        if self.env is not None:
            env, self.env, self.env_id = self.env, None, None
            env.close()


def _refused(why: str) -> RepoGymObservation:
    return RepoGymObservation(text=why, info={"action_error": why}, done=False, reward=None)


def create_openenv_app(env_id: str | None = None, *, sandbox: str | None = None, reward_shaping: bool = False,
                       reward: str | None = None, max_sessions: int = 64, idle_timeout_s: float = 600.0) -> FastAPI:
    """OpenEnv's FastAPI app (``/ws``, ``/reset``, ``/step``, ``/state``, ``/schema``, ``/health``) over
    :class:`RepoGymEnvironment` sessions.

    Args:
        env_id: The default task of a reset that names none.
        sandbox: The sandbox of every session (``auto`` when None).
        reward_shaping: Opt-in shaping of the gym reward.
        reward: The reward kind of every session; None: each task's default.
        max_sessions: Most concurrent WebSocket sessions (OpenEnv refuses more with ``CAPACITY_REACHED``).
        idle_timeout_s: Seconds (> 0) a session may stay without a message before OpenEnv closes it
            (its sweep runs every ``max(idle_timeout_s / 4, 5)`` seconds).

    Raises:
        ValueError: when ``max_sessions`` < 1 or ``idle_timeout_s`` <= 0, ``env_id`` is not registered, or
            ``reward`` is not a reward kind.
        SandboxConfigError: for an unknown sandbox (a ``ValueError`` too): refused here, not at every session.
    """
    if max_sessions < 1 or not idle_timeout_s > 0:
        raise ValueError(f"max_sessions must be >= 1 and idle_timeout_s > 0 (got {max_sessions}, {idle_timeout_s})")
    if sandbox is not None:
        sandbox_config(sandbox)
    if env_id is not None and env_id not in registered_ids():
        raise ValueError(f"env_id {env_id!r} is not registered here (give its suite with --suite)")
    if reward is not None and reward not in REWARD_KINDS:
        raise ValueError(f"reward={reward!r} is not a reward kind; kinds: {list(REWARD_KINDS)}")
    factory = functools.partial(RepoGymEnvironment, env_id, sandbox=sandbox, reward_shaping=reward_shaping, reward=reward)
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout_s)
    return create_fastapi_app(factory, RepoGymAction, RepoGymObservation, concurrency_config=config)
