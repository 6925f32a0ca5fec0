"""Discover, load and filter task directories.

A task directory holds ``task.yaml``, the source snapshot (``repo/`` by default), optional
hidden tests (``hidden/``) and the golden patch (``solution.patch``)::

    my-task/
      task.yaml
      repo/            source snapshot (LocalSource.path)
      hidden/          files copied into the repository only while grading
      solution.patch   the golden patch (git diff format, paths relative to repo/)

Example:
    >>> tasks = load_tasks("task_suites/starter", types=["bugfix"])  # doctest: +SKIP
"""

from __future__ import annotations

import difflib
import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import yaml
from pydantic import ValidationError

from repogym_gym.errors import TaskError, TaskNotFoundError, TaskSpecError, validation_problems
from repogym_gym.paths import bundled_suites_dir
from repogym_gym.spec import LocalSource, TaskSpec, TaskType
from repogym_gym.tree import scan_tree
from repogym_gym.yamlfile import load_yaml, read_yaml_bytes

__all__ = ["Task", "discover_tasks", "dump_yaml", "format_validation_error", "load_task", "load_tasks", "parse_spec",
           "parse_spec_file", "read_patch", "resolve_location", "resolve_suite", "resolve_task"]

TASK_FILE = "task.yaml"
SOLUTION_FILE = "solution.patch"


