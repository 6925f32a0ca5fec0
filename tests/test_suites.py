"""Recipe-built suites: mined once from a pinned sdist, then served from the cache."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from repogym_gym.cli import app
from repogym_gym.errors import MiningError, TaskSpecError
from repogym_gym.suites import (
    DEFAULT_PYTEST,
    PackageRecipe,
    build_suite,
    built_suite,
    check_recipe_paths,
    load_recipe,
    suite_key,
    with_pytest,
)
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
def test_build_suite_mines_once_then_serves_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two packages mined in two threads: each package's tasks and its report, in recipe order."""
    packages = {p["package"]: p for p in yaml.safe_load(REALCODE.read_text())["packages"]}
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump({"name": "two-real", "packages": [
        {**packages["toolz"], "tasks": 1}, {**packages["jmespath"], "tasks": 1}]}))
    cache = tmp_path / "cache"
    assert built_suite(recipe, cache_dir=cache) is None
    suite = build_suite(recipe, cache_dir=cache, jobs=2)
    tasks = load_tasks(suite)
    assert len(tasks) == 2 and all(t.spec.repo.source.type == "pypi" for t in tasks)
    assert sorted(t.id.split("-")[0] for t in tasks) == ["jmespath", "toolz"]
    assert all((t.root / "bug.patch").is_file() and (t.root / "solution.patch").is_file() for t in tasks)
    summary = json.loads((suite / "suite.json").read_text())
    assert [r["package"] for r in summary["reports"]] == ["toolz", "jmespath"]
    assert [[t.split("-mut-")[0] for t in r["tasks"]] for r in summary["reports"]] == [["toolz"], ["jmespath"]]
    stamp = (suite / "suite.json").stat().st_mtime_ns
    assert build_suite(recipe, cache_dir=cache) == suite == built_suite(recipe, cache_dir=cache)
    assert (suite / "suite.json").stat().st_mtime_ns == stamp  # not mined again
    # the CLI's recipe path finds the same build and prints each package's yield
    monkeypatch.setenv("REPOGYM_CACHE_DIR", str(cache))
    result = CliRunner().invoke(app, ["mine", "recipe", str(recipe)])
    assert result.exit_code == 0, result.output
    assert "toolz: 1 tasks from" in result.output and "jmespath: 1 tasks from" in result.output
    assert "toolz: the tasks (" in result.output and "fail_to_pass" in result.output
    assert result.output.rstrip().endswith(f"2 tasks from 2 packages in {suite}")
    assert (suite / "suite.json").stat().st_mtime_ns == stamp


def test_build_suite_refuses_fewer_than_one_job(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        build_suite(small_recipe(tmp_path), cache_dir=tmp_path / "cache", jobs=0)


def test_a_changed_recipe_gets_a_new_key(tmp_path: Path) -> None:
    first = suite_key(small_recipe(tmp_path))
    assert suite_key(small_recipe(tmp_path, seed=3)) != first


def test_a_malformed_recipe_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump({"name": "x", "packages": [{"package": "p", "version": "1"}]}))
    with pytest.raises(TaskSpecError, match=r"recipe.yaml: packages.0.sha256: Field required"):
        load_recipe(path)


@pytest.mark.parametrize(("given", "expected"), [
    ([], [DEFAULT_PYTEST]),
    (["attrs>=23"], [DEFAULT_PYTEST, "attrs>=23"]),
    (["pytest==8.3.3", "attrs"], ["pytest==8.3.3", "attrs"]),
    (["PyTest>=8; python_version>'3'"], ["PyTest>=8; python_version>'3'"]),
    (["pytest-timeout==2.3.1"], [DEFAULT_PYTEST, "pytest-timeout==2.3.1"]),  # a plugin is not pytest
])
def test_requirements_add_to_the_pinned_pytest(given: list[str], expected: list[str]) -> None:
    assert with_pytest(given) == expected


def test_recipe_paths_are_checked_in_the_unpacked_tree(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "src" / "pkg").mkdir(parents=True)
    (tree / "src" / "pkg" / "core.py").write_text("x = 1\n")
    (tree / "tests").mkdir()
    good = PackageRecipe(package="pkg", version="1", sha256="0" * 64, requirements=[], tests=["tests"],
                         pythonpath=["src"], files=["src/pkg/core.py"])
    check_recipe_paths(good, tree)
    bad = good.model_copy(update={"files": ["pkg/core.py", "../tree/src/pkg/core.py"], "pythonpath": ["src/pkg/core.py"],
                                  "tests": ["/etc"]})
    with pytest.raises(MiningError) as info:
        check_recipe_paths(bad, tree)
    message = str(info.value)
    assert "files: 'pkg/core.py' is not a file inside the sdist" in message
    assert "files: '../tree/src/pkg/core.py'" not in message  # resolves inside the tree: allowed
    assert "pythonpath: 'src/pkg/core.py' is not a directory" in message
    assert "tests: '/etc' is not a path inside the sdist" in message
    assert "(the sdist holds: src/, tests/)" in message


def test_the_module_examples_run() -> None:
    from repogym_gym import suites

    assert doctest.testmod(suites).failed == 0
