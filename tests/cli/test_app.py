"""The repogym CLI: thin commands, reliable exit codes, one-line errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from repogym_gym.cli import app, main
from repogym_gym.task import Task
from tests.helpers import STARTER, MakeTask, tiny_spec

STARTER_IDS = ["dedupe-contacts-perf", "pagination-off-by-one", "parse-duration", "shipping-quote-refactor"]
REPOGYM = Path(sys.executable).parent / "repogym"
WIDE = {"COLUMNS": "200"}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the ``repogym`` entry point in-process: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else (0 if code is None else 1)), out, err


def malformed_task(tmp_path: Path) -> Path:
    root = tmp_path / "bad-task"
    (root / "repo").mkdir(parents=True)
    spec = tiny_spec(id="bad-task", limits={"max_steps": "zero"})
    (root / "task.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return root


# -- tasks ------------------------------------------------------------------------------------------------------


def test_tasks_schema_prints_the_json_schema_of_task_yaml(runner: CliRunner) -> None:
    result = runner.invoke(app, ["tasks", "schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    assert schema["title"] == "TaskSpec"
    assert {"id", "type", "problem_statement", "repo", "tests", "perf", "constraints", "grading", "limits", "tags"} <= set(schema["properties"])
    assert set(schema["required"]) == {"id", "type", "problem_statement"}  # tests: every type but answer (a validator)
    assert {"TestSpec", "PerfSpec", "ConstraintSpec", "GradingSpec", "LimitsSpec"} <= set(schema["$defs"])
    assert schema["additionalProperties"] is False


def test_tasks_list_shows_every_id_type_and_count(runner: CliRunner) -> None:
    result = runner.invoke(app, ["tasks", "list", str(STARTER)], env=WIDE)
    assert result.exit_code == 0, result.output
    for task_id in STARTER_IDS:
        assert task_id in result.stdout
    assert "4 tasks" in result.stdout
    assert "refactor" in result.stdout and "perf" in result.stdout


def test_tasks_list_never_truncates_ids_in_a_narrow_terminal(runner: CliRunner) -> None:
    result = runner.invoke(app, ["tasks", "list", str(STARTER)], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    for task_id in STARTER_IDS:
        assert task_id in result.stdout


def test_tasks_list_filters_by_type(runner: CliRunner) -> None:
    result = runner.invoke(app, ["tasks", "list", str(STARTER), "--type", "perf"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "dedupe-contacts-perf" in result.stdout
    assert "parse-duration" not in result.stdout
    assert "1 task " in result.stdout


def test_tasks_list_show_and_validate_take_bundled_names(runner: CliRunner, capsys: pytest.CaptureFixture[str]) -> None:
    """A bundled suite's name and a bundled task's id name a directory, as they do for ``run``."""
    listed = runner.invoke(app, ["tasks", "list", "starter"], env=WIDE)
    assert listed.exit_code == 0, listed.output
    assert all(task_id in listed.stdout for task_id in STARTER_IDS)
    shown = runner.invoke(app, ["tasks", "show", "parse-duration"])
    assert shown.exit_code == 0 and "id: parse-duration" in shown.stdout, shown.output
    for command in (["tasks", "list"], ["tasks", "show"], ["validate"]):
        code, _, err = run_main([*command, "no-such-suite"], capsys)
        assert code == 2 and "bundled suite" in err and "'starter'" in err, err


def test_tasks_show_prints_the_spec_with_defaults(runner: CliRunner, tiny_task: Task) -> None:
    result = runner.invoke(app, ["tasks", "show", str(tiny_task.root)])
    assert result.exit_code == 0, result.output
    shown = yaml.safe_load(result.stdout)
    assert shown["id"] == "tiny-calc"
    assert shown["grading"]["pass_threshold"] == 1.0
    assert shown["tests"]["runner"] == "pytest"


# -- validate ----------------------------------------------------------------------------------------------------


def test_validate_a_sound_task_exits_zero(runner: CliRunner, tiny_task: Task, tmp_path: Path) -> None:
    out = tmp_path / "verdicts.json"
    result = runner.invoke(app, ["validate", str(tiny_task.root), "--repeats", "1", "--json", str(out)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "1/1 tasks sound" in result.stdout
    verdicts = json.loads(out.read_text())
    assert [(v["task_id"], v["ok"], v["golden_scores"]) for v in verdicts] == [("tiny-calc", True, [1.0])]


def test_validate_an_unsound_task_exits_one_and_says_why(runner: CliRunner, make_task: MakeTask) -> None:
    task = make_task(patch="")  # an empty golden patch: golden scores 0
    result = runner.invoke(app, ["validate", str(task.root), "--repeats", "1"], env=WIDE)
    assert result.exit_code == 1, result.output
    assert "0/1 tasks sound" in result.stdout
    assert "tiny-calc golden:" in result.stdout


def test_validate_exits_one_when_any_task_is_unsound(runner: CliRunner, make_task: MakeTask, tmp_path: Path) -> None:
    sound = make_task()
    unsound = make_task(id="tiny-unsound", patch="")
    result = runner.invoke(app, ["validate", str(sound.root), str(unsound.root), "--repeats", "1"], env=WIDE)
    assert result.exit_code == 1, result.output
    assert "1/2 tasks sound" in result.stdout


def test_validate_rejects_repeats_below_one(runner: CliRunner, tiny_task: Task) -> None:
    result = runner.invoke(app, ["validate", str(tiny_task.root), "--repeats", "0"])
    assert result.exit_code == 2


# -- bad input: exit 2, one message, no traceback ---------------------------------------------------------------


@pytest.mark.parametrize("command", [["tasks", "show"], ["tasks", "list"], ["validate"]])
def test_a_malformed_task_yaml_exits_two_naming_file_and_field(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = malformed_task(tmp_path)
    code, out, err = run_main([*command, str(root)], capsys)
    assert code == 2
    assert err.startswith("error: ")
    assert str(root / "task.yaml") in err
    assert "limits.max_steps" in err and "'zero'" in err
    assert "Traceback" not in out + err


@pytest.mark.parametrize("command", [["tasks", "show"], ["tasks", "list"], ["validate"]])
def test_a_missing_path_exits_two(command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such-task"
    code, out, err = run_main([*command, str(missing)], capsys)
    assert code == 2
    assert err.startswith("error: ") and str(missing) in err
    assert "Traceback" not in out + err


@pytest.mark.parametrize("kind", ["empty directory", "plain file"])
def test_validate_on_a_path_holding_no_task_exits_two(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo'd path printed "0/0 tasks sound" and exited 0, so CI passed on it."""
    target = tmp_path / "suite"
    if kind == "empty directory":
        target.mkdir()
    else:
        target.write_text("not a suite\n")
    code, out, err = run_main(["validate", str(target)], capsys)
    assert code == 2 and "0/0" not in out
    expected = "holds no task.yaml at or below it" if kind == "empty directory" else "is not a directory"
    assert err.startswith(f"error: {target} {expected}")


