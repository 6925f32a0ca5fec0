"""The figures every report format shows: leaderboard rows, per-task cells, episode points.

:func:`load_report` reads a results directory once (``run.json`` and every RunResult) and
computes everything the terminal, Markdown and HTML renderers print, so the three formats
can never disagree. Scores come from :func:`~repogym_gym.runner.stats.agent_stats`;
infrastructure-error episodes are counted, never scored.

Example:
    >>> report = load_report(Path("runs/starter"))            # doctest: +SKIP
    >>> [(row.agent, row.pass_at_1) for row in report.leaderboard]  # doctest: +SKIP
    [('golden', 1.0), ('noop', 0.0)]
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from repogym_gym.errors import RunError, validation_summary
from repogym_gym.runner.models import RunConfig, RunResult, Status, load_results
from repogym_gym.runner.stats import agent_stats

__all__ = [
    "MISSING",
    "EpisodePoint",
    "LeaderboardRow",
    "Report",
    "TaskCell",
    "fmt_rate",
    "fmt_seconds",
    "leaderboard_rows",
    "load_report",
    "metric_notes",
    "pass_at_k_note",
    "plural",
    "read_results",
    "run_counts",
    "sort_rows",
]

#: What a missing figure prints as, in every format.
MISSING = "—"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LeaderboardRow(_Model):
    """One agent of one run.

    Attributes:
        run: The results directory, as given.
        agent: The agent's label.
        episodes: Episodes recorded (graded plus infrastructure errors).
        graded: Episodes with a score.
        infra_errors: Episodes without one (not in any figure below).
        mean_score: Mean score over graded episodes, in [0, 1]; None if none was graded.
        pass_at_1: Unbiased pass@1 averaged over tasks; None if no task was graded.
        k: The k of ``pass_at_k``.
        pass_at_k: Unbiased pass@k averaged over tasks with at least k graded samples; None if none has.
        tasks_solved: Tasks with at least one passing sample.
        tasks: Tasks of the run.
        mean_duration_s: Mean wall-clock seconds per graded episode; None if none was graded.
    """

    run: str
    agent: str
    episodes: int
    graded: int
    infra_errors: int
    mean_score: float | None
    pass_at_1: float | None
    k: int
    pass_at_k: float | None
    tasks_solved: int
    tasks: int
    mean_duration_s: float | None


class TaskCell(_Model):
    """One agent on one task.

    Attributes:
        task_id: The task.
        agent: The agent's label.
        graded: Graded samples.
        passed: Passing samples.
        infra_errors: Samples lost to infrastructure errors (no score).
        mean_score: Mean score of the graded samples; None if none was graded.
    """

    task_id: str
    agent: str
    graded: int
    passed: int
    infra_errors: int
    mean_score: float | None


class EpisodePoint(_Model):
    """One episode, as the plots and the problem list need it.

    Attributes:
        agent: The agent's label.
        task_id: The task.
        sample: Sample index.
        status: ``graded`` or ``infra_error``.
        score: In [0, 1]; None for ``infra_error``.
        passed: The pass verdict; None for ``infra_error``.
        duration_s: Wall-clock seconds of the episode.
        problem: The infrastructure error, agent error or time-out that ended it, if any.
    """

    agent: str
    task_id: str
    sample: int
    status: Status
    score: float | None
    passed: bool | None
    duration_s: float
    problem: str | None


class Report(_Model):
    """Everything a report shows about one results directory.

    Attributes:
        results_dir: The directory, as given.
        suite: The suite the run was asked for ("" without a readable ``run.json``).
        samples: Samples per agent and task asked for (the largest found, without ``run.json``).
        k: The k of the pass@k column.
        agents: Agent labels, in the run's order (agents found but not configured last, sorted).
        task_ids: Task ids, in the run's order (likewise).
        leaderboard: One row per agent, best first (see :func:`sort_rows`).
        cells: One cell per (task, agent) pair with at least one episode.
        episodes: Every episode, sorted by (agent, task_id, sample).
    """

    results_dir: str
    suite: str
    samples: int
    k: int
    agents: list[str]
    task_ids: list[str]
    leaderboard: list[LeaderboardRow]
    cells: list[TaskCell]
    episodes: list[EpisodePoint]

    _index: dict[tuple[str, str], TaskCell] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any) -> None:
        self._index.update(((c.task_id, c.agent), c) for c in self.cells)

    def cell(self, task_id: str, agent: str) -> TaskCell | None:
        """The cell of ``agent`` on ``task_id``; None when that agent has no episode of it."""
        return self._index.get((task_id, agent))


def plural(n: int, noun: str) -> str:
    """``n`` and ``noun``, with an "s" unless ``n`` is 1: ``plural(1, "sample")`` is ``"1 sample"``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def run_counts(report: Report) -> str:
    """What a report covers, e.g. ``8 episodes · 2 agents · 4 tasks · 1 sample per task``."""
    return " · ".join([plural(len(report.episodes), "episode"), plural(len(report.agents), "agent"),
                       plural(len(report.task_ids), "task"), plural(report.samples, "sample") + " per task"])


