"""ConstraintGrader: scope and tampering rules, always a gate, always run first.

Each declared rule is one check; ``score = 1 - violated / checks`` and ``passed`` requires no
violation (design doc 000, "ConstraintGrader"). Two checks are always on: ``protected_files``
(a protected file changed: the change was not carried) and ``file_types`` (a symlink, special
or oversized file was submitted: not carried; or a changed Python file is not plain source text).

The source-text rule keeps the gates measuring the text Python runs: a changed Python file must be
UTF-8 (a ``# coding:`` cookie naming another codec, ``raw_unicode_escape`` say, makes Python read
``\u0069mport`` as ``import`` where a pattern sees escapes, and the codec a cookie names is state
the code under test can replace) and may hold no carriage return outside CRLF (Python ends a line
at a lone CR, git does not, so ``max_lines_changed`` would count five lines as one). Patterns are
matched per patch line, split at ``\n`` only (``str.splitlines`` also splits at form feeds, which
Python reads as spaces, and the pieces lost their ``+``).
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import PurePosixPath

import pathspec

from repogym_gym.graders.base import GradingContext, component
from repogym_gym.results import GradeComponent, Role

__all__ = ["ConstraintGrader", "added_lines"]


def _header_path(value: str) -> str | None:
    """The path of a ``+++ b/...`` header value (C-quoted or not); None for /dev/null."""
    if value.startswith('"') and value.endswith('"'):
        value = value[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
    return value[2:] if value.startswith("b/") else None


def added_lines(patch: str) -> dict[str, list[str]]:
    """Added lines of a git-format patch, by path.

    File headers (``--- a/...``, ``+++ b/...``) are read only between ``diff --git`` and the
    first ``@@`` hunk of a file, so an added line that itself starts with ``++`` is an added line.
    """
    lines: dict[str, list[str]] = {}
    current: str | None = None
    in_header = False
    for line in patch.split("\n"):  # git's line ends only (splitlines also splits at \x0c, \x1c-\x1e, \x85)
        if line.startswith("diff --git "):
            current, in_header = None, True
        elif in_header and line.startswith("+++ "):
            current = _header_path(line[4:])
        elif line.startswith("@@"):
            in_header = False
        elif not in_header and current is not None and line.startswith("+"):
            lines.setdefault(current, []).append(line[1:])
    return lines


_SCRIPT = re.compile(r"[\w./-]+\.py\b")


def _commands(ctx: GradingContext) -> str:
    """The task's test and benchmark commands, where the scripts it runs are named."""
    spec = ctx.task.spec
    return "\n".join([*([spec.tests.command] if spec.tests is not None else []),
                      *([spec.perf.command] if spec.perf is not None else [])])


def _shadows_stdlib(ctx: GradingContext, rel: str) -> list[str]:
    """A changed module named like a standard library module outside any package (``benchmarks/random.py``)
    shadows it for every script and test run from its directory (Python puts a script's directory
    first on ``sys.path``): red-team round 15 replaced ``random`` for the perf benchmark with a module
    that swapped in fast functions, the graded code untouched, and scored perf 1.0."""
    parts = rel.split("/")
    if not parts[-1].endswith((".py", ".so", ".pyd", ".pyc")):
        return []
    # a module's name is all before .py, or before the first dot of a compiled or native file's tags
    stem = parts[-1][:-3] if parts[-1].endswith(".py") else parts[-1].split(".", 1)[0]
    folder = parts[:-1]
    if stem == "__init__":  # a package's __init__ of any importable kind (round 20: a native one) names its folder
        if len(parts) < 2:
            return []
        stem, folder = parts[-2], parts[:-2]
    if stem not in sys.stdlib_module_names:
        return []
    # Inside a package a module shadows nothing, unless its folder is one a task's command runs a
    # script from: Python puts that folder first on sys.path whatever it holds (round 20 made
    # benchmarks/ a package with an empty __init__.py and kept its random shim there).
    script_dirs = {str(PurePosixPath(p).parent).removeprefix("./") for p in _SCRIPT.findall(_commands(ctx))}
    if folder and "/".join(folder) not in script_dirs and (ctx.repo.joinpath(*folder) / "__init__.py").is_file():
        return []
    return [f"{rel} is named like the standard library's {stem} outside a package, so it shadows it for code run from "
            f"{'/'.join(folder) or 'the repository root'}"]


