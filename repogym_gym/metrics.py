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
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["FunctionMetrics", "file_metrics", "function_metrics"]

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
        SyntaxError: ``source`` does not parse; ``filename`` is ``path``.

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
            ignored); a directory stands for every ``*.py`` file below it, recursively, in
            sorted order. Each result's ``path`` is the normalised relative posix path.

    Returns:
        The :func:`function_metrics` of each file, concatenated in the order of ``paths``.

    Raises:
        FileNotFoundError: A path is neither a file nor a directory under ``root``.
        SyntaxError: A file does not parse; ``filename`` is its relative path.
        UnicodeDecodeError: A file is not valid UTF-8.
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
    for given in paths:
        relative = PurePosixPath(given)
        full = root / relative
        if full.is_dir():
            files = sorted(child for child in full.rglob("*.py") if child.is_file())
            named = [(relative / child.relative_to(full).as_posix(), child) for child in files]
        elif full.is_file():
            named = [(relative, full)]
        else:
            message = f"path {given!r} is neither a file nor a directory under root {str(root)!r}"
            raise FileNotFoundError(errno.ENOENT, message, given)
        for name, file in named:
            source = file.read_text(encoding="utf-8-sig")
            results.extend(function_metrics(source, path=name.as_posix()))
    return results


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
