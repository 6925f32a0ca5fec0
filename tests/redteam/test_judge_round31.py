"""Red-team round 31: round 30's review, item 13 (tests/redteam/round31/): the judge's comparisons were closures
the code under test could reach (``judge_values.judge_eq``, unittest's wrapped ``assertEqual``, the trace
function ``sys.gettrace()`` returns), and a closure's cell is writable with no audit event. Rewriting one cell
made every ``==`` of the tests true (1.0 with ``add`` still wrong, under local and bwrap).

The property: nothing the policy hands out has a cell. Each function the code under test can reach is
closure-free and holds, as defaults, builtins, closure-free functions and opaque ``functools.cmp_to_key``
objects, whose C type shows no attribute but ``obj`` and calls the closure behind it; an exception one of them
raises carries no frame of what is behind the key.
"""

from __future__ import annotations

import functools
import sys
import types
import unittest
from collections.abc import Callable
from pathlib import Path

import pluggy
import pytest

from repogym_gym.episode import StepResult
from repogym_gym.graders import judge_statements, judge_values
from repogym_gym.task import Task
from tests.helpers import MakeTask
from tests.redteam.helpers import JUDGED_PYTHON, Start, assert_unearned_zero, attack, component, submit, write

HERE = Path(__file__).parent
KEY_TYPE = type(functools.cmp_to_key(lambda a, b: 0))


@attack("the judge", "a cell of the judge's comparisons rewritten from the package: judge_eq's operator.eq, "
        "assertEqual's plain_values (round 31)", local="score 0", confining="score 0")
def test_no_cell_of_the_comparisons_is_within_reach(start: Start, tiny_task: Task) -> None:
    text = (HERE / "round31" / "cells.py").read_text()
    assert "_RETURNED.append(a - b)" in text  # add still wrong
    env = start(tiny_task)
    write(env, "calc/__init__.py", text)
    assert_unearned_zero(submit(env))


@attack("the judge", "a test function's __dict__ made a dict subclass whose __iter__ ran inside the policy's "
        "check of the function before each pass, then round 28's forge (round 31)", local="score 0", confining="score 0")
def test_a_test_functions_dict_is_read_as_a_plain_dict(start: Start, tiny_task: Task) -> None:
    text = "\n\n".join((HERE / part).read_text() for part in ("round28/core.py", "round31/func_dict.py"))
    assert "return a - b" in text
    env = start(tiny_task)
    write(env, "calc/__init__.py", text)
    assert_unearned_zero(submit(env))


UNITTEST_VISIBLE = """import unittest

from calc import add, sub


class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)
"""
UNITTEST_HIDDEN = """import unittest

from calc import add


class H(unittest.TestCase):
    def test_add_negative(self):
        self.assertEqual(add(-2, -3), -5)
"""


def _unittest_attack(start: Start, make_task: MakeTask, package: Path, alias: bool = False) -> StepResult:
    """The calculator task with unittest tests (``add`` wrong, ``sub`` right; with ``alias``, asserted by the
    deprecated ``assertEquals``), ``package`` as its ``calc/__init__.py``: the submission scores an unearned
    0 (returned)."""
    visible, hidden = (text.replace("assertEqual(", "assertEquals(" if alias else "assertEqual(")
                       for text in (UNITTEST_VISIBLE, UNITTEST_HIDDEN))
    task = make_task(files={"tests/test_calc.py": visible}, hidden={"tests/test_calc_hidden.py": hidden},
                     tests={"command": "python -m pytest -q --junitxml={junit} tests",
                            "fail_to_pass": ["tests/test_calc.py::T::test_add", "tests/test_calc_hidden.py::H::test_add_negative"],
                            "pass_to_pass": ["tests/test_calc.py::T::test_sub"]})
    env, text = start(task), package.read_text()
    write(env, "calc/__init__.py", text)
    assert "return a - b" in text  # add is still wrong
    result = submit(env)
    assert_unearned_zero(result)
    return result


@attack("the judge", "the runner's unittest _callTestMethod wrapper's cell rewritten to a no-op: no test method ran, "
        "and the evidence that it returned still came (round 32)", local="score 0", confining="score 0")
