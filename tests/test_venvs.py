"""Per-task Python environments (repo.env) and source patches (repo.patches), for real."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repogym_gym.errors import SetupError
from repogym_gym.grading import grade_patch
from repogym_gym.venvs import VENV_READY_MARKER, ensure_venv, grader_venv, grader_venv_dir, venv_environ, venv_key
from tests.helpers import CALC_SOURCE, GOLDEN_PATCH, MakeTask

PYTEST_PIN = f"pytest=={__import__('pytest').__version__}"


@pytest.fixture(scope="session")
def env_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("envs")


def test_ensure_env_creates_the_environment_once_and_reuses_it(env_cache: Path) -> None:
    env = ensure_venv([PYTEST_PIN], cache_dir=env_cache)
    marker = env / VENV_READY_MARKER
    stamp = marker.stat().st_mtime_ns
    assert ensure_venv([PYTEST_PIN], cache_dir=env_cache) == env
    assert marker.stat().st_mtime_ns == stamp  # not rebuilt
    out = subprocess.run([env / "bin" / "python", "-c", "import pytest, sys; print(sys.prefix)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert Path(out) == env


def test_a_task_env_holds_its_requirements_and_no_installer_with_vendored_copies(env_cache: Path) -> None:
    """pip, setuptools, pkg_resources and _distutils_hack are not installed unless required: they
    vendor other packages (setuptools 65.5.0 carries more_itertools 8.8.0, whose more.py holds the
    golden hunks of three real-code tasks, shown by a confining sandbox with the task's env)."""
    env = ensure_venv([PYTEST_PIN], cache_dir=env_cache)
    site = next(env.glob("lib/python*/site-packages"))
    names = {p.name for p in site.iterdir()}
    assert "pytest" in names and "_pytest" in names
    assert not names & {"pip", "setuptools", "pkg_resources", "_distutils_hack", "wheel", "distutils-precedence.pth"}, names
    assert not [p for p in site.rglob("_vendor")], "a vendored package tree in the task env"
    out = subprocess.run([env / "bin" / "python", "-m", "pytest", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and PYTEST_PIN.split("==")[1] in out.stdout + out.stderr


def test_env_key_depends_on_the_requirements_and_their_order() -> None:
    assert venv_key(["a==1", "b==2"]) != venv_key(["b==2", "a==1"]) != venv_key(["a==1"])
    assert venv_key(["a==1"]) == venv_key(["a==1"])


def test_a_requirement_that_cannot_be_installed_is_a_setup_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="no-such-package-repogym-xyz"):
        ensure_venv(["no-such-package-repogym-xyz==0.0.1"], cache_dir=tmp_path)
    assert not any((tmp_path / "envs").glob("*/" + VENV_READY_MARKER))


def test_command_env_puts_the_environment_first_on_path(tmp_path: Path) -> None:
    env = venv_environ(tmp_path)
    assert env["PATH"].split(os.pathsep)[0] == str(tmp_path / "bin")
    assert env["VIRTUAL_ENV"] == str(tmp_path)
    assert venv_environ(None) == {}


def test_a_task_with_an_env_runs_its_tests_and_setup_with_that_interpreter(make_task: MakeTask, env_cache: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    probe = textwrap.dedent(
        """\
        import sys

        from calc import add


        def test_runs_in_the_task_env():
            assert "repogym-env-probe" in open(sys.prefix + "/probe").read()


        def test_add():
            assert add(2, 3) == 5
        """
    )
    task = make_task(
        files={"tests/test_calc.py": probe},
        hidden={},
        repo={"env": {"requirements": [PYTEST_PIN]}, "setup": ['echo repogym-env-probe > "$VIRTUAL_ENV/probe"']},
        tests={"command": "python -m pytest -q --junitxml={junit} tests",
               "fail_to_pass": ["tests/test_calc.py::test_add"],
               "pass_to_pass": ["tests/test_calc.py::test_runs_in_the_task_env"]},
    )
    from repogym_gym.baseline import BaselineStore

    store = BaselineStore(env_cache)
    baseline = store.get(task)
    assert baseline.python_env is not None and baseline.python_env.parent == env_cache / "envs"
    golden = grade_patch(task, GOLDEN_PATCH, store=store)
    assert golden.score == 1.0, golden.summary()
    assert golden.pass_to_pass == {"tests/test_calc.py::test_runs_in_the_task_env": "passed"}
    assert Path(sys.prefix) != baseline.python_env


def test_patches_are_applied_before_setup_and_change_the_fingerprint(make_task: MakeTask, tmp_path: Path) -> None:
    fixed = CALC_SOURCE.replace("return a - b", "return a + b", 1)
    bug = GOLDEN_PATCH.replace("-    return a - b\n+    return a + b", "-    return a + b\n+    return a - b")
    task = make_task(files={"calc/__init__.py": fixed}, repo={"patches": ["bug.patch"]})
    (task.root / "bug.patch").write_text(bug)
    from repogym_gym.baseline import BaselineStore
    from repogym_gym.task import load_task

    task = load_task(task.root)  # fingerprint now covers the patch file
    store = BaselineStore(tmp_path / "cache")
    assert "return a - b" in (store.get(task).tree / "calc" / "__init__.py").read_text().split("def sub")[0]
    assert grade_patch(task, GOLDEN_PATCH, store=store).score == 1.0
    before = task.fingerprint
    (task.root / "bug.patch").write_text(bug + "\n")
    assert load_task(task.root).fingerprint != before


def test_a_patch_that_does_not_apply_is_a_setup_error(make_task: MakeTask, tmp_path: Path) -> None:
    task = make_task(repo={"patches": ["bug.patch"]})
    (task.root / "bug.patch").write_text("diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n")
    from repogym_gym.baseline import BaselineStore
    from repogym_gym.task import load_task

    with pytest.raises(SetupError, match="repo.patches 'bug.patch' does not apply"):
        BaselineStore(tmp_path / "cache").get(load_task(task.root))


def test_the_grader_env_holds_pytest_and_what_it_requires_and_nothing_else(env_cache: Path) -> None:
    import importlib.metadata

    env = grader_venv(env_cache)
    assert env == grader_venv_dir(env_cache) and env.name.startswith("grader-")
    stamp = (env / VENV_READY_MARKER).stat().st_mtime_ns
    assert grader_venv(env_cache) == env and (env / VENV_READY_MARKER).stat().st_mtime_ns == stamp  # built once
    code = ("import importlib.metadata as m, sys; "
            "print(sys.prefix); print(sorted((d.metadata['Name'].lower(), d.version) for d in m.distributions()))")
    prefix, dists = subprocess.run([env / "bin" / "python", "-I", "-c", code], capture_output=True, text=True,
                                   check=True).stdout.splitlines()
    names = {name for name, _ in eval(dists)}  # noqa: S307 - our own probe's repr
    assert Path(prefix) == env
    assert {"pytest", "pluggy", "iniconfig", "packaging"} <= names
    assert not names & {"pip", "setuptools", "pydantic", "pyyaml", "gymnasium", "repogym-gym", "repogym_gym"}, names
    assert ("pytest", importlib.metadata.version("pytest")) in eval(dists)  # noqa: S307 - the grader's own pytest
    assert not list(env.rglob("__pycache__"))  # bytecode is the grader's pycache's business


def test_a_task_without_an_environment_runs_its_tests_in_the_grader_env(make_task: MakeTask, tmp_path: Path) -> None:
    probe = textwrap.dedent(
        """\
        import importlib.util, sys

        from calc import add


        def test_runs_in_the_grader_env():
            assert "/envs/grader-" in sys.prefix and importlib.util.find_spec("yaml") is None


        def test_add():
            assert add(2, 3) == 5
        """
    )
    task = make_task(files={"tests/test_calc.py": probe}, hidden={},
                     tests={"command": "python -m pytest -q --junitxml={junit} tests",
                            "fail_to_pass": ["tests/test_calc.py::test_add"],
                            "pass_to_pass": ["tests/test_calc.py::test_runs_in_the_grader_env"]})
    from repogym_gym.baseline import BaselineStore

    store = BaselineStore(tmp_path / "cache")
    assert store.get(task).python_env == grader_venv_dir(tmp_path / "cache")
    golden = grade_patch(task, GOLDEN_PATCH, store=store)  # the local sandbox: the host has yaml
    assert golden.score == 1.0, golden.summary()
