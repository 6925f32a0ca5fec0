"""The Agent protocol and a driver that runs one episode of any Gymnasium-API env.

An agent is told the task at the start of an episode (``begin``), then asked for one action
per step (``act``). Actions are whatever the env accepts: dicts with a string ``kind`` work for
both :class:`~repogym_gym.episode.Episode`-backed gym envs and the text wrapper's JSON.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from repogym_gym.errors import (
    AgentInfraError,
    PatchError,
    PathEscapeError,
    SandboxError,
    SetupError,
    SourceError,
    WorkspaceError,
)
from repogym_gym.sandbox import warn_unconfined
from repogym_gym.task import Task

__all__ = ["Agent", "AgentBase", "EpisodeOutcome", "as_agent", "run_episode"]


@runtime_checkable
class Agent(Protocol):
    """Something that drives an episode to its end.

    Besides ``begin`` and ``act``, the contract has these hooks; :class:`AgentBase` gives each a
    no-op default, and :func:`run_episode` adapts an agent that defines only some (:func:`as_agent`):

    - ``attach(env, deadline)``: after reset and before ``begin``; ``env`` is the (wrapped)
      Gymnasium env (``env.get_wrapper_attr("episode").workspace.path`` is the repository) and
      ``deadline`` the ``time.monotonic()`` value by which the episode must end, or None;
    - ``conversation() -> list[dict] | None``: the episode as OpenAI-style chat messages, when
      the agent kept one (LLM agents); the runner stores it for export;
    - ``sampling() -> dict | None``: how the agent samples (model, temperature, max_tokens; a
      temperature of None means the server's default, never a silent 0), recorded in every result
      and export line; None for an agent that does not sample;
    - ``close()``: release what the agent holds (HTTP clients, processes);
    - ``trusted: bool`` (attribute): True when the agent's commands may run unconfined (golden,
      noop, scripted); absent means untrusted, and the runner's ``sandbox="auto"`` then picks
      bubblewrap where it runs.

    ``act`` raising :class:`~repogym_gym.errors.AgentInfraError` means the agent's backend
    failed (the runner retries the episode); any other exception ends the episode, which is
    graded as it stands and recorded with ``agent_error``. ``begin`` failing for a reason outside
    the agent (setup, sandbox, workspace or OS errors: a full disk under the golden agent's
    scratch copy) is an ``AgentInfraError`` too, never the agent's 0.
    """

    name: str
    trusted: bool

    def begin(self, task: Task) -> None:
        """Called after reset with the episode's task."""
        ...

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        """The next action."""
        ...

    def attach(self, env: Any, deadline: float | None) -> None:
        """After reset, before ``begin``: the env and the ``time.monotonic()`` deadline (or None)."""
        ...

    def conversation(self) -> list[dict[str, Any]] | None:
        """The episode as OpenAI-style chat messages, or None."""
        ...

    def sampling(self) -> dict[str, Any] | None:
        """How the agent samples, or None."""
        ...

    def close(self) -> None:
        """Release what the agent holds; idempotent."""
        ...


