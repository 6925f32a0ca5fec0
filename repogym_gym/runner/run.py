"""``run_suite`` / ``run_task``: agents × tasks × samples, on one machine or a Ray cluster, resumable.

Each episode runs in a fresh env (a fresh workspace) with a fresh agent; sample ``i`` uses the
reset seed ``seed + i``. Results are written as the episodes finish, so a run interrupted at
any point is resumed by running the same command again with the same ``out``: episodes with
a graded result are kept, infrastructure failures are run again.

Example:
    >>> summary = run_suite("starter", ["golden", "noop"], out="runs/demo", jobs=2)   # doctest: +SKIP
    >>> [(a.agent, a.mean_score) for a in summary.agents]                             # doctest: +SKIP
    [('golden', 1.0), ('noop', 0.0)]
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from repogym_gym.agents.registry import AGENTS, AgentSpec
from repogym_gym.errors import AgentError, RunError, TaskNotFoundError
from repogym_gym.grading import reward_kind
from repogym_gym.runner.backends import Backend, execute
from repogym_gym.runner.episode import EpisodeJob
from repogym_gym.runner.models import RunConfig, RunResult, RunSummary, load_results
from repogym_gym.runner.progress import RunProgress
from repogym_gym.runner.ray_backend import check_address, import_ray
from repogym_gym.runner.stats import agent_stats
from repogym_gym.runner.store import open_run, run_lock, save_record, write_summary
from repogym_gym.sandbox import make_sandbox, warn_unconfined
from repogym_gym.task import (
    Task,
    format_validation_error,
    load_tasks,
    resolve_suite,
    resolve_task,
)

__all__ = ["resolve_agents", "resolve_tasks", "run_suite", "run_task"]

TaskSource = Sequence[Task] | str | os.PathLike[str]


def resolve_tasks(tasks: TaskSource) -> tuple[list[Task], str]:
    """The tasks to run and the ``suite`` recorded in ``run.json`` (an absolute path).

    Args:
        tasks: Tasks; or a suite directory, a task directory, a bundled suite name or the id
            of a bundled task.

    Raises:
        TaskNotFoundError: when a name or path is none of these.
        TaskSpecError: when a task does not validate.
        RunError: when there is no task to run, or two tasks share an id.
    """
    if isinstance(tasks, (str, os.PathLike)):
        path = Path(tasks)
        if not path.exists():
            try:
                path = resolve_suite(tasks)
            except TaskNotFoundError as exc:
                try:
                    path = resolve_task(tasks).root
                except TaskNotFoundError:
                    raise TaskNotFoundError(f"{exc}; nor is it the id of a bundled task") from None
        found, suite = load_tasks(path), str(path.resolve())
    else:
        found = [resolve_task(task) for task in tasks]
        suite = os.path.commonpath([str(task.root) for task in found]) if found else ""
    if not found:
        raise RunError(f"no tasks to run in {suite or tasks!r}: no task.yaml found")
    ids = [task.id for task in found]
    if len(set(ids)) != len(ids):
        raise RunError(f"task ids must be unique within a run, got {sorted(i for i in set(ids) if ids.count(i) > 1)}")
    return found, suite


def resolve_agents(agents: Sequence[AgentSpec | str | os.PathLike[str]]) -> list[AgentSpec]:
    """AgentSpecs for agent types, agent files or specs; each built once to fail early.

    Raises:
        AgentNotFoundError: for a name that is neither an agent type nor a file.
        AgentError: for an agent file or options that do not build.
        RunError: when no agent is given or two agents share a label.
    """
    specs = [a if isinstance(a, AgentSpec) else AgentSpec.parse(os.fspath(a)) for a in agents]
    if not specs:
        raise RunError("no agents given; name at least one (e.g. --agent golden)")
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        twice = sorted(label for label in set(labels) if labels.count(label) > 1)
        raise RunError(f"agent labels must be unique within a run, got {twice} more than once; "
                       "give each a distinct 'label' in an agent file")
    for spec, given in zip(specs, agents, strict=True):
        try:
            built = spec.build()
        except AgentError as exc:
            if isinstance(given, AgentSpec) or os.fspath(given) in AGENTS:
                raise
            raise AgentError(f"{os.fspath(given)}: {exc}") from None  # name the agent file
        close = getattr(built, "close", None)
        if callable(close):
            close()
    return specs


def _untrusted_agents(specs: Sequence[AgentSpec]) -> list[str]:
    """Labels of the agents whose commands are not ``trusted`` (each built and closed once)."""
    labels = []
    for spec in specs:
        built = spec.build()
        if not getattr(built, "trusted", False):
            labels.append(spec.label)
        close = getattr(built, "close", None)
        if callable(close):
            close()
    return labels


def run_suite(tasks: TaskSource, agents: Sequence[AgentSpec | str], *, out: str | os.PathLike[str],
              samples: int = 1, seed: int = 0, jobs: int = 1, backend: Backend = "thread",
              ray_address: str | None = None, time_limit_s: float | None = None, max_retries: int = 2,
              retry_backoff_s: float = 1.0, progress: bool = False,
              on_result: Callable[[RunResult], None] | None = None,
              cache_dir: str | os.PathLike[str] | None = None, sandbox: str = "auto",
              calibration: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
              reward: str | None = None) -> RunSummary:
    """Run every agent on every task ``samples`` times and write the results under ``out``.

    Args:
        tasks: Tasks, or a suite directory, a task directory, a bundled suite name (``starter``)
            or a bundled task id.
        agents: AgentSpecs, agent types (``golden``) or agent YAML/JSON files.
        out: The results directory (layout in :mod:`repogym_gym.runner.models`). If it holds
            a run already, that run is resumed: it must have the same suite, tasks, agents,
            samples and seed; episodes with a graded result are not run again.
        samples: Episodes per agent and task (``k``; the ``n`` of pass@k).
        seed: Base reset seed; sample ``i`` uses ``seed + i``.
        jobs: Concurrent episodes (threads, or Ray tasks in flight).
        backend: ``serial``, ``thread`` or ``ray`` (see :mod:`repogym_gym.runner.ray_backend`
            for what every Ray node needs).
        ray_address: Ray cluster address (None: an initialised Ray, else a local one).
        time_limit_s: Wall-clock seconds per episode attempt; past it the episode is truncated
            and graded as it stands (``timed_out=True``). None: no limit.
        max_retries: Retries of an episode after an infrastructure failure.
        retry_backoff_s: Seconds before the first retry, doubling for each further one.
        progress: Show a progress bar with the running mean score on stderr.
        on_result: Called in the calling thread with each new RunResult once its files are
            written (not for resumed episodes).
        cache_dir: Baseline cache directory (default ``$REPOGYM_CACHE_DIR`` or the user
            cache); Ray tasks get it as ``REPOGYM_CACHE_DIR``.
        reward: The reward kind every episode is graded by (None: each task's default); a task that does
            not offer it is a RunError before any episode runs.
        calibration: Task id -> reward kind -> ``{"noop", "golden"}`` scores (``repogym validate --json``'s
            ``calibration``), written into each episode's reward details.
        sandbox: Where commands and grading run: ``auto`` (a task's ``environment.sandbox``
            when it names one; else the local sandbox for trusted agents such as golden, noop
            and scripted, and for the others bubblewrap where it runs, else local with an
            :class:`~repogym_gym.errors.UnconfinedWarning`), or a sandbox name (``local``,
            ``bwrap``, ``docker``; ``local`` warns once per untrusted agent). Each result
            records the sandbox its commands really ran in.

    Returns:
        The run summary, also written to ``out/summary.json``.

    Raises:
        TaskNotFoundError, TaskSpecError: for tasks that cannot be found or loaded.
        AgentNotFoundError, AgentError: for an unknown or misconfigured agent.
        RunError: for bad options, a results directory holding a different run, or a Ray
            backend that is missing or unreachable.
        SandboxUnavailableError: for an unknown sandbox, or one this machine cannot run.
    """
    start = time.monotonic()
    task_list, suite = resolve_tasks(tasks)
    specs = resolve_agents(agents)
    if backend not in ("serial", "thread", "ray"):
        raise RunError(f"backend must be 'serial', 'thread' or 'ray', got {backend!r}")
    if backend == "ray":  # fail before anything is written
        import_ray()
        if ray_address:
            check_address(ray_address)
    if sandbox != "auto":
        make_sandbox(sandbox).close()  # an unknown or unavailable sandbox fails before anything is written
    if sandbox == "local":
        for label in _untrusted_agents(specs):
            warn_unconfined(f"agent {label!r} runs with sandbox='local'", stacklevel=2)
    if not retry_backoff_s >= 0:
        raise RunError(f"retry_backoff_s must be a number of seconds >= 0, got {retry_backoff_s!r}")
    try:
        config = RunConfig(suite=suite, task_ids=[t.id for t in task_list], agents=specs, samples=samples, seed=seed,
                           time_limit_s=time_limit_s, max_retries=max_retries, backend=backend, jobs=jobs,
                           sandbox=sandbox, reward=reward)
        for task in task_list if reward is not None else ():
            reward_kind(task, reward)  # a kind a task does not offer: refused before any episode runs
    except ValidationError as exc:
        raise RunError(format_validation_error(exc, "run options")) from None
    except ValueError as exc:  # a reward kind a task does not offer
        raise RunError(str(exc)) from None
    out = Path(out)
    with run_lock(out):  # one run per --out; a second one is refused, a killed one leaves no lock
        previous = open_run(out, config)
        cache = os.fspath(cache_dir) if cache_dir is not None else None
        results: dict[tuple[str, str, int], RunResult] = {}
        todo: list[EpisodeJob] = []
        for spec in specs:
            for task in task_list:
                for sample in range(samples):
                    old = previous.get((spec.label, task.id, sample))
                    if old is not None and old.status == "graded":
                        results[old.key] = old
                        continue
                    todo.append(EpisodeJob(task_dir=str(task.root), task_id=task.id, agent=spec, sample=sample,
                                           seed=seed + sample, time_limit_s=time_limit_s, max_retries=max_retries,
                                           retry_backoff_s=retry_backoff_s, cache_dir=cache, backend=backend,
                                           sandbox=sandbox, reward=reward))
        resumed = len(results)
        bar = RunProgress(total=resumed + len(todo), enabled=progress)
        for result in results.values():
            bar.add(result)
        with bar:
            for record in execute(todo, backend=backend, workers=jobs, ray_address=ray_address):
                result = save_record(out, record, previous.get(record.result.key), calibration)
                results[result.key] = result
                bar.add(result)
                if on_result is not None:
                    on_result(result)
        ordered = sorted(results.values(), key=lambda r: r.key)
        stats = agent_stats(ordered, agents=[s.label for s in specs], ks=sorted({1, samples}))
        summary = RunSummary(config=config, episodes=len(ordered), agents=stats, wall_s=time.monotonic() - start,
                             resumed=resumed)
        write_summary(out, summary)
        return summary


def run_task(task: Task | str | os.PathLike[str], agent: AgentSpec | str, *, out: str | os.PathLike[str],
             samples: int = 1, **options: Any) -> list[RunResult]:
    """Run one agent on one task ``samples`` times; :func:`run_suite` for a single pair.

    Args:
        task: A Task, a task directory or a bundled task id.
        agent: An AgentSpec, an agent type or an agent file.
        out: The results directory.
        samples: Episodes.
        **options: Any other keyword argument of :func:`run_suite`.

    Returns:
        The episodes' results (resumed ones included), by sample.

    Raises:
        The errors of :func:`run_suite`.
    """
    the_task = resolve_task(task)
    spec = agent if isinstance(agent, AgentSpec) else AgentSpec.parse(os.fspath(agent))
    run_suite([the_task], [spec], out=out, samples=samples, **options)
    return [r for r in load_results(Path(out)) if (r.agent, r.task_id) == (spec.label, the_task.id)]
