"""Results directories for export and report tests (not a test module).

``real_results`` runs real episodes (golden and noop through ``run_episode`` on a real task,
graded by real pytest) and files them as the runner does; ``synthetic`` builds RunResults with
chosen scores, infra errors and agent errors for the figures.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from repogym_gym.agents import GoldenAgent, NoopAgent, run_episode
from repogym_gym.agents.base import EpisodeOutcome
from repogym_gym.agents.registry import AgentSpec
from repogym_gym.gym import RepoGymEnv
from repogym_gym.results import GradeComponent, GradeResult
from repogym_gym.runner import RunConfig, RunResult, result_path
from tests.helpers import (
    CALC_SOURCE,
    GOLDEN_PATCH,
    HIDDEN_TESTS,
    VISIBLE_TESTS,
    tiny_spec,
)


def result_from_outcome(outcome: EpisodeOutcome, agent: str, sample: int, seed: int, out: Path) -> RunResult:
    """A RunResult of a real episode, as the runner files it (trajectory path relative to ``out``)."""
    info = outcome.info
    trajectory = info.get("trajectory_path")
    common: dict[str, Any] = {
        "agent": agent, "task_id": outcome.task_id, "sample": sample, "seed": seed, "steps": outcome.steps,
        "terminated": outcome.terminated, "truncated": outcome.truncated, "timed_out": outcome.timed_out,
        "agent_error": outcome.agent_error, "duration_s": outcome.duration_s,
        "trajectory": str(Path(trajectory).relative_to(out)) if trajectory else None, "worker": "serial",
    }
    if info.get("infra_error"):
        return RunResult(status="infra_error", infra_error=info["infra_error"], **common)
    return RunResult(status="graded", score=info["score"], passed=info["passed"], reward=outcome.total_reward,
                     grade=GradeResult.model_validate(info["grade"]), **common)


def write_run(out: Path, results: Iterable[RunResult], *, agents: list[str] | None = None,
              task_ids: list[str] | None = None, samples: int = 1, suite: str = "suite") -> Path:
    """File ``results`` under ``out`` and write its run.json (agent labels typed as ``scripted``
    unless they are a registered type)."""
    results = list(results)
    for result in results:
        path = result_path(out, result.agent, result.task_id, result.sample)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(result.model_dump_json(indent=1))
    labels = agents if agents is not None else sorted({r.agent for r in results})
    specs = [AgentSpec(type=label if label in ("golden", "noop") else "scripted", label=label) for label in labels]
    tasks = task_ids if task_ids is not None else sorted({r.task_id for r in results})
    config = RunConfig(suite=suite, task_ids=tasks, agents=specs, samples=samples, backend="serial")
    (out / "results").mkdir(parents=True, exist_ok=True)
    (out / "run.json").write_text(config.model_dump_json(indent=1))
    return out


def tiny_task_dir(root: Path) -> Path:
    """Write the tiny task of tests/helpers.py (``tiny-calc``: add() subtracts) at ``root``."""
    files = {"repo/calc/__init__.py": CALC_SOURCE, "repo/tests/test_calc.py": VISIBLE_TESTS,
             "hidden/tests/test_calc_hidden.py": HIDDEN_TESTS, "solution.patch": GOLDEN_PATCH,
             "task.yaml": yaml.safe_dump(tiny_spec(), sort_keys=False)}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def real_results(out: Path, task_dir: Path) -> list[RunResult]:
    """Run golden and noop once each on the task in ``task_dir``; file them under ``out``."""
    results = []
    for label, agent in (("golden", GoldenAgent()), ("noop", NoopAgent())):
        env = RepoGymEnv(task=str(task_dir), trajectory_dir=str(out / "trajectories" / label), sandbox="local")
        try:
            outcome = run_episode(env, agent, seed=0)
        finally:
            env.close()
        results.append(result_from_outcome(outcome, label, 0, 0, out))
    write_run(out, results, agents=["golden", "noop"])
    return results


def synthetic(agent: str, task_id: str, sample: int = 0, score: float | None = 1.0, *, passed: bool | None = None,
              infra_error: str | None = None, agent_error: str | None = None, duration_s: float = 2.0,
              conversation: list[dict[str, Any]] | None = None) -> RunResult:
    """A RunResult without an episode behind it: graded with ``score``, or an infra error.

    A graded one passes when ``score == 1`` unless ``passed`` says otherwise, and carries a grade
    with one ``tests`` component and a one-line patch.
    """
    if infra_error is not None:
        return RunResult(agent=agent, task_id=task_id, sample=sample, seed=sample, status="infra_error",
                         infra_error=infra_error, attempts=3, duration_s=duration_s, conversation=conversation)
    assert score is not None
    ok = score == 1.0 if passed is None else passed
    grade = GradeResult(task_id=task_id, score=score, passed=ok, patch=f"+patch of {agent} on {task_id}\n",
                        components=[GradeComponent(name="tests", role="objective", score=score, passed=ok)])
    return RunResult(agent=agent, task_id=task_id, sample=sample, seed=sample, status="graded", score=score,
                     passed=ok, reward=score, grade=grade, steps=3, terminated=True, agent_error=agent_error,
                     duration_s=duration_s, conversation=conversation)


#: Scores of a 3-agent, 4-task, 3-sample synthetic run: agent -> task -> samples (None: infra error).
SCORES: dict[str, dict[str, list[float | None]]] = {
    "golden": {"alpha": [1.0, 1.0, 1.0], "beta": [1.0, 1.0, 1.0], "gamma": [1.0, 1.0, 1.0], "delta": [1.0, 1.0, None]},
    "partial": {"alpha": [1.0, 0.0, 0.0], "beta": [0.5, 0.5, 0.25], "gamma": [1.0, 1.0, 0.0], "delta": [None, None, None]},
    "noop": {"alpha": [0.0, 0.0, 0.0], "beta": [0.0, 0.0, 0.0], "gamma": [0.0, 0.0, 0.0], "delta": [0.0, 0.0, 0.0]},
}
TASKS = ["alpha", "beta", "gamma", "delta"]


def synthetic_run(out: Path, scores: dict[str, dict[str, list[float | None]]] = SCORES,
                  tasks: list[str] | None = None) -> Path:
    """File a run with the given scores (durations grow with the sample index) under ``out``."""
    results = []
    for a, (agent, per_task) in enumerate(scores.items()):
        for task_id, samples in per_task.items():
            for k, score in enumerate(samples):
                duration = 1.0 + a + 0.5 * k
                results.append(synthetic(agent, task_id, k, score, duration_s=duration) if score is not None else
                               synthetic(agent, task_id, k, infra_error="SandboxError: docker daemon gone",
                                         duration_s=duration))
    samples = max(len(s) for per_task in scores.values() for s in per_task.values())
    return write_run(out, results, agents=list(scores), task_ids=tasks or list(next(iter(scores.values()))),
                     samples=samples)