def fmt_rate(value: float | None) -> str:
    """A score or a pass rate in [0, 1] with 3 decimals; :data:`MISSING` for None."""
    return MISSING if value is None else f"{value:.3f}"


def fmt_seconds(value: float | None) -> str:
    """Seconds with 1 decimal (2 significant digits below 1 s); :data:`MISSING` for None."""
    if value is None:
        return MISSING
    return f"{value:.1f}" if value >= 1 else f"{value:.2g}"


def _read_config(results_dir: Path) -> RunConfig | None:
    """The run's ``run.json``; None when there is none.

    Raises:
        RunError: naming the file, when it exists but does not validate.
    """
    path = results_dir / "run.json"
    if not path.is_file():
        return None
    try:
        return RunConfig.model_validate_json(path.read_bytes())
    except (ValidationError, OSError) as exc:
        raise RunError(f"{path}: not a valid run configuration: {validation_summary(exc)}") from None


def read_results(results_dir: Path) -> tuple[RunConfig | None, list[RunResult]]:
    """The configuration and every result of a results directory.

    Raises:
        RunError: when the directory is missing or not a results directory, or a file in it
            does not validate (the message names the file).
    """
    if not results_dir.is_dir():
        raise RunError(f"{results_dir}: no such results directory; give the --out directory of a `repogym run`")
    return _read_config(results_dir), load_results(results_dir)


def _ordered(configured: Sequence[str], found: set[str]) -> list[str]:
    """The configured names in their order (even those without episodes yet), then the others sorted."""
    known = list(dict.fromkeys(configured))
    return known + sorted(found - set(known))


def _problem(result: RunResult) -> str | None:
    if result.status == "infra_error":
        return f"infra error: {result.infra_error}"
    if result.agent_error:
        return f"agent error: {result.agent_error}"
    return "timed out" if result.timed_out else None


def sort_rows(rows: Sequence[LeaderboardRow]) -> list[LeaderboardRow]:
    """Best first: by pass@1, then mean score (both descending; rows without either last), then name."""
    def key(row: LeaderboardRow) -> tuple[float, float, str, str]:
        return (-(row.pass_at_1 if row.pass_at_1 is not None else -1.0),
                -(row.mean_score if row.mean_score is not None else -1.0), row.agent, row.run)
    return sorted(rows, key=key)


def _rows(run: str, results: list[RunResult], agents: list[str], k: int, tasks: int) -> list[LeaderboardRow]:
    rows = []
    for stats in agent_stats(results, agents, ks=sorted({1, k})):
        rows.append(LeaderboardRow(
            run=run, agent=stats.agent, episodes=stats.episodes, graded=stats.graded, infra_errors=stats.infra_errors,
            mean_score=stats.mean_score, pass_at_1=stats.pass_at_1, k=k, pass_at_k=stats.pass_at_k.get(k),
            tasks_solved=stats.tasks_solved, tasks=tasks, mean_duration_s=stats.mean_duration_s,
        ))
    return rows


def _default_k(config: RunConfig | None, results: list[RunResult]) -> int:
    """The run's samples per task (the n of pass@n), or the most samples found."""
    if config is not None:
        return config.samples
    counts = Counter((r.agent, r.task_id) for r in results)
    return max(counts.values(), default=1)


