"""Decision points of a scope: the cyclomatic complexity :mod:`repogym_gym.metrics` reports, and why a
choice counts whatever syntax makes it (the table of counted constructs is in that module's docstring).

A refactor task's reward depends on this count, so each red-team round that kept an if/elif ladder in a new
spelling is answered here: choices by indexing a literal of alternatives (round 38), through names bound to
them (39, 40), and conditions counted where they are made (42). Pure functions of :mod:`ast` nodes; linear in
the scope's size (round 41 made a quadratic settling cost minutes of host CPU per grading).
"""

from __future__ import annotations

import ast
import re
from collections import ChainMap
from collections.abc import Mapping, MutableMapping
from typing import cast

__all__ = ["choice_names", "complexity", "regex_choices"]

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


def complexity(nodes: list[ast.AST], outer: Mapping[str, int] | None = None) -> int:
    """1 + the decision points of a scope's own ``nodes``, names bound in it (or, ``outer``, at the module's
    top level) to a condition or to a literal of alternatives followed to where they choose (round 39:
    ``pair = (a, b); flag = c; pair[flag]``; round 40: through more names, and module-level tables)."""
    names = choice_names(nodes, outer or {})
    return 1 + _conditions_made(nodes) + sum(_decision_points(inner, names) for inner in nodes) + _pattern_points(nodes)


#: :mod:`re`'s functions that take a pattern (``re.compile``, or a bare name: ``from re import sub``).
_PATTERN_CALLS = frozenset(("compile", "match", "search", "fullmatch", "sub", "subn", "split", "findall", "finditer",
                            "Scanner"))
#: Group openings that choose: lookarounds and the conditional group.
_CHOOSING_GROUPS = ("(?=", "(?!", "(?<=", "(?<!", "(?(")


def _pattern_points(nodes: list[ast.AST]) -> int:
    """The choices of the regular expressions a scope holds (:func:`regex_choices`): every string or bytes literal
    passed to :data:`_PATTERN_CALLS`, or shaped like a pattern (a ``(?`` group, or ``|`` with a group), but not a
    statement of its own (a docstring). Round 46 kept the refactor task's whole if/elif ladder as one
    alternation of named groups picked by ``m.lastgroup`` (complexity 2 against the original's 26, 1.0);
    the regular-expression engine chooses as an ``if`` does, so its alternatives count where the pattern is
    written. Round 47 chose with optional groups and bounded repeats (``(?P<b2>x{1,1500}+)?+``, no ``|``) and
    with a ``re.Scanner`` lexicon (the first matching rule wins: n rules are n - 1 choices). A pattern assembled
    at run time from data is not a literal and is not counted."""
    statements = {id(node.value) for node in nodes if isinstance(node, ast.Expr)}
    calls = [node for node in nodes if isinstance(node, ast.Call) and _takes_pattern(node)]
    passed = {id(inner) for node in calls for arg in (*node.args, *(keyword.value for keyword in node.keywords))
              for inner in ast.walk(arg)}  # a re.Scanner lexicon's patterns sit inside its list of pairs
    total = sum(len(node.args[0].elts) - 1 for node in calls if isinstance(node.func, ast.Attribute)
                and node.func.attr == "Scanner" and node.args and isinstance(node.args[0], ast.List | ast.Tuple))
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes) and id(node) not in statements:
            text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            if id(node) in passed or "(?" in text or ("|" in text and "(" in text):
                total += regex_choices(text)
    return total


def regex_choices(pattern: str) -> int:
    """Choices a regular expression makes: each ``|`` outside a character class, each lookaround or
    conditional group, each optional ``?`` and each bounded repeat ``{m,n}`` (present or not, how many: as an
    ``if`` decides); escapes are skipped, and ``+``, ``*`` and lazy or possessive suffixes count nothing.
    ``r"(?P<a>x)|(?P<b>y)|z"`` makes 2, ``r"(\\d{1,3})?"`` 2, ``r"\\d+"`` 0."""
    count, i, in_class = 0, 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            first = i + 1 + (pattern[i + 1:i + 2] == "^")
            if pattern[first:first + 1] == "]":  # a ']' first in the class is itself
                i = first
        else:
            count += _chooses_at(pattern, i)
        i += 1
    return count


def _chooses_at(pattern: str, i: int) -> int:
    """1 when the pattern chooses at ``i`` (outside a class): ``|``, a lookaround or conditional group, an
    optional ``?`` (not ``(?`` nor a lazy suffix) or a bounded repeat ``{m,n}``; else 0."""
    char = pattern[i]
    if char == "|" or pattern.startswith(_CHOOSING_GROUPS, i):
        return 1
    if char == "?":
        return int(i > 0 and pattern[i - 1] not in "(*+?}")
    bounds = _RANGE.match(pattern, i) if char == "{" else None
    return int(bounds is not None and bounds.group(1) != bounds.group(2))


