"""repogym_gym.report.plots: labels drawn literally, plot sizes bounded, awkward runs drawn without warnings."""

from __future__ import annotations

import struct
from pathlib import Path

from repogym_gym.report import load_report
from repogym_gym.report.plots import (
    MAX_PLOT_BARS,
    agent_colour,
    episode_times,
    label,
    plotted_tasks,
    score_histograms,
    task_scores,
    task_scores_figure,
)
from tests.report.results_dirs import synthetic, write_run


def png_height(png: bytes) -> int:
    return struct.unpack(">I", png[20:24])[0]


def test_labels_are_cut_with_an_ellipsis_and_never_read_as_maths_or_hidden() -> None:
    assert label("x" * 50, 10) == "x" * 9 + "…"
    assert label("cost-$1-$2") == r"cost-\$1-\$2"
    assert label("_private") == "\u200b_private"  # matplotlib hides legend entries starting with "_"


def test_the_per_task_plot_draws_fewer_tasks_when_there_are_many_agents(tmp_path: Path) -> None:
    agents = [f"agent{i}" for i in range(10)]
    tasks = [f"t{i:02d}" for i in range(30)]
    out = write_run(tmp_path / "run", [synthetic(a, t) for a in agents[:1] for t in tasks], agents=agents, task_ids=tasks)
    report = load_report(out)
    assert plotted_tasks(report) == tasks[:MAX_PLOT_BARS // 10]
    assert png_height(task_scores(report)) <= 2200


def test_durations_spanning_orders_of_magnitude_and_zero_are_drawn(tmp_path: Path) -> None:
    out = write_run(tmp_path / "run", [synthetic("a", "t", 0, 1.0, duration_s=0.0),
                                       synthetic("a", "t", 1, 0.0, duration_s=0.05),
                                       synthetic("a", "t", 2, 0.0, duration_s=900.0),
                                       synthetic("b", "t", 0, infra_error="E: x", duration_s=3.0)])
    report = load_report(out)
    for png in (episode_times(report), score_histograms(report), task_scores(report)):
        assert png.startswith(b"\x89PNG")


def test_many_agents_get_a_grid_of_histograms_of_bounded_height(tmp_path: Path) -> None:
    out = write_run(tmp_path / "run", [synthetic(f"agent-{i}", "t", 0, i / 10) for i in range(7)])
    assert png_height(score_histograms(load_report(out))) <= 900


def test_bars_that_cannot_be_seen_are_named_with_their_agent_in_its_colour(tmp_path: Path) -> None:
    """A score of 0 draws no bar: the label must say whose it is (it said a bare "0.00")."""
    out = write_run(tmp_path / "run", [synthetic("good", "t", 0, 1.0), synthetic("zero", "t", 0, 0.0),
                                       synthetic("broken", "t", 0, infra_error="E: x")],
                    agents=["good", "zero", "broken", "idle"])
    fig = task_scores_figure(load_report(out))
    texts = {t.get_text(): t.get_color() for t in fig.axes[0].texts if t.get_text()}
    assert texts == {"1.00": "black",  # the visible bar keeps its plain value
                     "zero: 0.00": agent_colour(1), "broken: infra error (no score)": agent_colour(2),
                     "idle: not run": agent_colour(3)}