def _check_k(k: int | None) -> None:
    if k is not None and k < 1:
        raise RunError(f"-k must be at least 1, got {k}")


def load_report(results_dir: Path, k: int | None = None) -> Report:
    """Read a results directory and compute every figure of its report.

    Args:
        results_dir: A directory written by ``repogym run``.
        k: The k of the pass@k column (default: the run's samples per task).

    Raises:
        RunError: for a missing or corrupt results directory (naming the file) or ``k < 1``.
    """
    _check_k(k)
    config, results = read_results(results_dir)
    agents = _ordered([a.label for a in config.agents] if config else [], {r.agent for r in results})
    task_ids = _ordered(config.task_ids if config else [], {r.task_id for r in results})
    k = k if k is not None else _default_k(config, results)
    by_cell: dict[tuple[str, str], list[RunResult]] = defaultdict(list)
    for result in results:
        by_cell[(result.task_id, result.agent)].append(result)
    cells = []
    for (task_id, agent), rs in sorted(by_cell.items()):
        scores = [r.score for r in rs if r.status == "graded" and r.score is not None]
        cells.append(TaskCell(task_id=task_id, agent=agent, graded=len(scores), passed=sum(1 for r in rs if r.passed),
                              infra_errors=sum(1 for r in rs if r.status == "infra_error"),
                              mean_score=sum(scores) / len(scores) if scores else None))
    episodes = [EpisodePoint(agent=r.agent, task_id=r.task_id, sample=r.sample, status=r.status, score=r.score,
                             passed=r.passed, duration_s=r.duration_s, problem=_problem(r)) for r in results]
    return Report(
        results_dir=str(results_dir), suite=config.suite if config else "",
        samples=_default_k(config, results), k=k, agents=agents, task_ids=task_ids,
        leaderboard=sort_rows(_rows(str(results_dir), results, agents, k, len(task_ids))),
        cells=cells, episodes=episodes,
    )


def leaderboard_rows(results_dirs: Sequence[Path], k: int | None = None) -> tuple[int, list[LeaderboardRow]]:
    """Leaderboard rows of every agent of several runs, best first.

    Args:
        results_dirs: Directories written by ``repogym run``.
        k: The k of the pass@k column (default: the fewest samples per task among the runs, so
            the column means the same in every row).

    Returns:
        (k, rows).

    Raises:
        RunError: as :func:`load_report`.
    """
    _check_k(k)
    loaded = [(path, *read_results(path)) for path in results_dirs]
    if k is None:
        k = min((_default_k(config, results) for _, config, results in loaded), default=1)
    rows = []
    for path, config, results in loaded:
        agents = _ordered([a.label for a in config.agents] if config else [], {r.agent for r in results})
        tasks = _ordered(config.task_ids if config else [], {r.task_id for r in results})
        rows += _rows(str(path), results, agents, k, len(tasks))
    return k, sort_rows(rows)


def pass_at_k_note(k: int) -> str:
    """What pass@k means, for this k."""
    if k == 1:
        return "pass@1: the chance that one sampled episode of a task passes, averaged over tasks."
    return (f"pass@{k}: the chance that at least one of {k} sampled episodes of a task passes, averaged over tasks; "
            "from n samples per task of which c passed, with the unbiased estimator 1 - C(n-c, k)/C(n, k) "
            f"(Chen et al., 2021). Tasks with fewer than {k} graded samples are left out of it.")


def metric_notes(k: int) -> list[str]:
    """What the leaderboard's columns mean, one sentence each (every format prints them)."""
    return [
        "score: the graded reward of an episode, in [0, 1]; mean score averages the graded episodes.",
        pass_at_k_note(1), *([pass_at_k_note(k)] if k != 1 else []),
        "tasks solved: tasks with at least one passing episode.",
        ("infra errors: episodes lost to the infrastructure (workspace, sandbox, grader, model server); "
         "they have no score and are left out of every figure, never counted as 0."),
        "s/episode: mean wall-clock seconds per graded episode, reset to grade.",
    ]
