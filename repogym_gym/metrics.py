r"""Per-function size and cyclomatic complexity, from the standard library's :mod:`ast`.

Pure functions, no third-party analyser: :func:`function_metrics` measures one source string,
:func:`file_metrics` measures files under a repository root. The quality grader compares these
numbers before and after a refactor.

Cyclomatic complexity is ``1`` plus one per decision point in the function's own code:

===========================================  ===========================================
``if`` and each ``elif`` (``ast.If``)        1 each
``for``, ``async for``, ``while``            1 each (their ``else`` is not counted)
``except`` handler                           1 each (``try``/``else``/``finally``: 0)
``a and b and c`` (``ast.BoolOp``)           number of operands - 1
``x if c else y``                            1
comprehension ``for`` clause                 1 each, plus 1 per ``if`` of that clause
``assert``                                   1
``case`` of a ``match``                      1 each (guards are not counted)
===========================================  ===========================================

``with`` / ``async with`` count 0. Lambdas belong to the enclosing function. A nested ``def``
(or a method of a class defined inside a function) is measured on its own and adds nothing to
the enclosing function, except its decorators and default values, which the enclosing function
evaluates. Statements in the body of a class defined inside a function run as part of that
function and count for it; module-level and class-level code outside any function is not
measured.
"""

from __future__ import annotations

import ast
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field, model_validator

from repogym_gym.tree import walk_tree

__all__ = ["FunctionMetrics", "file_metrics", "function_metrics"]

#: Largest file measured, bytes (the largest file carried into grading).
MAX_SOURCE_BYTES = 20 * 1024 * 1024
# O_NONBLOCK: a fifo standing where a source file was is refused, never waited on
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ONE_POINT = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.ExceptHandler,
    ast.IfExp,
    ast.Assert,
    ast.match_case,
)


