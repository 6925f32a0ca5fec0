"""Rollouts as a JSONL dataset: one line per episode, ready for SFT or offline RL.

Each line is an :class:`ExportRecord`: who did what on which task, the score and its
components, the patch, and the episode as OpenAI chat ``messages`` with the ``tools`` the
model was offered (the gym layer's :func:`~repogym_gym.gym.tools.tool_schema`), so a chat
trainer can feed a line to its template as is.

The conversation is the one the agent kept (LLM agents record theirs in
``RunResult.conversation``); otherwise it is rebuilt from the episode's trajectory file with
:func:`~repogym_gym.conversation.trajectory_messages`.

Infrastructure-error episodes have no score ("a bad rollout is data", but not a reward): they
are left out unless asked for, and then carry ``score: null``.

Example:
    >>> from pathlib import Path
    >>> export_jsonl(Path("runs/starter"), Path("episodes.jsonl"))   # doctest: +SKIP
    8
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict, ValidationError

from repogym_gym.actions import tool_schema
from repogym_gym.conversation import trajectory_messages
from repogym_gym.errors import RunError, validation_summary
from repogym_gym.private import private_writer
from repogym_gym.results import Role
from repogym_gym.runner.models import RunResult, Status, load_results, result_path
from repogym_gym.trajectory import Trajectory

__all__ = ["ExportComponent", "ExportRecord", "episode_record", "equal_reward_groups", "export_jsonl", "write_jsonl"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExportComponent(_Model):
    """One grader component of the episode's grade (see :class:`~repogym_gym.results.GradeComponent`).

    Attributes:
        name: Component name (``tests``, ``constraints``, ``perf``, ...).
        role: ``objective`` (weighted into the score) or ``gate`` (zeroes the score when failed).
        score: In [0, 1].
        passed: The component's own verdict.
        weight: Weight among objectives (ignored for gates).
    """

    name: str
    role: Role
    score: float
    passed: bool
    weight: float


class ExportRecord(_Model):
    """One exported episode (one JSONL line).

    Attributes:
        task_id: The task.
        agent: The agent's label.
        sample: 0-based sample index among the agent's samples of the task.
        seed: The reset seed.
        status: ``graded`` or ``infra_error``.
        score: The graded score in [0, 1]; None for an ``infra_error`` episode (mask it).
        passed: The grade's pass verdict; None for ``infra_error``.
        reward: Total reward (score plus any shaping); None for ``infra_error``.
        components: The grade's components, in grading order (empty without a grade).
        patch: The submission as a unified diff against the baseline ("" without a grade).
        steps: Steps taken.
        duration_s: Wall-clock seconds of the episode.
        agent_error: ``"<Type>: <message>"`` when the agent raised; the episode was graded as it stood.
        infra_error: The infrastructure failure of an ``infra_error`` episode.
        messages: The episode as OpenAI chat messages (system, user, assistant tool calls, tool results).
        tools: The OpenAI ``tools`` list the conversation's tool calls refer to.
        sampling: How the agent sampled (model, temperature: None means the server's default, ...);
            None for an agent that does not sample (golden, noop, scripted).
    """

    task_id: str
    agent: str
    sample: int
    seed: int
    status: Status
    score: float | None
    passed: bool | None
    reward: float | None
    components: list[ExportComponent]
    patch: str
    steps: int
    duration_s: float
    agent_error: str | None
    infra_error: str | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    sampling: dict[str, Any] | None = None


def _messages(result: RunResult, results_dir: Path) -> list[dict[str, Any]]:
    """The episode's chat messages: the agent's own conversation, else its trajectory's.

    Raises:
        RunError: naming the file, when the trajectory file is missing or does not validate,
            or when a graded episode has neither a conversation nor a trajectory.
    """
    if result.conversation is not None:
        return result.conversation
    if result.trajectory is None:
        if result.status == "infra_error":
            return []
        raise RunError(f"{_result_name(result, results_dir)}: episode has neither a conversation nor a trajectory, "
                       "so it has no messages to export; rerun it with trajectories enabled")
    path = results_dir / result.trajectory
    try:
        trajectory = Trajectory.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise RunError(f"{path}: trajectory of {_result_name(result, results_dir)} cannot be read: {exc.strerror or exc}") from None
    except ValidationError as exc:
        raise RunError(f"{path}: not a valid Trajectory: {validation_summary(exc)}") from None
    return trajectory_messages(trajectory)


def _result_name(result: RunResult, results_dir: Path) -> str:
    """``<results_dir>/results/<agent>/<task_id>/<sample>.json``: where a result lives, for messages."""
    return str(result_path(results_dir, result.agent, result.task_id, result.sample))


def episode_record(result: RunResult, results_dir: Path, tools: list[dict[str, Any]] | None = None) -> ExportRecord:
    """The export line of one episode.

    Args:
        result: The episode.
        results_dir: The results directory it belongs to (trajectory paths are relative to it).
        tools: The tool list to embed (default: :func:`tool_schema`).

    Raises:
        RunError: when its messages cannot be recovered (see :func:`_messages`).
    """
    grade = result.grade
    components = [ExportComponent(name=c.name, role=c.role, score=c.score, passed=c.passed, weight=c.weight)
                  for c in (grade.components if grade is not None else [])]
    return ExportRecord(
        task_id=result.task_id, agent=result.agent, sample=result.sample, seed=result.seed, status=result.status,
        score=result.score, passed=result.passed, reward=result.reward, components=components,
        patch=grade.patch if grade is not None else "", steps=result.steps, duration_s=result.duration_s,
        agent_error=result.agent_error, infra_error=result.infra_error,
        messages=_messages(result, results_dir), tools=tools if tools is not None else tool_schema(),
        sampling=result.sampling,
    )


def equal_reward_groups(results: Iterable[RunResult]) -> set[tuple[str, str]]:
    """The (agent, task_id) groups whose graded episodes all earned the same reward.

    A GRPO group's advantage is ``(R_i - mean(R)) / (std(R) + eps)`` (see
    :func:`~repogym_gym.gym.vector.group_advantages`): with every reward equal it is 0 for every
    member, so the group teaches nothing. Groups of one graded episode are not counted (no group);
    infrastructure-error episodes have no reward and are left out of the comparison.
    """
    rewards: dict[tuple[str, str], list[float]] = {}
    for result in results:
        if result.status == "graded" and result.reward is not None:
            rewards.setdefault((result.agent, result.task_id), []).append(result.reward)
    return {key for key, values in rewards.items() if len(values) > 1 and max(values) - min(values) <= 1e-9}


def _records(results: Iterable[RunResult], results_dir: Path, include_infra_errors: bool,
             dropped: set[tuple[str, str]]) -> Iterator[ExportRecord]:
    tools = tool_schema()
    for result in results:
        if result.status == "infra_error" and not include_infra_errors:
            continue
        if (result.agent, result.task_id) in dropped:
            continue
        yield episode_record(result, results_dir, tools)


def write_jsonl(results: Iterable[RunResult], results_dir: Path, dest: Path | TextIO, *,
                include_infra_errors: bool = False, drop_groups: Collection[tuple[str, str]] = ()) -> int:
    """Write the export lines of ``results`` (in the order given) to ``dest``; return lines written.

    The episodes of every (agent, task_id) group in ``drop_groups`` are left out (``repogym export
    --drop-equal-groups`` passes :func:`equal_reward_groups`: no GRPO signal).

    A file is written whole or not at all (a temporary beside it, renamed at the end), so a
    corrupt trajectory never leaves half a dataset behind; it is mode 0600 and the directories
    made for it 0700 (it holds every episode's patch: see :mod:`repogym_gym.private`).

    Raises:
        RunError: when an episode's messages cannot be recovered, or ``dest`` cannot be written.
    """
    records = _records(results, results_dir, include_infra_errors, set(drop_groups))
    if not isinstance(dest, Path):
        count = 0
        for record in records:
            dest.write(record.model_dump_json() + "\n")
            count += 1
        dest.flush()
        return count
    count = 0
    try:
        with private_writer(dest) as fh:  # every patch of the run: 0600, in directories made 0700
            for record in records:
                fh.write(record.model_dump_json() + "\n")
                count += 1
    except OSError as exc:
        raise RunError(f"{dest}: cannot write the export: {exc.strerror or exc}") from None
    return count


def export_jsonl(results_dir: Path, dest: Path | TextIO | str, *, include_infra_errors: bool = False) -> int:
    """Export every episode of a results directory as JSONL, sorted by (agent, task_id, sample).

    Args:
        results_dir: A directory written by the runner (``results/<agent>/<task>/<k>.json``).
        dest: A file path (``"-"``: stdout) or an open text stream.
        include_infra_errors: Also export infrastructure-error episodes (``score: null``).
            By default they are left out: they have no score.

    Returns:
        The number of lines written (one per episode exported).

    Raises:
        RunError: when ``results_dir`` is not a results directory, a result or trajectory file
            does not validate (the message names it), or ``dest`` cannot be written.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise RunError(f"{results_dir}: no such results directory; give the --out directory of a `repogym run`")
    results = load_results(results_dir)
    if isinstance(dest, str):
        dest = sys.stdout if dest == "-" else Path(dest)
    return write_jsonl(results, results_dir, dest, include_infra_errors=include_infra_errors)
