"""Reports as GitHub-flavoured Markdown: the leaderboard, per-task scores, and the problems.

Text from results (task ids, agent labels, error messages) is escaped so it can neither break
a table nor inject HTML or links into the rendered page.
"""

from __future__ import annotations

import re

from repogym_gym.report.tables import (
    MISSING,
    Report,
    TaskCell,
    fmt_rate,
    fmt_seconds,
    metric_notes,
    run_counts,
)

__all__ = ["md_text", "render_markdown"]

#: Characters with a meaning in Markdown or in the HTML a Markdown renderer passes through.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~])")
#: Longest error message quoted in the problems table, characters.
MAX_MESSAGE = 300
#: Most problem episodes listed.
MAX_PROBLEMS = 50


def md_text(text: str) -> str:
    """``text`` as literal Markdown table-cell content: one line, ``&<>`` as HTML entities, other
    specials backslash-escaped.

    Example:
        >>> md_text("a|b <i>")
        'a\\\\|b &lt;i&gt;'
    """
    one_line = " ".join(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").split())
    return _SPECIAL.sub(r"\\\1", one_line)


def _table(header: list[str], rows: list[list[str]], right: int = 1) -> list[str]:
    """A GFM table; columns from ``right`` on are right-aligned."""
    align = ["---" if i < right else "---:" for i in range(len(header))]
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |",
            *("| " + " | ".join(row) + " |" for row in rows)]


def _cell(cell: TaskCell | None) -> str:
    if cell is None:
        return MISSING
    if cell.graded == 0:
        return f"infra error ×{cell.infra_errors}"
    text = f"{cell.mean_score or 0.0:.2f} ({cell.passed}/{cell.graded} passed)"
    return text + (f" +{cell.infra_errors} infra error" if cell.infra_errors else "")


def render_markdown(report: Report) -> str:
    """The report as a Markdown document (ends with a newline)."""
    k = report.k
    lines = [f"# repogym report: {md_text(report.results_dir)}", "",
             run_counts(report) + (f" · suite `{report.suite.replace('`', '')}`" if report.suite else ""), ""]
    if not report.episodes:
        return "\n".join([*lines, "No episodes recorded yet.", ""])
    header = ["agent", "episodes", "graded", "infra errors", "mean score", "pass@1", *([f"pass@{k}"] if k != 1 else []),
              "tasks solved", "s/episode"]
    rows = [[md_text(r.agent), str(r.episodes), str(r.graded), str(r.infra_errors), fmt_rate(r.mean_score),
             fmt_rate(r.pass_at_1), *([fmt_rate(r.pass_at_k)] if k != 1 else []), f"{r.tasks_solved}/{r.tasks}",
             fmt_seconds(r.mean_duration_s)] for r in report.leaderboard]
    lines += ["## Leaderboard", "", *_table(header, rows), "", *(f"- {note}" for note in metric_notes(k)), ""]
    rows = [[md_text(task_id), *(_cell(report.cell(task_id, agent)) for agent in report.agents)]
            for task_id in report.task_ids]
    lines += ["## Mean score per task", "", "Mean score of the graded samples (passing/graded samples).", "",
              *_table(["task", *(md_text(a) for a in report.agents)], rows, right=len(report.agents) + 1), ""]
    problems = [e for e in report.episodes if e.problem]
    if problems:
        rows = [[md_text(e.agent), md_text(e.task_id), str(e.sample), md_text(_short(e.problem or ""))]
                for e in problems[:MAX_PROBLEMS]]
        lines += ["## Episodes with problems", "", *_table(["agent", "task", "sample", "problem"], rows, right=4)]
        if len(problems) > MAX_PROBLEMS:
            lines.append(f"\n… and {len(problems) - MAX_PROBLEMS} more.")
        lines.append("")
    return "\n".join(lines)


def _short(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "…"
