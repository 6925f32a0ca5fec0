"""The built wheel works outside the checkout: bundled suites, recipes and image recipes are package data.

One module fixture builds the wheel from a copy of the checkout (``pip wheel``, the build backend
from the package index) and installs it into a fresh venv under a temporary directory; every
command then runs from a folder that holds no checkout, so nothing can be found beside the
package's source.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _run(argv: list[str], cwd: Path, timeout: float = 600, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | extra_env
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{argv} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin/`` of a fresh venv holding only the wheel built from this checkout and its dependencies."""
    base = tmp_path_factory.mktemp("wheel")
    # built from a copy: setuptools writes build/ and *.egg-info/ beside the sources
    source = base / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", ".repogym-cache", ".*_cache", "__pycache__"))
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(base / "dist"), str(source)], cwd=base)
    (wheel,) = (base / "dist").glob("repogym_gym-*.whl")
    _run([sys.executable, "-m", "venv", str(base / "venv")], cwd=base)
    _run([str(base / "venv" / "bin" / "pip"), "install", "-q", str(wheel)], cwd=base)
    return base / "venv" / "bin"


def test_the_wheel_carries_the_bundled_suites_and_recipes(installed: Path, tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import json, sys
        from pathlib import Path
        import repogym_gym
        from repogym_gym import paths
        from repogym_gym.suites import load_recipe
        from repogym_gym.sandbox.images import load_recipe as load_image_recipe
        from repogym_gym.cli.realcode import DEFAULT_RECIPE

        site = Path(repogym_gym.__file__).resolve().parent
        out = {
            "package": str(site),
            "suites": str(paths.bundled_suites_dir()),
            "envs": str(paths.env_recipes_dir()),
            "starter": sorted(p.name for p in (paths.bundled_suites_dir() / "starter").iterdir() if p.is_dir()),
            "realcode_recipe": str(DEFAULT_RECIPE),
            "realcode_packages": len(load_recipe(DEFAULT_RECIPE).packages),
            "base_image": load_image_recipe("base").name,
        }
        print(json.dumps(out))
    """)
    done = _run([str(installed / "python"), "-c", script], cwd=tmp_path)
    found = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    site = Path(found["package"])
    assert ROOT not in site.parents and site.parent.name == "site-packages", found
    assert Path(found["suites"]) == site / "_bundled" / "task_suites"
    assert Path(found["envs"]) == site / "_bundled" / "envs"
    assert found["starter"] == sorted(p.name for p in (ROOT / "task_suites" / "starter").iterdir() if p.is_dir())
    assert Path(found["realcode_recipe"]) == site / "_bundled" / "task_suites" / "realcode" / "recipe.yaml"
    assert found["realcode_packages"] == 4  # the main job's recipe: toolz, tabulate, more-itertools, jmespath
    assert found["base_image"] == "base"


def test_gym_make_on_a_starter_id_and_the_cli_work_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import gymnasium as gym
        import repogym_gym
        env = gym.make("RepoGym/pagination-off-by-one-v0", sandbox="local")
        obs, info = env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step({"kind": "submit"})
        print(repr(reward), terminated, info["passed"])
        env.close()
    """)
    done = _run([str(installed / "python"), "-c", script], cwd=tmp_path, REPOGYM_CACHE_DIR=str(tmp_path / "cache"))
    assert done.stdout.strip().splitlines()[-1] == "0.0 True False", done.stdout
    version = _run([str(installed / "repogym"), "--version"], cwd=tmp_path).stdout.strip()
    assert version == f"repogym_gym {__import__('repogym_gym').__version__}"
