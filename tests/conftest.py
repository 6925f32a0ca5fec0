"""Shared fixtures: an isolated baseline cache and a factory for tiny real tasks.

The tiny task is a real Python package with a real bug (``add`` subtracts), visible tests,
a hidden test and a golden patch; every grading in the suite runs real pytest on it."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from repogym_gym import workspace as workspace_module
from repogym_gym.task import Task, load_task, load_tasks
from repogym_gym.tree import force_rmtree
from tests.helpers import (
    CALC_SOURCE,
    GOLDEN_PATCH,
    HIDDEN_TESTS,
    STARTER,
    VISIBLE_TESTS,
    MakeTask,
    tiny_spec,
)


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test session gets its own baseline cache; the user's cache is never touched."""
    cache = tmp_path_factory.mktemp("repogym-cache")
    old = os.environ.get("REPOGYM_CACHE_DIR")
    os.environ["REPOGYM_CACHE_DIR"] = str(cache)
    workspace_module._DEFAULT_STORES.clear()
    yield cache
    workspace_module._DEFAULT_STORES.clear()
    if old is None:
        os.environ.pop("REPOGYM_CACHE_DIR", None)
    else:
        os.environ["REPOGYM_CACHE_DIR"] = old


@pytest.fixture
def make_task(tmp_path: Path) -> MakeTask:
    """Factory: ``make_task(files={...}, hidden={...}, patch=..., **spec_overrides) -> Task``.

    ``files`` add or replace repo files (path -> text); ``hidden`` likewise for hidden/;
    ``patch=None`` omits solution.patch. Each call makes a new task directory.
    """
    counter = iter(range(1000))

    def factory(
        files: dict[str, str] | None = None,
        hidden: dict[str, str] | None = None,
        patch: str | None = GOLDEN_PATCH,
        **overrides: Any,
    ) -> Task:
        root = tmp_path / f"task{next(counter)}"
        repo_files = {"calc/__init__.py": CALC_SOURCE, "tests/test_calc.py": VISIBLE_TESTS, **(files or {})}
        hidden_files = {"tests/test_calc_hidden.py": HIDDEN_TESTS, **(hidden or {})}
        for rel, text in repo_files.items():
            (root / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "repo" / rel).write_text(text)
        for rel, text in hidden_files.items():
            (root / "hidden" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "hidden" / rel).write_text(text)
        if patch is not None:
            (root / "solution.patch").write_text(patch)
        (root / "task.yaml").write_text(yaml.safe_dump(tiny_spec(**overrides), sort_keys=False))
        return load_task(root)

    return factory


@pytest.fixture
def deep_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory for trees thousands of levels deep, removed through descriptors at teardown:
    pytest's own cleanup of old temporary directories recurses (shutil.rmtree) and would fail on
    them in a later session, on this machine's shared ``/tmp/pytest-of-<user>``."""
    path = tmp_path / "deep"
    path.mkdir()
    yield path
    force_rmtree(path)


@pytest.fixture
def tiny_task(make_task: MakeTask) -> Task:
    """The tiny bugfix task with default settings."""
    return make_task()


@pytest.fixture(scope="session")
def starter_tasks() -> list[Task]:
    """The bundled starter suite."""
    return load_tasks(STARTER)


@pytest.fixture
def system_dirs() -> Iterator[None]:
    """Hold the machine's system directories for this test alone (an exclusive lock across pytest's
    workers): a red-team test plants near-copies of the tiny task's golden module under ``/usr/lib``
    for a moment, which a validation of the tiny task running on the other worker would find."""
    with open("/tmp/repogym-tests-system-dirs.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Mounts small tmpfs filesystems for a disk-full test: ``small_tmpfs("1m")`` -> the mount point.

    Root only (CI runs as root; elsewhere a skip, under ``CI=true`` a failure). Unmounted at teardown.
    """
    if os.geteuid() != 0 or not shutil.which("mount"):
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true needs root to mount the small tmpfs of a disk-full test")
        pytest.skip("mounting a tmpfs needs root")
    mounts: list[Path] = []

    def mount(size: str) -> Path:
        point = tmp_path / f"tmpfs{len(mounts)}"
        point.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)], check=True, timeout=30)
        mounts.append(point)
        return point

    try:
        yield mount
    finally:
        for point in reversed(mounts):
            subprocess.run(["umount", "-l", str(point)], check=False, timeout=30)


@pytest.fixture
def restore_registry() -> Iterator[None]:
    """Gymnasium ids registered during a test are removed after it (tasks of different tests share ids)."""
    import gymnasium as gym

    before = set(gym.registry)
    yield
    for env_id in set(gym.registry) - before:
        del gym.registry[env_id]