def test_the_runners_unittest_wrapper_has_no_cell(start: Start, make_task: MakeTask) -> None:
    _unittest_attack(start, make_task, HERE / "round32" / "call_method.py")


@attack("the judge", "the runner's unittest assertEqual wrapper's keyword-only default (unittest's own method) "
        "replaced in its __kwdefaults__ dict: no audit event (round 33)", local="score 0", confining="score 0")
def test_the_runners_unittest_wrappers_have_no_mutable_defaults(start: Start, make_task: MakeTask) -> None:
    _unittest_attack(start, make_task, HERE / "round33" / "kwdefaults.py")


@pytest.mark.skipif(JUDGED_PYTHON >= (3, 12), reason="unittest's deprecated aliases were removed in Python 3.12")
@attack("the judge", "unittest's deprecated assertEquals alias's cell (the original assertEqual) made a no-op: "
        "no audit event, and the alias was not wrapped (round 33)", local="score 0", confining="score 0")
def test_a_cell_of_the_verdict_path_rewritten_voids_the_run(start: Start, make_task: MakeTask) -> None:
    result = _unittest_attack(start, make_task, HERE / "round33" / "alias_cell.py", alias=True)
    invalid = str(component(result, "tests")["details"].get("invalid") or "")
    assert "closure cell of TestCase._deprecate.<locals>.deprecated_func" in invalid, repr(component(result, "tests"))


def _closure_free(function: object, seen: set[int]) -> list[str]:
    """What of ``function`` holds a cell or a keyword-only default (a dict changed in place with no audit
    event, round 33): itself, or a function among its defaults or baked constants (recursively)."""
    if id(function) in seen or not isinstance(function, types.FunctionType):
        return []
    seen.add(id(function))
    held = [*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()]
    held += [c for c in function.__code__.co_consts if isinstance(c, (tuple, types.FunctionType))]
    held += [item for value in held if isinstance(value, tuple) for item in value]
    if not function.__code__.co_filename.startswith(str(Path(judge_values.__file__).parent)):
        return []  # what the judge holds of pytest's, pluggy's, unittest's own (their cells the policy watches)
    found = [function.__qualname__] if function.__closure__ or function.__kwdefaults__ else []
    for value in held:
        if isinstance(value, tuple):
            continue
        assert value is None or isinstance(value, (KEY_TYPE, str, int, types.FunctionType, types.BuiltinFunctionType, type,
                                  types.MethodDescriptorType, types.MethodWrapperType, types.WrapperDescriptorType)), (function, value)
        found += _closure_free(value, seen)
    return found


def test_what_the_code_under_test_can_reach_has_no_cell() -> None:
    keys, comparisons = judge_values.make_comparisons([sys.prefix])
    assert all(isinstance(key, KEY_TYPE) for key in keys[:2]) and keys[2].__name__ == "Self" and sorted(comparisons) == sorted(
        ["judge_eq", "judge_ne", "judge_lt", "judge_le", "judge_gt", "judge_ge", "judge_in", "judge_not_in"])
    sys.path.insert(0, str(Path(judge_values.__file__).parent))
    try:
        from repogym_gym.graders import pytest_runner
    finally:
        sys.path.pop(0)
    methods = [wrap(vars(unittest.TestCase)[name]) for name, wrap in pytest_runner._unittest_methods(keys).items()]
    tracers = judge_statements.tracer_for(sys.audit)
    wrappers = [pytest_runner._patched(pytest.MonkeyPatch.setattr, lambda mp: []),
                pytest_runner._registering(pluggy.PluginManager.register)]
    seen: set[int] = set()
    everything = [*comparisons.values(), *methods, *tracers, *wrappers]
    assert [f for function in everything for f in _closure_free(function, seen)] == []
    assert len(methods) >= 17 and len(seen) > 25  # 25 with Python 3.11's deprecated aliases
    assert methods[0](unittest.TestCase(), 1, 1) is None  # a baked wrapper still works
    with pytest.raises(AssertionError):
        methods[0](unittest.TestCase(), 1, 2)


