"""Mutation operators: small, reversible faults placed at AST positions and applied as text.

:func:`find_mutations` parses a module, walks the code of its functions and asks each operator
for sites: a span of the source and the text to put there. Applying a mutation is a splice of
that span, so formatting and comments elsewhere survive byte for byte and the golden patch of
a mined task is the minimal reverse edit (:func:`~repogym_gym.mine.textdiff.unified_diff`).

==============================  ========================================================
``comparison_swap``             ``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``is``/``is not``,
                                ``in``/``not in``: the operator token only
``boolean_swap``                ``and`` <-> ``or``
``arithmetic_change``           ``+`` <-> ``-``, ``*`` <-> ``/``, ``//`` -> ``/``, ``%`` -> ``//``,
                                ``**`` -> ``*``, ``<<`` <-> ``>>``, ``&`` <-> ``|``, ``^`` -> ``|``,
                                in expressions and augmented assignments (``+=`` -> ``-=``);
                                skipped when an operand is a string or bytes literal
``constant_off_by_one``         an ``int`` literal ``n`` -> ``n + 1`` and ``n - 1``, written in
                                decimal (``0x10`` -> ``17``); ``bool`` is not an int here
``negate_condition``            the test of ``if``/``elif``/``while``/``x if c else y``/a
                                comprehension ``if``, as people write it: ``a < b`` -> ``a >= b``,
                                ``c`` -> ``not c``, ``(m := f())`` -> ``not (m := f())``
``remove_statement``            a call, ``await``, assignment or augmented assignment -> ``pass``
``remove_return_value``         ``return x`` -> ``return None``
``remove_else``                 the final ``else:`` block of an ``if`` (whole lines)
``swap_call_arguments``         ``f(a, b, ...)`` -> ``f(b, a, ...)``; first two positional ones
``loop_body_removed``           a ``for`` body -> ``pass``; a ``while`` body -> ``break``
                                (so the mutant cannot spin forever)
``slice_bounds``                drop a bound (``a[i:j]`` -> ``a[:j]``, ``a[i:]``); a non-literal
                                lower bound ``+ 1``, upper bound ``- 1``
``remove_exception_handler``    drop an ``except`` clause (whole lines) when the ``try`` keeps a
                                handler or a ``finally``; otherwise its body -> ``raise``
``return_constant_flip``        ``return True`` <-> ``return False``
``unary_removal``               ``not x``, ``-x``, ``~x`` -> ``x``
``break_continue_swap``         ``break`` <-> ``continue``
==============================  ========================================================

Only code that runs inside a function is mutated: its body, and the decorators and default
values of functions and classes nested in it. Module-level code, class bodies outside functions,
annotations and f-strings never are. A mutant is kept only when it compiles and its bytecode
differs from the original's (:func:`~repogym_gym.mine.equivalence.is_equivalent`).

Example:
    >>> src = "def inside(x, lo):\\n    return lo <= x  # bounds\\n"
    >>> [m.replacement for m in find_mutations(src, "m.py", operators=["comparison_swap"])]
    ['<']
    >>> m = find_mutations(src, "m.py", operators=["comparison_swap"])[0]
    >>> (m.lineno, m.col, m.end_lineno, m.end_col, m.original, m.description)
    (2, 14, 2, 16, '<=', 'a comparison changed in inside')
    >>> apply_mutation(src, m)
    'def inside(x, lo):\\n    return lo < x  # bounds\\n'
"""

from __future__ import annotations

import ast
import difflib
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from repogym_gym.mine.equivalence import is_equivalent
from repogym_gym.mine.functions import FunctionCompiler, future_flags, owned_nodes
from repogym_gym.mine.sourcemap import SourceMap
from repogym_gym.mine.textdiff import unified_diff

__all__ = [
    "OPERATORS",
    "Mutation",
    "apply_mutation",
    "find_mutations",
    "is_equivalent",
    "unified_diff",
]