class AgentBase:
    """No-op defaults for the optional parts of :class:`Agent`: an agent inherits this and
    implements ``begin`` and ``act``. Untrusted unless a subclass says otherwise."""

    name = "agent"
    trusted = False

    def begin(self, task: Task) -> None:
        """Called after reset with the episode's task (see :class:`Agent`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement begin(task)")

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        """The next action (see :class:`Agent`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement act(observation, info)")

    def attach(self, env: Any, deadline: float | None) -> None:
        return None

    def conversation(self) -> list[dict[str, Any]] | None:
        return None

    def sampling(self) -> dict[str, Any] | None:
        return None

    def close(self) -> None:
        return None


class _Adapted(AgentBase):
    """An agent written to the older, duck-typed contract (only some hooks defined)."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)
        self.trusted = bool(getattr(agent, "trusted", False))

    def begin(self, task: Task) -> None:
        self._agent.begin(task)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        return self._agent.act(observation, info)

    def attach(self, env: Any, deadline: float | None) -> None:
        if callable(getattr(self._agent, "attach", None)):
            self._agent.attach(env, deadline)

    def conversation(self) -> list[dict[str, Any]] | None:
        hook = getattr(self._agent, "conversation", None)
        return hook() if callable(hook) else None

    def sampling(self) -> dict[str, Any] | None:
        hook = getattr(self._agent, "sampling", None)
        return hook() if callable(hook) else None

    def close(self) -> None:
        if callable(getattr(self._agent, "close", None)):
            self._agent.close()


def as_agent(agent: Any) -> AgentBase:
    """``agent`` itself if it inherits :class:`AgentBase`, else an adapter giving the hooks it lacks
    their no-op defaults (the one place the optional hooks are looked up by name)."""
    return agent if isinstance(agent, AgentBase) else _Adapted(agent)


@dataclass
class EpisodeOutcome:
    """How an episode went.

    Attributes:
        task_id: The task.
        total_reward: Sum of rewards (the grade, plus shaping if enabled).
        steps: Steps taken (a driver's truncation counts as one).
        terminated: Ended by Submit.
        truncated: Ended by the step budget, the driver's time limit or an agent error.
        info: The last step's info (``score``, ``grade``, ``infra_error``, ``trajectory_path`` ...).
        timed_out: The driver's ``time_limit_s`` ended the episode.
        agent_error: ``"<ExceptionType>: <message>"`` when the agent raised (not AgentInfraError).
        duration_s: Wall-clock seconds from reset to the end.
    """

    task_id: str
    total_reward: float
    steps: int
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)
    timed_out: bool = False
    agent_error: str | None = None
    duration_s: float = 0.0


def run_episode(env: Any, agent: Agent | AgentBase, *, seed: int | None = None, options: dict[str, Any] | None = None,
                max_steps: int = 10_000, time_limit_s: float | None = None, warn_unconfined_agent: bool = True) -> EpisodeOutcome:
    """Reset ``env``, let ``agent`` act until the episode ends, and return the outcome.

    Args:
        env: A ``gymnasium.Env`` made from a repogym id (wrappers allowed).
        agent: The agent.
        seed: Reset seed.
        options: Reset options.
        max_steps: A safety limit of this driver (the env's own budget normally ends first).
        time_limit_s: Wall-clock seconds for the whole episode; checked between steps, and when
            passed the episode is truncated and the workspace graded as it stands. A single
            action is bounded by the task's own command and test timeouts.
        warn_unconfined_agent: Warn as below (the runner, which warns once per run, turns it off).

    An agent that is not ``trusted`` running in the local sandbox (``env.sandbox_name``) gets an
    :class:`~repogym_gym.errors.UnconfinedWarning` (once per agent name, under Python's default
    warning filter).

    Raises:
        AgentInfraError: when the agent's backend failed, or its ``begin`` failed for a reason outside it
            (setup, sandbox, workspace or OS errors); the episode is left unfinished.
    """
    agent = as_agent(agent)
    start = time.monotonic()
    deadline = start + time_limit_s if time_limit_s is not None else None
    obs, info = env.reset(seed=seed, options=options)
    task = env.get_wrapper_attr("task")
    if warn_unconfined_agent and not agent.trusted and _sandbox_name(env) == "local":
        warn_unconfined(f"agent {agent.name!r} runs in an env made with sandbox='local'")
    total, steps = 0.0, 0
    terminated = truncated = timed_out = False
    agent_error = None
    try:
        agent.attach(env, deadline)
        try:
            agent.begin(task)
        except Exception as exc:
            if _outside_the_agent(exc):  # e.g. the golden agent's scratch workspace on a full disk
                raise AgentInfraError(f"the agent's setup failed for a reason outside the agent: {type(exc).__name__}: "
                                      f"{exc}") from exc
            raise
        while not (terminated or truncated) and steps < max_steps:
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                break
            action = agent.act(obs, info)
            obs, reward, terminated, truncated, info = env.step(action)
            total += float(reward)
            steps += 1
    except AgentInfraError:
        raise
    except Exception as exc:  # noqa: BLE001 - a crashing agent is a rollout outcome, not a crash of the run
        agent_error = f"{type(exc).__name__}: {exc}"
    if not (terminated or truncated) and (timed_out or agent_error or steps >= max_steps):
        reason = (f"time limit of {time_limit_s:g} s reached" if timed_out
                  else f"agent error: {agent_error}" if agent_error else f"driver step limit of {max_steps} reached")
        obs, reward, terminated, truncated, info = env.get_wrapper_attr("truncate")(reason)
        total += float(reward)
        steps += 1
    return EpisodeOutcome(task.id, total, steps, bool(terminated), bool(truncated or not terminated), info,
                          timed_out=timed_out, agent_error=agent_error, duration_s=time.monotonic() - start)


def _outside_the_agent(exc: Exception) -> bool:
    """An exception of an agent's ``begin`` that is the machine's or the cache's fault, not the agent's or
    the task's: setup, source, sandbox and workspace failures (a patch that does not apply and a path
    that escapes stay the agent's), and OS errors (disk full, a missing binary)."""
    if isinstance(exc, (PatchError, PathEscapeError)):
        return False
    return isinstance(exc, (SetupError, SourceError, SandboxError, WorkspaceError, OSError))


def _sandbox_name(env: Any) -> str | None:
    try:
        return str(env.get_wrapper_attr("sandbox_name"))
    except AttributeError:  # not a repogym env
        return None
