r"""Per-function size and cyclomatic complexity, from the standard library's :mod:`ast`.

Pure functions, no third-party analyser: :func:`function_metrics` measures one source,
:func:`file_metrics` measures files under a repository root. The quality grader compares these
numbers before and after a refactor.

A *function* is a ``def``, an ``async def`` or a ``lambda``, wherever it is (module level, class
body, inside another function). Source is decoded as the interpreter decodes it: a ``bytes``
source honours its BOM and ``# coding:`` cookie (a ``raw_unicode_escape`` module whose code sits in
one comment line when read as UTF-8 is measured as the code Python runs).

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
a condition made outside those tests         1 where it is made: a comparison, ``not``, ``bool()``,
                                             ``operator.le``..., and ``and``/``or``/``&``/``|`` of those
``(a, b, c)[i]``, ``{k: a, ...}[i]``         number of alternatives - 1 (``i`` not a constant; a
                                             slice ``[c:]`` too; through a name bound to the literal too)
``(a, b).__getitem__(i)``, ``.pop(i)``       the same (and ``.get``, ``operator.getitem((a, b), i)``)
``suppress(...)``                            1 (an ``except`` handler by another name)
``c & d``, ``c | d``, ``or_(c, d)``...       1 when an operand is a condition (like ``and``/``or``)
``with`` / ``async with``                    0
a nested ``def``                             0: measured as a function of its own
a ``lambda`` inside a function               its decision points count there too
===========================================  ===========================================

A choice is counted whatever syntax makes it, as far as the syntax shows it: round 38 wrote every
``if c: A else: B`` of a refactor as ``(lambda: B, lambda: A)[c]()``, which counted nothing, and
scored 1.0 with the original ladder kept; round 39 bound the alternatives and conditions to names
first (1.0 again), so names a function binds to either are followed to where they choose; round 42
sliced, popped and bound them with ``with ... as``, so a condition counts where it is made (outside the
test of an ``if``, ``while``, ``assert``, conditional expression, comprehension ``if`` or ``case``
guard, whose own point counts it), whatever then chooses with it. Branch-free
arithmetic (``a * c + b * (1 - c)``), a ``min``/``max`` clamp used as an index, ``getattr`` dispatch
on a computed name, or alternatives and conditions handed to a helper as arguments still measure as
no decision: a syntactic measure cannot see every choice (see the README's grading section).

A nested ``def`` (or a method of a class defined inside a function) adds nothing to the enclosing
function, except its decorators, default values and annotations, which the enclosing function
evaluates; a nested ``lambda`` is measured as a function of its own and its choices count for the
function it is written in as well. A lambda's length is its lines, like a ``def``'s: a module-level
``quote = lambda ...: (...)`` spread over 20 lines is a 20-line function named ``<lambda>``.
Statements in the body of a class defined inside a function run as part of that function and
count for it. Code outside any function runs too, and can run again (a module re-executed per call
through ``pydoc.importfile`` held a whole function body as top-level statements, a fake refactor),
so it is measured as well:

- a generator expression or comprehension there is a scope of its own (a module-level generator
  whose element expression is a whole function body, driven by ``next()``, was another), measured
  as a function named ``<genexpr>``, ``<listcomp>``, ``<setcomp>`` or ``<dictcomp>``; inside a
  function it counts for that function;
- the rest of a module's top level and of its class bodies (statements, decorators, defaults,
  annotations, bases) is one scope named ``<module>`` of ``kind="module"``: its complexity is
  measured like a function's; its length counts only the statements that run logic (``if``,
  loops, ``try``, ``with``, calls...), not imports, definitions, assignments or docstrings, since a
  module of constant tables is long by right.
"""

from __future__ import annotations

import ast
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from repogym_gym.decisions import choice_names, complexity
from repogym_gym.tree import walk_tree

__all__ = ["MAX_SOURCE_BYTES", "FunctionMetrics", "NestedTooDeep", "file_metrics", "function_metrics", "parse_module",
           "python_files", "read_source", "tree_metrics"]

#: Largest file measured, bytes (the largest file carried into grading).
MAX_SOURCE_BYTES = 20 * 1024 * 1024
# O_NONBLOCK: a fifo standing where a source file was is refused, never waited on
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
#: Scopes Python runs as code objects of their own; outside any function they are measured as one
#: (a module-level generator expression runs its element again on every ``next()``).
_COMPREHENSIONS = {ast.GeneratorExp: "<genexpr>", ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>",
                   ast.DictComp: "<dictcomp>"}
