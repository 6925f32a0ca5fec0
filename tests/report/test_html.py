"""repogym_gym.report.html: a self-contained page, escaped, with readable embedded plots."""

from __future__ import annotations

import base64
import re
import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

from repogym_gym.report import load_report, render_html, write_report
from repogym_gym.report.plots import MAX_PLOT_TASKS
from tests.report.results_dirs import synthetic, synthetic_run, write_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: Anything but "/" (a task id is a directory name under results/).
# RunResult refuses task ids outside [A-Za-z0-9._-], so hostile text arrives through error messages.
HOSTILE_TASK = "a.b_c-d"


class Page(HTMLParser):
    """Collects the tags, attributes and text of a page."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def images(self) -> list[bytes]:
        srcs = [a["src"] or "" for tag, a in self.tags if tag == "img"]
        assert all(s.startswith("data:image/png;base64,") for s in srcs), [s[:40] for s in srcs]
        return [base64.b64decode(s.split(",", 1)[1]) for s in srcs]


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels, from the IHDR chunk."""
    assert png[:8] == PNG_MAGIC
    return struct.unpack(">II", png[16:24])


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Page:
    run = synthetic_run(tmp_path_factory.mktemp("html") / "run")
    return Page(render_html(load_report(run)))


def test_wide_tables_and_plots_scroll_sideways_on_a_narrow_screen_instead_of_squashing(tmp_path: Path) -> None:
    """At 420 px the leaderboard's agent column broke one letter per line and plots shrank to unreadable."""
    text = render_html(load_report(synthetic_run(tmp_path / "run")))
    tables = re.findall(r"(.{0,20})<table>", text)
    assert tables and all(before.endswith("<div class=scroll>") for before in tables), tables
    assert text.count("<div class=scroll><img ") == 3
    assert "overflow-wrap:anywhere}" not in text.split("td.msg")[0], "names may only break between words"
    assert "@media (max-width:720px){figure img{max-width:none}}" in text


def test_the_header_counts_in_the_singular_for_one(tmp_path: Path) -> None:
    text = render_html(load_report(write_run(tmp_path / "run", [synthetic("a", "t", 0, 1.0)])))
    assert "1 episode · 1 agent · 1 task · 1 sample per task" in text


def test_the_page_loads_nothing_from_outside(page: Page) -> None:
    tags = {tag for tag, _ in page.tags}
    assert not tags & {"script", "link", "iframe", "object", "embed"}
    for tag, attrs in page.tags:
        for name in ("src", "href"):
            value = attrs.get(name)
            assert value is None or value.startswith("data:"), (tag, name, value)


def test_the_page_has_three_plots_as_png_of_sensible_size(page: Page) -> None:
    images = page.images()
    assert len(images) == 3
    for png in images:
        width, height = png_size(png)
        assert 600 <= width <= 1400 and 150 <= height <= 2300, (width, height)


def test_the_page_shows_the_leaderboard_notes_and_per_task_table(page: Page) -> None:
    text = " ".join(" ".join(page.text).split())
    assert "agent episodes graded infra errors mean score pass@1 pass@3 tasks solved s/episode" in text
    assert "golden 12 11 1 1.000 1.000 1.000 4/4 1.5" in text
    assert "partial 12 9 3 0.472 0.333 0.667 2/4 2.5" in text
    assert "unbiased estimator" in text and "never counted as 0" in text
    assert "infra error ×3 no score" in text  # partial on delta: not a 0.00
    assert "1.00 2/2 passed +1 infra error" in text
    assert "infra error: SandboxError: docker daemon gone" in text


def test_text_from_results_is_escaped_everywhere(tmp_path: Path) -> None:
    out = write_run(tmp_path / "run", [synthetic("a", HOSTILE_TASK, 0, 0.0, agent_error="E: <i>x</i> & </td></table>"),
                                       synthetic("a", HOSTILE_TASK, 1, infra_error="<script>alert(2)</script>")])
    text = render_html(load_report(out))
    page = Page(text)
    tags = [tag for tag, _ in page.tags]
    assert "i" not in tags and "script" not in tags
    assert tags.count("b") == tags.count("figcaption") == 3  # the captions' titles, nothing from the results
    assert not any("onerror" in attrs for _, attrs in page.tags)
    assert len(page.images()) == 3
    assert HOSTILE_TASK in "".join(page.text)
    assert "E: <i>x</i> & </td></table>" in "".join(page.text)


def test_a_run_with_only_infra_errors_still_renders_with_no_scores(tmp_path: Path) -> None:
    out = write_run(tmp_path / "run", [synthetic("a", "t1", k, infra_error="SandboxError: gone") for k in range(2)])
    page = Page(render_html(load_report(out)))
    text = " ".join(" ".join(page.text).split())
    assert "a 2 0 2 — — 0/1 —" in text
    assert "infra error ×2 no score" in text
    assert len(page.images()) == 3


def test_one_agent_renders(tmp_path: Path) -> None:
    out = write_run(tmp_path / "run", [synthetic("solo", "t1", 0, 0.5, duration_s=0.0)])
    page = Page(render_html(load_report(out)))
    assert len(page.images()) == 3
    assert "solo 1 1 0 0.500 0.000 0/1 0" in " ".join(" ".join(page.text).split())


def test_many_tasks_are_capped_in_the_plot_and_all_listed_in_the_table(tmp_path: Path) -> None:
    tasks = [f"task-{i:03d}-" + "long-name-" * 8 for i in range(60)]
    out = write_run(tmp_path / "run", [synthetic(a, t, 0, float(i % 2)) for i, t in enumerate(tasks) for a in ("x", "y")],
                    task_ids=tasks)
    page = Page(render_html(load_report(out)))
    text = "".join(page.text)
    assert f"Showing the first {MAX_PLOT_TASKS} of 60 tasks" in text
    assert all(t in text for t in tasks)
    _, per_task, _ = page.images()
    assert png_size(per_task)[1] <= 2200


def test_no_episodes_says_so_without_plots(tmp_path: Path) -> None:
    page = Page(render_html(load_report(write_run(tmp_path / "run", [], agents=["golden"]))))
    assert "No episodes recorded yet" in "".join(page.text)
    assert page.images() == []


def test_write_report_writes_index_html_under_report_by_default(tmp_path: Path) -> None:
    run = synthetic_run(tmp_path / "run")
    path = write_report(load_report(run), "html")
    assert path == run / "report" / "index.html"
    assert re.match(r"<!doctype html>", path.read_text(encoding="utf-8"))
    assert [p.name for p in path.parent.iterdir()] == ["index.html"]