#: A bounded repeat ``{m,n}`` or ``{m,}`` (``{n}`` repeats a fixed count: no choice).
_RANGE = re.compile(r"\{(\d*),(\d*)\}")


def _takes_pattern(node: ast.Call) -> bool:
    """``re.compile(...)``, ``regex.sub(...)``, or a bare ``match``/``search``/... (``from re import``); not a
    compiled pattern's methods, whose arguments are the text, nor ``str.split`` or the builtin ``compile``."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr in _PATTERN_CALLS and isinstance(func.value, ast.Name) and func.value.id in ("re", "regex")
    return isinstance(func, ast.Name) and func.id in _PATTERN_CALLS - {"compile", "split"}


def _conditions_made(nodes: list[ast.AST]) -> int:
    """Conditions a scope makes outside the tests of the constructs :func:`_decision_points` counts: each
    maximal truth value (a comparison, ``not``, ``and``/``or``, a call of :data:`_TRUTH_CALLS`, a bitwise
    combination of those) that is not, or is not part of, the test of an ``if``, ``while``, ``assert``,
    conditional expression, comprehension ``if`` or ``case`` guard counts 1 where it is made. Round 42 chose
    by slicing (``(B, A)[c:][0]``), by ``.pop(c)`` and through names a ``with`` bound, each a spelling the
    measure did not know: counted where it is made, a condition costs the same whatever then chooses with it."""
    tested: set[int] = set()
    for node in nodes:
        stack: list[ast.AST]
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            stack = [node.test]
        elif isinstance(node, ast.comprehension):
            stack = list(node.ifs)
        elif isinstance(node, ast.match_case) and node.guard is not None:
            stack = [node.guard]
        else:
            continue
        while stack:
            test = stack.pop()
            tested.add(id(test))
            stack.extend([test.value] if isinstance(test, ast.NamedExpr) else _truth_parts(test))
    made = [node for node in nodes if _is_truth_node(node)]
    inner = {id(part) for node in made for part in _truth_parts(node)}
    return sum(1 for node in made if id(node) not in tested and id(node) not in inner)


def _is_truth_node(node: ast.AST) -> bool:
    """A truth value: a comparison, ``not``, a call of :data:`_TRUTH_CALLS`, or ``and``/``or`` or ``c | d``,
    ``c & d``, ``c ^ d`` of one (``default = given or fallback`` chooses a value, which its ``or`` counts)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_truth_node(node.left) or _is_truth_node(node.right)
    if isinstance(node, ast.BoolOp):
        return any(_is_truth_node(value) for value in node.values)
    return _is_truth_value(node)


def _truth_parts(node: ast.AST) -> list[ast.AST]:
    """The parts of a truth value that are truth values themselves (counted with it, not apart)."""
    if not _is_truth_node(node):
        return []
    if isinstance(node, ast.BoolOp):
        parts = list(node.values)
    elif isinstance(node, ast.UnaryOp):
        parts = [node.operand]
    elif isinstance(node, ast.Compare):
        parts = [node.left, *node.comparators]
    elif isinstance(node, ast.Call):
        parts = list(node.args)
    elif isinstance(node, ast.BinOp):
        parts = [node.left, node.right]
    else:
        parts = []
    return [part for part in parts if _is_truth_node(part)]


def choice_names(nodes: list[ast.AST], outer: Mapping[str, int] | None = None) -> Mapping[str, int]:
    """Names a scope binds to a condition (0) or to a literal of n alternatives (n - 1), from its
    assignments (tuple unpacking pairwise) and ``:=``, through any chain of names bound to such names
    (``b = bad``: round 40 re-bound every one once) and starting from ``outer`` (the module's own, looked
    through, not copied: round 41 measured one function after another against 30,000 module names).

    Linear in the scope's size: each name takes the largest value of any name that reaches it through
    the chain, settled once, highest value first (round 41's chain written last link first took one
    pass per link, 157 s on the host for 0.5 MB)."""
    outer = outer or {}
    found: dict[str, int] = {}
    pairs: list[tuple[ast.AST, ast.AST]] = []
    for node in nodes:
        if isinstance(node, ast.Assign):
            pairs += [(target, node.value) for target in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            pairs.append((node.target, node.value))
    targets: dict[str, list[str]] = {}
    while pairs:
        target, value = pairs.pop()
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts):
            pairs += list(zip(target.elts, value.elts, strict=True))
        elif isinstance(target, ast.Name):
            known = found.get(target.id, outer.get(target.id, -1))
            if _is_truth_value(value):
                found[target.id] = max(known, 0)
            elif isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) > 1:
                found[target.id] = max(known, len(value.elts) - 1)
            elif isinstance(value, ast.Dict) and len(value.keys) > 1:
                found[target.id] = max(known, len(value.keys) - 1)
            elif isinstance(value, ast.Name):
                targets.setdefault(value.id, []).append(target.id)
    names = ChainMap(found, cast(MutableMapping[str, int], outer))  # read only: looked through, never written
    starts = [n for n in {*found, *targets} if n in names]
    settled: set[str] = set()
    for start in sorted(starts, key=lambda n: -names[n]):
        if start in settled:
            continue
        settled.add(start)
        stack, best = [start], names[start]
        while stack:
            for target_id in targets.get(stack.pop(), ()):
                if target_id not in settled:
                    settled.add(target_id)
                    found[target_id] = max(names.get(target_id, -1), best)
                    stack.append(target_id)
    return names


