"""``repogym export``, ``repogym report`` and ``repogym leaderboard``: thin commands, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from repogym_gym.cli import main
from repogym_gym.runner import run_suite
from tests.helpers import STARTER
from tests.report.results_dirs import (
    real_results,
    synthetic,
    synthetic_run,
    tiny_task_dir,
    write_run,
)

REPOGYM = Path(sys.executable).parent / "repogym"
CONVERSATION = [{"role": "user", "content": "fix it"}, {"role": "assistant", "content": "done"}]


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the ``repogym`` entry point in-process: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else (0 if code is None else 1)), out, err


def table_row(stdout: str, first: str) -> list[str]:
    """The cells of the printed table row whose first cell is ``first``."""
    rows = [line.replace("┃", "│").strip().strip("│").split("│") for line in stdout.splitlines() if "│" in line or "┃" in line]
    return next([cell.strip() for cell in row] for row in rows if row[0].strip() == first)


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Golden and noop on the tiny task, graded for real."""
    out = tmp_path_factory.mktemp("real")
    real_results(out, tiny_task_dir(tmp_path_factory.mktemp("task") / "tiny-calc"))
    return out


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return synthetic_run(tmp_path / "run")


# -- export -----------------------------------------------------------------------------------------------------


def test_export_writes_episodes_jsonl_in_the_results_dir_and_prints_the_count(
        real_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "ds.jsonl"
    code, out, err = run_main(["export", str(real_run), "--out", str(dest)], capsys)
    assert code == 0, err
    assert out.strip() == f"exported 2 episodes to {dest}"
    assert [json.loads(line)["agent"] for line in dest.read_text().splitlines()] == ["golden", "noop"]
    code, out, _ = run_main(["export", str(real_run)], capsys)
    assert code == 0 and out.strip() == f"exported 2 episodes to {real_run / 'episodes.jsonl'}"
    assert (real_run / "episodes.jsonl").read_bytes() == dest.read_bytes()


def test_export_to_stdout_keeps_stdout_pure_jsonl(real_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["export", str(real_run), "-o", "-"], capsys)
    assert code == 0, err
    assert [json.loads(line)["score"] for line in out.splitlines()] == [1.0, 0.0]
    assert "exported 2 episodes to stdout" in err


def test_export_says_how_many_infra_errors_it_left_out_and_keeps_them_on_request(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", [synthetic("a", "t", 0, 1.0, conversation=CONVERSATION),
                                       synthetic("a", "t", 1, infra_error="SandboxError: gone")])
    code, out, _ = run_main(["export", str(run)], capsys)
    assert code == 0
    assert "exported 1 episodes" in out and "left out 1 infrastructure-error episodes" in out
    code, out, _ = run_main(["export", str(run), "--include-infra-errors"], capsys)
    assert code == 0 and "exported 2 episodes" in out and "left out" not in out
    assert [json.loads(line)["score"] for line in (run / "episodes.jsonl").read_text().splitlines()] == [1.0, None]


def test_export_drops_groups_with_equal_rewards_on_request_and_says_how_many(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", [synthetic("a", "t", k, 1.0, conversation=CONVERSATION) for k in range(2)]
                    + [synthetic("a", "u", k, float(k), conversation=CONVERSATION) for k in range(2)])
    code, out, _ = run_main(["export", str(run), "--drop-equal-groups"], capsys)
    assert code == 0 and "exported 2 episodes" in out
    assert "dropped 1 groups (2 episodes) whose rewards were all equal (no GRPO signal)" in out
    assert {json.loads(line)["task_id"] for line in (run / "episodes.jsonl").read_text().splitlines()} == {"u"}


# -- report -----------------------------------------------------------------------------------------------------


def test_report_prints_the_leaderboard_and_per_task_scores(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["report", str(run)], capsys)
    assert code == 0, err
    assert table_row(out, "agent") == ["agent", "episodes", "graded", "infra errors", "mean score", "pass@1", "pass@3",
                                       "tasks solved", "s/episode"]
    assert table_row(out, "partial") == ["partial", "12", "9", "3", "0.472", "0.333", "0.667", "2/4", "2.5"]
    assert table_row(out, "delta")[2] == "infra error x3"


def test_report_k_sets_the_pass_at_k_column(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["report", str(run), "-k", "2"], capsys)
    assert code == 0
    assert table_row(out, "partial")[5:7] == ["0.333", "0.556"]
    assert "pass@2" in table_row(out, "agent")


def test_report_html_is_written_under_the_results_dir_by_default(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["report", str(run), "--format", "html"], capsys)
    page = run / "report" / "index.html"
    assert code == 0 and out.strip() == f"wrote {page}"
    assert page.read_text().count("data:image/png;base64,") == 3


