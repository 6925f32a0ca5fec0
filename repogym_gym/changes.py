"""What a submission changed, and what of it is carried into grading.

Every path that differs from the baseline manifest is classified:

- **carried**: regular files (and, if the task allows, symlinks that stay inside the tree)
  added, modified or deleted; their bytes are read once, here, and only these bytes reach the
  grader's fresh copy of the baseline;
- **rejected**: symlinks, special files, oversized files (one past 20 MiB, any past 32 MiB
  carried in all, any past 1 GiB of the tree read to find changes), protected files, paths past
  1,024 bytes, paths that are not valid UTF-8 and whatever could not be read (a directory nested
  past PATH_MAX, an unreadable one); never carried, and each one is a constraint violation (a
  failed gate, so the score is 0). Rejected paths are shown as valid UTF-8 (lone surrogates
  replaced, see :mod:`repogym_gym.safetext`; the reason quotes the bytes);
- **ignored**: bytecode and tool caches; never carried, never a violation (running the visible
  tests creates them).

Protected by default: the files behind fail_to_pass / pass_to_pass ids, the ``__init__.py`` of
their directories, ``tests.restore``,
every ``conftest.py``, ``pytest.ini``, ``.pytest.ini``, ``pytest.toml``, ``tox.ini``, ``setup.cfg``, ``sitecustomize.py``,
``usercustomize.py``, ``*.pth``, the ``tool.pytest`` table of any ``pyproject.toml``, and the
task's ``constraints.protected_files``; ``constraints.allow_protected`` lifts a default (never
a test file).
"""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pathspec

from repogym_gym.safetext import first_surrogate, safe_text
from repogym_gym.task import Task
from repogym_gym.tree import GIT_MODE_SYMLINK, UNHASHED, Entry, TreeChange, diff_manifests, git_mode, scan_tree

__all__ = [
    "DEFAULT_PROTECTED",
    "CACHE_PATTERNS",
    "CarriedFile",
    "CarryPolicy",
    "ChangeSet",
    "Rejection",
    "collect_changes",
    "display_path",
]

DEFAULT_PROTECTED = (
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
    "setup.cfg",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
)
CACHE_PATTERNS = ("__pycache__/", "*.pyc", "*.pyo", ".pytest_cache/", ".mypy_cache/", ".ruff_cache/", ".hypothesis/")
#: Largest file carried into grading, bytes.
MAX_CARRIED_FILE_BYTES = 20 * 1024 * 1024
#: Most bytes carried into grading in all (the carried bytes are held in memory while grading).
MAX_CARRIED_TOTAL_BYTES = 32 * 1024 * 1024
#: Most bytes of the work tree read to find what changed; files past it are rejected unread.
MAX_HASHED_BYTES = 1024 * 1024 * 1024
#: Longest relative path carried, bytes (grading copies live deeper than workspaces; PATH_MAX is 4096).
MAX_CARRIED_PATH_BYTES = 1024

RejectRule = Literal["symlink", "special", "protected", "too_large", "too_long", "bad_name", "unreadable"]


@dataclass(frozen=True)
class CarriedFile:
    """A change that reaches grading.

    Attributes:
        path: Relative posix path.
        status: ``added``, ``modified`` or ``deleted``.
        git_mode: 0o100644, 0o100755 or 0o120000 (symlink); 0 when deleted.
        data: The bytes read at snapshot time (a symlink's target); None when deleted.
    """

    path: str
    status: Literal["added", "modified", "deleted"]
    git_mode: int
    data: bytes | None


@dataclass(frozen=True)
class Rejection:
    """A change that is not carried and violates a rule."""

    path: str
    rule: RejectRule
    reason: str


@dataclass(frozen=True)
class ChangeSet:
    """Everything a submission changed, classified.

    Attributes:
        carried: Changes written into the grading copy, sorted by path.
        rejected: Changes refused (each a constraint violation).
        ignored: Cache paths that changed and were dropped.
    """

    carried: tuple[CarriedFile, ...]
    rejected: tuple[Rejection, ...]
    ignored: tuple[str, ...]

    @property
    def empty(self) -> bool:
        """True when nothing but caches changed."""
        return not self.carried and not self.rejected

    def files_changed(self) -> list[str]:
        """Paths carried or rejected, sorted."""
        return sorted({c.path for c in self.carried} | {r.path for r in self.rejected})


