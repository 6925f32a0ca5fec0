"""Recipe-built suites: mined once from a pinned sdist, then served from the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from repogym_gym.errors import TaskSpecError
from repogym_gym.suites import build_suite, built_suite, load_recipe, suite_key
from repogym_gym.task import load_tasks

REALCODE = Path(__file__).resolve().parents[1] / "task_suites" / "realcode" / "recipe.yaml"


def small_recipe(tmp_path: Path, **overrides: object) -> Path:
    jmespath = next(p for p in yaml.safe_load(REALCODE.read_text())["packages"] if p["package"] == "jmespath")
    recipe = {"name": "tiny-real", "packages": [{**jmespath, "tasks": 2, **overrides}]}
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


def test_the_bundled_recipe_names_four_pinned_packages_and_24_tasks() -> None:
    recipe = load_recipe(REALCODE)
    assert len(recipe.packages) >= 4
    assert sum(p.tasks for p in recipe.packages) >= 24
    assert all(len(p.sha256) == 64 and p.version for p in recipe.packages)


@pytest.mark.slow
def test_build_suite_mines_once_then_serves_the_cache(tmp_path: Path) -> None:
    recipe = small_recipe(tmp_path)
    cache = tmp_path / "cache"
    assert built_suite(recipe, cache_dir=cache) is None
    suite = build_suite(recipe, cache_dir=cache)
    tasks = load_tasks(suite)
    assert len(tasks) == 2 and all(t.spec.repo.source.type == "pypi" for t in tasks)
    assert all((t.root / "bug.patch").is_file() and (t.root / "solution.patch").is_file() for t in tasks)
    summary = json.loads((suite / "suite.json").read_text())
    assert summary["reports"][0]["package"] == "jmespath"
    stamp = (suite / "suite.json").stat().st_mtime_ns
    assert build_suite(recipe, cache_dir=cache) == suite == built_suite(recipe, cache_dir=cache)
    assert (suite / "suite.json").stat().st_mtime_ns == stamp  # not mined again


def test_a_changed_recipe_gets_a_new_key(tmp_path: Path) -> None:
    first = suite_key(small_recipe(tmp_path))
    assert suite_key(small_recipe(tmp_path, seed=3)) != first


def test_a_malformed_recipe_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump({"name": "x", "packages": [{"package": "p", "version": "1"}]}))
    with pytest.raises(TaskSpecError, match=r"recipe.yaml: packages.0.sha256: Field required"):
        load_recipe(path)