def test_a_baked_template_refuses_an_unmatched_marker() -> None:
    sys.path.insert(0, str(Path(judge_values.__file__).parent))
    try:
        from repogym_gym.graders import pytest_runner
    finally:
        sys.path.pop(0)

    def template(x: int) -> int:
        add = "@add"
        return add(x)  # type: ignore[operator, no-any-return]

    assert pytest_runner._baked(template, add=lambda x: x + 1)(1) == 2
    with pytest.raises(ValueError, match="marker"):
        pytest_runner._baked(template)
    with pytest.raises(ValueError, match="markers"):
        pytest_runner._baked(template, add=abs, other=abs)


def test_the_handed_out_comparisons_still_decide_on_builtin_values() -> None:
    """The opaque key returns what the comparison behind it returns (an array's elementwise ==, a bool), a
    lying subclass is compared as its builtin copy, and an exception the package raises carries no frame."""
    (plain_key, *_), comparisons = judge_values.make_comparisons([sys.prefix])

    class Lying(list):  # made after the comparisons, named by no module: the package's
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = None  # type: ignore[assignment]

    judge_eq, judge_lt, judge_in = comparisons["judge_eq"], comparisons["judge_lt"], comparisons["judge_in"]
    assert judge_eq([1, 2], [1, 2]) is True and judge_eq(Lying([1]), [2]) is False and Lying([1]) == [2]
    assert judge_lt(1, 2) is True and judge_in(3, [1, 2]) is False
    assert (plain_key(Lying([1])) == plain_key("x")) == ([1], "x")

    class Raising:
        def __eq__(self, other: object) -> bool:
            raise ValueError("the package's own error")

        __hash__ = None  # type: ignore[assignment]

    with pytest.raises(ValueError, match="the package's own error") as caught:
        judge_eq(Raising(), Raising())  # two placeholders: compared by the package's own ==
    frames = []
    tb = caught.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert frames == ["test_the_handed_out_comparisons_still_decide_on_builtin_values"], frames


def _frames_between(frame: types.FrameType | None, stop: types.CodeType) -> list[types.FrameType]:
    found = []
    while frame is not None and frame.f_code is not stop:
        found.append(frame)
        frame = frame.f_back
    return found


def test_the_package_comparing_its_own_values_finds_nothing_of_the_judge_on_the_stack() -> None:
    """Between two placeholders the package's own ``__eq__`` decides, and it can reach its callers' frames
    (here through a traceback; in a judged run, through the collector's garbage). None of them holds a
    closure of the judge or the builtin forms being compared (a list it could change before its next item
    is compared): the comparison runs in the handed-out function, on the forms as call arguments only."""
    keys, comparisons = judge_values.make_comparisons([sys.prefix])
    stack: list[types.FrameType] = []
    here = sys._getframe().f_code

    class Point:  # made after the comparisons, named by no module: the package's
        def __init__(self, value: int) -> None:
            self.value = value

        def __eq__(self, other: object) -> bool:
            try:
                raise RuntimeError
            except RuntimeError as exc:
                stack.extend(_frames_between(exc.__traceback__.tb_frame.f_back, here))  # type: ignore[union-attr]
            return isinstance(other, Point) and self.value == other.value

        __hash__ = None  # type: ignore[assignment]

    assert comparisons["judge_eq"]([Point(1), Point(2)], [Point(1), Point(2)]) is True
    assert comparisons["judge_eq"]([Point(1), 2], [Point(1), Point(2)]) is False
    assert comparisons["judge_in"](Point(2), [Point(1), Point(2)]) is True
    assert comparisons["judge_not_in"](Point(3), [Point(1), Point(2)]) is True
    held = [value for frame in stack for value in frame.f_locals.values()]
    assert stack and not [v for v in held if isinstance(v, types.FunctionType) and v.__closure__], held
    assert not [v for v in held if isinstance(v, (list, tuple)) and any(type(i).__name__ == "Self" for i in v)], held


