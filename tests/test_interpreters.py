"""Per-task interpreters (``repo.env.python``, ``--python``, ``$REPOGYM_GRADER_PYTHON``), for real:
pyenv's CPython 3.12 on this machine kind, real venvs, real pytest, every sandbox.

CPython 3.12 must be installed (pyenv's ``/root/.pyenv/versions/3.12.*``): outside CI its absence
skips, under ``CI=true`` it fails (a version the judge claims to run on is tested there)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from repogym_gym import interpreters
from repogym_gym.episode import Episode
from repogym_gym.errors import SetupError, TaskSpecError
from repogym_gym.grading import grade_patch
from repogym_gym.interpreters import JUDGE_PYTHONS, find_python, supported_version
from repogym_gym.mine.history import HistoryOptions, mine_history
from repogym_gym.paths import default_cache_dir
from repogym_gym.spec import PythonEnvSpec
from repogym_gym.task import load_task
from repogym_gym.validate import validate_task
from repogym_gym.venvs import ensure_venv, grader_venv, grader_venv_dir
from tests.helpers import MakeTask
from tests.mine.test_history import TESTS_SPEC, make_repo
from tests.redteam.helpers import require_sandbox

OTHER = "3.12"  # the judged version that is not the one running the tests
PIN = "pytest==9.0.3"


@pytest.fixture(scope="module")
def other_python() -> str:
    try:
        return find_python(OTHER)
    except SetupError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true requires CPython {OTHER}: {exc}")
        pytest.skip(str(exc))


@pytest.fixture
def fresh_lookup() -> Iterator[None]:
    find_python.cache_clear()
    yield
    find_python.cache_clear()


def test_the_versions_the_judge_runs_on_are_the_only_ones_accepted() -> None:
    assert "3.11" in JUDGE_PYTHONS and OTHER in JUDGE_PYTHONS
    assert supported_version(OTHER) == OTHER
    for bad, says in (("3.9", "runs on CPython 3.11 and 3.12 only"), ("3.13", "3.11 and 3.12"), ("3", "major.minor"),
                      ("3.12.1", "major.minor"), ("py3.12", "major.minor")):
        with pytest.raises(ValueError, match=says):
            supported_version(bad)
    with pytest.raises(ValueError, match="repo.env.python|python"):
        PythonEnvSpec(requirements=[PIN], python="3.10")


def test_a_task_asking_for_an_unjudged_python_is_refused_naming_the_field(make_task: MakeTask) -> None:
    with pytest.raises(TaskSpecError, match=r"repo\.env\.python.*'3\.10'.*3\.11 and 3\.12"):
        make_task(repo={"env": {"requirements": [PIN], "python": "3.10"}})


def test_the_lookup_finds_a_build_that_reports_its_version(other_python: str) -> None:
    out = subprocess.run([other_python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == OTHER and os.path.isabs(other_python) and os.path.realpath(other_python) == other_python


def test_a_version_installed_nowhere_is_a_setup_error_saying_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                             fresh_lookup: None) -> None:
    # an empty pyenv root, and a PATH holding only a fake python3.12 that reports another version
    fake = tmp_path / "bin" / f"python{OTHER}"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho cpython 3.7\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("PATH", str(fake.parent))
    monkeypatch.setattr(interpreters, "_candidates", lambda v, real=interpreters._candidates: [
        c for c in real(v) if not c.startswith(("/usr/bin", "/usr/local/bin"))])
    with pytest.raises(SetupError, match=rf"no CPython {OTHER} is installed \(looked at: {fake}\).*pyenv install {OTHER}"):
        find_python(OTHER)


def test_a_requirement_pinning_a_pytest_the_judge_cannot_drive_is_refused_before_any_grade(tmp_path: Path) -> None:
    """pytest 8.3 has no ``_pytest.python.async_fail``: every grade of such a task, the golden patch's
    too, was "no usable test report"."""
    with pytest.raises(SetupError, match=r"install pytest 8\.3\.3; the grader's test runner drives pytest 9\.0, 9\.1, 9\.2 only"):
        ensure_venv(["pytest==8.3.3"], cache_dir=tmp_path)
    assert not list((tmp_path / "envs").glob("*/bin"))  # nothing half-built is kept


@pytest.mark.parametrize("sandbox_name", ["local", "bwrap", "docker"])
def test_a_task_of_another_python_runs_and_is_graded_in_it_in_every_sandbox(make_task: MakeTask, other_python: str,
                                                                           sandbox_name: str) -> None:
    task = make_task(repo={"env": {"requirements": [PIN], "python": OTHER}})
    sandbox = require_sandbox(sandbox_name)
    try:
        env = Episode(task, sandbox=sandbox)
        _, info = env.reset()
        assert "infra_error" not in info, info
        shown = env.step({"kind": "run", "command": "python -c 'import sys; print(sys.version_info[:2])'; "
                                                    "python -m pytest --version; python -c 'import site; print(site.getsitepackages())'"})
        text = shown.observation.text
        assert f"(3, {OTHER.split('.')[1]})" in text and "pytest 9.0.3" in text, text
        env.step({"kind": "edit", "path": "calc/__init__.py", "old": "return a - b\n\n\ndef sub", "new": "return a + b\n\n\ndef sub"})
        final = env.step({"kind": "submit"})
        assert final.terminated and final.reward == 1.0, final.observation.text
        env.close()
        assert grade_patch(task, "", sandbox=sandbox).score == 0.0
    finally:
        sandbox.close()


@pytest.mark.parametrize("sandbox_name", ["bwrap", "docker"])
def test_a_confining_sandbox_shows_the_other_python_without_its_site_packages(make_task: MakeTask, other_python: str,
                                                                           sandbox_name: str) -> None:
    """pyenv's 3.12 site-packages holds whatever was installed into it (here a ``.pth``): only its
    standard library is bound, as for the grader's own interpreter."""
    site = Path(other_python).parents[1] / "lib" / f"python{OTHER}" / "site-packages"
    task = make_task(repo={"env": {"requirements": [PIN], "python": OTHER}})
    sandbox = require_sandbox(sandbox_name)
    try:
        env = Episode(task, sandbox=sandbox)
        env.reset()
        listed = env.step({"kind": "run", "command": f"ls -A {site} | wc -l; python -c 'import json, email; print(\"stdlib ok\")'"})
        assert listed.observation.text.split()[:3] == ["0", "stdlib", "ok"], listed.observation.text
        env.close()
    finally:
        sandbox.close()


