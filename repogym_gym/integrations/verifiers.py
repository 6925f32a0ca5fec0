"""verifiers 0.4: RepoGym tasks as a ``verifiers.v1`` taskset, played by an env that steps RepoGym host-side.

verifiers 0.4 has only ``verifiers.v1``: a run loads a :class:`~verifiers.v1.Taskset` by its id, the
taskset's own :class:`~verifiers.v1.Env` turns each task into an episode (``Env.run(task, agents)``),
and the agent (a harness program talking to the model through verifiers' interception proxy) is
driven turn by turn from ``run``, the way verifiers' bundled OpenEnv and TextArena tasksets drive
their engines. Importing this module registers the taskset id ``"repogym"`` (verifiers imports a
taskset by its id, so the id names this module; :func:`register`).

- :class:`RepoGymTaskset` has one task per row of ``repogym_gym.dataset(suite)`` (``env_id``,
  ``task_id``, ``seed``; the row's system prompt is the task's); its config
  (:class:`RepoGymConfig`, ``--env.taskset.*``) holds ``suite``, ``sandbox``, ``max_turns`` and
  ``reward_shaping``.
- :meth:`RepoGymEnv.run` makes the row's env host-side, opens the player's interaction with the
  first observation's text (the task and the repository's files), steps the env with each whole
  reply (every tool call in it, :meth:`~repogym_gym.episode.Episode.step`) and sends the next
  observation back as the user turn. A submit or the step budget ends and grades the episode; so
  does ``max_turns``, and so does verifiers ending the exchange itself (its own turn, token or time
  limits): an unfinished episode is graded as it stands (``truncate``), never left without a grade.
  The gym reward of the episode (the grade, plus opt-in shaping) is recorded on the player's trace
  as ``"repogym_reward"``; ``trace.info["repogym"]`` holds the task, score, ``passed`` and turns.
- An infrastructure failure (``info["infra_error"]``: a setup that fails, a sandbox that dies) has
  no reward to give. It is raised as :class:`verifiers.v1.SandboxError` inside the interaction,
  which is how verifiers marks a failed rollout (``Agent.interaction`` in ``verifiers/v1/agent.py``
  calls ``Rollout.fail`` -> ``Trace.record_error`` in ``verifiers/v1/trace.py``): the trace gets
  ``ok=False``, the error and ``stop_condition == "sandbox_error"``, its scoring is skipped, and the
  episode fails (``episode.ok`` False, an ``--env.retries`` rule can retry it, ``--resume`` redoes it);
  verifiers' means leave such traces out (``utils/format.py``) and a trainer drops them.
- The env is always closed (its workspace removed), whatever happens.

The player seat (``--env.player.*``) defaults to verifiers' tool-less chat loop (harness ``null``) in
the ``subprocess`` runtime: the model acts only through the ``<tool_call>`` blocks of its replies,
which RepoGym runs in its own sandbox (``sandbox``), never through a harness tool of its own. Its
requests carry no ``tools``, so the task's system prompt lists RepoGym's tools as text
(:func:`tools_prompt`, the way Qwen's and Hermes' chat templates write them).

Example:
    >>> import asyncio                                                                  # doctest: +SKIP
    >>> import repogym_gym.integrations.verifiers  # registers the taskset id "repogym"  # doctest: +SKIP
    >>> from verifiers.v1.cli.eval.runner import run_eval  # what ``vf-eval`` runs      # doctest: +SKIP
    >>> from verifiers.v1.configs.cli.eval import EvalConfig                            # doctest: +SKIP
    >>> config = EvalConfig.model_validate({"model": model, "client": {"base_url": url},  # doctest: +SKIP
    ...     "env": {"taskset": {"id": "repogym", "suite": "starter", "max_turns": 20}}, "push": False})
    >>> [episode, *_] = asyncio.run(run_eval(config))                                   # doctest: +SKIP
    >>> episode.traces[0].rewards["repogym_reward"].score                               # doctest: +SKIP
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import verifiers.v1 as vf
from pydantic import Field, field_validator

from repogym_gym.errors import TaskNotFoundError
from repogym_gym.gym import dataset, make_env, register_suite, registered_ids, tool_schema
from repogym_gym.gym.aio import run_blocking
from repogym_gym.task import resolve_suite

__all__ = [
    "REWARD_NAME",
    "TASKSET_ID",
    "RepoGymConfig",
    "RepoGymData",
    "RepoGymEnv",
    "RepoGymEnvConfig",
    "RepoGymTask",
    "RepoGymTaskset",
    "register",
    "tools_prompt",
]

#: The taskset id verifiers loads this module by (``--env.taskset.id repogym``).
TASKSET_ID = "repogym"

#: The name of the gym reward on the player's trace (``trace.rewards[REWARD_NAME]``).
REWARD_NAME = "repogym_reward"


class RepoGymConfig(vf.TasksetConfig):
    """The taskset's config (``--env.taskset.*``); an unknown key is refused (verifiers' configs forbid extras).

    Raises:
        ValueError: (pydantic's ``ValidationError``, naming the field and the value) for a suite that
            is neither a directory nor a bundled suite, a ``max_turns`` that is not an integer of 1 or
            more, a ``sandbox`` of none of the four, or a key of none of these.
    """

    suite: str
    """A bundled suite name (``"starter"``) or a suite directory; one task per task of the suite."""
    sandbox: Literal["auto", "local", "bwrap", "docker"] | None = None
    """Where the env runs the model's commands and the tests (None: ``auto``)."""
    max_turns: int | None = Field(None, ge=1)
    """Grade after this many replies at the latest (None: the task's step budget alone)."""
    reward_shaping: bool = False
    """Opt-in shaping (at most 0.1 per episode) on top of the grade."""
    reward: str | None = None
    """The reward kind to grade by (``graded``, ``binary``, ...; README "Choosing a reward"); None: each task's default."""

    @field_validator("suite")
    @classmethod
    def _known_suite(cls, value: str) -> str:
        try:
            path = resolve_suite(value)
        except TaskNotFoundError as exc:
            raise ValueError(f"suite {value!r}: {exc}") from None
        # a directory travels on the task (the env may run in another process) as an absolute path
        return str(path.resolve()) if Path(value).is_dir() else value

    @field_validator("max_turns", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"max_turns must be an integer of 1 or more, got {value!r}")
        return value


class RepoGymData(vf.TaskData):
    """One row of ``repogym_gym.dataset(suite)`` and the taskset's env options (recorded on the trace)."""

    env_id: str
    task_id: str
    seed: int
    suite: str
    sandbox: str | None = None
    max_turns: int | None = None
    reward_shaping: bool = False
    reward: str | None = None


class RepoGymTask(vf.Task[RepoGymData, vf.State, vf.TaskConfig]):
    """A RepoGym task: no prompt of its own (the env opens the exchange with the first observation)."""

    @property
    def key(self) -> str:
        """``<task_id>#<seed>``: stable when the suite gains tasks (the default hash holds the position)."""
        return f"{self.data.task_id}#{self.data.seed}"


class RepoGymTaskset(vf.Taskset[RepoGymTask, RepoGymConfig]):
    """The tasks of ``config.suite``, one per row of ``repogym_gym.dataset(suite)``, in task-id order."""

    def load(self) -> Iterator[RepoGymTask]:
        """Yield the suite's tasks (registering the suite's gym ids).

        Raises:
            TaskSpecError: for a task of the suite that does not load.
        """
        config = self.config
        for row in dataset(config.suite, as_hf=False):
            system = next((m["content"] for m in row["prompt"] if m["role"] == "system"), "")
            yield RepoGymTask(
                RepoGymData(
                    id=f"{row['task_id']}#{row['seed']}", name=row["task_id"], prompt=None,
                    system_prompt=tools_prompt(system, bash=config.sandbox != "local"),
                    env_id=row["env_id"], task_id=row["task_id"], seed=row["seed"], suite=config.suite,
                    sandbox=config.sandbox, max_turns=config.max_turns, reward_shaping=config.reward_shaping,
                    reward=config.reward,
                ),
                config.task,
            )


class RepoGymEnvConfig(vf.EnvConfig):
    """The env's config: one seat, ``player`` (``--env.player.*``), a tool-less chat loop by default."""

    player: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime={"type": "subprocess"})  # narrowed by id


