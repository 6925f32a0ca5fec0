"""Episode: one episode's logic (reset / step / close), with no Gymnasium import; the gym env
wraps one (:class:`repogym_gym.gym.RepoGymEnv`, its ``episode`` attribute).

An episode: ``reset()`` copies the task's cached baseline into a fresh workspace and returns the problem
statement and the file tree; each ``step(action)`` reads, writes, edits, runs an allowlisted command, runs
the visible tests or lists files; ``Submit`` grades the workspace (``terminated=True``) and so does running
out of steps (``truncated=True``). The reward is sparse: 0 on every step and the graded score on the last
one. With ``reward_shaping=True``, visible fail_to_pass tests that newly pass in a Test action earn up to 0.1
in total. The Test action runs exactly as grading does (a fresh copy holding only the carried changes, the
grader's pytest settings, sentinel, canaries and tamper checks; hidden tests left out), so it earns nothing
while the workspace holds a change grading would reject or the run is invalid.

"A bad action is data": an unknown kind, a missing field, a bad path, text that is not valid Unicode, a
refused or failing command comes back as an observation with ``error`` set (and ``info["parse_error"]`` for
an action that did not parse), never as an exception; so does an action that failed in a way nobody
foresaw. A submission that cannot be graded as it stands (a tree nested past PATH_MAX, names that are not
UTF-8, unparseable settings) scores 0 with the reason in its grade. An infrastructure failure (setup
crashed, sandbox broken) ends the episode with reward 0 and ``info["infra_error"]``. Every string of an
observation and of ``info`` is valid UTF-8 (:mod:`repogym_gym.safetext`).

Example:
    >>> episode = Episode(load_task("task_suites/starter/parse-duration"))  # doctest: +SKIP
    >>> obs, info = episode.reset()                                          # doctest: +SKIP
    >>> episode.step({"kind": "submit"}).reward                              # doctest: +SKIP
    0.0
"""

from __future__ import annotations

import logging
import os
import reprlib
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repogym_gym.actions import ActionError, Observation, action_to_dict
from repogym_gym.baseline import BaselineStore
from repogym_gym.calls import ToolCall, parse_calls
from repogym_gym.commands import DEFAULT_ALLOWLIST, CommandRefusedError, check_command
from repogym_gym.errors import EpisodeError, PathEscapeError, SandboxError, SetupError, SourceError, WorkspaceError
from repogym_gym.graders.composite import CompositeGrader
from repogym_gym.grading import VisibleTestRun, confined, grade_workspace, run_visible_tests
from repogym_gym.results import CommandResult, GradeResult
from repogym_gym.safetext import safe_json
from repogym_gym.sandbox import Sandbox, make_sandbox
from repogym_gym.task import Task
from repogym_gym.trajectory import Trajectory, TrajectoryStep
from repogym_gym.venvs import venv_environ
from repogym_gym.workspace import Workspace

__all__ = ["MAX_OBSERVATION_CHARS", "MAX_STEPS", "Episode", "EpisodeError", "RepoEnv", "StepResult", "check_max_steps", "task_heading"]

_log = logging.getLogger(__name__)

#: Longest observation text, characters; longer text keeps its head and tail around a marker.
MAX_OBSERVATION_CHARS = 50_000
#: Largest file the Edit action rewrites, bytes (it is read whole into memory).
MAX_EDIT_BYTES = 8 * 1024 * 1024
#: Largest step budget: the gym observation space bounds ``step`` and ``steps_left`` by it.
MAX_STEPS = 1_000_000
#: Total reward shaping can add in one episode.
SHAPING_BUDGET = 0.1
_TREE_LIMIT = 300


@dataclass
class StepResult:
    """What one step returns (the Gymnasium 5-tuple, named)."""

    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)