_Comprehension = ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp
_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | _Comprehension


class FunctionMetrics(BaseModel):
    """Size and complexity of one ``def``, ``async def``, ``lambda``, comprehension scope, or of a
    module's top level (``kind="module"``, named ``<module>``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["function", "module"] = Field("function", description="A function's scope, or a module's top level.")
    path: str = Field(description='File path, posix and relative to the repo; "<string>" if none.')
    qualname: str = Field(description='Python __qualname__, e.g. "C.m", "f.<locals>.g" or "<lambda>".')
    lineno: int = Field(ge=1, description="Line of the `def` (or `lambda`) keyword, 1-based; no decorators.")
    end_lineno: int = Field(ge=1, description="Last line of the function body, 1-based.")
    length: int = Field(ge=0, description="end_lineno - lineno + 1, in lines; for a module, the lines of its logic (see the module docstring).")
    complexity: int = Field(ge=1, description="Cyclomatic complexity: 1 + decision points.")

    @model_validator(mode="after")
    def _length_matches_lines(self) -> FunctionMetrics:
        expected = self.end_lineno - self.lineno + 1
        if self.kind == "module" and self.length <= expected:
            return self  # the lines of its logic, not of the whole span
        if self.length != expected:
            raise ValueError(
                f"length={self.length} disagrees with lineno={self.lineno} and "
                f"end_lineno={self.end_lineno}; it must be end_lineno - lineno + 1 = {expected}"
            )
        return self


class NestedTooDeep(SyntaxError):
    """Source nested past what the parser can hold (Python's recursion limit, or memory): parses
    or not, nobody can tell, so whatever measures it fails closed."""


def parse_module(source: str | bytes, path: str = "<string>") -> ast.Module:
    """The AST of one module, decoded as the interpreter decodes it.

    Args:
        source: Python source; ``bytes`` honour a BOM and a ``# coding:`` cookie (UTF-8 otherwise),
            as ``import`` does; a ``str`` is taken as it is.
        path: File path recorded in syntax errors (posix, repo-relative).

    Raises:
        SyntaxError: ``source`` does not parse or cannot be decoded (unknown or failing
            encoding, null bytes); ``filename`` is ``path``.
        NestedTooDeep: a :class:`SyntaxError` for nesting too deep for the parser (100,000
            nested ``1+1+...`` overflow it).
    """
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as exc:  # null bytes and decoding errors are reported without a filename
        if exc.filename in (None, "<unknown>"):
            exc.filename = path
        raise
    except (RecursionError, MemoryError) as exc:
        raise NestedTooDeep(f"nested too deeply to measure ({type(exc).__name__})", (path, 1, 1, None)) from None


def tree_metrics(tree: ast.AST, path: str = "<string>", *, top_level: bool = False) -> list[FunctionMetrics]:
    """One :class:`FunctionMetrics` per function of a parsed module, ordered by ``lineno``; with
    ``top_level`` also one for the module's top level (``kind="module"``, after any function of its first line)."""
    body = getattr(tree, "body", None)
    module_names = choice_names(list(_top_level_nodes(body))) if isinstance(body, list) else {}  # its tables
    results = [
        FunctionMetrics(
            path=path,
            qualname=qualname,
            lineno=node.lineno,
            end_lineno=node.end_lineno or node.lineno,
            length=(node.end_lineno or node.lineno) - node.lineno + 1,
            complexity=complexity(list(_own_nodes(node)), module_names),
        )
        for qualname, node in _functions(tree)
    ]
    if top_level and isinstance(body, list) and body:
        results.append(FunctionMetrics(
            kind="module", path=path, qualname="<module>", lineno=body[0].lineno,
            end_lineno=body[-1].end_lineno or body[-1].lineno, length=_logic_lines(body),
            complexity=complexity(list(_top_level_nodes(body)))))
    return sorted(results, key=lambda metrics: (metrics.lineno, metrics.kind == "module"))


def function_metrics(source: str | bytes, path: str = "<string>") -> list[FunctionMetrics]:
    r"""Measures every function of a module: methods, nested functions and lambdas included.

    Args:
        source: Python source of one module (``bytes`` are decoded as :func:`parse_module` says).
        path: File path recorded in each result and in syntax errors (posix, repo-relative).

    Returns:
        One :class:`FunctionMetrics` per ``def`` / ``async def`` / ``lambda``, ordered by
        ``lineno``. Length is in lines from the ``def`` (or ``lambda``) line to the last body
        line; complexity counts the decision points listed in this module's docstring. Empty if
        the module defines no function.

    Raises:
        SyntaxError: ``source`` does not parse, or (:class:`NestedTooDeep`) nests too deeply for
            the parser; ``filename`` is ``path``.

    Example:
        >>> source = "def f(x):\n    if x:\n        return 1\n    return x and 2\n"
        >>> [(m.qualname, m.length, m.complexity) for m in function_metrics(source)]
        [('f', 4, 3)]
        >>> [(m.qualname, m.complexity) for m in function_metrics("g = lambda x: x or -x\n")]
        [('<lambda>', 2)]
    """
    return tree_metrics(parse_module(source, path), path)


def read_source(file: Path, name: str) -> bytes:
    """The bytes of ``file``, a regular file of at most :data:`MAX_SOURCE_BYTES` (never waits on a fifo).

    Raises:
        OSError: it cannot be read or is not a regular file.
        ValueError: it is over :data:`MAX_SOURCE_BYTES`.
    """
    with open(os.open(file, _READ_FLAGS), "rb") as fh:
        return _bounded(fh, name)


def _bounded(fh: BinaryIO, name: str) -> bytes:
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        raise OSError(errno.EINVAL, f"{name} is not a regular file; not measured", name)
    data = fh.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise ValueError(f"{name} is over {MAX_SOURCE_BYTES} bytes; too large to measure")
    return data


def python_files(root: Path, paths: Iterable[str]) -> list[tuple[str, bytes]]:
    """``(relative posix name, bytes)`` for each path: a file stands for itself (a symlink only to a
    file inside ``root``), a directory for every regular ``*.py`` file below it, at any depth
    (symlinks skipped, never followed), in sorted order. The code under test may have rewritten
    the tree: every read is bounded (:func:`read_source`).

    Raises:
        FileNotFoundError: A path is neither a file nor a directory under ``root``.
        OSError: A file cannot be read, is not a regular file, or is a symlink out of ``root``; a
            directory below a path cannot be entered.
        ValueError: A file is over :data:`MAX_SOURCE_BYTES`.
        TypeError: ``paths`` is a single string rather than a collection of strings.
    """
    if isinstance(paths, str):
        raise TypeError(f"paths={paths!r} is a single string; pass a list such as [{paths!r}]")
    named: list[tuple[str, bytes]] = []
    real_root = os.path.realpath(root)
    for given in paths:
        relative = PurePosixPath(given)
        full = root / relative
        if full.is_dir() and not full.is_symlink():
            named += [(name.as_posix(), data) for name, data in _python_files(full, relative)]
        elif full.is_file():
            real = os.path.realpath(full)
            if os.path.commonpath([real_root, real]) != real_root:
                raise OSError(errno.EXDEV, f"path {given!r} is a symlink out of the repository; not measured", given)
            named.append((relative.as_posix(), read_source(Path(real), given)))
        else:
            message = f"path {given!r} is neither a file nor a directory under root {str(root)!r}"
            raise FileNotFoundError(errno.ENOENT, message, given)
    return named


def file_metrics(root: Path, paths: Iterable[str]) -> list[FunctionMetrics]:
    """Measures the functions of files under a repository root.

    Args:
        root: Repository root that ``paths`` are relative to.
        paths: Posix paths relative to ``root``, found and read as :func:`python_files` says. A
            file's bytes are decoded as the interpreter decodes them (BOM, ``# coding:`` cookie,
            else UTF-8). Each result's ``path`` is the normalised relative posix path.

    Returns:
        The :func:`function_metrics` of each file, concatenated in the order of ``paths``.

    Raises:
        FileNotFoundError, OSError, ValueError, TypeError: as :func:`python_files`.
        SyntaxError: A file does not parse, cannot be decoded, or (:class:`NestedTooDeep`) nests
            too deeply for the parser; ``filename`` is its relative path.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = (Path(tmp) / "a.py").write_text("def f():\\n    pass\\n", encoding="utf-8")
        ...     [(m.path, m.qualname, m.length) for m in file_metrics(Path(tmp), ["."])]
        [('a.py', 'f', 2)]
    """
    results: list[FunctionMetrics] = []
    for name, data in python_files(root, paths):
        results.extend(function_metrics(data, path=name))
    return results


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
            found.append((relative / item.rel, _bounded(fh, item.rel)))
    return sorted(found, key=lambda named: named[0].parts)


def _functions(tree: ast.AST) -> Iterator[tuple[str, _Function]]:
    """Yields ``(qualname, node)`` for every function (lambdas included), depth first, without recursion.

    A function's decorators, defaults and annotations, and a class's bases and decorators, belong
    to the enclosing scope (as in Python's own ``__qualname__``); only bodies get the inner prefix.
    """
    stack: list[tuple[ast.AST, str]] = [(child, "") for child in reversed(list(ast.iter_child_nodes(tree)))]
    while stack:
        node, prefix = stack.pop()
        if isinstance(node, _Comprehension) and not prefix.endswith(".<locals>."):  # outside any function
            name = _COMPREHENSIONS[type(node)]
            yield prefix + name, node
            inner = f"{prefix}{name}.<locals>."  # what it holds belongs to it (its lambdas are functions)
            stack.extend((child, inner) for child in reversed(list(ast.iter_child_nodes(node))))
            continue
        if isinstance(node, _FUNCTIONS):
            name = "<lambda>" if isinstance(node, ast.Lambda) else node.name
            yield prefix + name, node
            inner = f"{prefix}{name}.<locals>."
        elif isinstance(node, ast.ClassDef):
            inner = f"{prefix}{node.name}."
        else:
            stack.extend((child, prefix) for child in reversed(list(ast.iter_child_nodes(node))))
            continue
        body = [node.body] if isinstance(node, ast.Lambda) else node.body
        in_body = {id(part) for part in body}
        parts = [(part, prefix) for part in ast.iter_child_nodes(node) if id(part) not in in_body]
        parts += [(part, inner) for part in body]
        stack.extend(reversed(parts))


#: Top-level statements that define or hold data rather than run logic: not counted in a module's length.
_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign,
                ast.AugAssign, ast.Pass)


