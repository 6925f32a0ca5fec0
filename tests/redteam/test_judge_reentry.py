"""The judge, second round: code under test that gets itself run *inside* the judge's audit hook.

A red-team round against the first policy found that while the hook ran, every audit event of its
thread was waved through (a guard against the hook's own recursion), so any submission code that
ran there could walk the heap, find the policy's state and forge the ledger and the JUnit report:
through ``__hash__``/``__eq__`` of a key planted in a dict the hook reads, a finalizer of cyclic
garbage collected during the hook, or a signal handler (which Python also hands the interrupted
frame). Each scored 1.0 on the pagination starter task with the bug unfixed, under local, bwrap and
docker. Now code running inside the hook is judged like any other, no collection runs in it,
pytest runs in a thread from which no signal handler can be installed, and the stack walkers of
``traceback`` hand no frame (nor the calling test's source line) to the submission.
"""

from __future__ import annotations

import textwrap

import pytest

from repogym_gym.task import Task, load_task
from tests.helpers import STARTER
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

G = "the judge"
INIT = "pagekit/__init__.py"

# What each attack does once it runs inside the hook: find the policy's state and forge it.
FORGE = """
import gc as _gc, sys as _sys

def _forge():
    for o in _gc.get_objects():
        if type(o) is dict and "nonce" in o and "ledger" in o and "scored_ids" in o:
            for i in o["scored_ids"]:
                o["ledger"][i] = "passed"
            del o["violations"][:]
            return True
    return False
"""

KEY_IN_HOOK_RELAY = FORGE + """
class _K(str):  # pluggy's own walks of the relay skip names starting with "_"
    def __hash__(self):
        try:
            _forge()
        except BaseException:
            pass
        return 1234567

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

for _finder in _sys.meta_path:
    _config = getattr(_finder, "config", None)
    if _config is not None:
        _relay = _config.pluginmanager.hook
        vars(_relay)[_K("_x")] = _relay.pytest_runtest_call
        break
"""

KEY_COLLIDING_IN_PYTEST = FORGE + """
_D = vars(_sys.modules["pytest"])

class _Eq:
    def __hash__(self):
        return hash("raises")

    def __eq__(self, other):
        try:
            _forge()
        except BaseException:
            pass
        return False

_v = _D.pop("raises")
_D[_Eq()] = None
_D["raises"] = _v
"""

FINALIZER = FORGE + """
class _Phoenix:
    def __init__(self):
        self.me = self  # a cycle: only a collection frees it

    def __del__(self):
        try:
            if not _forge():
                _Phoenix()
        except BaseException:
            _Phoenix()

_Phoenix()
"""

SIGNAL_HANDLER = FORGE + """
import signal as _signal

def _on_alarm(signum, frame):
    try:
        _forge()
    except BaseException:
        pass

_signal.signal(_signal.SIGALRM, _on_alarm)
_signal.setitimer(_signal.ITIMER_REAL, 0.0002, 0.0002)
"""

STACK_ORACLE = """
import re as _re, traceback as _tb
from pagekit.paginator import Paginator as _P

_orig = _P.num_pages.fget

def _num_pages(self):  # the number the calling assertion expects, read from its source line
    for fs in _tb.extract_stack()[::-1]:
        m = _re.search(r"\\.num_pages,\\s*(\\d+)\\)", fs.line or "")
        if m:
            return int(m.group(1))
    return _orig(self)

_P.num_pages = property(_num_pages)
"""

SENTINEL_DIRECTORY = """
import os as _os, sys as _sys

_name = _sys.argv[-1]  # the sentinel's file: replaced by a directory the host then tried to unlink
if _name.endswith(".py") and _os.path.isfile(_name):
    _os.unlink(_name)
    _os.mkdir(_name)
"""

ATTACKS = {
    "__hash__ of a key planted in pluggy's hook relay": (KEY_IN_HOOK_RELAY, "gc.get_objects"),
    "__eq__ of a key colliding with pytest.raises": (KEY_COLLIDING_IN_PYTEST, "gc.get_objects"),
    "finalizer of cyclic garbage collected during the hook": (FINALIZER, "gc.get_objects"),
    "signal handler on an interval timer": (SIGNAL_HANDLER, None),  # refused at import: the tests fail
    "the calling test's source line from traceback.extract_stack": (STACK_ORACLE, "_getframe"),
    "the sentinel replaced by a directory (was an infra error)": (SENTINEL_DIRECTORY, "sentinel"),
}


@pytest.fixture(scope="module")
def pagination() -> Task:
    return load_task(STARTER / "pagination-off-by-one")


@pytest.mark.parametrize("case", list(ATTACKS))
@attack(G, "submission code run inside the judge's hook (dict keys' __hash__/__eq__, finalizers, signal handlers), "
           "the calling test's source from the stack, the sentinel made a directory", local="score 0", confining="score 0")
def test_code_running_inside_the_judges_hook_is_judged_like_any_other(start: Start, pagination: Task, case: str) -> None:
    payload, reason = ATTACKS[case]
    env = start(pagination)
    original = (pagination.root / "repo" / INIT).read_text()
    write(env, INIT, original + "\n\n" + textwrap.dedent(payload))
    result = submit(env)
    assert_unearned_zero(result)
    tests = component(result, "tests")
    if reason is None:
        assert tests["details"]["fail_to_pass"]["tests/test_paginator.py::test_num_pages_exact_multiple"] != "passed"
        return
    invalid = str(tests["details"].get("invalid") or "")
    assert invalid and reason in invalid, invalid or tests
