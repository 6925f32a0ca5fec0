"""Answer equivalence: an answer file against a task's reference, under a typed contract.

The ``answer`` reward kind (design doc 004, "Answer equivalence"): an equivalent answer scores raw
``+1``, a wrong, missing or unparseable one ``-1`` (``reward_min`` / ``reward_max``), rescaled to
``(raw + 1) / 2`` in the grading pipeline. Contracts (``answer.contract`` of task.yaml):

==============  ===================================================================================
contract        equivalent when
==============  ===================================================================================
``int``         both are the same integer (optional sign, decimal digits, surrounding space)
``float``       ``math.isclose(answer, expected, rel_tol, abs_tol)``; NaN and infinities never match
``string``      equal after ``normalise`` (``strip``, ``lower``, ``collapse_whitespace``)
``set``         the same set of items (a JSON list, else items split on commas and newlines), each
                item normalised as a string; order and repeats do not count
``json``        the same JSON value, types included (``1``, ``1.0`` and ``true`` differ)
``expression``  ``simplify(answer - expected) == 0`` in SymPy, e.g. ``2*(x+1)`` and ``2*x+2``
==============  ===================================================================================

An expression is parsed without ``eval``: Python's parser builds a syntax tree that is walked with an
allowlist (numbers, the task's ``variables``, ``pi``/``E``, ``+ - * / **`` (``^`` read as ``**``), and functions such as
``sqrt``, ``sin``, ``log``) into SymPy objects. The symbolic check runs in a child process (this
module's ``__main__``) with a time limit (``answer.timeout_s``) and a 1 GiB address-space limit: an
expression that takes forever to simplify, or would build a huge number, scores the minimum.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

__all__ = ["MAX_ANSWER_BYTES", "AnswerContract", "check_expected", "equivalent", "read_answer"]

#: Largest answer file read, bytes; a larger one scores the minimum.
MAX_ANSWER_BYTES = 64 * 1024
#: Longest expression parsed, characters.
_MAX_EXPRESSION = 2000
#: Functions an expression may call (SymPy names).
_FUNCTIONS = ("sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "Abs",
              "factorial", "binomial", "floor", "ceiling", "Rational")
_CONSTANTS = {"pi": "pi", "E": "E", "e": "E"}
_CHILD_MEMORY_BYTES = 1 << 30


class AnswerContract(Protocol):
    """What the checks read of ``answer:`` (:class:`repogym_gym.spec_grading.AnswerSpec`, read only)."""

    @property
    def expected(self) -> str: ...
    @property
    def contract(self) -> str: ...
    @property
    def abs_tol(self) -> float: ...
    @property
    def rel_tol(self) -> float: ...
    @property
    def normalise(self) -> Sequence[str]: ...
    @property
    def variables(self) -> Sequence[str]: ...
    @property
    def timeout_s(self) -> float: ...


def read_answer(repo: Path, rel: str) -> tuple[str | None, str]:
    """The answer file's text, or None with the reason it cannot count (missing, not a regular file, a
    symlink, larger than :data:`MAX_ANSWER_BYTES`, not UTF-8)."""
    path = repo / rel
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, f"no answer: {rel} does not exist"
    except OSError as exc:  # a symlink (ELOOP), a directory's parent that is a file, ...
        return None, f"no answer: {rel} cannot be opened as a regular file ({os.strerror(exc.errno or 0)})"
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # O_NONBLOCK: a FIFO answered at once instead of waiting
        os.close(fd)
        return None, f"no answer: {rel} is not a regular file"
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_ANSWER_BYTES + 1)
    if len(data) > MAX_ANSWER_BYTES:
        return None, f"no answer: {rel} is larger than {MAX_ANSWER_BYTES} bytes"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        return None, f"no answer: {rel} is not UTF-8 text (byte {exc.start})"


def equivalent(answer: str, spec: AnswerContract) -> tuple[bool, str]:
    """Whether ``answer`` equals ``spec.expected`` under ``spec.contract``, and why (a short reason)."""
    check: Callable[[str, AnswerContract], tuple[bool, str]] = _CHECKS[spec.contract]
    return check(answer, spec)


def check_expected(spec: AnswerContract) -> str | None:
    """None when ``spec.expected`` parses under its contract (an expression: by the allowlist, no SymPy
    needed), else the problem; task.yaml is refused for it."""
    try:
        if spec.contract == "expression":
            _expression_tree(spec.expected, spec.variables)
        else:
            _PARSERS[spec.contract](spec.expected, spec)
    except ValueError as exc:
        return str(exc)
    return None


def _int(text: str, spec: AnswerContract) -> int:
    stripped = text.strip()
    if not re.fullmatch(r"[+-]?\d{1,4000}", stripped):
        raise ValueError("not an integer")
    return int(stripped)


def _float(text: str, spec: AnswerContract) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError("not a number") from None
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _normal(text: str, spec: AnswerContract) -> str:
    if "collapse_whitespace" in spec.normalise:
        text = " ".join(text.split())
    if "strip" in spec.normalise:
        text = text.strip()
    if "lower" in spec.normalise:
        text = text.lower()
    return text


def _set(text: str, spec: AnswerContract) -> frozenset[str]:
    stripped = text.strip()
    if stripped.startswith("["):
        items = _json(stripped, spec)
        if not isinstance(items, list) or not all(isinstance(i, str | int | float | bool) for i in items):
            raise ValueError("a JSON set answer must be a list of strings or numbers")
        parts = [json.dumps(i) if not isinstance(i, str) else i for i in items]
    else:
        parts = re.split(r"[,\n]", stripped)
    return frozenset(item for item in (_normal(p, spec) for p in parts) if item)


def _json(text: str, spec: AnswerContract) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("not JSON (or nested too deep)") from None


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


_PARSERS: dict[str, Callable[[str, AnswerContract], Any]] = {
    "int": _int, "float": _float, "string": _normal, "set": _set, "json": _json}


def _compare(answer: str, spec: AnswerContract) -> tuple[bool, str]:
    parse = _PARSERS[spec.contract]
    try:
        got = parse(answer, spec)
    except ValueError as exc:
        return False, f"unparseable {spec.contract} answer: {exc}"
    want = parse(spec.expected, spec)
    if spec.contract == "float":
        same = math.isclose(got, want, rel_tol=spec.rel_tol, abs_tol=spec.abs_tol)
    elif spec.contract == "json":
        same = _canonical_json(got) == _canonical_json(want)
    else:
        same = got == want
    return same, "equivalent" if same else f"not equivalent ({spec.contract})"


def _expression(answer: str, spec: AnswerContract) -> tuple[bool, str]:
    try:
        _expression_tree(answer, spec.variables)
    except ValueError as exc:
        return False, f"unparseable expression: {exc}"
    request = json.dumps({"a": answer, "b": spec.expected, "variables": list(spec.variables)})
    try:
        # this file run as a script (stdlib and SymPy only): "-m" would import the whole package first (1.6-1.9 s
        # a check against 0.85 s), and PYTHONSAFEPATH keeps its directory off sys.path
        out = subprocess.run([sys.executable, __file__], input=request, capture_output=True,
                             text=True, timeout=spec.timeout_s, check=False, env={**os.environ, "PYTHONSAFEPATH": "1"})
    except subprocess.TimeoutExpired:
        return False, f"the symbolic check took longer than {spec.timeout_s:g} s"
    verdict = out.stdout.strip()
    if verdict == "out of memory":
        return False, f"the symbolic check ran out of memory ({_CHILD_MEMORY_BYTES >> 30} GiB)"
    if verdict not in ("equal", "different"):
        return False, f"the symbolic check failed (exit {out.returncode}: {out.stderr.strip()[-200:] or 'no output'})"
    return verdict == "equal", "equivalent" if verdict == "equal" else "not equivalent (expression)"


_CHECKS: dict[str, Callable[[str, AnswerContract], tuple[bool, str]]] = {
    "int": _compare, "float": _compare, "string": _compare, "set": _compare, "json": _compare, "expression": _expression}


def _expression_tree(text: str, variables: Sequence[str]) -> ast.expr:
    """The syntax tree of an expression, checked against the allowlist (module docstring)."""
    if len(text) > _MAX_EXPRESSION:
        raise ValueError(f"longer than {_MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval").body  # ^ is a power in math notation
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ValueError("not an expression") from None
    allowed = set(variables) | set(_CONSTANTS)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS) or node.keywords:
                raise ValueError("only calls of " + ", ".join(_FUNCTIONS) + " with plain arguments")
        elif isinstance(node, ast.Name):
            if node.id not in allowed and node.id not in _FUNCTIONS:
                raise ValueError(f"unknown name {node.id!r} (variables: {sorted(variables)})")
        elif isinstance(node, ast.Constant):
            if type(node.value) not in (int, float):
                raise ValueError("only numbers as constants")
        elif isinstance(node, ast.operator | ast.unaryop):
            if not isinstance(node, ast.Add | ast.Sub | ast.Mult | ast.Div | ast.Pow | ast.UAdd | ast.USub):
                raise ValueError(f"operator {type(node).__name__} is not allowed")
        elif not isinstance(node, ast.BinOp | ast.UnaryOp | ast.Load):
            raise ValueError(f"{type(node).__name__} is not allowed in an expression")
    return tree


def _sympy_of(tree: ast.expr, variables: Sequence[str]) -> Any:
    """SymPy objects built from a checked tree, unevaluated (nothing of the text is ever run)."""
    import sympy

    symbols = {name: sympy.Symbol(name) for name in variables}
    operators = {ast.Add: sympy.Add, ast.Mult: sympy.Mul, ast.Pow: sympy.Pow}

    def build(node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return sympy.Integer(node.value) if isinstance(node.value, int) else sympy.Float(node.value)
        if isinstance(node, ast.Name):
            return symbols[node.id] if node.id in symbols else getattr(sympy, _CONSTANTS.get(node.id, node.id))
        if isinstance(node, ast.UnaryOp):
            inner = build(node.operand)
            return sympy.Mul(-1, inner, evaluate=False) if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            return getattr(sympy, node.func.id)(*[build(arg) for arg in node.args], evaluate=False)
        assert isinstance(node, ast.BinOp)
        left, right = build(node.left), build(node.right)
        if isinstance(node.op, ast.Sub):
            return sympy.Add(left, sympy.Mul(-1, right, evaluate=False), evaluate=False)
        if isinstance(node.op, ast.Div):
            return sympy.Mul(left, sympy.Pow(right, -1, evaluate=False), evaluate=False)
        return operators[type(node.op)](left, right, evaluate=False)

    return build(tree)


def _child() -> None:
    """The symbolic check: reads ``{"a", "b", "variables"}`` on stdin, prints ``equal`` or ``different``."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (_CHILD_MEMORY_BYTES, _CHILD_MEMORY_BYTES))
    sys.setrecursionlimit(10_000)
    import sympy

    request = json.loads(sys.stdin.read())
    variables = list(request["variables"])
    a = _sympy_of(_expression_tree(request["a"], variables), variables)
    b = _sympy_of(_expression_tree(request["b"], variables), variables)
    try:
        print("equal" if sympy.simplify(a - b) == 0 else "different")
    except (MemoryError, SystemError, RecursionError):  # the address-space limit surfaces as any of these
        print("out of memory")


if __name__ == "__main__":
    _child()