def read_patch(path: Path, *, what: str) -> str:
    """The text of a patch file, byte-exact: no newline translation (a CRLF patch stays CRLF, as git
    reads it) and bytes that are not UTF-8 carried as surrogate escapes, which
    :func:`~repogym_gym.gitstore.git_apply` writes back as the same bytes. Grading, validation and
    the golden agent all read patches here, so they see the same bytes.

    Raises:
        TaskError: naming ``what`` and the path when the file cannot be read.
    """
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except OSError as exc:
        raise TaskError(f"{what} at {path} cannot be read: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class Task:
    """A validated task spec and the directory it was loaded from.

    Attributes:
        spec: The validated ``task.yaml``.
        root: The task directory (absolute).
    """

    spec: TaskSpec
    root: Path

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def source_dir(self) -> Path | None:
        """The local source snapshot (``repo.source.path`` under the task directory), or None.

        None when the source is not local (git, pypi, tarball: see :mod:`repogym_gym.sources`).
        """
        source = self.spec.repo.source
        return self.root / source.path if isinstance(source, LocalSource) else None

    @property
    def hidden_dir(self) -> Path | None:
        """The hidden-test directory, or None when the task declares none or it does not exist."""
        if self.spec.tests is None or self.spec.tests.hidden is None:
            return None
        path = self.root / self.spec.tests.hidden
        return path if path.is_dir() else None

    @property
    def solution_path(self) -> Path:
        return self.root / SOLUTION_FILE

    def golden_patch(self) -> str:
        """The golden patch text, byte-exact (see :func:`read_patch`).

        Raises:
            TaskNotFoundError: when the task has no ``solution.patch``.
            TaskError: when it cannot be read.
        """
        if not self.solution_path.is_file():
            raise TaskNotFoundError(f"task {self.id!r} has no golden patch at {self.solution_path}")
        return read_patch(self.solution_path, what=f"task {self.id!r}: the golden patch")

    @cached_property
    def fingerprint(self) -> str:
        """Hex sha256 over task.yaml and a local source's files (the cache key of its baseline).

        Each local path contributes its kind, mode and content hash (a symlink's target, never
        followed). Other sources are pinned by the spec itself (a git commit id, an sdist's or
        archive's sha256, all verified when fetched), so task.yaml covers them.

        Hidden tests and the golden patch are not part of it: they do not change the baseline.
        """
        digest = hashlib.sha256()
        digest.update(self.spec.model_dump_json().encode())
        for rel in self.spec.repo.patches:
            patch = self.root / rel
            digest.update(b"\0patch\0" + rel.encode() + b"\0" + (patch.read_bytes() if patch.is_file() else b"<missing>"))
        source = self.source_dir
        if source is not None and source.is_dir():
            for rel, entry in sorted(scan_tree(source).items()):
                digest.update(f"\0{rel}\0{entry.kind}\0{entry.mode:o}\0{entry.digest}".encode())
        return digest.hexdigest()


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (problem statements) as readable ``|`` blocks."""


_BlockDumper.add_representer(
    str, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)
)


def dump_yaml(data: object) -> str:
    """YAML for task files: keys in the given order, unicode kept, multi-line strings as blocks."""
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)


def format_validation_error(exc: ValidationError, source: str) -> str:
    """One readable message for a task.yaml error: ``source: field.path: problem (got value)`` per line
    (:func:`~repogym_gym.errors.validation_problems` against :class:`TaskSpec`)."""
    return "\n".join(f"{source}: {line}" for line in validation_problems(exc, model=TaskSpec, root="(top level)"))


def parse_spec(text: str | bytes, source: str) -> TaskSpec:
    """Parse YAML text (or UTF-8 bytes) into a TaskSpec.

    Raises:
        TaskSpecError: for YAML syntax errors, a file past :mod:`~repogym_gym.yamlfile`'s limits
            (size, aliases, depth, duplicate keys, not UTF-8), a non-mapping document, or schema
            violations; the message names ``source``, the field and the value.
    """
    data = load_yaml(text, source)
    if not isinstance(data, dict):
        raise TaskSpecError(f"{source}: expected a mapping of task fields at the top level, got {type(data).__name__}")
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise TaskSpecError(format_validation_error(exc, source)) from None


def parse_spec_file(path: Path) -> TaskSpec:
    """:func:`parse_spec` of the file at ``path`` (read under :data:`~repogym_gym.yamlfile.MAX_YAML_BYTES`).

    Raises:
        TaskSpecError: as :func:`parse_spec`, and when the file cannot be read.
    """
    return parse_spec(read_yaml_bytes(path), str(path))


def load_task(path: str | os.PathLike[str]) -> Task:
    """Load one task from its directory (or its task.yaml).

    Raises:
        TaskNotFoundError: when there is no task.yaml at ``path``.
        TaskSpecError: when the file does not validate.
    """
    path = Path(path).resolve()
    task_file = path if path.name == TASK_FILE else path / TASK_FILE
    if not task_file.is_file():
        raise TaskNotFoundError(f"no {TASK_FILE} at {path}")
    spec = parse_spec_file(task_file)
    task = Task(spec=spec, root=task_file.parent)
    source = spec.repo.source
    if isinstance(source, LocalSource) and not (task.root / source.path).is_dir():
        raise TaskSpecError(
            f"{task_file}: repo.source.path: directory {source.path!r} does not exist in the task directory"
        )
    return task


def discover_tasks(root: str | os.PathLike[str]) -> list[Path]:
    """Task directories at or below ``root`` (directories holding task.yaml), sorted.

    A task directory's own subdirectories are not searched (a task's repo may contain anything).

    Raises:
        TaskNotFoundError: when ``root`` does not exist.
    """
    root = Path(root)
    if not root.exists():
        raise TaskNotFoundError(f"no such task or suite directory: {root}")
    if (root / TASK_FILE).is_file() or root.name == TASK_FILE:
        return [root]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        if TASK_FILE in filenames:
            found.append(Path(dirpath))
            dirnames.clear()
        else:
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
    return sorted(found)


def load_tasks(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    ids: Iterable[str] | None = None,
    types: Iterable[TaskType] | None = None,
    tags: Iterable[str] | None = None,
) -> list[Task]:
    """Load every task under ``paths`` and keep those matching all given filters.

    Args:
        paths: Task directories or suite directories.
        ids: Keep only these task ids; an id that matches nothing raises.
        types: Keep only these task types.
        tags: Keep tasks carrying at least one of these tags.

    Raises:
        TaskSpecError: when a task does not validate or two tasks share an id.
        TaskNotFoundError: when a path or a requested id does not exist.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    tasks: dict[str, Task] = {}
    for path in paths:
        for task_dir in discover_tasks(path):
            task = load_task(task_dir)
            if task.id in tasks and tasks[task.id].root != task.root:
                raise TaskSpecError(
                    f"task id {task.id!r} is used twice: {tasks[task.id].root} and {task.root}"
                )
            tasks[task.id] = task
    selected = list(tasks.values())
    if ids is not None:
        wanted = list(ids)
        missing = [i for i in wanted if i not in tasks]
        if missing:
            close = {m: difflib.get_close_matches(m, list(tasks), n=1) for m in missing}
            hints = ", ".join(f"{m!r}" + (f" (did you mean {c[0]!r}?)" if c else "") for m, c in close.items())
            raise TaskNotFoundError(f"no task with id {hints}")
        selected = [t for t in selected if t.id in set(wanted)]
    if types is not None:
        kinds = set(types)
        selected = [t for t in selected if t.spec.type in kinds]
    if tags is not None:
        wanted_tags = set(tags)
        selected = [t for t in selected if wanted_tags & set(t.spec.tags)]
    return sorted(selected, key=lambda t: t.id)