def test_report_markdown_goes_where_out_says(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "docs" / "r.md"
    code, out, _ = run_main(["report", str(run), "-f", "markdown", "--out", str(dest)], capsys)
    assert code == 0 and out.strip() == f"wrote {dest}"
    assert "| partial | 12 | 9 | 3 | 0.472 |" in dest.read_text()
    assert not (run / "report").exists()


# -- leaderboard --------------------------------------------------------------------------------------------------


def test_leaderboard_ranks_the_agents_of_several_runs(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = write_run(tmp_path / "other", [synthetic("llm", t, 0, s) for t, s in (("a", 1.0), ("b", 0.5))])
    code, out, err = run_main(["leaderboard", str(run), str(other)], capsys)
    assert code == 0, err
    rows = [line.replace("│", " ").split()[:2] for line in out.splitlines() if "│" in line]
    assert rows == [["run", "golden"], ["other", "llm"], ["run", "partial"], ["run", "noop"]]  # pass@1 1, .5, .33, 0
    assert table_row(out, "other")[1:7] == ["llm", "2", "2", "0", "0.750", "0.500"]
    assert "pass@1: the chance" in out  # k defaults to other's 1 sample per task


# -- bad input ----------------------------------------------------------------------------------------------------


def corrupt(run: Path) -> tuple[Path, str]:
    (run / "results" / "golden" / "alpha" / "1.json").write_text('{"agent": "golden"}')
    return run, "1.json: not a valid RunResult: task_id: Field required (and 3 more problems)"


@pytest.mark.parametrize("command", [["export"], ["report"], ["report", "-f", "html"], ["leaderboard"]])
@pytest.mark.parametrize("case", ["missing", "not-results", "corrupt"])
def test_bad_results_dirs_exit_two_with_one_line_naming_the_file(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], case: str) -> None:
    target, message = {
        "missing": (tmp_path / "nowhere", "nowhere: no such results directory"),
        "not-results": (STARTER, "not a results directory (no results/ inside)"),
        "corrupt": corrupt(run) if case == "corrupt" else (run, ""),
    }[case]
    code, out, err = run_main([command[0], str(target), *command[1:]], capsys)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in out + err


@pytest.mark.parametrize(("text", "problem"), [
    ('{"agent": "golden", "task_id":', "Invalid JSON: EOF while parsing a value at line 1 column 30"),
    ("", "Invalid JSON: EOF while parsing a value at line 1 column 0"),
    ("[1, 2]", "Input should be an object (got [1, 2])"),
])
def test_a_truncated_or_malformed_result_file_says_what_is_wrong_with_it(
        run: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str) -> None:
    (run / "results" / "golden" / "alpha" / "1.json").write_text(text)
    code, _, err = run_main(["report", str(run)], capsys)
    assert code == 2
    assert err.strip() == (f"error: {run / 'results' / 'golden' / 'alpha' / '1.json'}: not a valid RunResult: {problem}; "
                           f"resuming the run (the same `repogym run` with --out {run}) moves it to {run / 'quarantine'} "
                           "and runs its episode again")


def test_a_bad_report_format_is_one_error_line(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["report", str(run), "--format", "pdf"], capsys)
    assert (code, out) == (2, "")
    assert err.strip() == ("error: Invalid value for '--format' / '-f': 'pdf' is not one of 'terminal', 'markdown', "
                           "'html'. (see 'repogym report --help')")


def test_the_leaderboard_explains_pass_at_1_and_pass_at_k(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["leaderboard", str(run), "-k", "2"], capsys)
    assert code == 0, err
    assert "pass@1: the chance that one sampled episode" in out and "pass@2: the chance that at least one of 2" in out


def test_the_installed_command_exits_two_on_a_missing_dir(tmp_path: Path) -> None:
    proc = subprocess.run([str(REPOGYM), "report", str(tmp_path / "gone")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error:") and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stdout == ""


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main(["--help"], capsys)
    assert code == 0
    assert all(name in out for name in ("export", "report", "leaderboard"))


# -- end to end ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_starter_run_exports_one_line_per_episode_and_reports_as_html(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    summary = run_suite(STARTER, ["golden", "noop"], out=out, jobs=2)
    assert summary.episodes == 8
    code, stdout, err = run_main(["export", str(out)], capsys)
    assert code == 0, err
    lines = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(lines) == summary.episodes
    assert {(line["agent"], line["score"]) for line in lines} == {("golden", 1.0), ("noop", 0.0)}
    assert all(line["messages"][0]["role"] == "system" and line["tools"] for line in lines)
    code, stdout, err = run_main(["report", str(out), "--format", "html"], capsys)
    assert code == 0, err
    page = (out / "report" / "index.html").read_text()
    assert page.count("data:image/png;base64,") == 3 and "shipping-quote-refactor" in page
    code, stdout, _ = run_main(["leaderboard", str(out)], capsys)
    assert table_row(stdout, "golden")[1:7] == ["4", "4", "0", "1.000", "1.000", "4/4"]
