"""Reports as one self-contained HTML page: tables, explanations and embedded PNG plots.

The page loads nothing: the style sheet is inline, the plots are ``data:`` URIs, there is no
script. Every text from the results (task ids, agent labels, error messages) goes through
:func:`html.escape`.
"""

from __future__ import annotations

import base64
from html import escape

from repogym_gym.report.tables import (
    MISSING,
    LeaderboardRow,
    Report,
    TaskCell,
    fmt_rate,
    fmt_seconds,
    metric_notes,
    run_counts,
)

__all__ = ["render_html"]

#: Most problem episodes listed; longest message quoted (characters).
MAX_PROBLEMS, MAX_MESSAGE = 100, 500

_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;max-width:1100px;margin:24px auto;padding:0 16px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#555;margin:0 0 12px}code{background:#f3f3f3;padding:0 3px;border-radius:3px;word-break:break-all}
table{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:right;vertical-align:top}
th{background:#f6f6f6}td.name,th.name{text-align:left;max-width:360px;overflow-wrap:break-word}
td.cell,th.cell{text-align:center;min-width:90px}.sub{display:block;font-size:12px;color:#555}
.infra{color:#5b4e9c;font-style:italic}.none{color:#999}
.scroll{overflow-x:auto}ul.notes{color:#444;font-size:14px;margin:6px 0 0;padding-left:20px}
figure{margin:16px 0}figure img{max-width:100%;height:auto;border:1px solid #eee;box-sizing:border-box;display:block}
@media (max-width:720px){figure img{max-width:none}}
figcaption{color:#555;font-size:14px}td.msg{text-align:left;font-family:ui-monospace,monospace;font-size:12px;
white-space:pre-wrap;overflow-wrap:anywhere;max-width:600px}
"""


def _leaderboard(rows: list[LeaderboardRow], k: int) -> str:
    head = ["agent", "episodes", "graded", "infra errors", "mean score", "pass@1", *([f"pass@{k}"] if k != 1 else []),
            "tasks solved", "s/episode"]
    out = ["<div class=scroll><table><thead><tr>",
           *(f'<th{" class=name" if h == "agent" else ""}>{escape(h)}</th>' for h in head),
           "</tr></thead><tbody>"]
    for r in rows:
        cells = [str(r.episodes), str(r.graded), str(r.infra_errors), fmt_rate(r.mean_score), fmt_rate(r.pass_at_1),
                 *([fmt_rate(r.pass_at_k)] if k != 1 else []), f"{r.tasks_solved}/{r.tasks}", fmt_seconds(r.mean_duration_s)]
        out.append(f"<tr><td class=name>{escape(r.agent)}</td>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _shade(score: float) -> str:
    """A background from light red (0) to light green (1)."""
    red, green = (round(250 - 60 * score), round(205 + 40 * score))
    return f"background:rgb({red},{green},{round(205 - 10 * score)})"


def _cell(cell: TaskCell | None) -> str:
    if cell is None:
        return f'<td class="cell none" title="no episode">{MISSING}</td>'
    if cell.graded == 0:
        return f'<td class="cell infra">infra error ×{cell.infra_errors}<span class=sub>no score</span></td>'
    score = cell.mean_score or 0.0
    infra = f"<span class='sub infra'>+{cell.infra_errors} infra error</span>" if cell.infra_errors else ""
    return (f'<td class=cell style="{_shade(score)}">{score:.2f}'
            f"<span class=sub>{cell.passed}/{cell.graded} passed</span>{infra}</td>")


def _tasks(report: Report) -> str:
    out = ['<div class=scroll><table><thead><tr><th class=name>task</th>',
           *(f"<th class=cell>{escape(a)}</th>" for a in report.agents), "</tr></thead><tbody>"]
    for task_id in report.task_ids:
        out.append(f"<tr><td class=name>{escape(task_id)}</td>"
                   + "".join(_cell(report.cell(task_id, a)) for a in report.agents) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _problems(report: Report) -> str:
    problems = [e for e in report.episodes if e.problem]
    if not problems:
        return "<p>None: every episode was graded without an agent error or a time-out.</p>"
    out = [("<div class=scroll><table><thead><tr><th class=name>agent</th><th class=name>task</th><th>sample</th>"
            "<th class=name>problem</th></tr></thead><tbody>")]
    for e in problems[:MAX_PROBLEMS]:
        message = e.problem or ""
        message = message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE - 1] + "…"
        out.append(f"<tr><td class=name>{escape(e.agent)}</td><td class=name>{escape(e.task_id)}</td>"
                   f"<td>{e.sample}</td><td class=msg>{escape(message)}</td></tr>")
    out.append("</tbody></table></div>")
    if len(problems) > MAX_PROBLEMS:
        out.append(f"<p>… and {len(problems) - MAX_PROBLEMS} more (see the RunResult files).</p>")
    return "".join(out)


def _figures(report: Report) -> str:
    from repogym_gym.report.plots import (
        all_plots,  # matplotlib is imported only when a page is drawn
    )

    out = []
    for title, caption, png in all_plots(report):
        data = base64.b64encode(png).decode("ascii")
        out.append(f"<figure><div class=scroll><img src=\"data:image/png;base64,{data}\" alt=\"{escape(title)}\"></div>"
                   f"<figcaption><b>{escape(title)}.</b> {escape(caption)}</figcaption></figure>")
    return "".join(out)


def render_html(report: Report) -> str:
    """The report as a self-contained HTML page."""
    suite = f" · suite <code>{escape(report.suite)}</code>" if report.suite else ""
    meta = f"<p class=meta>Results <code>{escape(report.results_dir)}</code>{suite} · {escape(run_counts(report))}</p>"
    parts = ["<!doctype html><html lang=en><head><meta charset=utf-8>",
             '<meta name=viewport content="width=device-width,initial-scale=1">',
             f"<title>repogym report: {escape(report.results_dir)}</title><style>{_STYLE}</style></head><body>",
             "<h1>repogym report</h1>", meta]
    if not report.episodes:
        parts.append("<p>No episodes recorded yet: nothing to report.</p></body></html>\n")
        return "".join(parts)
    notes = "".join(f"<li>{escape(n)}</li>" for n in metric_notes(report.k))
    parts += ["<h2>Leaderboard</h2>", "<p>Agents ranked by pass@1, then mean score.</p>",
              _leaderboard(report.leaderboard, report.k), f"<ul class=notes>{notes}</ul>",
              "<h2>Plots</h2>", _figures(report),
              "<h2>Scores per task</h2>",
              ("<p>Mean score of each agent's graded samples of each task, with passing/graded samples; "
               "cells are shaded from red (0) to green (1). Infrastructure errors are listed apart and never "
               "counted as 0.</p>"), _tasks(report),
              "<h2>Episodes with problems</h2>",
              "<p>Infrastructure errors (no score), agent errors and time-outs (graded as the workspace stood).</p>",
              _problems(report), "</body></html>\n"]
    return "".join(parts)
