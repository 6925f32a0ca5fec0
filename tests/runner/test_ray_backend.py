"""The Ray backend: the same episodes as Ray tasks on one local Ray (started once for the module)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from repogym_gym.errors import RunError
from repogym_gym.runner import load_results, run_suite
from repogym_gym.runner.ray_backend import ray_session
from repogym_gym.task import Task
from tests.helpers import STARTER
from tests.runner.test_run import STARTER_IDS, STARTER_OUTCOMES, outcomes


@pytest.fixture(scope="module")
def local_ray() -> Iterator[ModuleType]:
    """One local Ray (2 CPUs) for the module; run_suite finds it initialised and reuses it."""
    pytest.importorskip("ray")
    with ray_session(None, 2) as ray:
        yield ray


@pytest.mark.slow
def test_the_ray_backend_gives_the_serial_scores_and_the_driver_writes_every_file(local_ray: ModuleType, tmp_path: Path) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache"
    summary = run_suite(STARTER, ["golden", "noop"], out=out, backend="ray", jobs=2, cache_dir=cache)
    assert outcomes(out) == STARTER_OUTCOMES
    results = load_results(out)
    assert len(results) == summary.episodes == 8
    assert all(r.trajectory is not None and (out / r.trajectory).is_file() for r in results)
    workers = {r.worker for r in results}
    assert len(workers) == 1 and workers.pop().count(".") == 3, "the Ray node's IP address"
    built = {p.name.rsplit("-", 1)[0] for p in (cache / "baselines").iterdir() if p.is_dir()}
    assert built == set(STARTER_IDS), "Ray tasks use the run's cache directory"
    assert local_ray.is_initialized(), "a Ray the run did not start is left running"


def test_without_ray_the_ray_backend_says_which_extra_to_install(tiny_task: Task, tmp_path: Path) -> None:
    script = textwrap.dedent(f"""\
        import sys
        sys.modules["ray"] = None  # an environment without Ray
        from repogym_gym.errors import RunError
        from repogym_gym.runner import run_suite
        try:
            run_suite({str(tiny_task.root)!r}, ["noop"], out={str(tmp_path / "run")!r}, backend="ray")
        except RunError as exc:
            print(exc)
        """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "pip install 'repogym_gym[ray]'" in proc.stdout
    assert not (tmp_path / "run").exists()


def test_an_unreachable_ray_address_fails_fast_naming_it(tiny_task: Task, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    with pytest.raises(RunError, match=r"cannot reach the Ray cluster at --ray-address '127.0.0.1:1'"):
        run_suite([tiny_task], ["noop"], out=tmp_path / "run", backend="ray", ray_address="127.0.0.1:1")
    assert not (tmp_path / "run").exists()


def test_a_local_ray_dies_with_its_driver_even_by_sigkill() -> None:
    """Issue 13: a driver killed with SIGKILL left two Ray agents running about a minute (they report
    the raylet's death to a GCS that is gone, with a fixed 60 s timeout). The reaper kills them."""
    import os
    import signal
    import time

    from repogym_gym.owners import descendants, process_owner

    pytest.importorskip("ray")
    driver = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""\
        import time
        from repogym_gym.runner.ray_backend import ray_session
        with ray_session(None, 1):
            print("ready", flush=True)
            time.sleep(300)
        """)], stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert driver.stdout is not None and driver.stdout.readline().strip() == "ready"
    ray_processes = [o for o in map(process_owner, descendants(driver.pid)) if o is not None]
    agents = [o for o in ray_processes if "Agent" in Path(f"/proc/{o.split(':')[1]}/cmdline").read_text(errors="replace")]
    assert len(agents) >= 2, ray_processes  # the dashboard's and the runtime environment's
    os.kill(driver.pid, signal.SIGKILL)  # the driver alone (a kill of its whole group takes the agents with it)
    driver.communicate()
    deadline = time.monotonic() + 20
    while (alive := [o for o in ray_processes if process_owner(int(o.split(":")[1])) == o]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert alive == []
