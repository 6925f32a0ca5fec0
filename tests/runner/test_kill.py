"""A real `repogym run` killed with SIGKILL while it grades, then resumed (issue 13), in every sandbox.

What must hold after the resume: every episode has exactly one graded result with the golden score,
the results parse, and nothing the killed process made is left: no grading directory of its pid in
``$TMPDIR`` (they hold hidden tests) and, under Docker, no container of its pid.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repogym_gym.runner import load_results
from tests.helpers import MakeTask
from tests.redteam.helpers import require_sandbox

TASKS, SAMPLES = 2, 2


def _suite(make_task: MakeTask, root: Path) -> Path:
    suite = root / "suite"
    suite.mkdir()
    for name in ("kill-a", "kill-b")[:TASKS]:
        task = make_task(id=name)
        shutil.copytree(task.root, suite / name)
    return suite


def _run(suite: Path, out: Path, sandbox: str, tmpdir: Path) -> subprocess.Popen[str]:
    cli = Path(sys.executable).with_name("repogym")
    return subprocess.Popen([str(cli), "run", str(suite), "--agent", "golden", "-k", str(SAMPLES), "--sandbox", sandbox,
                             "--out", str(out)], env={**os.environ, "TMPDIR": str(tmpdir)}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def _containers_of(pid: int) -> list[str]:
    from repogym_gym.sandbox.docker import PID_LABEL
    from repogym_gym.sandbox.engine import connect

    client = connect()
    try:
        return [c.id for c in client.containers.list(all=True, filters={"label": f"{PID_LABEL}={pid}"})]
    finally:
        client.close()


@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
def test_a_run_killed_while_it_grades_resumes_complete_and_leaves_nothing(make_task: MakeTask, tmp_path: Path,
                                                                           sandbox: str) -> None:
    require_sandbox(sandbox).close()
    suite, out, tmpdir = _suite(make_task, tmp_path), tmp_path / "out", tmp_path / "tmp"
    tmpdir.mkdir()
    first = _run(suite, out, sandbox, tmpdir)
    deadline = time.monotonic() + 240
    grading: list[Path] = []
    while not grading and first.poll() is None and time.monotonic() < deadline:
        grading = list(tmpdir.glob(f"repogym-grade-{first.pid}.*"))
        time.sleep(0.02)
    assert grading, f"the run never graded (exit {first.poll()}): {first.communicate()[0][-2000:] if first.poll() is not None else ''}"
    os.killpg(first.pid, signal.SIGKILL)
    first.communicate()
    left = list(tmpdir.glob(f"repogym-grade-{first.pid}.*"))
    assert left, "the kill came after the grading directory was gone: nothing to reap"
    if sandbox == "docker":
        assert _containers_of(first.pid), "a killed run's containers outlive it (until their lifetime ends)"

    second = _run(suite, out, sandbox, tmpdir)
    output, _ = second.communicate(timeout=600)
    assert second.returncode == 0, output[-3000:]
    results = load_results(out)
    assert sorted((r.task_id, r.sample) for r in results) == sorted(
        (t, s) for t in ("kill-a", "kill-b")[:TASKS] for s in range(SAMPLES))
    assert all(r.status == "graded" and r.score == 1.0 for r in results), [(r.task_id, r.status, r.score) for r in results]
    assert list(tmpdir.glob(f"repogym-grade-{first.pid}.*")) == []  # swept by the second run
    assert list(tmpdir.glob(f"repogym-*-{second.pid}.*")) == []  # and the second cleaned up its own
    if sandbox == "docker":
        assert _containers_of(first.pid) == [] and _containers_of(second.pid) == []