def _clip(text: str, limit: int = MAX_OBSERVATION_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


#: The "action" of a driver's truncation (recorded with neither action nor raw_action).
_DRIVER = object()


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 6, 2_000, 200, 50, 50


def _bounded_repr(value: Any) -> str:
    """The repr of an action that did not parse, bounded in depth and size and never raising: a list
    nested 100,000 deep raised RecursionError out of step() (red-team round 20, A10)."""
    try:
        return _REPR.repr(value)
    except Exception as exc:  # noqa: BLE001 - a policy's action object's own __repr__ may raise anything
        return f"<{type(value).__name__} whose repr failed: {type(exc).__name__}>"


def task_heading(task: Task) -> str:
    """The task's id, type and problem statement: how every episode's first observation begins."""
    return f"Task {task.id} ({task.spec.type}).\n\n{task.spec.problem_statement.strip()}"


def check_max_steps(max_steps: int) -> None:
    """Raise ValueError unless ``max_steps`` is 1 to :data:`MAX_STEPS`."""
    if not 1 <= max_steps <= MAX_STEPS:
        raise ValueError(f"max_steps must be 1 to {MAX_STEPS:,} (the gym observation space's bound on step and "
                         f"steps_left), got {max_steps}")


class _Refusal(Exception):
    """An action that could not be carried out; becomes an error observation."""


class Episode:
    """One task's episodes.

    Args:
        task: The task.
        sandbox: Where Run/Test commands and grading run (default ``make_sandbox("auto")``:
            bubblewrap where it runs, else the local sandbox with an
            :class:`~repogym_gym.errors.UnconfinedWarning`). One with
            ``open(tree)`` and ``release(tree)`` methods (Docker: a container per episode) is
            handed the workspace after ``reset`` made it and gets it back before it is removed.
        store: Baseline cache (default: the process-wide one).
        max_steps: Step budget (default: the task's ``limits.max_steps``).
        reward_shaping: Opt in to shaping (at most 0.1 per episode, for visible-test progress).
        allowlist: Programs a Run command may start.
        trajectory_dir: Write one trajectory JSON per finished episode here (None: don't).
        env_spec_json: Recorded in trajectories (the gym layer passes ``EnvSpec.to_json()``).
        grader: Grading pipeline (default: the task type's).
    """

    def __init__(
        self,
        task: Task,
        *,
        sandbox: Sandbox | None = None,
        store: BaselineStore | None = None,
        max_steps: int | None = None,
        reward_shaping: bool = False,
        allowlist: Iterable[str] = DEFAULT_ALLOWLIST,
        trajectory_dir: str | Path | None = None,
        env_spec_json: str | None = None,
        grader: CompositeGrader | None = None,
    ) -> None:
        self.task = task
        self.sandbox = sandbox or make_sandbox("auto")
        self.store = store
        # what commands and grading run in: the task's secrets hidden where the sandbox can hide them
        self._sandbox = confined(self.sandbox, task, store.cache_dir if store is not None else None)
        if max_steps is not None:
            check_max_steps(max_steps)
        self.max_steps = max_steps if max_steps is not None else task.spec.limits.max_steps
        self.reward_shaping = reward_shaping
        self.allowlist = frozenset(allowlist)
        self.trajectory_dir = Path(trajectory_dir) if trajectory_dir is not None else None
        self.env_spec_json = env_spec_json
        self.grader = grader
        self.workspace: Workspace | None = None
        self.last_observation: Observation | None = None
        self.last_grade: GradeResult | None = None
        self._state = "new"  # new | running | done | closed
        self._step = 0
        self._infra_error: str | None = None
        self._shaped = 0.0
        self._best_visible = 0
        self._visible_passing = 0
        self._trajectory: Trajectory | None = None
        self._started = 0.0

    # -- episode -----------------------------------------------------------------------------

    def reset(self) -> tuple[Observation, dict[str, Any]]:
        """Start a new episode in a fresh workspace.

        Returns:
            (observation, info); ``info["infra_error"]`` is set when the workspace could not
            be made, and the next step then ends the episode with reward 0.
        """
        if self._state == "closed":
            raise EpisodeError("reset() on a closed environment; make a new one")
        self._drop_workspace()
        self._state, self._step, self._infra_error = "running", 0, None
        self._shaped, self._best_visible, self._visible_passing, self.last_grade = 0.0, 0, 0, None
        self._started = time.monotonic()
        episode_id = secrets.token_hex(6)
        self._trajectory = Trajectory(task_id=self.task.id, episode_id=episode_id, env_spec=self.env_spec_json,
                                      started_at=datetime.now(UTC).isoformat(timespec="seconds"))
        info: dict[str, Any] = {"task_id": self.task.id, "episode_id": episode_id}
        try:
            self.workspace = Workspace.create(self.task, store=self.store)
            self._sandbox.open(self.workspace.path)  # docker: the episode's container
        except (SetupError, SourceError, WorkspaceError, SandboxError, OSError) as exc:
            self._infra_error = f"{type(exc).__name__}: {exc}"
            info["infra_error"] = self._infra_error
            obs = Observation(text=_clip(f"The environment could not be set up: {self._infra_error}"), step=0,
                              steps_left=self.max_steps, error=self._infra_error)
        else:  # a long problem statement is cut like any observation (60,000 characters fell outside the space)
            obs = Observation(text=_clip(self._intro()), step=0, steps_left=self.max_steps)
        self._trajectory.reset_observation = obs
        self.last_observation = obs
        return obs, info

    def fork(self, *, sandbox: Sandbox | None = None) -> Episode:
        """A copy of the running episode that goes on independently: same task, options, budget, steps
        taken and trajectory so far, in a new workspace holding a copy of this one's work tree
        (:meth:`Workspace.fork`). For tree search and GEM's ``spawn(same_state=True)``; each copy is
        graded on its own tree.

        Args:
            sandbox: Where the copy runs (default: this episode's sandbox; the copy gets its own
                container in Docker).

        Raises:
            EpisodeError: unless an episode is running with a workspace, or when the work tree cannot be
                copied (the disk, say).
        """
        if self._state != "running" or self.workspace is None or self._infra_error is not None:
            raise EpisodeError(f"fork() needs a running episode with a workspace (this one is {self._state}"
                               f"{': ' + self._infra_error if self._infra_error else ''})")
        twin = Episode(self.task, sandbox=sandbox or self.sandbox, store=self.store, max_steps=self.max_steps,
                       reward_shaping=self.reward_shaping, allowlist=self.allowlist, trajectory_dir=self.trajectory_dir,
                       env_spec_json=self.env_spec_json, grader=self.grader)
        try:
            twin.workspace = self.workspace.fork()
            twin._sandbox.open(twin.workspace.path)
        except (WorkspaceError, SandboxError, OSError) as exc:
            twin.close()
            raise EpisodeError(f"cannot fork the episode: {type(exc).__name__}: {exc}") from None
        twin._state, twin._step, twin._started = "running", self._step, time.monotonic()
        twin._shaped, twin._best_visible, twin._visible_passing = self._shaped, self._best_visible, self._visible_passing
        twin.last_observation = self.last_observation
        if self._trajectory is not None:
            twin._trajectory = self._trajectory.model_copy(deep=True, update={
                "episode_id": secrets.token_hex(6), "forked_from": (self._trajectory.episode_id, self._step)})
        return twin

    def step(self, action: Any) -> StepResult:
        """Carry out an action, or every tool call of a completion; grade on Submit or when the step
        budget runs out.

        A completion holding several calls (:func:`~repogym_gym.calls.parse_calls`: ``<tool_call>``
        blocks, fenced JSON, a JSON list, a list of OpenAI tool calls) runs them in order, each one
        step of the budget (the budget bounds work, not turns); the episode ends at a submit or the
        last step, and the calls after that are not run. ``info["tool_results"]`` holds one
        ``{"tool_call_id", "name", "content", "error"}`` per call, in order (``name`` None for a call
        that did not parse); the observation's text joins them (for one call: its text alone), and
        the reward is the sum of the calls' rewards.

        Args:
            action: An Action model, a dict, a Gymnasium dict action, JSON/tool-call text, a whole
                completion, or a list of tool calls.

        Raises:
            EpisodeError: before ``reset()`` or after the episode ended.
        """
        if self._state != "running":
            raise EpisodeError({"new": "step() called before reset()", "closed": "step() on a closed environment",
                                "done": "step() called after the episode ended; call reset() to start a new one"}[self._state])
        calls = parse_calls(action)
        done: list[StepResult] = []
        for call in calls:
            done.append(self._step_call(call, action if len(calls) == 1 else call.raw))
            if done[-1].terminated or done[-1].truncated:
                break
        return self._joined(calls, done)

    def _step_call(self, call: ToolCall, raw: Any) -> StepResult:
        """One call of a step: one step of the budget."""
        self._step += 1
        info: dict[str, Any] = {"task_id": self.task.id, "episode_id": self._trajectory.episode_id if self._trajectory else ""}
        if self._infra_error is not None:
            obs = Observation(text=f"Episode ended: {self._infra_error}", step=self._step, steps_left=0, error=self._infra_error)
            info["action_error"] = self._infra_error
            return self._finish(obs, None, raw, info, terminated=True)
        parsed = call.action
        try:
            if call.error is not None:
                raise ActionError(call.error)
            obs = self._dispatch(parsed)
        except ActionError as exc:
            info["parse_error"] = str(exc)
            obs = self._observe(f"Invalid action: {exc}", error=str(exc))
        except (SandboxError, WorkspaceError, OSError) as exc:
            self._infra_error = f"{type(exc).__name__}: {exc}"
            obs = self._observe(f"Episode ended by an infrastructure failure: {self._infra_error}", error=self._infra_error)
            info["action_error"] = self._infra_error
            return self._finish(obs, parsed, raw, info, terminated=True)
        except Exception as exc:  # noqa: BLE001 - a bad action is data, whatever broke on it
            _log.debug("action %r failed", getattr(parsed, "kind", None), exc_info=True)
            message = self._scrub(f"the action failed: {type(exc).__name__}: {exc}")
            obs = self._observe(f"Failed: {message}", error=message)
        info["action_error"] = obs.error  # None when the action worked: no need to read the text's prefix
        reward = self._shape(obs) if parsed is not None and parsed.kind == "test" else 0.0
        if parsed is not None and parsed.kind == "submit":
            return self._finish(obs, parsed, raw, info, terminated=True, reward=reward)
        if self._step >= self.max_steps:
            return self._finish(obs, parsed, raw, info, truncated=True, reward=reward)
        self._record(parsed, raw, obs, reward)
        self.last_observation = obs
        return StepResult(obs, reward, False, False, safe_json(info))

    def _joined(self, calls: list[ToolCall], done: list[StepResult]) -> StepResult:
        """The step's result from its calls' results (``done``: those that ran, in order)."""
        results = []
        for k, call in enumerate(calls):
            if k < len(done):
                obs = done[k].observation
                results.append({"tool_call_id": call.call_id, "name": call.name, "content": obs.text, "error": obs.error})
            else:
                results.append({"tool_call_id": call.call_id, "name": call.name, "error": "not run: the episode ended",
                                "content": f"Not run: the episode ended at call {len(done)} of {len(calls)}."})
        last = done[-1]
        if len(calls) == 1:
            return StepResult(last.observation, last.reward, last.terminated, last.truncated,
                              safe_json(last.info | {"tool_results": results}))
        # a call not run because an earlier one ended the episode is no error of the completion's
        errors = [f"{r['tool_call_id']}: {r['error']}" for r in results[:len(done)] if r["error"] is not None]
        text = "\n\n".join(f"[call {k + 1} of {len(calls)}: {r['name'] or 'invalid'} ({r['tool_call_id']})]\n{r['content']}"
                            for k, r in enumerate(results))
        obs = Observation(text=_clip(text), step=last.observation.step, steps_left=last.observation.steps_left,
                          exit_code=last.observation.exit_code, error="; ".join(errors)[:10_000] if errors else None)
        info = last.info | {"action_error": obs.error, "tool_results": results}
        parse_errors = [f"{r['tool_call_id']}: {d.info['parse_error']}" for r, d in zip(results, done, strict=False)
                        if "parse_error" in d.info]
        info.pop("parse_error", None)
        if parse_errors:
            info["parse_error"] = "; ".join(parse_errors)[:10_000]
        self.last_observation = obs
        return StepResult(obs, sum(d.reward for d in done), last.terminated, last.truncated, safe_json(info))

    def truncate(self, reason: str) -> StepResult:
        """End the running episode from outside (a driver's time limit, a crashed agent).

        The workspace is graded as it stands, exactly as when the step budget runs out, and
        the result has ``truncated=True`` and ``info["truncated_by"] = reason``.

        Raises:
            EpisodeError: when no episode is running.
        """
        if self._state != "running":
            raise EpisodeError(f"truncate() with no running episode (state {self._state!r})")
        self._step += 1
        info: dict[str, Any] = {"task_id": self.task.id, "truncated_by": reason,
                                "episode_id": self._trajectory.episode_id if self._trajectory else ""}
        obs = self._observe(f"Episode ended by the driver: {reason}", error=reason)
        info["action_error"] = None  # no action of the agent's
        if self._infra_error is not None:
            return self._finish(obs, None, None, info, terminated=True)
        return self._finish(obs, None, _DRIVER, info, truncated=True)

    def run_command(self, argv: Sequence[str], *, timeout_s: float, env: Mapping[str, str] | None = None,
                    output_limit_bytes: int = 64_000, writable: Sequence[str | os.PathLike[str]] = ()) -> CommandResult:
        """Run ``argv`` (no shell) in the workspace through the episode's sandbox, as Run actions run:
        confined to the task (in a confining sandbox), the task's Python environment first on PATH.

        For an agent that drives an external program (:class:`~repogym_gym.agents.ShellAgent`);
        the command is not a step and is not recorded in the trajectory.

        Args:
            argv: Program and arguments.
            timeout_s: Seconds before the command is killed.
            env: Variables on top of the sandbox's allowlist (a tool's API key, say).
            output_limit_bytes: Bytes of stdout and of stderr kept (head and tail).
            writable: More directories the command may write (a directory holding its input).

        Raises:
            EpisodeError: when no episode is running or its workspace could not be made.
            SandboxError: when the sandbox cannot run the command.
        """
        if self._state != "running" or self.workspace is None or self._infra_error is not None:
            raise EpisodeError(f"run_command() needs a running episode with a workspace (state {self._state!r}"
                               + (f", {self._infra_error}" if self._infra_error else "") + ")")
        return self._sandbox.run(list(argv), cwd=self.workspace.path, timeout_s=timeout_s,
                                 env={**venv_environ(self.workspace.baseline.python_env), **(env or {})},
                                 output_limit_bytes=output_limit_bytes, writable=writable)

    @property
    def sandbox_name(self) -> str:
        """The name of the sandbox the episode's commands and grading run in (``local``, ``bwrap`` ...)."""
        return self._sandbox.name

    def close(self) -> None:
        """Remove the workspace; idempotent."""
        self._drop_workspace()
        self._state = "closed"

    @property
    def done(self) -> bool:
        """True once the episode ended (until the next reset)."""
        return self._state == "done"

    def render(self) -> str:
        """The last observation as text (``render_mode="ansi"``)."""
        obs = self.last_observation
        if obs is None:
            return f"[{self.task.id}] not started"
        return f"[{self.task.id}] step {obs.step}/{self.max_steps}\n{obs.text}"

    # -- internals ---------------------------------------------------------------------------

    def _drop_workspace(self) -> None:
        if self.workspace is not None:
            try:
                self._sandbox.release(self.workspace.path)  # what open() started, if anything
            finally:
                try:
                    self.workspace.close()
                except OSError:  # a process of the agent's still writing into it (local sandbox)
                    _log.warning("could not remove the workspace %s", self.workspace.root, exc_info=True)
                self.workspace = None

    def _observe(self, text: str, *, exit_code: int | None = None, error: str | None = None) -> Observation:
        return Observation(text=_clip(text), step=self._step, steps_left=max(0, self.max_steps - self._step),
                           exit_code=exit_code, error=error)

    def _intro(self) -> str:
        assert self.workspace is not None
        files = self.workspace.list_files()
        shown = files[:_TREE_LIMIT] + ([f"... and {len(files) - _TREE_LIMIT} more"] if len(files) > _TREE_LIMIT else [])
        return (f"{task_heading(self.task)}\n\n"
                f"Repository files:\n" + "\n".join(shown) + f"\n\nYou have {self.max_steps} steps. Actions: read, write, "
                f"edit, run, {'test (visible tests), ' if self.task.spec.tests else ''}list_files, submit (grades the repository)"
                + (", bash (any command)." if self._sandbox.confining else "."))

    def _dispatch(self, action: Any) -> Observation:
        handler = getattr(self, f"_do_{action.kind}")
        try:
            return handler(action)
        except _Refusal as exc:
            return self._observe(str(exc), error=str(exc))
        except (PathEscapeError, CommandRefusedError) as exc:
            message = self._scrub(str(exc))
            return self._observe(f"Refused: {message}", error=message)
        except OSError as exc:  # the action's own failure (name too long, not a directory, disk full...)
            message = self._scrub(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""))
            return self._observe(f"Failed: {message}", error=message)

    def _scrub(self, text: str) -> str:
        """``text`` without the workspace's absolute path (observations show repository paths only)."""
        if self.workspace is None:
            return text
        return text.replace(str(self.workspace.path) + "/", "").replace(str(self.workspace.root), "<workspace>")

    def _ws(self) -> Workspace:
        assert self.workspace is not None
        return self.workspace

    def _do_read(self, action: Any) -> Observation:
        # the marker of a cut file (its size) must survive the observation's own clipping
        return self._observe(self._ws().read(action.path, max_bytes=MAX_OBSERVATION_CHARS - 200))

    def _do_write(self, action: Any) -> Observation:
        self._ws().write(action.path, action.content)
        return self._observe(f"Wrote {len(action.content.encode())} bytes to {action.path}.")

    def _do_edit(self, action: Any) -> Observation:
        size = self._ws().size(action.path)
        if size > MAX_EDIT_BYTES:
            raise _Refusal(f"Edit failed: {action.path} is {size} bytes, over the {MAX_EDIT_BYTES}-byte limit of the "
                           "edit action; use write, or a command.")
        try:
            text = self._ws().read(action.path, errors="strict")
        except UnicodeDecodeError as exc:
            raise _Refusal(f"Edit failed: {action.path} is not UTF-8 text (byte {exc.start}); rewriting it would "
                           "change its other bytes. Use write, or a command.") from None
        count = text.count(action.old)
        if count != 1:
            raise _Refusal(f"Edit failed: the old text occurs {count} times in {action.path}; it must occur exactly once.")
        self._ws().write(action.path, text.replace(action.old, action.new, 1))
        return self._observe(f"Edited {action.path}.")

    def _do_run(self, action: Any) -> Observation:
        check_command(action.command, self.allowlist)
        return self._shell(action.command)

    def _shell(self, command: str) -> Observation:
        """``bash -c command`` in the sandbox, timed out and its output capped by the task's limits."""
        limits = self.task.spec.limits
        result = self._sandbox.run(["bash", "-c", command], cwd=self._ws().path, timeout_s=limits.command_timeout_s,
                                  env=venv_environ(self._ws().baseline.python_env), output_limit_bytes=limits.output_limit_bytes)
        status = (f"[timed out after {limits.command_timeout_s:g} s]" if result.timed_out
                  else f"[exit code {result.exit_code}]")
        error = None if result.ok else status
        return self._observe(f"{result.stdout}{result.stderr}\n{status}".lstrip("\n"), exit_code=result.exit_code, error=error)

    def _do_bash(self, action: Any) -> Observation:
        """Any command, where the sandbox confines it; the local guardrail refuses it (its commands run on
        the host: only allowlisted programs through ``run``)."""
        if not self._sandbox.confining:
            raise _Refusal("Refused: bash runs any command, so it needs a confining sandbox (bwrap or docker); this "
                           "episode runs in the local guardrail, where `run` with allowlisted programs works")
        return self._shell(action.command)

    def _do_test(self, action: Any) -> Observation:
        """Run the visible tests as grading would (:func:`~repogym_gym.grading.run_visible_tests`)."""
        if self.task.spec.tests is None:
            raise ActionError(f"task {self.task.id!r} is an {self.task.spec.type} task: it has no tests to run")
        run = run_visible_tests(self._ws(), sandbox=self._sandbox)
        lines = []
        if run.rejected:
            lines.append("Not run as submitted: " + "; ".join(run.rejected[:5]))
        if run.invalid:
            lines.append(f"The test run is invalid and would score 0: {run.invalid}")
        if run.statuses:
            statuses = list(run.statuses.values())
            counts = {s: statuses.count(s) for s in ("passed", "failed", "error", "skipped") if s in statuses}
            lines.append("Visible tests: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
            lines += [f"  {i}: {s}" for i, s in run.statuses.items()]
        lines += ["", "Output (tail):", run.output]
        self._visible_passing = self._count_visible_f2p(run) if run.valid else 0
        return self._observe("\n".join(lines), exit_code=1 if run.failing else 0)

    def _do_list_files(self, action: Any) -> Observation:
        ws = self._ws()
        prefix = "" if action.path in (".", "", "./") else ws.resolve(action.path).relative_to(ws.path).as_posix() + "/"
        files = [f for f in ws.list_files() if f.startswith(prefix)]
        return self._observe("\n".join(files) if files else f"No files under {action.path!r}.")

    def _do_submit(self, action: Any) -> Observation:
        return self._observe("Submitted; grading the repository.")

    def _visible_f2p(self) -> list[str]:
        """fail_to_pass ids whose test file is in the baseline (the agent can see and run them)."""
        manifest = self._ws().baseline.manifest
        ids = self.task.spec.tests.fail_to_pass if self.task.spec.tests is not None else []
        return [i for i in ids if i.split("::", 1)[0] in manifest]

    def _count_visible_f2p(self, run: VisibleTestRun) -> int:
        if not self.reward_shaping:
            return 0
        return sum(1 for i in self._visible_f2p() if run.status_of(i) == "passed")

    def _shape(self, obs: Observation) -> float:
        if not self.reward_shaping:
            return 0.0
        visible = self._visible_f2p()
        passing = self._visible_passing
        if not visible or passing <= self._best_visible:
            return 0.0
        reward = min(SHAPING_BUDGET * (passing - self._best_visible) / len(visible), SHAPING_BUDGET - self._shaped)
        self._best_visible = passing
        self._shaped += reward
        return reward

    def _record(self, parsed: Any, raw: Any, obs: Observation, reward: float) -> None:
        if self._trajectory is None:
            return
        raw_text = None if parsed is not None or raw is _DRIVER else (raw if isinstance(raw, str) else _bounded_repr(raw))[:10_000]
        self._trajectory.steps.append(TrajectoryStep(step=self._step, action=action_to_dict(parsed) if parsed else None,
                                                     raw_action=raw_text, observation=obs, reward=reward))

    def _finish(self, obs: Observation, parsed: Any, raw: Any, info: dict[str, Any], *, terminated: bool = False,
                truncated: bool = False, reward: float = 0.0) -> StepResult:
        grade = None
        if self._infra_error is None and self.workspace is not None:
            try:
                grade = grade_workspace(self.workspace, sandbox=self._sandbox, grader=self.grader)
            except Exception as exc:  # noqa: BLE001 - a bug of ours is no reason to raise out of step()
                _log.debug("grading failed", exc_info=True)
                grade = GradeResult(task_id=self.task.id, score=0.0, passed=False,
                                    infra_error=f"grading crashed: {type(exc).__name__}: {exc}")
            self.last_grade = grade
            if grade.infra_error:
                self._infra_error = grade.infra_error
            else:
                reward += grade.score
            ending = ("Submitted" if terminated else "Graded as it stands" if raw is _DRIVER
                      else f"Out of steps ({self.max_steps})")
            obs = self._observe(f"{obs.text}\n\n{ending}. Grade: {grade.summary()}", exit_code=obs.exit_code, error=obs.error)
        if self._infra_error is not None:
            reward = 0.0
            info["infra_error"] = self._infra_error
        if grade is not None:
            info |= {"score": grade.score, "passed": grade.passed, "grade": grade.model_dump(mode="json")}
        self._record(parsed, raw, obs, reward)
        self._state = "done"
        self.last_observation = obs
        if self._trajectory is not None:
            self._trajectory.grade, self._trajectory.infra_error = grade, self._infra_error
            self._trajectory.terminated, self._trajectory.truncated = terminated, truncated
            self._trajectory.duration_s = time.monotonic() - self._started
            if self.trajectory_dir is not None:
                try:
                    info["trajectory_path"] = str(self._trajectory.write(self.trajectory_dir))
                except OSError as exc:  # the host's disk: the episode's reward stands
                    info["trajectory_error"] = f"cannot write the trajectory: {exc}"
        return StepResult(obs, reward, terminated, truncated, safe_json(info))


#: The name :class:`Episode` had before issue 11 gave "env" one meaning (the gym env).
RepoEnv = Episode
