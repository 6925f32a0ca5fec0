"""Red-team round 46 (an attack of 0b357f1 with the source in hand): a test frame's locals through a trusted formatter.

The judge denies the submission every frame but its own and judges a *deputy* (a trusted function that hands
the frames it obtains on, ``traceback.walk_tb``, ``inspect.stack``) as whoever it hands them to. Round 46 kept an
exception the package raised until it had unwound through a test, then built
``traceback.TracebackException(..., capture_locals=True)`` from it: the frame reads happened inside traceback's
walkers, whose holder was ``TracebackException.__init__``, trusted and not a deputy, and ``FrameSummary.locals``
handed the submission the reprs of every local of the test's frame (``'@py_assert8': '[0, 1, …, 19]'``) and of
the runner's. No reward on the sealed starter tasks, whose expected values never enter the judged process; on an
unsealed task, an oracle of what a test computes. The property: a formatter that keeps the frames but hands on
what it read from them is a deputy too, so ``TracebackException.__init__`` asked for locals now is one.
"""

from __future__ import annotations

from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

#: sub() raises once (test_sub catches nothing: it fails) and keeps the exception; add() then reads the
#: locals of every frame it unwound through, the test's own included, and answers with them when it can.
PAYLOAD = CALC_SOURCE.replace("def sub(a, b):\n    return a - b\n", '''def sub(a, b):
    if not _SAVED:
        error = RuntimeError("kept")
        _SAVED.append(error)
        raise error
    return a - b
''') + '''

_SAVED = []


def _leaked():
    import traceback

    if not _SAVED:
        return {}
    error = _SAVED[0]
    summary = traceback.TracebackException(type(error), error, error.__traceback__, capture_locals=True, lookup_lines=False)
    return {name: value for frame in summary.stack for name, value in (frame.locals or {}).items()}


_add = add


def add(a, b):
    seen = _leaked()
    return int(seen["expected"]) if "expected" in seen else _add(a, b)
'''


@attack("the judge", "a test frame's locals read through traceback.TracebackException(capture_locals=True) of an "
        "exception kept after it unwound (round 46: the reprs reached the package, no reward on sealed tasks)",
        local="score 0 with the reason", confining="score 0 with the reason")
def test_a_formatter_asked_for_the_frames_locals_is_a_deputy(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    write(env, "calc/__init__.py", PAYLOAD)
    result = submit(env)
    assert_unearned_zero(result)
    tests = component(result, "tests")
    assert tests["messages"] == ["invalid test run: the code under test broke the judge's policy: a frame (tb_frame) "
                                 "reached code of the submission (calc/__init__.py:22 (code of the submission))"]


@attack("the judge", "round 46's read of a test frame's locals through TracebackException.from_exception(..., "
        "capture_locals=True) (round 47: the classmethod was taken as the holder, not voided)",
        local="score 0 with the reason", confining="score 0 with the reason")
def test_from_exception_asked_for_locals_is_a_deputy_too(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    write(env, "calc/__init__.py", PAYLOAD.replace(
        "traceback.TracebackException(type(error), error, error.__traceback__, capture_locals=True, lookup_lines=False)",
        "traceback.TracebackException.from_exception(error, capture_locals=True, lookup_lines=False)"))
    result = submit(env)
    assert_unearned_zero(result)
    [message] = component(result, "tests")["messages"]
    assert message.startswith("invalid test run: the code under test broke the judge's policy: a frame (tb_frame) "
                              "reached code of the submission (calc/__init__.py:"), message
