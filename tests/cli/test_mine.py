"""``repogym mine``: history on a repository with one real fix commit, end to end; mutate and recipe's bad input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from repogym_gym.cli import app
from repogym_gym.suites import DEFAULT_PYTEST
from repogym_gym.task import load_tasks
from repogym_gym.validate import validate_task
from repogym_gym.venvs import venv_dir
from tests.cli.test_app import run_main
from tests.helpers import git

REALCODE = Path(__file__).resolve().parents[2] / "task_suites" / "realcode" / "recipe.yaml"


def test_mine_history_turns_a_fix_commit_into_a_sound_task(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "lib").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "lib" / "__init__.py").write_text("def double(x):\n    return x * 3\n")
    (repo / "tests" / "test_lib.py").write_text("from lib import double\n\n\ndef test_zero():\n    assert double(0) == 0\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    (repo / "lib" / "__init__.py").write_text("def double(x):\n    return x * 2\n")
    (repo / "tests" / "test_lib.py").write_text((repo / "tests" / "test_lib.py").read_text()
                                               + "\n\ndef test_two():\n    assert double(2) == 4\n")
    git(repo, "commit", "-qam", "Fix double() returning triple")
    out = tmp_path / "out"
    url = (tmp_path / "repo").resolve().as_uri()  # a URL, as a user elsewhere would fetch it (file:// here)
    result = CliRunner().invoke(app, ["mine", "history", str(repo), "HEAD~1..HEAD", "--out", str(out), "--package", "lib",
                                      "--url", url])
    assert result.exit_code == 0, result.output
    [task] = load_tasks(out)
    # portable (issue 12): the source is the URL given, the test environment pinned and recorded
    assert task.spec.repo.source.model_dump()["url"] == url
    assert task.spec.repo.env is not None and task.spec.repo.env.requirements == [DEFAULT_PYTEST]
    assert task.spec.tests.fail_to_pass == ["tests/test_lib.py::test_two"]
    assert (task.root / "hidden" / "tests" / "test_lib.py").is_file()
    assert "tests/" not in task.golden_patch()
    assert validate_task(task, repeats=2).ok


@pytest.mark.slow
def test_mine_mutate_names_a_missing_file_before_any_test_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mistyped --file is one error line and exit 2, found in the unpacked sdist before any
    environment is built (it used to fail after three suite runs as an internal error)."""
    jmespath = next(p for p in yaml.safe_load(REALCODE.read_text())["packages"] if p["package"] == "jmespath")
    code, out, err = run_main([
        "mine", "mutate", "--package", "jmespath", "--version", jmespath["version"], "--sha256", jmespath["sha256"],
        "--tests", "tests", "--file", "jmespath/parsr.py", "--requirement", "iniconfig==2.0.0",
        "--out", str(tmp_path / "out")], capsys)
    assert code == 2, out + err
    assert "error: jmespath==1.0.1: files: 'jmespath/parsr.py' is not a file inside the sdist" in err
    assert "building its test environment" not in err and "Traceback" not in err
    cache = Path(os.environ["REPOGYM_CACHE_DIR"])
    # the environment it would have built first (a requirement no other test asks for: the cache is the session's)
    assert not venv_dir([DEFAULT_PYTEST, "iniconfig==2.0.0"], cache_dir=cache).exists()


def test_mine_recipe_refuses_a_malformed_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump({"name": "x", "packages": [{"package": "p"}]}))
    code, _, err = run_main(["mine", "recipe", str(path)], capsys)
    assert code == 2 and "recipe.yaml: packages.0.version: Field required" in err
    code, _, err = run_main(["mine", "recipe", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2 and "nope.yaml is not a file" in err


def test_mine_mutate_with_a_malformed_sha256_is_one_line_naming_the_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Issue 13: `mine mutate --sha256 zz` reached the download and ended as an internal error (exit 3)."""
    code, _, err = run_main(["mine", "mutate", "--package", "toolz", "--version", "1.0.0", "--sha256", "zz", "--tests",
                             "toolz/tests", "--file", "toolz/itertoolz.py", "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    assert err == "error: --sha256: sha256 'zz' must be 64 hex characters (e.g. the output of `sha256sum FILE`)\n"
    assert not (tmp_path / "out").exists()


def test_realcode_with_a_missing_recipe_is_one_line_naming_the_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_main(["realcode", "--recipe", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2 and err.startswith(f"error: {tmp_path / 'nope.yaml'}") and "Traceback" not in err


def test_realcode_logs_a_line_per_event_where_no_progress_bar_is_drawn(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """New-user trial: with output to a file (CI, nohup) the bar is not drawn, and 35 minutes passed with
    no line at all. The job is replaced by one that reports two events, so only the CLI's logging runs."""
    import repogym_gym.cli.realcode as realcode
    from repogym_gym.mainjob import MainJobRow

    def job(recipe: Path, *, repeats: int, jobs: int, on_task, on_build):  # noqa: ANN001, ANN202 - the job's callbacks
        on_build("toolz: 3 tasks from 5 candidates")
        on_task(0, 1, "toolz-mut-1")
        return tmp_path, [MainJobRow("toolz-mut-1", "toolz", 1.0, 0.0, True, (), 1.0)]

    monkeypatch.setattr(realcode, "run_main_job", job)
    code, out, err = run_main(["realcode"], capsys)
    assert code == 0 and "1/1 tasks from 1 packages (toolz)" in out
    assert [line.split("] ", 1)[-1] for line in err.splitlines() if line.strip()] == [
        "mining toolz: 3 tasks from 5 candidates", "checking toolz-mut-1 (0/1 tasks done)"], err


def test_mine_history_refuses_a_pip_option_as_a_requirement_before_any_work(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(["mine", "history", str(tmp_path), "HEAD~1..HEAD", "--out", str(tmp_path / "out"),
                               "--package", "lib", "--requirement", "-e ."], capsys)
    assert code == 2, out + err
    assert "--requirements" in err and "must be a package specifier" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing built, nothing written


@pytest.mark.parametrize("command", [
    ["mine", "history", "{tmp}", "HEAD~1..HEAD", "--package", "p"],
    ["mine", "mutate", "--package", "toolz", "--version", "1.0.0", "--sha256", "0" * 64, "--tests", "toolz/tests",
     "--file", "toolz/itertoolz.py"],
])
def test_mining_with_a_python_the_judge_does_not_run_on_is_one_line_before_any_work(
        command: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = [part.replace("{tmp}", str(tmp_path)) for part in command] + ["--out", str(tmp_path / "out"), "--python", "3.9"]
    code, _, err = run_main(argv, capsys)
    assert code == 2
    assert err.startswith("error: --python: python '3.9': the judge runs on CPython 3.11 and 3.12 only"), err
    assert not (tmp_path / "out").exists()