#: Calls that index: ``x.__getitem__(i)``, ``operator.getitem(x, i)``, ``mapping.get(i)``.
_INDEXING_CALLS = ("__getitem__", "getitem", "get", "itemgetter", "pop")


def _decision_points(node: ast.AST, names: Mapping[str, int] | None = None) -> int:
    """Decision points that ``node`` itself adds (its children are counted separately); ``names``: see
    :func:`_choice_names`."""
    names = names or {}
    if isinstance(node, ast.Subscript):
        return _selection_points(node, names)
    if isinstance(node, ast.Call):
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called == "getitem" and len(node.args) == 2 and not _constant(node.args[1]):
            return _alternatives(node.args[0], names)  # operator.getitem((a, b), i)
        if called in _INDEXING_CALLS and isinstance(func, ast.Attribute) and any(not _constant(arg) for arg in node.args):
            return _alternatives(func.value, names)  # (a, b).__getitem__(i), [b, a].pop(i), {..}.get(k)
        if called in ("or_", "and_", "xor"):  # operator's spellings of and / or: like a BoolOp
            return max(len(node.args) - 1, 0)
        return 1 if called == "suppress" else 0  # contextlib.suppress: an except handler by another name
    if isinstance(node, _ONE_POINT):
        return 1
    if isinstance(node, ast.BoolOp):
        return len(node.values) - 1
    if isinstance(node, ast.comprehension):
        return 1 + len(node.ifs)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return 1 if _is_condition(node.left, names) or _is_condition(node.right, names) else 0  # like and / or
    return 0


def _is_condition(node: ast.AST, names: Mapping[str, int]) -> bool:
    """``node`` is or holds a condition: a truth value, or a name the scope bound to one."""
    return any(_is_truth_value(inner) or (isinstance(inner, ast.Name) and names.get(inner.id) == 0
                                          and inner.id in names) for inner in ast.walk(node))


def _selection_points(node: ast.Subscript, names: Mapping[str, int]) -> int:
    """A choice made by indexing: ``(a, b, c)[i]`` (a literal of n alternatives, or a name bound to one,
    indexed or sliced by a computed value) is n - 1 decisions, like an ``if``/``elif`` ladder; the condition
    that computes ``i`` counts where it is made (:func:`_conditions_made`). Round 38 rewrote every ``if c: A
    else: B`` of a refactor task as ``(lambda: B, lambda: A)[c]()`` and measured complexity 1; round 42
    sliced, ``(B, A)[c:][0]``."""
    if _constant(node.slice):
        return 0  # x[-1], x[2 * 3], x[1:]: no choice
    return _alternatives(node.value, names)


def _alternatives(container: ast.AST, names: Mapping[str, int]) -> int:
    """n - 1 for a literal of n alternatives (tuple, list, dict) or a name the scope bound to one, else 0."""
    if isinstance(container, (ast.Tuple, ast.List)) and len(container.elts) > 1:
        return len(container.elts) - 1
    if isinstance(container, ast.Dict) and len(container.keys) > 1:
        return len(container.keys) - 1
    if isinstance(container, ast.Name) and names.get(container.id, 0) > 0:
        return names[container.id]
    return 0


def _constant(node: ast.AST) -> bool:
    """An index or argument made of constants only (a slice's bounds included)."""
    return all(isinstance(part, (*_CONSTANT_PARTS, ast.Slice)) for part in ast.walk(node))


#: What an index made of constants only is built from (``-1``, ``2 * 3``).
_CONSTANT_PARTS = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.operator, ast.unaryop)


#: Calls that compare or combine truth values: ``bool``, and :mod:`operator`'s spellings of the comparison and
#: logical operators, by name or as an attribute (round 40 wrote ``DOM4[le(w, 10000)]``, ``or_(le(...), gt(...))``).
_TRUTH_CALLS = frozenset(("bool", "lt", "le", "eq", "ne", "ge", "gt", "not_", "truth", "is_", "is_not", "contains",
                          "or_", "and_", "xor", "__lt__", "__le__", "__eq__", "__ne__", "__ge__", "__gt__", "__contains__"))


def _is_truth_value(node: ast.AST) -> bool:
    """A comparison, ``not``, ``and``/``or`` or a call of :data:`_TRUTH_CALLS`: an expression that is a condition."""
    if isinstance(node, ast.Call):
        func = node.func
        return (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "") in _TRUTH_CALLS
    return isinstance(node, (ast.Compare, ast.BoolOp)) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))
