"""pass@k and per-agent figures over RunResults.

pass@k is the unbiased estimator of Chen et al. (2021), "Evaluating Large Language Models
Trained on Code", eq. 1: with ``n`` samples of which ``c`` passed,
``pass@k = 1 - C(n-c, k) / C(n, k)``, computed as a product to stay exact for large ``n``.

Example:
    >>> pass_at_k(n=5, c=1, k=1)
    0.2
    >>> pass_at_k(n=2, c=1, k=2)
    1.0
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from repogym_gym.runner.models import AgentStats, RunResult

__all__ = ["agent_stats", "pass_at_k"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of ``k`` samples drawn from ``n`` (``c`` passing) passes.

    Raises:
        ValueError: unless ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    failing = 1.0
    for i in range(n - c + 1, n + 1):
        failing *= 1.0 - k / i
    return 1.0 - failing


def agent_stats(results: Iterable[RunResult], agents: Sequence[str] | None = None,
                ks: Sequence[int] = (1,)) -> list[AgentStats]:
    """Per-agent figures; infra-error episodes are counted but never scored.

    Args:
        results: RunResults of any number of agents and tasks.
        agents: Agent labels in the order wanted (default: sorted labels found).
        ks: The k of each pass@k to report; a task counts towards pass@k only if it has at
            least k graded samples.
    """
    by_agent: dict[str, list[RunResult]] = defaultdict(list)
    for result in results:
        by_agent[result.agent].append(result)
    stats = []
    for agent in agents if agents is not None else sorted(by_agent):
        rows = by_agent.get(agent, [])
        graded = [r for r in rows if r.status == "graded"]
        per_task: dict[str, list[RunResult]] = defaultdict(list)
        for r in graded:
            per_task[r.task_id].append(r)

        def mean_pass(k: int) -> float | None:
            values = [pass_at_k(len(rs), sum(1 for r in rs if r.passed), k) for rs in per_task.values() if len(rs) >= k]  # noqa: B023 - called in this iteration
            return sum(values) / len(values) if values else None

        pass_k = {k: v for k in ks if (v := mean_pass(k)) is not None}
        stats.append(AgentStats(
            agent=agent, episodes=len(rows), graded=len(graded), infra_errors=len(rows) - len(graded),
            mean_score=sum(r.score or 0.0 for r in graded) / len(graded) if graded else None,
            pass_at_1=mean_pass(1), pass_at_k=pass_k,
            tasks_solved=sum(1 for rs in per_task.values() if any(r.passed for r in rs)),
            mean_duration_s=sum(r.duration_s for r in graded) / len(graded) if graded else None,
        ))
    return stats