def test_an_unknown_id_exits_two_and_suggests_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(["validate", str(STARTER), "--id", "parse-duratoin"], capsys)
    assert code == 2
    assert "parse-duratoin" in err and "did you mean 'parse-duration'?" in err


def test_the_installed_script_reports_a_malformed_task_without_a_traceback(tmp_path: Path) -> None:
    root = malformed_task(tmp_path)
    proc = subprocess.run([str(REPOGYM), "tasks", "show", str(root)], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "200"})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ")
    assert str(root / "task.yaml") in proc.stderr and "limits.max_steps" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_python_dash_m_runs_the_cli(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "repogym_gym.cli", "tasks", "list", str(STARTER)], capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "parse-duration" in proc.stdout


# -- help ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [[], ["tasks"], ["tasks", "list"], ["tasks", "show"], ["tasks", "schema"], ["validate"], ["gym"], ["gym", "list"]],
    ids=lambda c: " ".join(c) or "repogym",
)
def test_help_works_for_every_command(runner: CliRunner, command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.stdout
    assert "Traceback" not in result.output


def test_validate_with_an_unwritable_json_path_exits_two_before_validating(
    tiny_task: Task, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13: an unwritable --json failed only after every task was validated, as an internal error (exit 3)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    target = blocker / "verdicts.json"  # a path under a plain file: unwritable even for root
    code, out, err = run_main(["validate", str(tiny_task.root), "--json", str(target)], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"error: --json {target} cannot be written: Not a directory")


@pytest.mark.parametrize("which", ["task.yaml", "agent file", "recipe"])
def test_a_file_that_exists_but_cannot_be_read_is_one_error_naming_it(which: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13's audit: unreadable input files had no test. A symlink to /proc/self/mem opens and then fails
    every read with EIO, as a disk fault would (root reads through any permission bits)."""
    unreadable = tmp_path / "unreadable.yaml"
    unreadable.symlink_to("/proc/self/mem")
    if which == "task.yaml":
        (tmp_path / "t" / "repo").mkdir(parents=True)
        (tmp_path / "t" / "task.yaml").symlink_to("/proc/self/mem")
        argv = ["tasks", "show", str(tmp_path / "t")]
    elif which == "agent file":
        argv = ["run", "starter", "--agent", str(unreadable), "--out", str(tmp_path / "out")]
    else:
        argv = ["realcode", "--recipe", str(unreadable)]
    code, _, err = run_main(argv, capsys)
    assert code == 2 and "Input/output error" in err and "Traceback" not in err, err
