r"""Which code runs inside which function, and compiling one function of a module alone.

Mutation is confined to code that runs when a function is called: its body, plus the decorators
and default values of functions and classes nested in it (the enclosing function evaluates
those). A function's qualname follows ``__qualname__``: ``f``, ``C.m``, ``f.<locals>.g``,
``f.<locals>.C.m``. Lambdas and comprehensions belong to the function around them. Module-level
code, class bodies outside functions, annotations and f-strings (whose node positions are
unreliable before Python 3.12) are never yielded.

Example:
    >>> tree = ast.parse("class C:\n    def m(self):\n        return 1\n")
    >>> [(type(node).__name__, qualname) for node, _, qualname, _ in owned_nodes(tree)]
    [('Return', 'C.m'), ('Constant', 'C.m')]
"""

from __future__ import annotations
import __future__

import ast
from collections.abc import Iterator
from types import CodeType

from repogym_gym.mine.equivalence import compile_module, same_code
from repogym_gym.mine.sourcemap import SourceMap

__all__ = ["FunctionCompiler", "Owned", "future_flags", "owned_nodes"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)

#: ``(node, parent, qualname of the function it runs in, outermost enclosing def)``; the outermost
#: def is the unit :class:`FunctionCompiler` compiles.
Owned = tuple[ast.AST, ast.AST, str, ast.stmt]


def owned_nodes(tree: ast.Module) -> Iterator[Owned]:
    """Every node whose code runs inside a function, with the function's qualname."""
    stack: list[tuple[ast.AST, ast.AST, str | None, str, ast.stmt | None]]
    stack = [(child, tree, None, "", None) for child in tree.body]
    while stack:
        node, parent, owner, prefix, root = stack.pop()
        if isinstance(node, _FUNCTIONS):
            args = node.args
            outer: list[ast.AST] = [*node.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d)]
            stack.extend((n, node, owner, prefix, root) for n in outer)
            qualname = prefix + node.name
            inner = (qualname, qualname + ".<locals>.", root or node)
            stack.extend((n, node, *inner) for n in node.body)
            continue
        if isinstance(node, ast.ClassDef):
            outer = [*node.decorator_list, *node.bases, *node.keywords]
            stack.extend((n, node, owner, prefix, root) for n in outer)
            stack.extend((n, node, owner, f"{prefix}{node.name}.", root) for n in node.body)
            continue
        if isinstance(node, ast.JoinedStr):  # f-string positions are unreliable before 3.12
            continue
        if owner is not None and root is not None:
            yield node, parent, owner, root
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns"):
                continue
            children = value if isinstance(value, list) else [value]
            stack.extend((c, node, owner, prefix, root) for c in children if isinstance(c, ast.AST))


def future_flags(tree: ast.Module) -> int:
    """The ``compile()`` flags of the module's ``from __future__ import ...`` statements."""
    flags = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                feature = getattr(__future__, alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return flags


class FunctionCompiler:
    """Compiles mutants of one outermost function at a time instead of the whole module.

    A function's code object does not depend on the module around it, except for
    ``from __future__`` imports, which are passed as flags; an indented method is compiled
    under ``if 1:`` so its lines (and multi-line strings) stay untouched.
    """

    def __init__(self, src: SourceMap, flags: int) -> None:
        self._src, self._flags = src, flags
        self._originals: dict[int, CodeType | None] = {}

    def _chunk(self, root: ast.stmt, start: int, end: int, replacement: str) -> str:
        first, last = self._src.whole_lines(root.lineno, root.end_lineno or root.lineno)
        prefix = "if 1:\n" if root.col_offset else ""
        return prefix + self._src.text[first:start] + replacement + self._src.text[end:last]

    def keeps(self, root: ast.stmt, start: int, end: int, replacement: str) -> bool:
        """True when the mutant compiles and its bytecode differs from the original's."""
        if id(root) not in self._originals:
            first = self._src.line_start(root.lineno)
            self._originals[id(root)] = compile_module(self._chunk(root, first, first, ""), flags=self._flags)
        original = self._originals[id(root)]
        mutated = compile_module(self._chunk(root, start, end, replacement), flags=self._flags)
        return mutated is not None and (original is None or not same_code(original, mutated))
