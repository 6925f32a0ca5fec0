"""repogym_gym.report.markdown: GFM tables whose cells nothing from the results can break."""

from __future__ import annotations

import re
from pathlib import Path

from repogym_gym.report import load_report, render_markdown, write_report
from repogym_gym.report.markdown import md_text
from tests.report.results_dirs import synthetic, synthetic_run, write_run

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def table_rows(text: str, header_start: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_the_leaderboard_table_has_every_column_and_agents_in_rank_order(tmp_path: Path) -> None:
    text = render_markdown(load_report(synthetic_run(tmp_path / "run")))
    rows = table_rows(text, "| agent | episodes")
    assert rows[0] == ("| agent | episodes | graded | infra errors | mean score | pass@1 | pass@3 | tasks solved | s/episode |")
    assert rows[2].startswith("| golden | 12 | 11 | 1 | 1.000 | 1.000 | 1.000 | 4/4 |")
    assert rows[3].startswith("| partial | 12 | 9 | 3 | 0.472 | 0.333 | 0.667 | 2/4 |")
    assert "pass@3: the chance that at least one of 3 sampled episodes of a task passes" in text


def test_infra_error_cells_say_so_instead_of_a_score(tmp_path: Path) -> None:
    text = render_markdown(load_report(synthetic_run(tmp_path / "run")))
    delta = next(r for r in table_rows(text, "| task |") if r.startswith("| delta"))
    assert delta == "| delta | 1.00 (2/2 passed) +1 infra error | infra error ×3 | 0.00 (0/3 passed) |"


def test_pipes_html_and_newlines_in_results_cannot_break_a_table(tmp_path: Path) -> None:
    task = "a.b"  # task ids are [A-Za-z0-9._-]; hostile text arrives through error messages
    out = write_run(tmp_path / "run", [synthetic("a", task, 0, 0.0, agent_error="E: line1\nline2 | <img src=x> a|b<script>x")])
    text = render_markdown(load_report(out))
    for header in ("| task |", "| agent | task |"):
        rows = table_rows(text, header)
        widths = {len(UNESCAPED_PIPE.findall(r)) for r in rows}
        assert len(widths) == 1, rows
    assert "<script>" not in text and "<img" not in text
    assert "a\\|b&lt;script&gt;x" in text and "line1 line2" in text


def test_md_text_escapes_markdown_specials_and_joins_lines() -> None:
    assert md_text("[link](http://x) *b* `c`\n&amp") == "\\[link\\]\\(http://x\\) \\*b\\* \\`c\\` &amp;amp"


def test_no_episodes_says_so(tmp_path: Path) -> None:
    text = render_markdown(load_report(write_run(tmp_path / "run", [], agents=["golden"])))
    assert "No episodes recorded yet." in text and "| agent |" not in text


def test_write_report_writes_report_md_beside_the_results_by_default(tmp_path: Path) -> None:
    run = synthetic_run(tmp_path / "run")
    path = write_report(load_report(run), "markdown")
    assert path == run / "report" / "report.md"
    assert path.read_text(encoding="utf-8").startswith("# repogym report: ")
