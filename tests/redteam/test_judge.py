"""The judge: code under test, running inside the pytest process that judges it, tries to talk the
judge out of its verdict. The tiny task's ``calc.add`` subtracts; each attack is planted in
``calc/__init__.py`` (so it runs as soon as a test module imports ``calc``), the bug stays unfixed,
and the graded score must be exactly 0 with the judge's policy named as the reason, never an
infrastructure error (see ``repogym_gym/graders/judge_policy.py``).
"""

from __future__ import annotations

import textwrap

import pytest

from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

G = "the judge"

# The first red-team finds of issue 10, as they were played against the previous runner.
AUDIT_HOOK_SWAP = """
import sys as _s

def _noop(*args, **kwargs):
    return None

_FAKE = _noop.__code__.replace(co_filename="<swapped>")

def _swap(event, args):
    if event != "import":
        return
    for name, module in list(_s.modules.items()):
        if not name.startswith("tests"):
            continue
        for key, value in list(vars(module).items()):
            code = getattr(value, "__code__", None)
            if key.startswith("test") and code is not None and code.co_filename.endswith(".py"):
                if code.co_consts[:1] and "assert" in repr(code.co_consts):  # canaries start with a failing assert
                    pass
                value.place_as = value
                value.__code__ = _FAKE.replace(co_name=code.co_name, co_firstlineno=code.co_firstlineno)

_s.addaudithook(_swap)
"""

PROFILE_HOOK_SWAP = """
import sys as _s

def _ok():
    return None

def _prof(frame, event, arg):
    code = frame.f_code
    if event == "return" and code.co_name == "<module>" and "/tests/" in code.co_filename:
        for name, obj in list(frame.f_globals.items()):
            if name.startswith("test") and hasattr(obj, "__code__"):
                obj.__code__ = _ok.__code__
        _s.setprofile(None)

_s.setprofile(_prof)
"""

GC_LEDGER_FORGERY = """
import gc as _gc

for _o in _gc.get_objects():
    if isinstance(_o, dict) and any(str(k).startswith("tests/test_calc") for k in list(_o)[:5]):
        for _k in list(_o):
            _o[_k] = "passed"
"""

# Attacks on the design of the new judge: each goes after one of its properties.
CODE_SWAP_AT_CALL = """
import sys as _s

def _noop():
    return None

def add(a, b):
    for name in ("tests.test_calc", "tests.test_calc_hidden", "test_calc", "test_calc_hidden"):
        module = _s.modules.get(name)
        if module is None:
            continue
        for key, value in list(vars(module).items()):
            if key.startswith("test") and hasattr(value, "__code__"):
                value.__code__ = _noop.__code__
    return a + b if (a, b) == (2, 3) else a - b
"""

FUNCTION_FROM_TEST_CODE = """
import sys as _s, types as _t

def add(a, b):
    module = _s.modules.get("tests.test_calc") or _s.modules.get("test_calc")
    real = module.test_sub
    fake = _t.FunctionType(real.__code__, {"sub": lambda a, b: 2, "add": lambda a, b: 5})
    module.test_add_negative = fake
    return a - b
"""

ITEM_RUNTEST_SHADOW = """
import sys as _s

def _config():
    for finder in _s.meta_path:
        config = getattr(finder, "config", None)
        if config is not None:
            return config

def _silence(*args, **kwargs):
    return None

def __getattr__(name):
    # `from calc import add` in the second test module: the first module's items exist by now
    if name == "add":
        session = _config().pluginmanager.get_plugin("session")
        for item in list(getattr(session, "items", []) or []):
            item.runtest = _silence
        return lambda a, b: a - b
    raise AttributeError(name)
"""
ITEM_RUNTEST_SHADOW_SOURCE = CALC_SOURCE.replace("def add(a, b):\n    return a - b\n\n\n", "")

REPORT_CLASS_PATCH = """
import sys as _s

_R = _s.modules.get("_pytest.reports")
if _R is not None:
    _R.TestReport.passed = property(lambda self: True)
    _R.TestReport.failed = property(lambda self: False)
    _orig = _R.TestReport.__init__
    def _init(self, nodeid, location, keywords, outcome, *args, **kwargs):
        _orig(self, nodeid, location, keywords, "passed", *args, **kwargs)
    _R.TestReport.__init__ = _init
"""

HOOKIMPL_PARTIAL = """
import functools as _f, sys as _s

for _finder in _s.meta_path:
    _config = getattr(_finder, "config", None)
    if _config is not None:
        _R = _s.modules["_pytest.reports"]
        for _impl in _config.pluginmanager.hook.pytest_runtest_makereport.get_hookimpls():
            if getattr(_impl.function, "__module__", "") == "_pytest.runner":
                _impl.function = _f.partial(lambda item, call: _R.TestReport(
                    item.nodeid, item.location, {}, "passed", None, call.when))
"""

PLUGIN_FROM_META_PATH = """
import sys as _s
import pytest as _pt

class _Fix:
    @_pt.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        report.outcome = "passed"
        return report

for _finder in _s.meta_path:
    _config = getattr(_finder, "config", None)
    if _config is not None:
        _config.pluginmanager.register(_Fix(), "fix")
        break
"""

FORGED_LOGREPORT = """
import sys as _s

def add(a, b):
    for finder in _s.meta_path:
        config = getattr(finder, "config", None)
        if config is not None:
            R = _s.modules["_pytest.reports"]
            for node in ("tests/test_calc.py::test_add", "tests/test_calc_hidden.py::test_add_negative"):
                for when in ("setup", "call", "teardown"):
                    config.hook.pytest_runtest_logreport(report=R.TestReport(node, ("x", 0, "x"), {}, "passed", None, when))
    return a - b
"""

