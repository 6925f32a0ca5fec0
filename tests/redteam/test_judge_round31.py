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
from pathlib import Path

import pytest

from repogym_gym.graders import judge_statements, judge_values
from repogym_gym.task import Task
from tests.redteam.helpers import Start, assert_unearned_zero, attack, submit, write

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


def _closure_free(function: object, seen: set[int]) -> list[str]:
    """What of ``function`` holds a cell: itself, or a function among its defaults (recursively)."""
    if id(function) in seen or not isinstance(function, types.FunctionType):
        return []
    seen.add(id(function))
    found = [function.__qualname__] if function.__closure__ else []
    held = [*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()]
    for value in held:
        assert value is None or isinstance(value, (KEY_TYPE, str, types.FunctionType, types.BuiltinFunctionType, type,
                                  types.MethodDescriptorType, types.MethodWrapperType, types.WrapperDescriptorType)), (function, value)
        found += _closure_free(value, seen)
    return found


def test_what_the_code_under_test_can_reach_has_no_cell() -> None:
    plain_key, comparisons = judge_values.make_comparisons([sys.prefix])
    assert isinstance(plain_key, KEY_TYPE) and sorted(comparisons) == sorted(
        ["judge_eq", "judge_ne", "judge_lt", "judge_le", "judge_gt", "judge_ge", "judge_in", "judge_not_in"])
    sys.path.insert(0, str(Path(judge_values.__file__).parent))
    try:
        from repogym_gym.graders import pytest_runner
    finally:
        sys.path.pop(0)
    methods = [wrap(vars(unittest.TestCase)[name]) for name, wrap in pytest_runner._unittest_methods(plain_key).items()]
    tracers = judge_statements.tracer_for(sys.audit)
    seen: set[int] = set()
    assert [f for function in [*comparisons.values(), *methods, *tracers] for f in _closure_free(function, seen)] == []
    assert len(methods) == 17 and len(seen) > 25


def test_the_handed_out_comparisons_still_decide_on_builtin_values() -> None:
    """The opaque key returns what the comparison behind it returns (an array's elementwise ==, a bool), a
    lying subclass is compared as its builtin copy, and an exception the package raises carries no frame."""
    plain_key, comparisons = judge_values.make_comparisons([sys.prefix])

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
