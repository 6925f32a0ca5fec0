"""What a confining sandbox must hide from a task's commands: every place on disk that holds its answer.

A confining sandbox shows an allowlist (system directories, a minimal interpreter, the task's
Python environment, the workspace), so none of these places is normally in sight; they are
hidden too, in case one lies under a shown directory (a suite installed under ``/usr/share``,
say), since "hide the task directory" alone is not enough: the answer of a task also sits

- in the **suite** around the task (the other tasks' hidden tests and golden patches: with
  ``RepoGym/Suite-v0`` the agent meets them all, so reading one now is reading its answer later);
- in the **git checkout** holding the task or its suite (every committed version of
  ``hidden/`` and ``solution.patch`` is in its history, however the work tree looks), and in
  the git directory a ``.git`` file points to (worktrees, submodules);
- in a **git source** on this machine (``repo.source.url`` a local path or ``file://`` URL):
  its commits after the baseline hold the fix (a mined task's repository *is* the fix's history).

Example:
    >>> from repogym_gym.task import load_task
    >>> task = load_task("task_suites/starter/pagination-off-by-one")     # doctest: +SKIP
    >>> [p.name for p in secret_paths(task)]                               # doctest: +SKIP
    ['pagination-off-by-one', 'starter', 'main']
"""

from __future__ import annotations

import os
from pathlib import Path

from repogym_gym.spec import GitSource
from repogym_gym.task import Task

__all__ = ["checkout_paths", "secret_paths"]

_REMOTE = ("http://", "https://", "ssh://", "git://")


def _is_suite(directory: Path, task_root: Path) -> bool:
    """True when ``directory`` holds another task besides ``task_root`` (a sibling with a task.yaml)."""
    try:
        entries = list(directory.iterdir())
    except OSError:
        return False
    return any(e != task_root and (e / "task.yaml").is_file() for e in entries)


def checkout_paths(path: Path) -> list[Path]:
    """The git checkout holding ``path`` (its top directory) and the git directory its ``.git``
    file points to, if any; ``[]`` outside a checkout. ``/`` itself is never returned."""
    found: list[Path] = []
    for directory in (path, *path.parents):
        dot_git = directory / ".git"
        if not os.path.lexists(dot_git):
            continue
        if directory != Path(directory.anchor):
            found.append(directory)
        if dot_git.is_file():
            try:
                line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                line = ""
            if line.startswith("gitdir:"):
                git_dir = (directory / line.removeprefix("gitdir:").strip()).resolve()
                found.append(git_dir)
                common = git_dir / "commondir"
                if common.is_file():
                    found.append((git_dir / common.read_text(encoding="utf-8", errors="replace").strip()).resolve())
        break
    return found


def _local_git_source(task: Task) -> Path | None:
    source = task.spec.repo.source
    if not isinstance(source, GitSource):
        return None
    url = source.url
    if url.startswith("file://"):
        return Path(url.removeprefix("file://"))
    if url.startswith(_REMOTE) or (":" in url.split("/", 1)[0]):  # a URL or scp-like host:path
        return None
    path = Path(url)
    return path if path.is_absolute() else (task.root / path).resolve()


def secret_paths(task: Task) -> list[Path]:
    """Host paths that hold ``task``'s answer (see the module docstring), real and de-duplicated.

    The task directory always comes first; the baseline cache is the caller's to add.
    """
    root = task.root.resolve()
    paths = [root]
    if _is_suite(root.parent, root):
        paths.append(root.parent)
    paths += checkout_paths(root)
    source = _local_git_source(task)
    if source is not None and source.exists():
        paths += [source.resolve(), *checkout_paths(source.resolve())]
    return list(dict.fromkeys(p for p in paths if p != Path(p.anchor)))
