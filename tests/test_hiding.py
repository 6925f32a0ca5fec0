"""Tests for repogym_gym.hiding: every place on disk that holds a task's answer is named."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from repogym_gym.hiding import checkout_paths, secret_paths
from repogym_gym.task import Task, load_task
from tests.helpers import MakeTask


def _retarget(task: Task, root: Path, **spec: object) -> Task:
    shutil.copytree(task.root, root)
    data = yaml.safe_load((root / "task.yaml").read_text())
    (root / "task.yaml").write_text(yaml.safe_dump({**data, **spec}, sort_keys=False))
    return load_task(root)


def test_a_lone_task_hides_only_its_directory(tiny_task: Task) -> None:
    assert secret_paths(tiny_task) == [tiny_task.root.resolve()]


def test_a_task_among_others_hides_its_suite(tiny_task: Task, tmp_path: Path) -> None:
    task = _retarget(tiny_task, tmp_path / "suite" / "a")
    _retarget(tiny_task, tmp_path / "suite" / "b", id="b")
    (tmp_path / "suite" / "notes").mkdir()
    assert secret_paths(task) == [task.root.resolve(), (tmp_path / "suite").resolve()]


def test_the_git_checkout_holding_the_task_is_hidden(tiny_task: Task, tmp_path: Path) -> None:
    checkout = tmp_path / "project"
    task = _retarget(tiny_task, checkout / "tasks" / "a")
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    assert secret_paths(task) == [task.root.resolve(), checkout.resolve()]


def test_a_dot_git_file_names_the_git_directory_and_its_common_directory(tmp_path: Path) -> None:
    worktree, main_git = tmp_path / "wt", tmp_path / "main" / ".git"
    (main_git / "worktrees" / "wt").mkdir(parents=True)
    (main_git / "worktrees" / "wt" / "commondir").write_text("../..\n")
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main_git / 'worktrees' / 'wt'}\n")
    (worktree / "sub").mkdir()
    assert checkout_paths(worktree / "sub") == [worktree, main_git / "worktrees" / "wt", main_git.resolve()]
    assert checkout_paths(tmp_path / "elsewhere") == []


@pytest.mark.parametrize("form", ["absolute", "relative", "file-url"])
def test_a_git_source_on_this_machine_is_hidden(make_task: MakeTask, tmp_path: Path, form: str) -> None:
    space = tmp_path / "space"  # away from make_task's own directory (a sibling task would make a suite)
    upstream = space / "upstream"
    subprocess.run(["git", "init", "-q", str(upstream)], check=True)
    url = {"absolute": str(upstream), "relative": "../upstream", "file-url": f"file://{upstream}"}[form]
    task = _retarget(make_task(), space / "git-task", repo={"source": {"type": "git", "url": url, "commit": "a" * 40}})
    assert secret_paths(task) == [task.root.resolve(), upstream.resolve()]


@pytest.mark.parametrize("url", ["https://example.invalid/r.git", "git@example.invalid:r.git", "ssh://h/r"])
def test_a_remote_git_source_names_no_path(make_task: MakeTask, tmp_path: Path, url: str) -> None:
    task = _retarget(make_task(), tmp_path / "space" / "remote", repo={"source": {"type": "git", "url": url, "commit": "a" * 40}})
    assert secret_paths(task) == [task.root.resolve()]
