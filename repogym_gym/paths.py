"""Where repogym_gym keeps things: the user cache and the data bundled with the project.

Every path the package computes lives here, so a reader (and a packager) finds them in one place:

- :func:`default_cache_dir`: baselines, task environments, downloads, mined suites, the judge's
  files (``$REPOGYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/repogym_gym``, else ``~/.cache/repogym_gym``);
- :func:`bundled_suites_dir`: the hand-written and recipe suites (``task_suites/``);
- :func:`realcode_recipe`: the real-code main job's recipe;
- :func:`env_recipes_dir`: the sandbox images' recipes (``envs/``, or ``$REPOGYM_ENVS_DIR``).

The bundled data is package data, found through :mod:`importlib.resources` as
``repogym_gym/_bundled/<name>``: in a checkout (or an editable install) that is a symlink to the
top-level folder of the same name, in an installed wheel a copy of it. Known gap: an install
from a zip archive (zipimport) is not supported, since tasks are copied and run from real
folders. Nothing here creates a directory.
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

__all__ = ["bundled_suites_dir", "default_cache_dir", "env_recipes_dir", "realcode_recipe"]


def _bundled(name: str) -> Path:
    """The real folder of bundled data ``name`` (``task_suites`` or ``envs``), symlinks resolved."""
    return Path(str(importlib.resources.files("repogym_gym") / "_bundled" / name)).resolve()


def default_cache_dir() -> Path:
    """Where baselines and downloads are cached (nothing is created by calling this)."""
    if env := os.environ.get("REPOGYM_CACHE_DIR"):
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "repogym_gym"


def bundled_suites_dir() -> Path:
    """The bundled suites' directory (one folder per suite: ``starter``, ``realcode``, ...)."""
    return _bundled("task_suites")


def realcode_recipe() -> Path:
    """The recipe of the real-code suite that ``repogym realcode`` builds and plays."""
    return bundled_suites_dir() / "realcode" / "recipe.yaml"


def env_recipes_dir() -> Path:
    """The sandbox image recipes (``<dir>/<name>/env.toml``): ``$REPOGYM_ENVS_DIR`` or the bundled ``envs/``."""
    return Path(os.environ["REPOGYM_ENVS_DIR"]) if os.environ.get("REPOGYM_ENVS_DIR") else _bundled("envs")