def _logic_lines(body: list[ast.stmt]) -> int:
    """Lines of a module's top level (and of its class bodies) that run logic: every statement but
    imports, definitions, assignments, ``pass`` and docstrings; a class's body is looked into."""
    lines: set[int] = set()  # distinct lines: statements joined by ";" share one
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            stack.extend(node.body)
        elif not isinstance(node, _DEFINITIONS) and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return len(lines)


def _top_level_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Yields the nodes a module's top level runs: its statements and its class bodies, and of each
    function only what defining it evaluates (decorators, defaults, annotations); comprehension
    scopes are measured apart."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if type(node) in _COMPREHENSIONS:
            continue
        yield node
        if isinstance(node, _FUNCTIONS):
            stack.extend(_definition_nodes(node))
        else:
            stack.extend(ast.iter_child_nodes(node))


def _definition_nodes(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.AST]:
    """What defining a function evaluates in its enclosing scope: decorators, defaults, annotations."""
    found: list[ast.AST] = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    if not isinstance(node, ast.Lambda):
        found += node.decorator_list
        arguments = node.args
        found += [a.annotation for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                         arguments.vararg, arguments.kwarg) if a is not None and a.annotation]
        if node.returns is not None:
            found.append(node.returns)
    return found


def _own_nodes(function: _Function) -> Iterator[ast.AST]:
    """Yields the nodes that run as ``function``'s own code; nested bodies are skipped."""
    if isinstance(function, _Comprehension):
        stack: list[ast.AST] = list(ast.iter_child_nodes(function))
    else:
        stack = [function.body] if isinstance(function, ast.Lambda) else list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.Lambda):  # an expression of the function it is in: its choices are that function's
            stack.extend([*_definition_nodes(node), node.body])
        elif isinstance(node, _FUNCTIONS):  # only what the enclosing function evaluates
            # annotations too: without the __future__ import each is evaluated whenever the
            # enclosing function runs (a nested def's annotation held a whole function body)
            stack.extend(_definition_nodes(node))
        else:
            stack.extend(ast.iter_child_nodes(node))