def test_the_grader_environment_of_another_python_carries_the_graders_pytest(tmp_path: Path, other_python: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOGYM_GRADER_PYTHON", OTHER)
    env = grader_venv(tmp_path)
    assert env == grader_venv_dir(tmp_path)
    monkeypatch.delenv("REPOGYM_GRADER_PYTHON")
    assert grader_venv_dir(tmp_path) != env  # another interpreter, another environment
    out = subprocess.run([env / "bin" / "python", "-c", "import sys, pytest; print('%d.%d' % sys.version_info[:2], pytest.__version__)"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [OTHER, __import__("pytest").__version__]
    monkeypatch.setenv("REPOGYM_GRADER_PYTHON", "3.8")
    with pytest.raises(SetupError, match="REPOGYM_GRADER_PYTHON: python '3.8': the judge runs on"):
        grader_venv_dir(tmp_path)


def test_the_judges_attack_tests_hold_on_the_other_python(other_python: str, tmp_path: Path) -> None:
    """The judge runs in the task's interpreter: its red-team tests (every attack on the judge, under
    local, where the judge alone stands between the code under test and the verdict) run again with
    the grader's environment made of CPython 3.12, in a pytest of their own."""
    root = Path(__file__).resolve().parents[1]
    files = sorted(str(p.relative_to(root)) for p in (root / "tests" / "redteam").glob("test_judge*.py"))
    files += ["tests/redteam/test_sealed.py", "tests/redteam/test_round7_host.py", "tests/redteam/test_perf_attacks.py"]
    env = {**os.environ, "REPOGYM_GRADER_PYTHON": OTHER, "REPOGYM_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                           "--basetemp", str(tmp_path / "base"), "-k", "local", *files],
                          capture_output=True, text=True, env=env, timeout=3000, cwd=root)
    tail = proc.stdout[-3000:]
    assert proc.returncode == 0, tail + proc.stderr[-2000:]
    assert " passed" in tail and " failed" not in tail, tail


def test_history_mining_with_another_python_records_it_and_the_task_validates(other_python: str, tmp_path: Path) -> None:
    repo, shas = make_repo(tmp_path)
    env = PythonEnvSpec(requirements=[PIN], python=OTHER)
    env_dir = ensure_venv(env.requirements, cache_dir=default_cache_dir(), python=env.python)
    template = {"tags": ["history"], "repo": {"env": env.model_dump(exclude_none=True)}}
    tasks, report = mine_history(repo, f"{shas['root']}..{shas['fix']}", TESTS_SPEC, template, HistoryOptions(package="pkg"),
                                 tmp_path / "out", env_dir=env_dir)
    assert report.tasks == [f"pkg-{shas['fix'][:8]}"], report.outcomes
    task = load_task(tasks[0].root)
    assert task.spec.repo.env is not None and task.spec.repo.env.python == OTHER
    verdict = validate_task(task, repeats=1)
    assert verdict.ok, verdict.failures()
