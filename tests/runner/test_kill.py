"""A real `repogym run` killed with SIGKILL at several points (an episode under way, a grading, some
results written), then resumed (issue 13), in every sandbox.

What must hold after the resume: every episode has exactly one graded result with the golden score,
the results parse, and nothing the killed process made is left: no directory of its pid in
``$TMPDIR`` (workspaces, episode folders, gradings holding hidden tests), no process working in
the test's folders, and, under Docker, no container of its pid.
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
from tests.redteam.helpers import require_sandbox, wait_for_no_processes_in

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
    from repogym_gym.sandbox.containers import labelled
    from repogym_gym.sandbox.docker import PID_LABEL
    from repogym_gym.sandbox.engine import connect

    client = connect()
    try:
        return [cid for cid, _ in labelled(client, f"{PID_LABEL}={pid}")]
    finally:
        client.close()


#: Where the first run is killed: what must exist when the SIGKILL lands (a glob in $TMPDIR, or in --out).
KILL_POINTS = {
    "workspace": ("tmp", "repogym-workspace-{pid}.*"),  # an episode under way, nothing graded yet
    "grading": ("tmp", "repogym-grade-{pid}.*"),  # a grading copy (hidden tests inside) being tested
    "result": ("out", "results/*/*/*.json"),  # some results written, others not
}


@pytest.mark.parametrize("point", sorted(KILL_POINTS))
@pytest.mark.parametrize("sandbox", ["local", "bwrap", "docker"])
def test_a_run_killed_at_any_point_resumes_complete_and_leaves_nothing(make_task: MakeTask, tmp_path: Path,
                                                                        sandbox: str, point: str) -> None:
    require_sandbox(sandbox).close()
    suite, out, tmpdir = _suite(make_task, tmp_path), tmp_path / "out", tmp_path / "tmp"
    tmpdir.mkdir()
    first = _run(suite, out, sandbox, tmpdir)
    where, pattern = KILL_POINTS[point]
    root, pattern = (tmpdir if where == "tmp" else out), pattern.format(pid=first.pid)
    deadline = time.monotonic() + 240
    found: list[Path] = []
    while not found and first.poll() is None and time.monotonic() < deadline:
        found = list(root.glob(pattern))
        time.sleep(0.01)
    assert found, f"the run never reached {point} (exit {first.poll()}): " \
        f"{first.communicate()[0][-2000:] if first.poll() is not None else ''}"
    os.killpg(first.pid, signal.SIGKILL)
    first.communicate()
    if sandbox == "docker" and point == "grading":
        assert _containers_of(first.pid), "a killed run's containers outlive it (until their lifetime ends)"

    second = _run(suite, out, sandbox, tmpdir)
    output, _ = second.communicate(timeout=600)
    assert second.returncode == 0, output[-3000:]
    results = load_results(out)
    assert sorted((r.task_id, r.sample) for r in results) == sorted(
        (t, s) for t in ("kill-a", "kill-b")[:TASKS] for s in range(SAMPLES))
    assert all(r.status == "graded" and r.score == 1.0 for r in results), [(r.task_id, r.status, r.score) for r in results]
    assert list(tmpdir.glob(f"repogym-*-{first.pid}.*")) == []  # swept by the second run: workspaces, gradings...
    assert list(tmpdir.glob(f"repogym-*-{second.pid}.*")) == []  # and the second cleaned up its own
    assert wait_for_no_processes_in(tmp_path) == []  # no command of either run lives on
    if sandbox == "docker":
        assert _containers_of(first.pid) == [] and _containers_of(second.pid) == []
