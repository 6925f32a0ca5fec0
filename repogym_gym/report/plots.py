"""The report's plots, drawn with matplotlib's Agg canvas (no display, no pyplot state) as PNG bytes.

- :func:`score_histograms`: the score distribution of each agent (one panel per agent);
- :func:`task_scores`: mean score per task, one bar per agent (horizontal, so long task ids
  stay readable; at most :data:`MAX_PLOT_TASKS` tasks, the report's table has them all);
- :func:`episode_times`: seconds per episode of each agent, a box over the episodes as points.

Infrastructure-error episodes have no score: they are absent from the score plots (a task an
agent has only infra errors on is marked "infra error", not drawn as 0) and drawn as crosses
in the time plot.
"""

from __future__ import annotations

import io
import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from repogym_gym.report.tables import Report

__all__ = ["MAX_PLOT_TASKS", "agent_colour", "all_plots", "episode_times", "label", "plotted_tasks", "score_histograms",
           "task_scores", "task_scores_figure"]

#: Most tasks drawn in the per-task plot, and most bars (tasks × agents) it draws.
MAX_PLOT_TASKS, MAX_PLOT_BARS = 40, 120
#: Longest label drawn (task ids, agent labels), characters.
MAX_LABEL = 36
#: Image resolution, dots per inch.
DPI = 100
#: Colour-blind-safe colours: passed, failed, infra error.
PASSED, FAILED, INFRA = "#1b9e77", "#d95f02", "#7570b3"
#: Boxplot's horizontal switch: ``orientation`` since matplotlib 3.10 (``vert`` is deprecated there).
_HORIZONTAL: dict[str, Any] = ({"orientation": "horizontal"} if tuple(int(p) for p in matplotlib.__version__.split(".")[:2]) >= (3, 10)
                                  else {"vert": False})
_AGENT_COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"]


def agent_colour(index: int) -> str:
    """The colour of the ``index``-th agent (the same in every plot)."""
    return _AGENT_COLOURS[index % len(_AGENT_COLOURS)]