class FunctionMetrics(BaseModel):
    """Size and complexity of one ``def`` or ``async def``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(description='File path, posix and relative to the repo; "<string>" if none.')
    qualname: str = Field(description='Python __qualname__, e.g. "C.m" or "f.<locals>.g".')
    lineno: int = Field(ge=1, description="Line of the `def` keyword, 1-based; no decorators.")
    end_lineno: int = Field(ge=1, description="Last line of the function body, 1-based.")
    length: int = Field(ge=1, description="end_lineno - lineno + 1, in lines.")
    complexity: int = Field(ge=1, description="Cyclomatic complexity: 1 + decision points.")

    @model_validator(mode="after")
    def _length_matches_lines(self) -> FunctionMetrics:
        expected = self.end_lineno - self.lineno + 1
        if self.length != expected:
            raise ValueError(
                f"length={self.length} disagrees with lineno={self.lineno} and "
                f"end_lineno={self.end_lineno}; it must be end_lineno - lineno + 1 = {expected}"
            )
        return self


def function_metrics(source: str, path: str = "<string>") -> list[FunctionMetrics]:
    r"""Measures every function of a module: methods and nested functions included.

    Args:
        source: Python source of one module.
        path: File path recorded in each result and in syntax errors (posix, repo-relative).

    Returns:
        One :class:`FunctionMetrics` per ``def`` / ``async def``, ordered by ``lineno``. Length is
        in lines from the ``def`` line to the last body line; complexity counts the decision
        points listed in this module's docstring. Empty if the module defines no function.

    Raises:
        SyntaxError: ``source`` does not parse, or is nested too deeply for the parser (Python's
            recursion limit); ``filename`` is ``path``.

    Example:
        >>> source = "def f(x):\n    if x:\n        return 1\n    return x and 2\n"
        >>> [(m.qualname, m.length, m.complexity) for m in function_metrics(source)]
        [('f', 4, 3)]
    """
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:  # null bytes are reported without a filename
        if exc.filename is None:
            exc.filename = path
        raise
    except (RecursionError, MemoryError) as exc:  # 100,000 nested `1+1+...` overflow the parser
        raise SyntaxError(f"nested too deeply to measure ({type(exc).__name__})", (path, 1, 1, None)) from None
    results = [
        FunctionMetrics(
            path=path,
            qualname=qualname,
            lineno=node.lineno,
            end_lineno=node.end_lineno or node.lineno,
            length=(node.end_lineno or node.lineno) - node.lineno + 1,
            complexity=1 + sum(_decision_points(inner) for inner in _own_nodes(node)),
        )
        for qualname, node in _functions(tree)
    ]
    return sorted(results, key=lambda metrics: metrics.lineno)


def file_metrics(root: Path, paths: Iterable[str]) -> list[FunctionMetrics]:
    """Measures the functions of files under a repository root.

    Args:
        root: Repository root that ``paths`` are relative to.
        paths: Posix paths relative to ``root``. A file is read as UTF-8 (a leading BOM is
            ignored); a symlink is followed only to a file inside ``root``. A directory stands
            for every regular ``*.py`` file below it, at any depth (symlinks are skipped, never
            followed), in sorted order. Each result's ``path`` is the normalised relative posix path.
            The code under test may have rewritten the tree: every read is bounded (files past
            :data:`MAX_SOURCE_BYTES` are refused) and never waits on a fifo.

    Returns:
        The :func:`function_metrics` of each file, concatenated in the order of ``paths``.

    Raises:
        FileNotFoundError: A path is neither a file nor a directory under ``root``.
        OSError: A file cannot be read, is not a regular file, or is a symlink out of ``root``;
            a directory below a path cannot be entered.
        SyntaxError: A file does not parse; ``filename`` is its relative path.
        UnicodeDecodeError: A file is not valid UTF-8.
        ValueError: A file is over :data:`MAX_SOURCE_BYTES`.
        TypeError: ``paths`` is a single string rather than a collection of strings.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = (Path(tmp) / "a.py").write_text("def f():\\n    pass\\n", encoding="utf-8")
        ...     [(m.path, m.qualname, m.length) for m in file_metrics(Path(tmp), ["."])]
        [('a.py', 'f', 2)]
    """
    if isinstance(paths, str):
        raise TypeError(f"paths={paths!r} is a single string; pass a list such as [{paths!r}]")
    results: list[FunctionMetrics] = []
    real_root = os.path.realpath(root)
    for given in paths:
        relative = PurePosixPath(given)
        full = root / relative
        if full.is_dir() and not full.is_symlink():
            named = _python_files(full, relative)
        elif full.is_file():
            real = os.path.realpath(full)
            if os.path.commonpath([real_root, real]) != real_root:
                raise OSError(errno.EXDEV, f"path {given!r} is a symlink out of the repository; not measured", given)
            with open(os.open(real, _READ_FLAGS), "rb") as fh:
                named = [(relative, _read_source(fh, given))]
        else:
            message = f"path {given!r} is neither a file nor a directory under root {str(root)!r}"
            raise FileNotFoundError(errno.ENOENT, message, given)
        for name, data in named:
            source = data.decode("utf-8-sig")
            results.extend(function_metrics(source, path=name.as_posix()))
    return results


def _read_source(fh: BinaryIO, name: str) -> bytes:
    """The bytes of an open regular file of at most :data:`MAX_SOURCE_BYTES`."""
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        raise OSError(errno.EINVAL, f"{name} is not a regular file; not measured", name)
    data = fh.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise ValueError(f"{name} is over {MAX_SOURCE_BYTES} bytes; too large to measure")
    return data


def _python_files(directory: Path, relative: PurePosixPath) -> list[tuple[PurePosixPath, bytes]]:
    """Every regular ``*.py`` file below ``directory`` (any depth, symlinks skipped), sorted; a
    ``*.py`` that is a fifo, socket or device, or a directory that cannot be entered, raises OSError."""
    found = []
    for item in walk_tree(directory, skip=frozenset()):
        if item.error is not None:
            raise OSError(getattr(item.error, "errno", None) or errno.EIO,
                          f"{relative / (item.rel or '.')} cannot be read: {item.error.strerror or item.error}")
        if item.st is None or not item.name.endswith(".py") or stat.S_ISDIR(item.st.st_mode) or stat.S_ISLNK(item.st.st_mode):
            continue
        if not stat.S_ISREG(item.st.st_mode):  # a fifo, socket or device named *.py: nothing to measure, fail closed
            raise OSError(errno.EINVAL, f"{relative / (item.rel or '.')} is not a regular file; not measured")
        assert item.rel is not None
        with open(os.open(item.name, _READ_FLAGS, dir_fd=item.dir_fd), "rb") as fh:
            found.append((relative / item.rel, _read_source(fh, item.rel)))
    return sorted(found, key=lambda named: named[0].parts)


def _functions(tree: ast.AST) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Yields ``(qualname, node)`` for every function, depth first, without recursion."""
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        children: list[tuple[ast.AST, str]] = []
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FUNCTIONS):
                yield prefix + child.name, child
                children.append((child, f"{prefix}{child.name}.<locals>."))
            elif isinstance(child, ast.ClassDef):
                children.append((child, f"{prefix}{child.name}."))
            else:
                children.append((child, prefix))
        stack.extend(reversed(children))


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Yields the nodes that run as ``function``'s own code; nested bodies are skipped."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _FUNCTIONS):  # only what the enclosing function evaluates
            stack.extend(node.decorator_list)
            stack.extend(node.args.defaults)
            stack.extend(default for default in node.args.kw_defaults if default is not None)
        else:
            stack.extend(ast.iter_child_nodes(node))


def _decision_points(node: ast.AST) -> int:
    """Decision points that ``node`` itself adds (its children are counted separately)."""
    if isinstance(node, _ONE_POINT):
        return 1
    if isinstance(node, ast.BoolOp):
        return len(node.values) - 1
    if isinstance(node, ast.comprehension):
        return 1 + len(node.ifs)
    return 0
