"""``repogym mine history`` on a repository with one real fix commit, end to end."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from repogym_gym.cli import app
from repogym_gym.task import load_tasks
from repogym_gym.validate import validate_task
from tests.helpers import git


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
    result = CliRunner().invoke(app, ["mine", "history", str(repo), "HEAD~1..HEAD", "--out", str(out), "--package", "lib"])
    assert result.exit_code == 0, result.output
    [task] = load_tasks(out)
    assert task.spec.tests.fail_to_pass == ["tests/test_lib.py::test_two"]
    assert (task.root / "hidden" / "tests" / "test_lib.py").is_file()
    assert "tests/" not in task.golden_patch()
    assert validate_task(task, repeats=2).ok