class RepoGymEnv(vf.Env[RepoGymEnvConfig]):
    """One RepoGym episode per task, the env stepped host-side as the player's user (see the module)."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        """Play ``task``: the first observation opens the exchange, each reply is one env step.

        Raises:
            verifiers.v1.SandboxError: for an infrastructure failure (``info["infra_error"]``): the
                rollout fails, as verifiers marks a failed rollout (masked, never scored 0).
            TypeError: for a task of another taskset (its data is not :class:`RepoGymData`).
        """
        data = task.data
        if not isinstance(data, RepoGymData):
            raise TypeError(f"RepoGymEnv plays RepoGymTaskset's tasks, got a {type(task).__name__}")
        if data.env_id not in registered_ids():  # a task received over the wire, its taskset never loaded here
            await run_blocking(register_suite, data.suite)
        env = await run_blocking(make_env, data.env_id, sandbox=data.sandbox, reward_shaping=data.reward_shaping,
                                 reward=data.reward)
        try:
            obs, info = await run_blocking(env.reset, seed=data.seed)
            total, turns, done = 0.0, 0, False
            async with agents.player.interaction(task) as interaction:
                _raise_infra_error(info)
                segment = await interaction.turn(obs["text"])
                while not segment.terminated:
                    turns += 1
                    obs, reward, terminated, truncated, info = await run_blocking(env.step, segment.last_reply)
                    total += float(reward)
                    done = bool(terminated or truncated)
                    if not done and data.max_turns is not None and turns >= data.max_turns:
                        total, done, info = await _grade(env, f"max_turns ({data.max_turns})", total)
                    _raise_infra_error(info)
                    if done:
                        break
                    segment = await interaction.turn(obs["text"])
                trace = interaction.trace
                if not done and not trace.errors:  # verifiers ended the exchange (its own limits): grade what is there
                    total, done, info = await _grade(env, f"verifiers stopped: {trace.stop_condition}", total)
                    _raise_infra_error(info)
                if done and not trace.errors:  # before the close, so verifiers' own log and watchers see it
                    trace.record_reward(REWARD_NAME, total)
                    trace.info["repogym"] = {"task_id": data.task_id, "score": info.get("score"),
                                             "passed": info.get("passed"), "turns": turns,
                                             "truncated_by": info.get("truncated_by")}
        finally:
            await run_blocking(env.close)


async def _grade(env: Any, reason: str, total: float) -> tuple[float, bool, dict[str, Any]]:
    """Grade the unfinished episode (``truncate``); the episode's reward so far plus the grade's."""
    _, reward, _, _, info = await run_blocking(env.get_wrapper_attr("truncate"), reason)
    return total + float(reward), True, info


def _raise_infra_error(info: dict[str, Any]) -> None:
    if info.get("infra_error"):
        raise vf.SandboxError(f"RepoGym infrastructure failure (no reward to give): {info['infra_error']}")


def tools_prompt(system_prompt: str, *, bash: bool = True) -> str:
    """``system_prompt`` followed by RepoGym's tools and how to call them, as Qwen's and Hermes' chat templates
    write tools into the system message: the player's chat loop sends the model no ``tools`` of its own, so
    the tools reach the model as text and its calls come back as ``<tool_call>`` blocks in its reply.

    Args:
        system_prompt: The text before the tools (the dataset row's system prompt).
        bash: List ``bash`` (the ``local`` sandbox refuses it, so its tasks leave it out).
    """
    tools = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tool_schema(bash=bash))
    return (f"{system_prompt}\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            f"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tools}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments within "
            '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
            "</tool_call>")


def register(taskset_id: str = TASKSET_ID) -> None:
    """Make ``taskset_id`` import this module, which is how verifiers finds a taskset by id
    (``verifiers.v1.utils.loaders``: the id is imported as a top-level module); idempotent, and importing
    this module registers ``"repogym"``.

    Raises:
        ValueError: when another module already holds the name ``taskset_id``.
    """
    module = sys.modules[__name__]
    held = sys.modules.setdefault(taskset_id, module)
    if held is not module:
        raise ValueError(f"taskset id {taskset_id!r} is already the module {held.__name__!r}")


register()