class CarryPolicy:
    """Decides, path by path, whether a change is carried, rejected or ignored.

    Args:
        exact_protected: Paths protected exactly (test files behind ids); never lifted.
        protected_globs: .gitignore-style globs of protected paths.
        allow_protected: Globs lifting ``protected_globs``.
        allow_symlinks: Carry symlinks whose target stays inside the tree.
    """

    def __init__(
        self,
        exact_protected: frozenset[str] = frozenset(),
        protected_globs: tuple[str, ...] = DEFAULT_PROTECTED,
        allow_protected: tuple[str, ...] = (),
        allow_symlinks: bool = False,
    ) -> None:
        self.exact_protected = exact_protected
        self._protected = pathspec.GitIgnoreSpec.from_lines(protected_globs)
        self._allowed = pathspec.GitIgnoreSpec.from_lines(allow_protected)
        self._caches = pathspec.GitIgnoreSpec.from_lines(CACHE_PATTERNS)
        self.allow_symlinks = allow_symlinks

    @classmethod
    def for_task(cls, task: Task) -> CarryPolicy:
        """The policy of ``task``: defaults plus its test files and constraints."""
        spec = task.spec
        tests = spec.tests
        test_files = tests.test_files() if tests is not None else []
        # a test directory's package __init__ runs at collection, before any test: protect it too
        inits = {f"{d}/__init__.py" if d else "__init__.py" for d in {f.rpartition("/")[0] for f in test_files}}
        exact = frozenset(test_files) | frozenset(tests.restore if tests is not None else ()) | frozenset(inits)
        return cls(
            exact_protected=exact,
            protected_globs=(DEFAULT_PROTECTED + tuple(f"/{d}/*.py" for d in (tests.support_dirs() if tests is not None else ()))
                             + tuple(spec.constraints.protected_files)),
            allow_protected=tuple(spec.constraints.allow_protected),
            allow_symlinks=spec.constraints.allow_symlinks,
        )

    def is_cache(self, path: str) -> bool:
        return self._caches.match_file(path)

    def is_protected(self, path: str) -> bool:
        if path in self.exact_protected:
            return True
        return self._protected.match_file(path) and not self._allowed.match_file(path)