@dataclass(frozen=True)
class Mutation:
    """One fault: replace ``original`` at a span of a file by ``replacement``.

    Positions follow :mod:`ast` lines but count *characters*, not UTF-8 bytes: ``lineno`` and
    ``end_lineno`` are 1-based lines (split on ``\\r\\n``, ``\\r`` and ``\\n``, as the compiler
    does), ``col`` and ``end_col`` 0-based code-point columns within them; the span is
    ``[lineno:col, end_lineno:end_col)``. Whole-line edits end at column 0 of the next line.
    """

    operator: str  # an id of OPERATORS, e.g. "comparison_swap"
    path: str  # the file path as given to find_mutations
    function: str  # qualname of the function whose code holds the span, e.g. "C.m", "f.<locals>.g"
    lineno: int
    col: int
    end_lineno: int
    end_col: int
    original: str  # the exact source text of the span
    replacement: str  # the text put in its place ("" deletes the span)
    description: str  # says what kind of fault and where, never the fix: for reports only


_Edit = tuple[int, int, str]  # start offset, end offset (characters), replacement
# a rule's node is one of its operator's node types (each rule names its own in its signature)
_Rule = Callable[[Any, ast.AST, SourceMap], Iterator[_Edit]]
_ATOMS = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)


# --- locating tokens -------------------------------------------------------------------------


def _operator_span(src: SourceMap, start: int, end: int, expected: str) -> tuple[int, int] | None:
    """The span of operator ``expected`` (e.g. ``"not in"``) between two sibling nodes."""
    tokens = [t for t in src.tokens_between(start, end) if t[2] not in ("(", ")")]
    if not tokens or " ".join(t[2] for t in tokens) != expected:
        return None
    return tokens[0][0], tokens[-1][1]


def _clause_lines(src: SourceMap, keyword_at: int, last: ast.stmt) -> tuple[int, int] | None:
    """Whole lines from the clause keyword at ``keyword_at`` to the end of statement ``last``."""
    first_line, col = src.position(keyword_at)
    if src.line(first_line)[:col].strip():
        return None
    last_line = last.end_lineno or last.lineno
    after = src.line(last_line)[src.end(last) - src.line_start(last_line) :]
    if after.strip() and not after.strip().startswith("#"):
        return None
    return src.whole_lines(first_line, last_line)


def _body_span(src: SourceMap, body: list[ast.stmt]) -> tuple[int, int]:
    return src.start(body[0]), src.end(body[-1])


# --- the operators ---------------------------------------------------------------------------

_COMPARE = {
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
    ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"),
    ast.In: ("in", "not in"),
    ast.NotIn: ("not in", "in"),
}
_ARITHMETIC = {
    ast.Add: ("+", "-"),
    ast.Sub: ("-", "+"),
    ast.Mult: ("*", "/"),
    ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "/"),
    ast.Mod: ("%", "//"),
    ast.Pow: ("**", "*"),
    ast.LShift: ("<<", ">>"),
    ast.RShift: (">>", "<<"),
    ast.BitAnd: ("&", "|"),
    ast.BitOr: ("|", "&"),
    ast.BitXor: ("^", "|"),
}


def _comparison_swap(node: ast.Compare, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    left: ast.expr = node.left
    for op, right in zip(node.ops, node.comparators, strict=False):
        token, swapped = _COMPARE[type(op)]
        span = _operator_span(src, src.end(left), src.start(right), token)
        if span:
            yield (*span, swapped)
        left = right


def _boolean_swap(node: ast.BoolOp, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    token, swapped = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
    for left, right in zip(node.values, node.values[1:], strict=False):
        span = _operator_span(src, src.end(left), src.start(right), token)
        if span:
            yield (*span, swapped)


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)))