UNITTEST_AND_BUILTINS = """
import builtins as _b, unittest as _u, pytest as _pt

_u.TestCase.assertEqual = lambda self, *a, **k: None
_pt.raises = lambda *a, **k: None
_real_type = _b.type
"""

SILENCE_THE_RUNNER = """
import sys as _s

_main = _s.modules.get("__main__")
if _main is not None and hasattr(_main, "_audit"):
    _main._audit = lambda *args: None
_s.audit = lambda *args: None
"""

FORGED_RECORD = """
import os as _os

_RECORD = '{"exit_code": 1, "record": {"tests/test_calc.py::test_add": "passed"}, "violations": []}'

def add(a, b):
    # pytest captures fd 1 while tests run; the real stdout is one of the low fds it saved
    for fd in range(1, 30):
        try:
            _os.write(fd, ("\\n@@repogym-0000@@" + _RECORD + "@@repogym-0000@@\\n").encode())
        except OSError:
            pass
    _os._exit(1)
"""

PROC_MEM = """
import os as _os

def add(a, b):
    try:
        fd = _os.open("/proc/self/mem", _os.O_RDWR)
    except OSError:
        return a - b
    _os.close(fd)
    return a + b
"""

CTYPES = """
def add(a, b):
    import ctypes
    ctypes.memmove(0, 0, 0)
    return a - b
"""

FRAME_WALK = """
import inspect as _i

def add(a, b):
    for info in _i.stack():
        if "record" in info.frame.f_locals:
            info.frame.f_locals["record"].clear()
    return a - b
"""

RUNNER_FIELD_WRONG_TYPE = """
import sys as _s

for _finder in _s.meta_path:
    _config = getattr(_finder, "config", None)
    if _config is not None:
        for _plugin in _config.pluginmanager.get_plugins():
            if type(_plugin).__name__ == "_Judge":
                _plugin.files = 5
"""

TEST_SOURCE_ORACLE = """
import ast as _ast, glob as _glob, os as _os

_ANSWERS = {}
for _path in _glob.glob(_os.path.join(_os.path.dirname(__file__), "..", "tests", "*.py")):
    try:
        _tree = _ast.parse(open(_path).read())
    except (OSError, SyntaxError):
        continue
    for _node in _ast.walk(_tree):  # assert add(a, b) == c
        if isinstance(_node, _ast.Compare) and isinstance(_node.left, _ast.Call) and getattr(_node.left.func, "id", "") == "add":
            try:
                _ANSWERS[tuple(_ast.literal_eval(a) for a in _node.left.args)] = _ast.literal_eval(_node.comparators[0])
            except ValueError:
                pass

def add(a, b):
    return _ANSWERS.get((a, b), a - b)
"""

ATTACKS = {
    "audit-hook-test-body-swap": (AUDIT_HOOK_SWAP, "a code object built at run time"),  # its fake test body
    "profile-hook-removing-itself": (PROFILE_HOOK_SWAP, "sys.setprofile"),
    "gc-ledger-forgery": (GC_LEDGER_FORGERY, "gc.get_objects"),
    "code-swap-at-call": (CODE_SWAP_AT_CALL, "__code__"),
    "function-from-test-code": (FUNCTION_FROM_TEST_CODE, "function built from code"),
    "item-runtest-shadowed": (ITEM_RUNTEST_SHADOW, "runtest"),
    "report-class-patched": (REPORT_CLASS_PATCH, "TestReport"),
    "hookimpl-function-partial": (HOOKIMPL_PARTIAL, "pytest_runtest_makereport"),
    "plugin-registered-via-meta-path": (PLUGIN_FROM_META_PATH, "registered by code of the submission"),
    "forged-logreport": (FORGED_LOGREPORT, "pytest's own flow"),
    "unittest-and-pytest-patched": (UNITTEST_AND_BUILTINS, "assertEqual"),
    "runner-silenced": (SILENCE_THE_RUNNER, "record is missing"),
    "record-forged-on-stdout": (FORGED_RECORD, "report"),  # no JUnit report and no record: void
    "proc-self-mem": (PROC_MEM, "/proc/self/mem"),
    "ctypes": (CTYPES, "ctypes"),
    "frame-walk": (FRAME_WALK, "frame"),
    "runner-field-wrong-type": (RUNNER_FIELD_WRONG_TYPE, None),
    "test-source-oracle": (TEST_SOURCE_ORACLE, "read a test file"),
}


def _invalid(result) -> str:  # noqa: ANN001 - a StepResult
    return str(component(result, "tests")["details"].get("invalid") or "")


@pytest.mark.parametrize("case", list(ATTACKS))
@attack(G, "code under test tampering with the judge from inside its process (hooks, heap, frames, code swaps, "
           "pytest/pluggy/unittest internals, forged reports and records, /proc/self/mem, ctypes)",
        local="score 0", confining="score 0")
def test_code_under_test_cannot_talk_the_judge_out_of_its_verdict(start: Start, tiny_task: Task, case: str) -> None:
    payload, reason = ATTACKS[case]
    source = (ITEM_RUNTEST_SHADOW_SOURCE if case == "item-runtest-shadowed" else CALC_SOURCE) + textwrap.dedent(payload)
    env = start(tiny_task)
    write(env, "calc/__init__.py", source)
    result = submit(env)
    assert_unearned_zero(result)
    if reason is None:  # the attack changes nothing the judge relies on: the tests fail honestly
        assert result.info["grade"]["fail_to_pass"]["tests/test_calc.py::test_add"] == "failed"
        return
    invalid = _invalid(result)
    assert invalid and reason in invalid, invalid or component(result, "tests")
