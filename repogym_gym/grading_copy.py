"""The grading copy: a fresh, grader-owned copy of the baseline with a submission carried in.

Every grading (tests, perf, the Test action) runs in one of these, never in the agent's
workspace: the cached baseline is copied and verified against its manifest, the carried changes
are written in (deletions first, then files, each in path order, never through a symlink), and
the task's hidden files are injected last so nothing the submission carried can stand in for
them. The agent's processes never see the copy.

Example:
    >>> hidden = build_grading_copy(task, baseline, snapshot, tmp / "repo")     # doctest: +SKIP
"""

from __future__ import annotations

import os
from pathlib import Path

from repogym_gym.baseline import Baseline, copy_tree
from repogym_gym.changes import CarriedFile, ChangeSet
from repogym_gym.errors import PathEscapeError, WorkspaceError
from repogym_gym.task import Task
from repogym_gym.tree import GIT_MODE_EXECUTABLE, GIT_MODE_SYMLINK, remove_path, scan_tree, write_file_safely
from repogym_gym.workspace import Snapshot

__all__ = ["build_grading_copy", "inject_hidden"]


def build_grading_copy(task: Task, baseline: Baseline, snapshot: Snapshot | ChangeSet | None, repo: Path,
                       *, hidden: bool = True, hidden_tests: bool = True) -> tuple[str, ...]:
    """Make ``repo`` (which must not exist) a fresh copy of the baseline with the submission carried in.

    The copy is verified against the baseline manifest before anything is written (a tampered
    cache raises), then the carried changes are written (every deletion first, then the files,
    each in path order) and, with
    ``hidden``, the hidden files injected (``hidden_tests=False`` leaves out the hidden test files,
    for a run no judge watches: a benchmark). ``snapshot=None`` gives the pristine baseline.

    Returns:
        The injected hidden paths.

    Raises:
        WorkspaceError: when the cached baseline no longer matches its manifest.
        PathEscapeError: when a carried path cannot be written inside the copy.
    """
    copy_tree(baseline.tree, repo)
    if scan_tree(repo) != dict(baseline.manifest):
        raise WorkspaceError(f"the cached baseline of {task.id!r} at {baseline.tree} was modified; delete it to rebuild")
    changes = snapshot.changes if isinstance(snapshot, Snapshot) else snapshot
    carried = changes.carried if changes else ()
    ordered = [c for c in carried if c.status == "deleted"] + [c for c in carried if c.status != "deleted"]
    for change in ordered:
        try:
            _carry(repo, change)
        except OSError as exc:  # the submission's own layout (a directory turned into a file...)
            raise PathEscapeError(f"cannot carry {change.path!r}: {exc.strerror or exc}") from None
    return tuple(inject_hidden(task, repo, tests=hidden_tests)) if hidden else ()


def _carry(repo: Path, change: CarriedFile) -> None:
    """Write one carried change into a grader-owned copy (deletions through a file are no-ops)."""
    target = repo / change.path
    if change.status == "deleted":
        if not any(p.is_symlink() or (p.exists() and not p.is_dir()) for p in target.parents if repo in p.parents):
            remove_path(target)
    elif change.git_mode == GIT_MODE_SYMLINK:
        write_file_safely(repo, change.path, b"")  # checks the parents, then replace by the link
        remove_path(target)
        os.symlink(change.data or b"", os.fsencode(target))  # bytes: a target need not be UTF-8
    else:
        write_file_safely(repo, change.path, change.data or b"", 0o755 if change.git_mode == GIT_MODE_EXECUTABLE else 0o644)


def inject_hidden(task: Task, repo: Path, *, tests: bool = True) -> list[str]:
    """Copy the task's hidden files into ``repo`` (a grader-owned copy) at their relative paths.

    Only regular files are copied; a file or symlink standing where a hidden file's directory
    must be is removed (never followed), so hidden tests always land inside ``repo``. With
    ``tests=False`` the hidden test files (those of the scored ids, and any ``test_*.py``,
    ``*_test.py`` or ``conftest.py``) are left out: the hidden rest (a benchmark) still is copied.

    Returns:
        The injected relative paths.
    """
    hidden = task.hidden_dir
    if hidden is None:
        return []
    injected = []
    ids = (*task.spec.tests.fail_to_pass, *task.spec.tests.pass_to_pass) if task.spec.tests is not None else ()
    scored = {test_id.split("::", 1)[0] for test_id in ids}
    for path in sorted(hidden.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = path.relative_to(hidden).as_posix()
            if not tests and (rel in scored or path.name == "conftest.py" or
                              (path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test")))):
                continue
            mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            write_file_safely(repo, rel, path.read_bytes(), mode, clear_parents=True)
            injected.append(rel)
    return injected