def resolve_suite(suite: str | os.PathLike[str]) -> Path:
    """A bundled suite name (``"starter"``) or a directory, as a path.

    Raises:
        TaskNotFoundError: naming the bundled suites when neither exists.
    """
    path = Path(suite)
    if path.is_dir():
        return path
    bundled = bundled_suites_dir() / str(suite)
    if bundled.is_dir():
        return bundled
    names = sorted(_bundled_names()[0])
    raise TaskNotFoundError(f"no suite {str(suite)!r}: not a directory, and bundled suites are {names}{_did_you_mean(str(suite), names)}")


def _bundled_names() -> tuple[list[str], list[str]]:
    """The bundled suites' names and their tasks' ids, as ``id`` and ``suite/id``."""
    root = bundled_suites_dir()
    if not root.is_dir():
        return [], []
    suites = sorted(p.name for p in root.iterdir() if p.is_dir())
    found = sorted(root.glob(f"*/*/{TASK_FILE}"))
    return suites, [p.parent.name for p in found] + [f"{p.parent.parent.name}/{p.parent.name}" for p in found]


def _did_you_mean(name: str, candidates: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``candidates`` to ``name``, or ``""``."""
    close = difflib.get_close_matches(name, candidates, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def resolve_location(where: str | os.PathLike[str]) -> Path:
    """A task or suite directory, a bundled suite name (``"starter"``) or a bundled task's id, as a directory.

    Raises:
        TaskNotFoundError: naming the bundled suites when it is none of these.
    """
    path = Path(where)
    if path.exists():
        return path
    root = bundled_suites_dir()
    name = str(where)
    suites, ids = _bundled_names()
    if name in suites:
        return root / name
    if name in ids:
        return next(root.glob(f"*/{name}/{TASK_FILE}") if "/" not in name else iter([root / name / TASK_FILE])).parent
    raise TaskNotFoundError(f"no such task or suite directory: {where} (nor a bundled suite {suites} or bundled task id)"
                            f"{_did_you_mean(name, suites + ids)}")


def resolve_task(task: str | os.PathLike[str] | Task) -> Task:
    """A Task, a task directory, or the id of a bundled task, as a Task.

    Raises:
        TaskNotFoundError: when it is none of these.
    """
    if isinstance(task, Task):
        return task
    path = Path(task)
    if (path / "task.yaml").is_file() or path.name == "task.yaml":
        return load_task(path)
    ids = _bundled_names()[1]
    if str(task) in ids:
        return load_task(resolve_location(str(task)))
    raise TaskNotFoundError(f"no task {str(task)!r}: not a task directory nor the id of a bundled task"
                            f"{_did_you_mean(str(task), ids)}")
