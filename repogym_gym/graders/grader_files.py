"""Which files of a tree are the grader's in a test run: the judge compares their code with their bytes.

A scored run's grader files are the files behind its ids; a whole-suite run (the miners', no ids)
has none to go by, so its test files are found as pytest will collect them: the files matching the
package's ``python_files`` patterns (pytest's default ``test_*.py *_test.py``) under the paths its
command names. Mining must see the test files as grading will (the judge rewrites their
comparisons, and lets their own code use what it denies the package's: toolz's doctest test makes a
``pdb.Pdb``), or the outcomes it records are not the ones grading gives.
"""

from __future__ import annotations

import fnmatch
import os
import shlex
from pathlib import Path

from repogym_gym.spec import TestSpec

__all__ = ["grader_files", "suite_test_files"]

_DEFAULT_PATTERNS = ("test_*.py", "*_test.py")
_SKIPPED_DIRS = frozenset((".git", "__pycache__", ".venv", "venv", ".tox", ".nox", "node_modules", "build", "dist"))


def grader_files(repo: Path, spec: TestSpec, sentinel_file: str | None, python_files: str = "") -> list[str]:
    """Files of ``repo`` (relative, sorted) whose code the judge compares with their bytes: the files
    behind the scored ids (every test file of the suite when there are none), the sentinel, the
    test support modules beside them and every ``conftest.py`` (none of them carried from a
    submission). ``python_files``: the package's pytest setting of that name (whitespace-separated
    globs; empty for pytest's default)."""
    ids = [*spec.fail_to_pass, *spec.pass_to_pass]
    found = {i.split("::", 1)[0] for i in ids if "::" in i} if ids else suite_test_files(repo, spec, python_files)
    found |= {sentinel_file} if sentinel_file else set()
    folders = spec.support_dirs() if ids else sorted({f.rpartition("/")[0] for f in found} - {""})
    for folder in folders:
        try:
            entries = list(os.scandir(repo / folder))
        except OSError:
            continue
        found |= {f"{folder}/{e.name}" for e in entries if e.name.endswith(".py") and e.is_file(follow_symlinks=False)}
    for top, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(top, d)) and d not in (".git", "__pycache__")]
        if "conftest.py" in names:
            found.add(os.path.relpath(os.path.join(top, "conftest.py"), repo))
    return sorted(f for f in found if f.endswith(".py"))


def suite_test_files(repo: Path, spec: TestSpec, python_files: str = "") -> set[str]:
    """The test files a whole-suite run of ``spec.command`` collects in ``repo`` (relative paths): every
    file matching ``python_files`` (pytest's default patterns if empty) under each path the command
    names that exists in ``repo`` (the whole tree if it names none); symlinked directories and
    virtual environments are not entered."""
    patterns = tuple(python_files.split()) or _DEFAULT_PATTERNS
    root = repo.resolve()
    starts: list[Path] = []
    try:
        words = shlex.split(spec.command)
    except ValueError:
        words = spec.command.split()
    for word in words:
        if word.startswith("-") or "{junit}" in word or word in ("python", "python3", "pytest") or os.path.isabs(word):
            continue
        path = repo / word.split("::", 1)[0]
        try:
            if path.resolve().is_relative_to(root) and (path.is_dir() or path.is_file()):
                starts.append(path)
        except (OSError, ValueError):
            continue
    found: set[str] = set()
    for start in starts or [repo]:
        if start.is_file():
            found.add(start.relative_to(repo).as_posix())
            continue
        for top, dirs, names in os.walk(start):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not os.path.islink(os.path.join(top, d)))
            for name in names:
                if name.endswith(".py") and any(fnmatch.fnmatch(name, p) for p in patterns):
                    found.add(Path(os.path.relpath(os.path.join(top, name), repo)).as_posix())
    return found