def label(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` as literal matplotlib text: cut to ``limit`` characters with "…", ``$`` not read as maths.

    Example:
        >>> label("price-$5-" + "x" * 40, 12)
        'price-\\\\$5-xx…'
    """
    short = text if len(text) <= limit else text[:limit - 1] + "…"
    short = short.replace("$", r"\$")
    return "\u200b" + short if short.startswith("_") else short  # a leading "_" hides a legend entry


@contextmanager
def _quiet_glyphs() -> Iterator[None]:
    """Task ids may hold characters the font lacks; a box is drawn, and no warning escapes."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph .* missing from", category=UserWarning)
        warnings.filterwarnings("ignore", message=r"Matplotlib currently does not support", category=UserWarning)
        yield


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    with _quiet_glyphs():
        FigureCanvasAgg(fig)
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def score_histograms(report: Report) -> bytes:
    """PNG: one histogram of graded-episode scores per agent (bins of 0.1 on [0, 1], shared axes)."""
    agents = report.agents or ["(none)"]
    cols = min(3, len(agents))
    rows = math.ceil(len(agents) / cols)
    fig = Figure(figsize=(3.8 * cols + 0.6, 2.6 * rows + 0.5), layout="constrained")
    fig.get_layout_engine().set(wspace=0.06, hspace=0.08)  # type: ignore[union-attr, call-arg]  # constrained
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    bins = np.linspace(0.0, 1.0, 11)
    for i, ax in enumerate(axes.flat):
        if i >= len(agents):
            ax.set_visible(False)
            continue
        agent = agents[i]
        scores = [e.score for e in report.episodes if e.agent == agent and e.score is not None]
        infra = sum(1 for e in report.episodes if e.agent == agent and e.status == "infra_error")
        ax.hist(scores, bins=bins, color=agent_colour(i), edgecolor="white")
        note = f"{len(scores)} graded" + (f", {infra} infra errors (not shown)" if infra else "")
        ax.set_title(f"{label(agent, 28)}\n{note}", fontsize=9)
        if not scores:
            ax.text(0.5, 0.5, "no graded episodes", transform=ax.transAxes, ha="center", va="center", color="grey")
        ax.set_xlim(0, 1)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0", "0.25", "0.5", "0.75", "1"])
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("score (0 = fail, 1 = full marks)")
    for ax in axes[:, 0]:
        ax.set_ylabel("episodes")
    return _png(fig)


def plotted_tasks(report: Report) -> list[str]:
    """The tasks :func:`task_scores` draws: the first ones of the run, at most :data:`MAX_PLOT_TASKS`
    and :data:`MAX_PLOT_BARS` bars (but at least 10 tasks)."""
    return report.task_ids[:max(10, min(MAX_PLOT_TASKS, MAX_PLOT_BARS // max(1, len(report.agents))))]


def task_scores_figure(report: Report) -> Figure:
    """The figure of :func:`task_scores`: a bar per (task, agent); a bar that cannot be seen (a
    score of 0, infra errors only, not run) is named in words with its agent, in the agent's colour."""
    tasks, agents = plotted_tasks(report), report.agents
    per_task = 0.18 * max(1, len(agents)) + 0.16
    fig = Figure(figsize=(10, min(22.0, max(2.6, 1.3 + per_task * len(tasks)))), layout="constrained")
    ax = fig.subplots()
    height = 0.8 / max(1, len(agents))
    y = np.arange(len(tasks))
    for j, agent in enumerate(agents):
        offsets = y - 0.4 + height * (j + 0.5)
        colour, name = agent_colour(j), label(agent, 28)
        cells = [report.cell(task_id, agent) for task_id in tasks]
        values = [cell.mean_score if cell is not None and cell.mean_score is not None else 0.0 for cell in cells]
        shown = []
        for t, (cell, value) in enumerate(zip(cells, values, strict=False)):
            if cell is None or cell.graded == 0:
                what = "not run" if cell is None else "infra error (no score)"
                ax.text(0.005, offsets[t], f"{name}: {what}", va="center", fontsize=8, color=colour)
                shown.append("")
            elif value == 0:
                ax.text(0.005, offsets[t], f"{name}: 0.00", va="center", fontsize=8, color=colour)
                shown.append("")
            else:
                shown.append(f"{value:.2f}")
        bars = ax.barh(offsets, values, height=height * 0.92, color=colour, label=name)
        ax.bar_label(bars, shown, padding=2, fontsize=8)
    ax.set_yticks(y, [label(t) for t in tasks], fontsize=9)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.08)
    ax.set_xticks(np.linspace(0, 1, 6))
    ax.set_xlabel("mean score of the graded samples (0 = fail, 1 = full marks)")
    ax.grid(axis="x", alpha=0.3)
    if agents:
        fig.legend(loc="outside upper center", ncol=min(len(agents), 6), fontsize=9, frameon=False)
    return fig


def task_scores(report: Report) -> bytes:
    """PNG: mean score of each task (rows) per agent (one bar each), tasks in the run's order."""
    return _png(task_scores_figure(report))


def _jitter(n: int) -> np.ndarray:
    """Evenly spread offsets in [-0.25, 0.25] (deterministic, unlike random jitter)."""
    return np.linspace(-0.25, 0.25, n) if n > 1 else np.zeros(n)


def episode_times(report: Report) -> bytes:
    """PNG: seconds per episode, one row per agent (box over graded episodes, every episode as a point)."""
    agents = report.agents
    fig = Figure(figsize=(10, max(2.4, 1.3 + 0.55 * len(agents))), layout="constrained")
    ax = fig.subplots()
    durations = [e.duration_s for e in report.episodes]
    positive = [d for d in durations if d > 0]
    log = bool(positive) and max(positive) / min(positive) > 100
    handles: dict[str, Any] = {}
    for i, agent in enumerate(agents):
        mine = [e for e in report.episodes if e.agent == agent]
        graded = [e.duration_s for e in mine if e.status == "graded"]
        if graded:
            ax.boxplot([graded], positions=[i], widths=0.6, showfliers=False,
                       medianprops={"color": "black"}, boxprops={"color": "#888888"},
                       whiskerprops={"color": "#888888"}, capprops={"color": "#888888"}, **_HORIZONTAL)
        offsets = _jitter(len(mine))
        for kind, colour, marker, pick in (
            ("passed", PASSED, "o", lambda e: e.passed is True),
            ("failed", FAILED, "o", lambda e: e.status == "graded" and not e.passed),
            ("infra error (no score)", INFRA, "x", lambda e: e.status == "infra_error"),
        ):
            idx = [n for n, e in enumerate(mine) if pick(e)]
            if idx:
                handles[kind] = ax.scatter([max(mine[n].duration_s, 1e-3) if log else mine[n].duration_s for n in idx],
                                           i + offsets[idx], s=18, color=colour, marker=marker, alpha=0.8, zorder=3)
    if log:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.set_xlim(left=0)
    ax.set_yticks(range(len(agents)), [label(a, 28) for a in agents], fontsize=9)
    ax.set_ylim(len(agents) - 0.5, -0.5)
    ax.set_xlabel("wall-clock seconds per episode (reset to grade)" + (", log scale" if log else ""))
    ax.grid(axis="x", alpha=0.3)
    if handles:
        kinds = [k for k in ("passed", "failed", "infra error (no score)") if k in handles]
        fig.legend([handles[k] for k in kinds], kinds, loc="outside upper center", ncol=3, fontsize=8, frameon=False)
    return _png(fig)


def all_plots(report: Report) -> Sequence[tuple[str, str, bytes]]:
    """(title, caption, PNG) of every plot, in page order."""
    shown = plotted_tasks(report)
    more = f" Showing the first {len(shown)} of {len(report.task_ids)} tasks; the table below lists all." \
        if len(shown) < len(report.task_ids) else ""
    return [
        ("Score distribution", "Scores of the graded episodes of each agent, in bins of 0.1.", score_histograms(report)),
        ("Mean score per task", "Mean score of each agent's graded samples of each task." + more, task_scores(report)),
        ("Time per episode", ("Each point is one episode; the box spans the middle half of the graded episodes, "
                              "the line is their median."), episode_times(report)),
    ]
