"""Running agents over tasks: results models, pass@k, and the serial / thread / Ray runners."""

from repogym_gym.runner.episode import EpisodeJob, EpisodeRecord, run_job
from repogym_gym.runner.models import AgentStats, RunConfig, RunResult, RunSummary, load_results, result_path
from repogym_gym.runner.run import run_suite, run_task
from repogym_gym.runner.stats import agent_stats, pass_at_k

__all__ = [
    "AgentStats",
    "EpisodeJob",
    "EpisodeRecord",
    "RunConfig",
    "RunResult",
    "RunSummary",
    "agent_stats",
    "load_results",
    "pass_at_k",
    "result_path",
    "run_job",
    "run_suite",
    "run_task",
]