def _pytest_table(path: Path) -> object:
    """The ``tool.pytest`` table of a ``pyproject.toml`` (None without one), or an ``unreadable``
    marker: a file that is not a regular file, too large, not UTF-8, not TOML or nested too deeply
    for the parser (tomllib recurses: 5,000 nested arrays overflow it) never parses as "no table"."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return ("unreadable", str(exc))
    try:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return ("unreadable", "not a regular file")
            raw = fh.read(MAX_CARRIED_FILE_BYTES + 1)
        if len(raw) > MAX_CARRIED_FILE_BYTES:
            return ("unreadable", f"over {MAX_CARRIED_FILE_BYTES} bytes")
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as exc:  # not UTF-8, not TOML, an integer past the interpreter's digit limit
        return ("unreadable", str(exc)[:200])
    except (RecursionError, MemoryError) as exc:
        return ("unreadable", f"nested too deeply to parse ({type(exc).__name__})")
    return data.get("tool", {}).get("pytest") if isinstance(data.get("tool"), dict) else None


def display_path(path: str) -> str:
    """``path`` as it may be shown (valid UTF-8, see :mod:`repogym_gym.safetext`); long paths are cut."""
    shown = safe_text(path)
    return shown if len(shown) <= 200 else shown[:100] + "..." + shown[-80:]


def _symlink_inside(root: Path, rel: str) -> bool:
    target = os.readlink(root / rel)
    resolved = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    return not os.path.isabs(target) and not resolved.startswith("..") and resolved != "."


def _classify(change: TreeChange, root: Path, baseline_tree: Path, policy: CarryPolicy) -> CarriedFile | Rejection:
    path, new = change.path, change.new
    shown = display_path(path)
    if len(os.fsencode(path)) > MAX_CARRIED_PATH_BYTES:
        return Rejection(shown, "too_long", f"a path of {len(os.fsencode(path))} bytes is over the "
                         f"{MAX_CARRIED_PATH_BYTES}-byte limit; it is not carried")
    if first_surrogate(path) is not None:
        return Rejection(shown, "bad_name", f"the path {os.fsencode(path)!r} is not valid UTF-8; it is not carried")
    if new is not None and new.kind == "unreadable":
        return Rejection(path, "unreadable", f"{path} could not be read ({new.digest}); it is not carried")
    if new is not None and new.kind == "file" and new.digest == UNHASHED:
        return Rejection(path, "too_large", f"{path} was not read: the work tree holds more than "
                         f"{MAX_HASHED_BYTES} bytes of files; it is not carried")
    if policy.is_protected(path):
        return Rejection(path, "protected", f"{path} is protected ({change.status}); the change is not carried")
    if (Path(path).name == "pyproject.toml" and (new is None or new.kind == "file")
            and _pytest_table(baseline_tree / path) != _pytest_table(root / path)):
        return Rejection(path, "protected", f"{path}: its [tool.pytest] test settings changed; the change is not carried")
    if new is None:
        return CarriedFile(path, "deleted", 0, None)
    if new.kind == "special":
        return Rejection(path, "special", f"{path} is a fifo, socket or device; only regular files are carried")
    if new.kind == "symlink":
        if policy.allow_symlinks and _symlink_inside(root, path):
            return CarriedFile(path, change.status, GIT_MODE_SYMLINK, os.fsencode(os.readlink(root / path)))
        return Rejection(path, "symlink", f"{path} is a symlink; symlinks are not carried")
    if new.size > MAX_CARRIED_FILE_BYTES:
        return Rejection(path, "too_large", f"{path} is {new.size} bytes, over the {MAX_CARRIED_FILE_BYTES}-byte limit")
    fd = os.open(root / path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since it was hashed
            return Rejection(path, "special", f"{path} is no longer a regular file; only regular files are carried")
        data = fh.read(MAX_CARRIED_FILE_BYTES + 1)
    if len(data) > MAX_CARRIED_FILE_BYTES:  # grew after it was hashed
        return Rejection(path, "too_large", f"{path} is over the {MAX_CARRIED_FILE_BYTES}-byte limit")
    return CarriedFile(path, change.status, git_mode(new), data)


def collect_changes(
    root: Path, baseline_tree: Path, baseline_manifest: dict[str, Entry], policy: CarryPolicy
) -> ChangeSet:
    """Hash ``root``, compare it with the baseline and classify every difference.

    Args:
        root: The work tree to snapshot (the agent's workspace).
        baseline_tree: The baseline's tree (to compare ``pyproject.toml`` test settings).
        baseline_manifest: The baseline's manifest.
        policy: What is carried, rejected or ignored.

    Returns:
        The classified ChangeSet; carried bytes are read once, here.
    """
    carried: list[CarriedFile] = []
    rejected: list[Rejection] = []
    ignored: list[str] = []
    budget = MAX_CARRIED_TOTAL_BYTES
    for change in diff_manifests(baseline_manifest, scan_tree(root, max_hashed_bytes=MAX_HASHED_BYTES)):
        if policy.is_cache(change.path):
            ignored.append(change.path)
            continue
        size = change.new.size if change.new is not None and change.new.kind == "file" else 0
        if size > budget and size <= MAX_CARRIED_FILE_BYTES:
            shown = display_path(change.path)
            rejected.append(Rejection(shown, "too_large", f"{shown}: the submission passes {MAX_CARRIED_TOTAL_BYTES} "
                                      "bytes of carried files in all; it is not carried"))
            continue
        try:
            verdict = _classify(change, root, baseline_tree, policy)
        except OSError as exc:  # replaced or removed while we read it
            shown = display_path(change.path)
            verdict = Rejection(shown, "special", f"{shown} could not be read as a regular file: {exc.strerror or exc}")
        if isinstance(verdict, CarriedFile):
            budget -= len(verdict.data or b"")
            carried.append(verdict)
        else:
            rejected.append(verdict)
    carried, blocked = _unblock(carried, rejected, baseline_manifest)
    return ChangeSet(tuple(carried), tuple(rejected + blocked), tuple(ignored))


def _unblock(carried: list[CarriedFile], rejected: list[Rejection],
             baseline: dict[str, Entry]) -> tuple[list[CarriedFile], list[Rejection]]:
    """Refuse a carried file that would replace a directory still holding baseline files.

    A baseline file under ``P/`` stays in the grading copy unless its deletion is carried (a
    protected one never is), so a file carried at ``P`` would have to destroy it.
    """
    deleted = {c.path for c in carried if c.status == "deleted"}
    kept, blocked = [], []
    for change in carried:
        prefix = change.path + "/"
        staying = change.status != "deleted" and any(p.startswith(prefix) and p not in deleted for p in baseline)
        if staying:
            blocked.append(Rejection(change.path, "protected",
                                     f"{change.path} would replace a directory that keeps protected files; not carried"))
        else:
            kept.append(change)
    return kept, blocked
