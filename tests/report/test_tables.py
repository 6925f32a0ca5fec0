"""repogym_gym.report.tables: the figures every report format prints, checked against hand computations."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from repogym_gym.errors import RunError
from repogym_gym.report import markdown, plots, tables
from repogym_gym.report.tables import (
    LeaderboardRow,
    leaderboard_rows,
    load_report,
    sort_rows,
)
from tests.report.results_dirs import TASKS, synthetic, synthetic_run, write_run


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """3 agents (golden, partial, noop) x 4 tasks x 3 samples, with infra errors on ``delta``."""
    return synthetic_run(tmp_path / "run")


def row(report: tables.Report, agent: str) -> LeaderboardRow:
    return next(r for r in report.leaderboard if r.agent == agent)


def test_leaderboard_figures_match_hand_computed_pass_at_k(run: Path) -> None:
    report = load_report(run, k=2)
    partial = row(report, "partial")
    # alpha 1/3 passed, beta 0/3 (scores 0.5, 0.5, 0.25 do not pass), gamma 2/3; delta: 3 infra errors
    assert (partial.episodes, partial.graded, partial.infra_errors) == (12, 9, 3)
    assert partial.mean_score == pytest.approx(4.25 / 9)
    assert partial.pass_at_1 == pytest.approx((1 / 3 + 0 + 2 / 3) / 3)
    assert partial.pass_at_k == pytest.approx((2 / 3 + 0 + 1) / 3)  # pass@2 of n=3: 1 - C(n-c, 2)/C(3, 2)
    assert (partial.k, partial.tasks_solved, partial.tasks) == (2, 2, 4)
    golden = row(report, "golden")
    assert (golden.graded, golden.infra_errors, golden.mean_score, golden.pass_at_1) == (11, 1, 1.0, 1.0)
    assert golden.mean_duration_s == pytest.approx((3 * (1.0 + 1.5 + 2.0) + 1.0 + 1.5) / 11)


def test_the_default_k_is_the_runs_samples_per_task_and_pass_at_k_skips_tasks_with_fewer(run: Path) -> None:
    report = load_report(run)
    assert (report.k, report.samples) == (3, 3)
    # golden's delta has 2 graded samples: not in pass@3; partial's pass@3 is over alpha, beta, gamma
    assert row(report, "golden").pass_at_k == 1.0
    assert row(report, "partial").pass_at_k == pytest.approx(2 / 3)


def test_without_run_json_k_is_the_most_samples_found_and_names_are_sorted(run: Path) -> None:
    (run / "run.json").unlink()
    report = load_report(run)
    assert (report.k, report.suite) == (3, "")
    assert report.agents == ["golden", "noop", "partial"]
    assert report.task_ids == sorted(TASKS)


def test_infra_errors_are_counted_in_cells_but_never_scored(run: Path) -> None:
    report = load_report(run)
    only_infra = report.cell("delta", "partial")
    assert only_infra is not None
    assert (only_infra.graded, only_infra.infra_errors, only_infra.mean_score, only_infra.passed) == (0, 3, None, 0)
    mixed = report.cell("delta", "golden")
    assert mixed is not None and (mixed.graded, mixed.infra_errors, mixed.mean_score) == (2, 1, 1.0)
    assert report.cell("beta", "partial").mean_score == pytest.approx(1.25 / 3)  # type: ignore[union-attr]


def test_the_leaderboard_is_sorted_by_pass_at_1_then_mean_score(run: Path) -> None:
    assert [r.agent for r in load_report(run).leaderboard] == ["golden", "partial", "noop"]
    base = {"run": "r", "episodes": 1, "graded": 1, "infra_errors": 0, "k": 1, "pass_at_k": None, "tasks_solved": 0,
            "tasks": 1, "mean_duration_s": 1.0}
    rows = [LeaderboardRow(agent="none", mean_score=None, pass_at_1=None, **base),
            LeaderboardRow(agent="low", mean_score=0.2, pass_at_1=0.0, **base),
            LeaderboardRow(agent="high", mean_score=0.9, pass_at_1=0.0, **base),
            LeaderboardRow(agent="best", mean_score=0.5, pass_at_1=0.5, **base)]
    assert [r.agent for r in sort_rows(rows)] == ["best", "high", "low", "none"]


def test_agents_and_tasks_follow_run_json_and_a_configured_agent_without_episodes_gets_a_row(tmp_path: Path) -> None:
    out = write_run(tmp_path / "run", [synthetic("b", "t2"), synthetic("a", "t1", score=0.0)],
                    agents=["b", "a", "idle"], task_ids=["t2", "t1", "t3"])
    report = load_report(out)
    assert report.agents == ["b", "a", "idle"] and report.task_ids == ["t2", "t1", "t3"]
    idle = row(report, "idle")
    assert (idle.episodes, idle.mean_score, idle.pass_at_1, idle.tasks) == (0, None, None, 3)
    assert report.leaderboard[-1].agent == "idle"
    assert report.cell("t3", "a") is None


def test_episode_problems_name_infra_errors_agent_errors_and_time_outs(tmp_path: Path) -> None:
    out = write_run(tmp_path / "run", [
        synthetic("a", "t", 0, infra_error="SandboxError: gone"),
        synthetic("a", "t", 1, 0.0, agent_error="ValueError: bad"),
        synthetic("a", "t", 2, 0.0).model_copy(update={"timed_out": True}),
        synthetic("a", "t", 3, 1.0),
    ])
    assert [e.problem for e in load_report(out).episodes] == [
        "infra error: SandboxError: gone", "agent error: ValueError: bad", "timed out", None]


def test_leaderboard_rows_of_several_runs_use_the_fewest_samples_as_default_k(run: Path, tmp_path: Path) -> None:
    other = write_run(tmp_path / "other", [synthetic("golden", "t1", k) for k in range(2)], samples=2)
    k, rows = leaderboard_rows([run, other])
    assert k == 2
    assert [(r.run, r.agent) for r in rows] == [(str(other), "golden"), (str(run), "golden"), (str(run), "partial"),
                                                (str(run), "noop")]
    assert all(r.k == 2 for r in rows)
    assert leaderboard_rows([run, other], k=1)[0] == 1


def test_an_empty_results_directory_has_no_episodes_and_agents_without_figures(tmp_path: Path) -> None:
    out = write_run(tmp_path / "run", [], agents=["golden"], task_ids=["t1"])
    report = load_report(out)
    assert report.episodes == [] and report.cells == []
    assert row(report, "golden").mean_score is None


def test_k_below_1_is_a_run_error(run: Path) -> None:
    with pytest.raises(RunError, match="-k must be at least 1, got 0"):
        load_report(run, k=0)


def test_a_corrupt_run_json_is_a_run_error_naming_it(run: Path) -> None:
    (run / "run.json").write_text('{"suite": 1}')
    with pytest.raises(RunError, match=r"run\.json: not a valid run configuration"):
        load_report(run)


def test_a_missing_directory_is_a_run_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"nowhere: no such results directory"):
        load_report(tmp_path / "nowhere")


@pytest.mark.parametrize("module", [tables, markdown, plots], ids=lambda m: m.__name__)
def test_docstring_examples_run(module: object) -> None:
    failures, _ = doctest.testmod(module, verbose=False)  # type: ignore[arg-type]
    assert failures == 0
