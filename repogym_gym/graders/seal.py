"""Sealed tests: a hidden test's verdict decided on the host, against values the judged process never holds.

Code under test runs in the process that runs the tests, so whatever that process can compute
it can also forge: red-team round 22 read and wrote the whole address space through an open
CPython bug (bpo-15994) and re-signed the judge's record. No in-process check survives that. What
survives is a secret the process never had. A sealed test file is rewritten before the run so that
it **observes** the values its assertions are about and **holds none of the values they are
compared with**; the host compares what was observed with what the golden patch observed in a
run of its own, kept in the grader's cache (hidden from every confining sandbox). To forge a sealed
test's pass, the code must produce the golden patch's values: it must solve the task.

The rewrite (:func:`seal_source`), per assertion of the file, in the order Python evaluates them:

- ``assert a == b`` (any comparison, chains too): every operand that depends on something other
  than literals and builtins (``page.items``, ``f(x)``) is observed; an operand made only of
  literals and builtin calls (``[1, 2]``, ``list(range(20, 30))``: the expected value) is dropped
  from the candidate's file;
- ``assert not x``, ``assert x`` (a call, a name...): ``x`` is observed; ``assert a and b`` is two
  assertions; an assertion's message is dropped (it may quote the expected value);
- ``with pytest.raises(E):`` (``raises``, ``self.assertRaises``): the qualified name of the exception
  raised, or None, is observed, and ``E`` is dropped; with ``match=`` (any keyword or further
  argument) its message is observed too, so the candidate's form never checks less than the golden's;
- ``self.assertEqual(a, b)`` and unittest's other comparing assertions: like the comparison.

Two forms are written from one file: the **golden** form keeps every assertion and only wraps the
observed operands (so the golden run also proves the assertions hold), the **candidate** form
keeps just the observations. A sealed test passes when pytest says it passed *and* its sequence of
observations (slot, SHA-256 of the value's canonical text) equals the golden run's. The canonical
text takes exact builtin types only (``type(x) is list``, not ``isinstance``): a ``str`` is
``str:'a'``, an int ``int:0x..``, a list ``list[...]`` of its items' texts, a set or a dict its items
sorted, anything nested deeper than 64 ``deep``, any other object ``object:<module>.<qualname>`` (so
assertions should compare plain data: an object observed only by its class checks nothing but its class).

**The observations never pass through anything the code under test can write.** Each one is an
audit event (``repogym.judge`` ``observe``) that the judge's policy (:mod:`judge_ledger`) takes only from the
sealed file's own ``_repogym_observe`` with no frame of the submission on the stack, turns into its
canonical text with builtins it captured before any task code ran, and chains into the test's
digest in the signed record. (Red-team round 24 rewrote the observation file the runs used to
append to from a thread of the code under test, turning guessable observations, a bool or an
exception's name, into the golden patch's.) So an assertion inside a callback the code under test
calls voids the run: assert on what the call returned instead. Red-team round 25 bound the package's
own object where the prelude takes ``sys.audit`` and fed the observe function guessed values from
garbage-collector finalizers (0.4 on pagination with the bug left in): the prelude's ``_repogym_audit``
must be ``sys.audit`` when the import of the file returns, and the observe function's caller must be
the sealed test at a line that observes.

What sealing does not hide: the inputs a test passes, and values a test binds to a name before
comparing (``expected = [...]`` is not dropped; write it inline), and a bool is easy to guess; the
grade's ``sealed`` detail counts the sealed tests and their golden observations, and names only how
many observations each differing test made (no line, no value). Visible tests
gain nothing from sealing (the agent read them), so only hidden files are sealed.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from repogym_gym.errors import GraderError

__all__ = ["SEAL_VERSION", "Observations", "Seal", "SealedFile", "cache_key", "compare_observations", "locked",
           "seal_source", "seal_tree", "sealed_files", "store_json"]

#: Bumped whenever the rewrite or the canonical text changes: cached golden observations are per version.
SEAL_VERSION = 2

_OBSERVE, _RAISES = "_repogym_observe", "_repogym_raises"
#: Calls whose result is as fixed as their (literal) arguments: an operand built only from these is an expected value.
_BUILTIN_CALLS = frozenset({"list", "tuple", "set", "frozenset", "dict", "range", "str", "int", "float", "bool",
                            "bytes", "complex", "sorted", "reversed", "len", "sum", "min", "max", "abs", "round",
                            "repr", "chr", "ord", "divmod", "pow", "zip", "enumerate", "map"})
#: unittest's comparing assertions: how many leading arguments are operands.
_UNITTEST_OPERANDS = {
    "assertEqual": 2, "assertNotEqual": 2, "assertAlmostEqual": 2, "assertNotAlmostEqual": 2, "assertIs": 2,
    "assertIsNot": 2, "assertIn": 2, "assertNotIn": 2, "assertLess": 2, "assertLessEqual": 2, "assertGreater": 2,
    "assertGreaterEqual": 2, "assertCountEqual": 2, "assertListEqual": 2, "assertTupleEqual": 2,
    "assertDictEqual": 2, "assertSetEqual": 2, "assertSequenceEqual": 2, "assertMultiLineEqual": 2,
    "assertIsInstance": 1, "assertNotIsInstance": 1, "assertTrue": 1, "assertFalse": 1, "assertIsNone": 1,
    "assertIsNotNone": 1, "assertRegex": 1, "assertNotRegex": 1,
}

# The prelude every sealed file starts with (after its docstring and __future__ imports): names
# prefixed so no test name is shadowed. The judge's policy takes each observation from the audit event
# and checks it comes from this function (judge_ledger.on_observe).
_PRELUDE = '''
from sys import audit as _repogym_audit


def _repogym_observe(slot, value):
    _repogym_audit("repogym.judge", "observe", slot, value)
    return value


class _repogym_raises:
    def __init__(self, slot, inner=None, message=False):
        self._slot, self._inner, self._message, self.type, self.value = slot, inner, message, None, None

    def __enter__(self):
        return self if self._inner is None else self._inner.__enter__()

    def __exit__(self, kind, value, traceback):
        self.type, self.value = kind, value
        seen = None if kind is None else str(kind.__module__) + "." + str(kind.__qualname__)
        if self._message and kind is not None:
            seen = (seen, str(value))
        _repogym_observe(self._slot, seen)
        if self._inner is not None:
            return self._inner.__exit__(kind, value, traceback)
        return kind is not None and issubclass(kind, Exception)

    @property
    def typename(self):
        return None if self.type is None else self.type.__name__

    def match(self, regexp):
        import re as _re

        assert _re.search(regexp, str(self.value)), "Regex pattern did not match."
        return True
'''


@dataclass(frozen=True)
class Seal:
    """Which files a test run seals, and in which form.

    Attributes:
        files: Relative paths (in the grading copy) of the test files to seal.
        golden: Write the golden form (assertions kept, observed operands wrapped) instead of the
            candidate form (observations only).
    """

    files: tuple[str, ...]
    golden: bool = False


@dataclass(frozen=True)
class SealedFile:
    """A sealed file's text and where its observation slots were.

    Attributes:
        text: The rewritten source.
        lines: ``lines[slot]`` is the line of the original file the slot observes.
    """

    text: str
    lines: tuple[int, ...] = field(default=())


def sealed_files(fail_to_pass: Iterable[str], pass_to_pass: Iterable[str], hidden_files: Iterable[str]) -> tuple[str, ...]:
    """The hidden ``.py`` files that hold a scored test id, sorted (the files a sealed task seals)."""
    hidden = set(hidden_files)
    files = {i.split("::", 1)[0] for i in (*fail_to_pass, *pass_to_pass) if "::" in i}
    return tuple(sorted(f for f in files if f in hidden and f.endswith(".py")))


def _is_expected_value(node: ast.expr) -> bool:
    """Whether ``node`` is built from literals and builtin calls only (a value the test wrote down)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(not isinstance(e, ast.Starred) and _is_expected_value(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_expected_value(k) for k in node.keys) and all(map(_is_expected_value, node.values))
    if isinstance(node, ast.UnaryOp):
        return _is_expected_value(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_expected_value(node.left) and _is_expected_value(node.right)
    if isinstance(node, ast.JoinedStr):
        return all(isinstance(v, ast.Constant) or (isinstance(v, ast.FormattedValue) and _is_expected_value(v.value))
                   for v in node.values)
    if isinstance(node, ast.Call):
        return (isinstance(node.func, ast.Name) and node.func.id in _BUILTIN_CALLS
                and all(not isinstance(a, ast.Starred) and _is_expected_value(a) for a in node.args)
                and all(k.arg is not None and _is_expected_value(k.value) for k in node.keywords))
    return False


def _is_raises(node: ast.expr) -> bool:
    """``pytest.raises(...)``, ``raises(...)`` or ``self.assertRaises(...)`` used as a context manager."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("raises", "assertRaises") and bool(node.args) and not any(isinstance(a, ast.Starred) for a in node.args)


class _Sealer(ast.NodeTransformer):
    """Rewrites assertions into observations (see the module docstring)."""

    def __init__(self, golden: bool, helpers: frozenset[str]) -> None:
        self.golden = golden
        self.helpers = helpers
        self.lines: list[int] = []

    def _observe(self, node: ast.expr) -> ast.expr:
        slot = len(self.lines)
        self.lines.append(node.lineno)
        return ast.Call(ast.Name(_OBSERVE, ast.Load()), [ast.Constant(slot), node], [])

    def _parts(self, parts: list[ast.expr]) -> tuple[list[ast.expr], list[ast.expr], bool]:
        """(the parts with observed ones wrapped, the observation calls, whether an expected value was among them)."""
        wrapped, calls, dropped = [], [], False
        for part in parts:
            if _is_expected_value(part):
                wrapped.append(part)
                dropped = True
            else:
                call = self._observe(part)
                calls.append(call)
                wrapped.append(call)
        return wrapped, calls, dropped

    def _operands(self, test: ast.expr) -> tuple[ast.expr, list[ast.expr], bool]:
        """(the golden test with observed operands wrapped, the candidate's observation calls, whether the
        candidate may keep the test itself: a relation between observed values only, which holds no
        expected value, so ``a is b`` between two results is still checked)."""
        if isinstance(test, ast.Compare):
            wrapped, calls, dropped = self._parts([test.left, *test.comparators])
            return ast.Compare(wrapped[0], test.ops, wrapped[1:]), calls, not dropped
        if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in self.helpers
                and not any(isinstance(a, ast.Starred) for a in test.args) and all(k.arg for k in test.keywords)):
            # a helper of the test file itself (``same(got, want)``): its arguments are the operands
            wrapped, calls, dropped = self._parts([*test.args, *(k.value for k in test.keywords)])
            keywords = [ast.keyword(k.arg, v) for k, v in zip(test.keywords, wrapped[len(test.args):], strict=True)]
            return ast.Call(test.func, wrapped[:len(test.args)], keywords), calls, not dropped
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner, calls, _keep = self._operands(test.operand)
            return ast.UnaryOp(ast.Not(), inner), calls, False
        if _is_expected_value(test):
            return test, [], False
        call = self._observe(test)
        return call, [call], False

    def visit_Assert(self, node: ast.Assert) -> ast.stmt | list[ast.stmt]:  # noqa: N802 - ast's name
        tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) else [node.test]
        out: list[ast.stmt] = []
        for test in tests:
            golden, calls, keep = self._operands(test)
            if self.golden:
                out.append(ast.Assert(golden, node.msg))
            elif keep:
                out.append(ast.Assert(golden, None))  # the message may quote expected values
            else:
                out.extend(ast.Expr(c) for c in calls)
        return [ast.copy_location(s, node) for s in out] or ast.copy_location(ast.Pass(), node)

    def visit_Expr(self, node: ast.Expr) -> ast.AST | list[ast.stmt]:  # noqa: N802 - ast's name
        call = node.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr in _UNITTEST_OPERANDS and not any(isinstance(a, ast.Starred) for a in call.args)):
            return self.generic_visit(node)
        count = _UNITTEST_OPERANDS[call.func.attr]
        wrapped, calls, dropped = self._parts(call.args[:count])
        if self.golden:
            return ast.copy_location(ast.Expr(ast.Call(call.func, [*wrapped, *call.args[count:]], call.keywords)), node)
        if not dropped and count == 2:  # a relation between two results holds no expected value: kept, without its message
            keywords = [k for k in call.keywords if k.arg not in ("msg", None)]
            return ast.copy_location(ast.Expr(ast.Call(call.func, wrapped, keywords)), node)
        return [ast.copy_location(ast.Expr(c), node) for c in calls] or ast.copy_location(ast.Pass(), node)

    def _with(self, node: ast.With | ast.AsyncWith) -> ast.With | ast.AsyncWith:
        self.generic_visit(node)
        for item in node.items:
            if _is_raises(item.context_expr):
                slot = len(self.lines)
                self.lines.append(item.context_expr.lineno)
                call = item.context_expr
                assert isinstance(call, ast.Call)
                # a message pattern (``match=``, a regex argument) is part of what the block checks: the
                # candidate's form observes the message too, so sealing never checks less (round 23)
                message = bool(call.keywords) or len(call.args) > 1
                inner = call if self.golden else ast.Constant(None)
                item.context_expr = ast.Call(ast.Name(_RAISES, ast.Load()), [ast.Constant(slot), inner, ast.Constant(message)], [])
        return node

    visit_With = _with  # noqa: N815 - ast's names
    visit_AsyncWith = _with  # noqa: N815


def seal_source(text: str, *, golden: bool) -> SealedFile:
    """Rewrite a test file's source into its sealed form (module docstring).

    Args:
        text: The test file's source.
        golden: The golden form (assertions kept) rather than the candidate's (observations only).

    Raises:
        GraderError: when ``text`` does not parse (a hidden test file is the task's: a broken one
            is the task author's error, named here).
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise GraderError(f"a sealed test file does not parse: {exc}") from None
    helpers = frozenset(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("test"))
    sealer = _Sealer(golden, helpers)
    tree = sealer.visit(tree)
    body = tree.body
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
    while start < len(body) and isinstance(body[start], ast.ImportFrom) and body[start].module == "__future__":
        start += 1
    tree.body = [*body[:start], *ast.parse(_PRELUDE).body, *body[start:]]
    return SealedFile(ast.unparse(ast.fix_missing_locations(tree)) + "\n", tuple(sealer.lines))


def seal_tree(repo: Path, seal: Seal) -> None:
    """Seal ``seal.files`` in place in ``repo`` (a grader-owned copy)."""
    for rel in seal.files:
        path = repo / rel
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        path.write_text(seal_source(text, golden=seal.golden).text, encoding="utf-8", errors="surrogateescape")


#: A test's observations as the judge's record carries them: how many, and their chained SHA-256
#: (``h = sha256(h + sha256(hex(slot) + ":" + canonical text))`` from ``h = b""``; hex).
Observations = tuple[int, str]


def compare_observations(expected: Mapping[str, Observations], observed: Mapping[str, Observations]) -> dict[str, str]:
    """Each sealed test whose observations differ from the golden run's, with why (counts only: no
    value, no line of the hidden file is quoted).

    Args:
        expected: Test id -> the golden run's ``(count, chained sha256 hex)``.
        observed: Test id -> this run's ``(count, chained sha256 hex)`` (a test that made none is absent).
    """
    differing = {}
    for test_id, want in expected.items():
        got = observed.get(test_id, (0, ""))
        if got[0] != want[0]:
            differing[test_id] = f"{got[0]} observations where the golden patch made {want[0]}"
        elif got[1] != want[1]:
            differing[test_id] = f"its {want[0]} observations differ from the golden patch's"
    return differing


def store_json(path: Path, data: object) -> None:
    """Write ``data`` as JSON to ``path`` atomically, 0600 in a 0700 folder."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(path: Path):
    """An exclusive lock on ``path`` (created 0600) for the block: one golden run per cache entry."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def cache_key(parts: Iterable[str | bytes]) -> str:
    """SHA-256 over ``parts`` (each length-prefixed) and :data:`SEAL_VERSION`."""
    digest = hashlib.sha256(f"seal-v{SEAL_VERSION}".encode())
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()
