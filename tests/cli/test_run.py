"""``repogym run``: a per-agent table, one result file per episode, exit codes scripts can rely on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogym_gym.cli import main
from repogym_gym.runner import RunSummary
from repogym_gym.runner.models import load_results
from repogym_gym.task import Task
from tests.helpers import MakeTask


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the ``repogym`` entry point in-process: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else (0 if code is None else 1)), out, err


def table_row(stdout: str, agent: str) -> list[str]:
    """The cells of ``agent``'s row in the printed table."""
    rows = [line.strip().replace("┃", "│").strip("│").split("│") for line in stdout.splitlines() if "│" in line or "┃" in line]
    return next([cell.strip() for cell in row] for row in rows if row[0].strip() == agent)


def test_run_prints_per_agent_scores_and_writes_one_result_per_episode(tiny_task: Task, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code, stdout, stderr = run_main(["run", str(tiny_task.root), "--agent", "golden", "-a", "noop", "-k", "2",
                                     "--jobs", "2", "--out", str(out)], capsys)
    assert code == 0, stderr
    header = table_row(stdout, "agent")
    assert header == ["agent", "episodes", "mean score", "pass@1", "pass@2", "tasks solved", "infra errors", "s/episode"]
    assert table_row(stdout, "golden")[:7] == ["golden", "2", "1.000", "1.000", "1.000", "1", "0"]
    assert table_row(stdout, "noop")[:7] == ["noop", "2", "0.000", "0.000", "0.000", "0", "0"]
    assert "4 episodes in " in stdout and f"results in {out}" in stdout
    assert len(list((out / "results").rglob("*.json"))) == 4
    assert RunSummary.model_validate_json((out / "summary.json").read_text()).episodes == 4
    assert "mean score 0.500" in stderr, "the progress bar shows the running mean on stderr"


def test_run_of_low_scores_still_exits_zero_into_a_timestamped_runs_directory(
        tiny_task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = run_main(["run", str(tiny_task.root), "--agent", "noop"], capsys)
    assert code == 0, stderr
    [run_dir] = (tmp_path / "runs").iterdir()
    assert (run_dir / "results" / "noop" / tiny_task.id / "0.json").is_file()
    assert f"results in {Path('runs') / run_dir.name}" in stdout


@pytest.mark.parametrize(("argv", "message"), [
    (["--agent", "nope"], "no agent 'nope'"),
    (["--agent", "noop", "--time-limit", "0"], "error: Invalid value for '--time-limit': must be more than 0 seconds, got 0"),
    (["--agent", "noop", "--jobs", "0"], "error: Invalid value for '--jobs' / '-j': Input should be greater than or equal to 1"),
    (["--agent", "noop", "--backend", "nowhere"], "error: Invalid value for '--backend': 'nowhere' is not one of"),
    (["--agent", "noop", "--max-retries", "-1"], "error: Invalid value for '--max-retries'"),
    (["--agent", "noop", "--no-such-option"], "error: No such option: --no-such-option"),
])
def test_run_with_bad_options_exits_two_with_one_line(tiny_task: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      argv: list[str], message: str) -> None:
    code, stdout, stderr = run_main(["run", str(tiny_task.root), *argv, "--out", str(tmp_path / "run")], capsys)
    assert (code, stdout) == (2, "")
    assert message in stderr and "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert "╭" not in stderr and "Value error, " not in stderr, "usage errors are one `error:` line, like the others"
    assert not (tmp_path / "run").exists()


def test_run_of_a_missing_suite_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run_main(["run", str(tmp_path / "missing"), "--agent", "noop", "--out", str(tmp_path / "run")], capsys)
    assert code == 2
    assert f"no suite '{tmp_path / 'missing'}'" in stderr and "Traceback" not in stderr


def test_run_into_a_directory_holding_another_run_exits_two(tiny_task: Task, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "run")
    assert run_main(["run", str(tiny_task.root), "--agent", "noop", "--out", out], capsys)[0] == 0
    code, _, stderr = run_main(["run", str(tiny_task.root), "--agent", "golden", "--out", out], capsys)
    assert code == 2
    assert "(agents differ: agents: ['noop'] before, ['golden'] now); use a new --out" in stderr
    assert "Traceback" not in stderr


def test_run_without_an_agent_is_a_usage_error(tiny_task: Task, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run_main(["run", str(tiny_task.root)], capsys)
    assert code == 2 and "--agent" in stderr


def test_run_without_an_agent_is_one_error_line_pointing_at_help(tiny_task: Task, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, stderr = run_main(["run", str(tiny_task.root)], capsys)
    assert (code, stdout) == (2, "")
    assert stderr.strip() == "error: Missing option '--agent' / '-a'. (see 'repogym run --help')"


def test_an_unknown_command_is_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run_main(["rnu"], capsys)
    assert code == 2
    assert stderr.startswith("error: No such command 'rnu'.") and len(stderr.strip().splitlines()) == 1


def test_no_arguments_still_print_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, stderr = run_main([], capsys)
    assert code == 2 and "Usage: repogym" in stdout and "error" not in stderr


@pytest.mark.parametrize("command", [["run"], ["export"], ["report"], ["leaderboard"], ["realcode"], ["mine"],
                                     ["mine", "mutate"], ["mine", "history"], ["tasks", "schema"], ["gym", "list"]],
                         ids=" ".join)
def test_help_works_for_every_command(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, stderr = run_main([*command, "--help"], capsys)
    assert code == 0, stderr
    assert f"Usage: repogym {' '.join(command)}" in " ".join(stdout.split())


def test_one_episode_is_not_plural(tiny_task: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, stderr = run_main(["run", str(tiny_task.root), "--agent", "noop", "--out", str(tmp_path / "run")], capsys)
    assert code == 0, stderr
    assert "1 episode in " in stdout


@pytest.mark.parametrize("holds_lock", [False, True])
def test_a_read_only_out_is_one_error_exit_two(
    tiny_task: Task, small_tmpfs, capsys: pytest.CaptureFixture[str], holds_lock: bool  # noqa: ANN001
) -> None:
    """Issue 13: an unwritable --out (here a read-only filesystem, which binds root too) is refused up front."""
    import subprocess

    mount = small_tmpfs("1m")
    out = mount / "run"
    if holds_lock:  # a results directory from an earlier run
        out.mkdir()
        (out / ".lock").write_text("")
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True, timeout=30)
    code, stdout, stderr = run_main(["run", str(tiny_task.root), "--agent", "noop", "--out", str(out)], capsys)
    assert code == 2 and "Traceback" not in stdout + stderr
    assert stderr.startswith(f"error: {out}: cannot create the results directory: Read-only file system")


def test_run_names_the_reasons_of_its_infrastructure_errors(tiny_task: Task, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A masked episode is named with its reason, so a user knows what to fix before trusting the scores."""
    import socket

    with socket.socket() as closed:  # a port nobody listens on: the model server is unreachable
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    agent = tmp_path / "agent.yaml"
    agent.write_text(f"type: openai\nlabel: offline\nmodel: m\nbase_url: http://127.0.0.1:{port}/v1\nmax_retries: 0\n")
    code, stdout, stderr = run_main(["run", str(tiny_task.root), "-a", str(agent), "-k", "2", "--max-retries", "0",
                                     "--out", str(tmp_path / "run")], capsys)
    assert code == 0, stderr
    assert table_row(stdout, "offline")[6] == "2"
    [line] = [line for line in stdout.splitlines() if line.startswith("infra error")]
    assert line.startswith("infra error (2 episodes): ") and "127.0.0.1" in line, stdout


@pytest.mark.slow
def test_validate_s_calibration_goes_into_each_episode_s_reward_details(tiny_task: Task, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "validate.json"
    code, _, stderr = run_main(["validate", str(tiny_task.root), "--repeats", "1", "--json", str(report)], capsys)
    assert code == 0, stderr
    out = tmp_path / "run"
    code, _, stderr = run_main(["run", str(tiny_task.root), "-a", "golden", "--out", str(out), "--calibration",
                                str(report)], capsys)
    assert code == 0, stderr
    [details] = [json.loads(p.read_text()) for p in (out / "trajectories").rglob("*.reward-details.json")]
    assert (details["reward"], details["kind"], details["calibration"]) == (1.0, "tests", {"noop": 0.0, "golden": 1.0})


def test_a_calibration_file_that_is_not_validate_output_is_named(tiny_task: Task, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    code, _, stderr = run_main(["run", str(tiny_task.root), "-a", "noop", "--calibration", str(bad)], capsys)
    assert code == 2 and f"{bad} is not `repogym validate --json` output" in stderr
    code, _, stderr = run_main(["run", str(tiny_task.root), "-a", "noop", "--calibration", str(tmp_path / "no.json")], capsys)
    assert code == 2 and "cannot be read" in stderr


@pytest.mark.slow
def test_run_grades_by_the_reward_kind_asked_for(make_task: MakeTask, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    offering = make_task(grading={"rewards": ["tests", "graded"]})
    out = tmp_path / "run"
    code, _, stderr = run_main(["run", str(offering.root), "-a", "golden", "--reward", "graded", "--out", str(out)], capsys)
    assert code == 0, stderr
    [result] = load_results(out)
    assert result.grade is not None and (result.grade.reward_kind, result.score) == ("graded", 1.0)
    code, _, stderr = run_main(["run", str(offering.root), "-a", "golden", "--reward", "binary", "--out",
                                str(tmp_path / "other")], capsys)
    assert code == 2 and "reward='binary': task 'tiny-calc' offers ['tests', 'graded']" in stderr
