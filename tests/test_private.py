"""repogym_gym.private: results, trajectories, exports and reports are 0600 in directories made 0700."""

from __future__ import annotations

import doctest
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from repogym_gym import private as private_module
from repogym_gym.export import export_jsonl
from repogym_gym.private import make_private_dirs, private_writer, write_private
from repogym_gym.report import load_report, write_report
from repogym_gym.runner import RunResult
from repogym_gym.trajectory import Trajectory
from tests.report.results_dirs import real_results, tiny_task_dir


def mode(path: Path) -> str:
    return oct(path.stat().st_mode & 0o777)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A permissive umask, as some users have: the modes must not depend on it."""
    old = os.umask(0)
    yield
    os.umask(old)


def test_files_are_0600_and_the_directories_made_for_them_0700_whatever_the_umask(tmp_path: Path, open_umask: None) -> None:
    existing = tmp_path / "mine"
    existing.mkdir(mode=0o755)
    existing.chmod(0o755)
    write_private(existing / "a" / "b" / "c.json", "{}")
    assert (existing / "a" / "b" / "c.json").read_text() == "{}"
    assert [mode(p) for p in (existing / "a" / "b" / "c.json", existing / "a" / "b", existing / "a")] == ["0o600", "0o700", "0o700"]
    assert mode(existing) == "0o755"  # the user's own directory keeps its mode
    make_private_dirs(existing / "x")
    assert mode(existing / "x") == "0o700"


def test_an_existing_file_is_replaced_whole_and_kept_on_error(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    target.chmod(0o644)
    with pytest.raises(RuntimeError), private_writer(target) as fh:
        fh.write("half")
        raise RuntimeError("stop")
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]
    write_private(target, "new\n")
    assert target.read_text() == "new\n" and mode(target) == "0o600"


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[RunResult]]:
    task = tiny_task_dir(tmp_path_factory.mktemp("task") / "tiny-calc")
    out = tmp_path_factory.mktemp("run")
    return out, real_results(out, task)


def test_exports_reports_and_trajectories_are_private(real_run: tuple[Path, list[RunResult]], tmp_path: Path) -> None:
    out, _ = real_run
    export = tmp_path / "exports" / "ds.jsonl"
    assert export_jsonl(out, export) == 2
    report = write_report(load_report(out), "markdown", tmp_path / "reports" / "report.md")
    trajectory = Trajectory(task_id="t", episode_id="e", started_at="2025-01-01T00:00:00+00:00").write(tmp_path / "traj")
    for path in (export, report, trajectory):
        assert (mode(path), mode(path.parent)) == ("0o600", "0o700"), path


def test_private_docstring_examples_run() -> None:
    assert doctest.testmod(private_module).failed == 0