def _arithmetic_change(node: ast.BinOp | ast.AugAssign, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    if type(node.op) not in _ARITHMETIC:
        return
    token, swapped = _ARITHMETIC[type(node.op)]
    left: ast.expr
    if isinstance(node, ast.AugAssign):
        left, right, token, swapped = node.target, node.value, token + "=", swapped + "="
    else:
        left, right = node.left, node.right
    if _is_text(left) or _is_text(right):
        return
    span = _operator_span(src, src.end(left), src.start(right), token)
    if span:
        yield (*span, swapped)


def _is_primary(node: ast.AST, parent: ast.AST) -> bool:
    """True when a negative literal here would need parentheses (``(-1) ** 2``, ``(-1).real``)."""
    if isinstance(parent, ast.BinOp):
        return isinstance(parent.op, ast.Pow) and parent.left is node
    if isinstance(parent, (ast.Attribute, ast.Subscript)):
        return parent.value is node
    return isinstance(parent, ast.Call) and parent.func is node


def _constant_off_by_one(node: ast.Constant, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    if type(node.value) is not int:
        return
    for value in (node.value + 1, node.value - 1):
        text = f"({value})" if value < 0 and _is_primary(node, parent) else str(value)
        yield src.start(node), src.end(node), text


#: A condition's negation written as code is written: the inverted order comparison (``==``, ``is``
#: and ``in`` are already swapped by ``comparison_swap``).
_INVERTED = {ast.Lt: ("<", ">="), ast.LtE: ("<=", ">"), ast.Gt: (">", "<="), ast.GtE: (">=", "<")}


def _negate_condition(node: ast.If | ast.While | ast.IfExp | ast.comprehension, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    """The test negated in a form people write, never ``not (c)`` around a plain condition (that form
    showed where the fault was: 7 of 40 mined patches). ``a < b`` -> ``a >= b``; ``x``, ``f(x)``,
    ``x % 2``, ``0 < a < b`` -> ``not ...``; ``(m := f())`` -> ``not (m := f())``. Skipped: constants,
    ``not x`` (``unary_removal``), ``and``/``or`` (``boolean_swap``), ``==``/``is``/``in``
    (``comparison_swap``), and conditional expressions or lambdas as tests."""
    tests = node.ifs if isinstance(node, ast.comprehension) else [node.test]
    for test in tests:
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            if type(test.ops[0]) in _INVERTED:
                token, inverted = _INVERTED[type(test.ops[0])]
                span = _operator_span(src, src.end(test.left), src.start(test.comparators[0]), token)
                if span:
                    yield (*span, inverted)
        elif isinstance(test, ast.NamedExpr):  # parenthesised by the grammar: `not` goes before the parentheses
            start, end = src.start(test), src.end(test)
            if src.text[start - 1 : start] == "(" and src.text[end : end + 1] == ")":
                yield start - 1, end + 1, f"not ({src.segment(test)})"
        elif not isinstance(test, (ast.Constant, ast.BoolOp, ast.UnaryOp, ast.IfExp, ast.Lambda, ast.Tuple)) or (
                isinstance(test, ast.UnaryOp) and not isinstance(test.op, ast.Not)):
            yield src.start(test), src.end(test), f"not {src.segment(test)}"


def _remove_statement(node: ast.stmt, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    if isinstance(node, ast.Expr) and not isinstance(node.value, (ast.Call, ast.Await)):
        return
    if isinstance(node, ast.AnnAssign) and node.value is None:
        return
    yield src.start(node), src.end(node), "pass"


def _remove_return_value(node: ast.Return, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
        yield src.start(node.value), src.end(node.value), "None"


def _remove_else(node: ast.If, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    if not node.orelse:
        return
    tokens = src.tokens_between(src.end(node.body[-1]), src.start(node.orelse[0]))
    keyword = next((t for t in tokens if t[2] == "else"), None)  # absent for an `elif`
    span = keyword and _clause_lines(src, keyword[0], node.orelse[-1])
    if span:
        yield (*span, "")


def _swap_call_arguments(node: ast.Call, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    if len(node.args) < 2 or any(isinstance(a, ast.Starred) for a in node.args[:2]):
        return
    first, second = node.args[0], node.args[1]
    a, b = src.segment(first), src.segment(second)
    if a != b:
        between = src.text[src.end(first) : src.start(second)]
        yield src.start(first), src.end(second), b + between + a


def _loop_body_removed(node: ast.For | ast.AsyncFor | ast.While, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    yield (*_body_span(src, node.body), "break" if isinstance(node, ast.While) else "pass")


def _is_int_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _slice_bounds(node: ast.Slice, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    for bound, shift in ((node.lower, " + 1"), (node.upper, " - 1")):
        if bound is None:
            continue
        start, end, text = src.start(bound), src.end(bound), src.segment(bound)
        yield start, end, ""
        if not _is_int_literal(bound):
            yield start, end, (text if isinstance(bound, _ATOMS) else f"({text})") + shift


def _remove_exception_handler(node: ast.Try, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    removable = len(node.handlers) > 1 or (node.finalbody and not node.orelse)
    for handler in node.handlers:
        if removable:
            span = _clause_lines(src, src.start(handler), handler.body[-1])
            if span:
                yield (*span, "")
        elif not (len(handler.body) == 1 and isinstance(handler.body[0], ast.Raise) and handler.body[0].exc is None):
            yield (*_body_span(src, handler.body), "raise")


def _return_constant_flip(node: ast.Return, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    value = node.value
    if isinstance(value, ast.Constant) and type(value.value) is bool:
        yield src.start(value), src.end(value), str(not value.value)


_UNARY = {ast.Not: "not", ast.USub: "-", ast.Invert: "~"}


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _unary_removal(node: ast.UnaryOp, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    if type(node.op) not in _UNARY:
        return
    start, operand = src.start(node), src.start(node.operand)
    tokens = src.tokens_between(start, operand)
    if not tokens or tokens[0][2] != _UNARY[type(node.op)]:
        return
    end = tokens[1][0] if len(tokens) > 1 else operand
    glued = start > 0 and _is_word(src.text[start - 1]) and _is_word(src.text[end])
    yield start, end, " " if glued else ""  # `return-x` must not become the name `returnx`


def _break_continue_swap(node: ast.stmt, parent: ast.AST, src: SourceMap) -> Iterator[_Edit]:
    yield src.start(node), src.end(node), "continue" if isinstance(node, ast.Break) else "break"


class _Operator(NamedTuple):
    """One mutation operator: what it does (:data:`OPERATORS`), the noun a task's description uses, the
    node types it visits and its rule."""

    summary: str
    noun: str
    node_types: tuple[type[ast.AST], ...]
    rule: _Rule


#: Every operator, once: id -> its summary, noun, node types and rule.
_TABLE: dict[str, _Operator] = {
    "arithmetic_change": _Operator(
        "an arithmetic or bitwise operator replaced (+ -, * /, // /, % //, ...)",
        "an arithmetic operator changed", (ast.BinOp, ast.AugAssign), _arithmetic_change),
    "boolean_swap": _Operator(
        "`and` and `or` exchanged",
        "a boolean operator changed", (ast.BoolOp,), _boolean_swap),
    "break_continue_swap": _Operator(
        "`break` and `continue` exchanged",
        "a loop jump changed", (ast.Break, ast.Continue), _break_continue_swap),
    "comparison_swap": _Operator(
        "a comparison operator replaced by its neighbour or negation",
        "a comparison changed", (ast.Compare,), _comparison_swap),
    "constant_off_by_one": _Operator(
        "an integer literal n replaced by n + 1 or n - 1",
        "a constant changed", (ast.Constant,), _constant_off_by_one),
    "loop_body_removed": _Operator(
        "a loop body removed (`for`: pass, `while`: break)",
        "a loop changed", (ast.For, ast.AsyncFor, ast.While), _loop_body_removed),
    "negate_condition": _Operator(
        "the test of an if, elif, while, conditional or comprehension negated",
        "a condition changed", (ast.If, ast.While, ast.IfExp, ast.comprehension), _negate_condition),
    "remove_else": _Operator(
        "the final `else:` block of an if removed",
        "a branch removed", (ast.If,), _remove_else),
    "remove_exception_handler": _Operator(
        "an `except` clause removed, or its body replaced by `raise`",
        "exception handling changed", (ast.Try, ast.TryStar), _remove_exception_handler),
    "remove_return_value": _Operator(
        "`return x` replaced by `return None`",
        "a return value changed", (ast.Return,), _remove_return_value),
    "remove_statement": _Operator(
        "a call, assignment or augmented assignment replaced by `pass`",
        "a statement removed", (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign), _remove_statement),
    "return_constant_flip": _Operator(
        "`return True` and `return False` exchanged",
        "a return value changed", (ast.Return,), _return_constant_flip),
    "slice_bounds": _Operator(
        "a slice bound dropped or shifted by one",
        "a slice changed", (ast.Slice,), _slice_bounds),
    "swap_call_arguments": _Operator(
        "the first two positional arguments of a call exchanged",
        "call arguments changed", (ast.Call,), _swap_call_arguments),
    "unary_removal": _Operator(
        "a unary `not`, `-` or `~` removed",
        "an operator removed", (ast.UnaryOp,), _unary_removal),
}
#: Operator id -> what it does (the public list of operators).
OPERATORS: dict[str, str] = {name: op.summary for name, op in _TABLE.items()}


# --- the public functions --------------------------------------------------------------------


def _names(values: Iterable[str], argument: str) -> set[str]:
    if isinstance(values, str):
        raise TypeError(f"{argument}={values!r} is a string; pass a list of names: {argument}=[{values!r}]")
    return set(values)


def _select_operators(operators: Iterable[str] | None) -> list[str]:
    if operators is None:
        return sorted(OPERATORS)
    selected = _names(operators, "operators")
    unknown = sorted(selected - OPERATORS.keys())
    if unknown:
        close = difflib.get_close_matches(unknown[0], OPERATORS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"unknown mutation operator {unknown[0]!r}{hint}; valid operators: {', '.join(sorted(OPERATORS))}"
        )
    return sorted(selected)


def _parse(source: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. invalid escape sequences in old code
        tree = ast.parse(source, filename=path)
        compile(tree, path, "exec", dont_inherit=True)  # errors ast.parse lets through
    return tree


def find_mutations(
    source: str,
    path: str,
    *,
    functions: Iterable[str] | None = None,
    operators: Iterable[str] | None = None,
) -> list[Mutation]:
    """Every mutation site in the functions of one module.

    Args:
        source: The module's text.
        path: Its path; recorded in each mutation and in syntax errors, never opened.
        functions: Qualnames (``"f"``, ``"C.m"``, ``"f.<locals>.g"``) whose code may be mutated;
            ``None`` for every function. Unknown names select nothing.
        operators: Operator ids of :data:`OPERATORS` to use; ``None`` for all.

    Returns:
        Mutations sorted by ``(lineno, col, operator, replacement)`` (then end position), the
        same list for the same input. Each one compiles and is not equivalent to the original;
        two operators producing the same edit yield it once, under the alphabetically first id.

    Raises:
        SyntaxError: ``source`` does not compile.
        ValueError: An operator id is unknown; the message lists the valid ones.
        TypeError: ``functions`` or ``operators`` is a single string.
    """
    selected = _select_operators(operators)
    wanted = None if functions is None else _names(functions, "functions")
    tree = _parse(source, path)
    src = SourceMap(source)
    checker = FunctionCompiler(src, future_flags(tree))
    edits: dict[tuple[int, int, str], tuple[str, str, ast.stmt]] = {}
    for node, parent, owner, root in owned_nodes(tree):
        if wanted is not None and owner not in wanted:
            continue
        for operator in selected:
            types, rule = _TABLE[operator].node_types, _TABLE[operator].rule
            if isinstance(node, types):
                for start, end, replacement in rule(node, parent, src):
                    key = (start, end, replacement)
                    if src.text[start:end] != replacement and (key not in edits or operator < edits[key][0]):
                        edits[key] = (operator, owner, root)
    mutations = []
    for (start, end, replacement), (operator, owner, root) in edits.items():
        if checker.keeps(root, start, end, replacement):
            mutations.append(
                Mutation(
                    operator,
                    path,
                    owner,
                    *src.position(start),
                    *src.position(end),
                    original=src.text[start:end],
                    replacement=replacement,
                    description=f"{_TABLE[operator].noun} in {owner}",
                )
            )
    mutations.sort(key=lambda m: (m.lineno, m.col, m.operator, m.replacement, m.end_lineno, m.end_col))
    return mutations


def apply_mutation(source: str, mutation: Mutation) -> str:
    """``source`` with the mutation's span replaced by its ``replacement``.

    Raises:
        ValueError: The span is not in ``source`` or does not hold ``mutation.original``,
            e.g. the mutation was found in another version of the file.
    """
    src = SourceMap(source)
    where = f"{mutation.path}:{mutation.lineno}:{mutation.col}"
    try:
        start = src.offset(mutation.lineno, mutation.col)
        end = src.offset(mutation.end_lineno, mutation.end_col)
    except ValueError as exc:
        raise ValueError(f"mutation {mutation.operator} at {where} does not fit this source: {exc}") from None
    found = source[start:end]
    if found != mutation.original:
        raise ValueError(
            f"mutation {mutation.operator} at {where} expects {mutation.original!r} but the source has "
            f"{found!r}; find mutations again on this version of the file"
        )
    return source[:start] + mutation.replacement + source[end:]