#: File names Python imports or runs as source.
_PYTHON_SUFFIXES = (".py", ".pyw", ".pyi")
_LONE_CR = re.compile(rb"\r(?!\n)")


def _source_text(ctx: GradingContext, rel: str) -> list[str]:
    """Why a changed Python file is not plain UTF-8 text with ``\n`` or CRLF line ends ([] if it is)."""
    if not rel.endswith(_PYTHON_SUFFIXES):
        return []
    path = ctx.repo / rel
    if not path.is_file() or path.is_symlink():
        return []
    data = path.read_bytes()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown codec or a cookie that disagrees with a BOM
        return [f"{rel}: its source encoding cannot be read ({str(exc)[:80]}); only UTF-8 source is graded"]
    problems = []
    if encoding not in ("utf-8", "utf-8-sig"):
        problems.append(f"{rel}: declares the source encoding {encoding[:40]!r}; only UTF-8 source is graded")
    if _LONE_CR.search(data):
        problems.append(f"{rel}: holds a carriage return outside CRLF (Python ends a line there, git does not)")
    return problems


@dataclass
class _Check:
    name: str
    violations: list[str]


class ConstraintGrader:
    """Scope and pattern rules over the submission (a gate)."""

    name = "constraints"
    role: Role = "gate"

    def grade(self, ctx: GradingContext) -> GradeComponent:
        spec = ctx.task.spec.constraints
        changes = ctx.snapshot.changes
        checks = [
            _Check("protected_files", [r.reason for r in changes.rejected if r.rule == "protected"]),
            _Check("file_types", [r.reason for r in changes.rejected if r.rule != "protected"]
                   + [v for c in changes.carried if c.status != "deleted" for v in _source_text(ctx, c.path)]
                   + [v for c in changes.carried if c.status != "deleted" for v in _shadows_stdlib(ctx, c.path)]),
        ]
        changed = changes.files_changed()
        if spec.allowed_files is not None:
            allowed = pathspec.GitIgnoreSpec.from_lines(spec.allowed_files)
            checks.append(_Check("allowed_files", [f"{p} is outside allowed_files" for p in changed if not allowed.match_file(p)]))
        if spec.max_files_changed is not None:
            over = len(changed) > spec.max_files_changed
            checks.append(_Check("max_files_changed", [f"{len(changed)} files changed, limit {spec.max_files_changed}"] if over else []))
        if spec.max_lines_changed is not None:
            lines = ctx.snapshot.lines_changed
            over = lines > spec.max_lines_changed
            checks.append(_Check("max_lines_changed", [f"{lines} lines changed, limit {spec.max_lines_changed}"] if over else []))
        added = added_lines(ctx.snapshot.patch)
        for pattern in spec.forbidden_patterns:
            regex = re.compile(pattern)
            hits = [f"forbidden pattern {pattern!r} added in {path}" for path, ls in added.items() if any(regex.search(x) for x in ls)]
            checks.append(_Check(f"forbidden:{pattern}", hits))
        for pattern in spec.required_patterns:
            regex = re.compile(pattern)
            texts = [ctx.read(p) for p in self._pattern_files(ctx)]
            found = any(regex.search(t) for t in texts)
            checks.append(_Check(f"required:{pattern}", [] if found else [f"required pattern {pattern!r} not found in {spec.paths or 'the changed files'}"]))
        violated = [c for c in checks if c.violations]
        messages = [v for c in violated for v in c.violations]
        return component(
            self,
            score=1.0 - len(violated) / len(checks),
            passed=not violated,
            messages=messages,
            details={"checks": {c.name: c.violations for c in checks}, "ignored_caches": len(changes.ignored)},
        )

    @staticmethod
    def _pattern_files(ctx: GradingContext) -> list[str]:
        paths = ctx.task.spec.constraints.paths
        if not paths:
            return ctx.changed_files()
        files: list[str] = []
        for rel in paths:
            target = ctx.repo / rel
            if target.is_dir():
                files += sorted(p.relative_to(ctx.repo).as_posix() for p in target.rglob("*") if p.is_file() and not p.is_symlink())
            else:
                files.append(rel)
        return files