def forms_changed_in_an_assertion(keys: tuple[object, object], then: Callable[[], object] = lambda: None) -> list[str]:
    """The failures of a unittest ``assertEqual`` of points (wrapped as the runner wraps it, with ``keys``)
    whose ``__eq__`` finds the two forms in a frame of unittest's, makes every later item of one the very
    item of the other (equal without a comparison), then calls ``then``."""
    sys.path.insert(0, str(Path(judge_values.__file__).parent))
    try:
        from repogym_gym.graders import pytest_runner
    finally:
        sys.path.pop(0)

    class Point:
        def __init__(self, value: int) -> None:
            self.value = value

        def __eq__(self, other: object) -> bool:
            frame: types.FrameType | None = sys._getframe()
            while frame is not None:
                forms = [v for v in frame.f_locals.values()
                         if isinstance(v, list) and any(type(i).__name__ == "Self" for i in v)]
                if len(forms) == 2:
                    forms[1][1:] = forms[0][1:]
                    then()
                    break
                frame = frame.f_back
            return self.value == other.value if isinstance(other, Point) else True  # a liar, as written

        __hash__ = None  # type: ignore[assignment]

    class Case(unittest.TestCase):
        def test_points(self) -> None:
            self.assertEqual([Point(1), Point(2)], [Point(1), 7])

    for name, wrap in pytest_runner._unittest_methods(keys).items():
        setattr(Case, name, wrap(vars(unittest.TestCase)[name]))
    result = unittest.TestResult()
    Case("test_points").run(result)
    return [text for _, text in result.failures]


def test_forms_changed_by_the_package_during_a_unittest_assertion_fail_it() -> None:
    """unittest's ``assertEqual`` holds the forms in its own frame while the package's ``__eq__`` runs: an
    item of the other side replaced from there (so the next items compare equal) fails the assertion."""
    keys, _ = judge_values.make_comparisons([sys.prefix])
    failures = forms_changed_in_an_assertion(keys)
    assert len(failures) == 1 and "changed while they were compared" in failures[0], failures


def test_a_dict_made_plain_hashes_no_key_of_the_package() -> None:
    """A dict whose values changed is rebuilt, which hashes every key again: a key of the package's own
    ``__hash__`` would run its code while the forms are made (a frame of it reaching the comparisons'
    closures), so such a dict stands as a placeholder instead. Keys of the interpreter's types still make
    a builtin dict."""
    _, comparisons = judge_values.make_comparisons([sys.prefix])
    hashed: list[object] = []

    class Key:
        def __hash__(self) -> int:
            hashed.append(self)
            return 1

    class Lying(list):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = None  # type: ignore[assignment]

    key = Key()
    table, other = {key: Lying([1])}, {key: [2]}
    hashed.clear()
    assert comparisons["judge_eq"](table, other) is False
    assert hashed == []
    assert comparisons["judge_eq"]({(1, "a"): Lying([1])}, {(1, "a"): [1]}) is True
    assert comparisons["judge_eq"]({(1, "a"): Lying([1])}, {(1, "a"): [2]}) is False


@pytest.mark.parametrize("name", ["Result", "Self"])
def test_the_judges_own_classes_changed_by_the_package_fail_the_comparison(name: str) -> None:
    """Round 32 (a source review of b4b79fd): ``object.__subclasses__()`` finds the classes the comparisons
    make (the key's ``Result``, the placeholders' ``Self``), and assigning a class attribute raises no
    audit event: ``Result.__eq__`` answering ``(b, b)`` made every comparison true. Each is checked
    before its use: the comparison raises instead."""
    _, comparisons = judge_values.make_comparisons([sys.prefix])

    class Lying(list):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = None  # type: ignore[assignment]

    found = [c for c in object.__subclasses__() if c.__module__ == "judge_values" and c.__name__ == name]
    assert found
    saved = [c.__dict__["__eq__"] for c in found]
    try:
        for cls in found:
            cls.__eq__ = lambda self, other: (self.value[1], self.value[1]) if name == "Result" else True
        with pytest.raises(AssertionError, match="judge's"):
            comparisons["judge_eq"](Lying([1]), [2])
    finally:
        for cls, eq in zip(found, saved, strict=True):
            cls.__eq__ = eq
    assert comparisons["judge_eq"](Lying([1]), [2]) is False
