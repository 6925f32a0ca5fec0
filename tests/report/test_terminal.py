"""repogym_gym.report.terminal: Rich tables that print results text literally."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from repogym_gym.errors import RunError
from repogym_gym.report import load_report, print_leaderboard, print_report
from repogym_gym.report.tables import leaderboard_rows
from repogym_gym.report.terminal import run_names
from tests.report.results_dirs import synthetic, synthetic_run, write_run


def rendered(fn, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    console = Console(record=True, width=220, color_system=None)
    fn(*args, console, **kwargs)
    return console.export_text()


def test_the_report_prints_leaderboard_per_task_cells_and_notes(tmp_path: Path) -> None:
    text = rendered(print_report, load_report(synthetic_run(tmp_path / "run")))
    assert "36 episodes, 3 agents, 4 tasks, 3 samples per task" in text
    for header in ("episodes", "graded", "infra errors", "mean score", "pass@1", "pass@3", "tasks solved", "s/episode"):
        assert header in text
    lines = text.splitlines()
    assert next(line for line in lines if "│ partial" in line).split() == \
        ["│", "partial", "│", "12", "│", "9", "│", "3", "│", "0.472", "│", "0.333", "│", "0.667", "│", "2/4", "│", "2.5", "│"]
    delta = next(line for line in lines if "│ delta" in line)
    assert "1.00 2/2 passed +1 infra" in delta and "infra error x3" in delta
    assert "unbiased estimator" in text


def test_a_results_file_with_markup_in_its_task_id_is_refused_not_rendered(tmp_path: Path) -> None:
    """Task ids and labels name directories and table cells: RunResult allows only [A-Za-z0-9._-]."""
    out = write_run(tmp_path / "run", [synthetic("a", "t", 0, 1.0)])
    path = next((out / "results").glob("*/*/*.json"))
    path.write_text(path.read_text().replace('"task_id": "t"', '"task_id": "[bold]t[red]x"'))
    assert "[bold]" in path.read_text()
    with pytest.raises(RunError, match=r"0\.json: not a valid RunResult"):
        load_report(out)


def test_the_leaderboard_of_several_runs_has_a_run_column(tmp_path: Path) -> None:
    first = write_run(tmp_path / "first", [synthetic("a", "t", 0, 1.0)])
    second = write_run(tmp_path / "second", [synthetic("a", "t", 0, 0.0)])
    k, rows = leaderboard_rows([second, first])
    text = rendered(print_leaderboard, rows, k, show_run=True)
    run_lines = [line for line in text.splitlines() if "first" in line or "second" in line]
    assert len(run_lines) == 2 and "first" in run_lines[0] and "second" in run_lines[1]  # pass@1 1.0 ranks first
    assert str(tmp_path) not in text  # the directories' names are unique: no full paths
    assert "pass@1: the chance that one sampled episode" in text


def test_runs_whose_names_clash_are_shown_by_path() -> None:
    assert run_names(["a/run", "b/run"]) == {"a/run": "a/run", "b/run": "b/run"}
    assert run_names(["a/x", "b/y/"]) == {"a/x": "x", "b/y/": "y"}


def test_an_empty_leaderboard_says_so() -> None:
    assert "no agents" in rendered(print_leaderboard, [], 1)


def test_an_empty_run_says_so(tmp_path: Path) -> None:
    assert "no episodes recorded yet" in rendered(print_report, load_report(write_run(tmp_path / "run", [])))


def test_one_sample_is_counted_in_the_singular(tmp_path: Path) -> None:
    text = rendered(print_report, load_report(write_run(tmp_path / "run", [synthetic("a", "t", 0, 1.0)])))
    assert "1 episode, 1 agent, 1 task, 1 sample per task" in text
