"""The judge, seventh round: plugins of the submission and a unittest outcome cleared in silence.

A red-team round with the policy's source in hand (at 7d353d3), through the env's actions only, on
the pagination starter task and on the real-code tasks with their bugs unfixed, under bwrap and
docker:

- a plugin registered at import (the plugin manager is reachable as ``pytestPDB._pluginmanager``)
  whose ``pytest_pyfunc_call`` is *trusted* code: ``contextlib.nullcontext.__enter__`` bound to an
  object of the submission, or the plain ``tempfile.gettempdir`` on a ``SimpleNamespace`` reading a
  global the submission set. pytest's ``pytest_pyfunc_call`` is firstresult, so a non-None answer
  meant the test never ran, and the implementation passed because only its function's code was
  judged: 1.0 on pagination, shipping-quote-refactor and all four real-code packages;
- the same plugin rewriting a unittest item's ``runtest`` for the call and deleting it again;
- code that a unittest ``setUp`` calls setting the case's ``_outcome.success = False`` without an
  exception: unittest skipped the test method and nothing raised, so the call was clean (1.0 on
  jmespath-mut-293bc4bf).

The properties now: registering a plugin is a capability, refused to submission code (the runner
wraps pluggy's ``register``); every hook implementation belongs to a plugin announced that way and is
that plugin's own (a value of its module, or a method of its class bound to it, the class free of
submission code); a unittest pass needs evidence that unittest called the test method and it
returned, and an outcome that says failure with nothing raised is a violation.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repogym_gym.task import Task, load_task
from tests.helpers import FIXED_SOURCE, STARTER
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

G = "the judge"
INIT = "pagekit/__init__.py"
PAYLOADS = Path(__file__).with_name("round7")  # each attack's code as the red team wrote it (comment first)

PLUGINS = {
    "a trusted method bound to the submission's object as pytest_pyfunc_call": "trusted_bound_hookimpl.py",
    "a plain trusted function on a SimpleNamespace plugin": "plain_trusted_impl.py",
    "a plugin that rewrites a unittest item's runtest and deletes it again": "runtest_self_deleting.py",
}


@pytest.fixture(scope="module")
def pagination() -> Task:
    return load_task(STARTER / "pagination-off-by-one")


@pytest.mark.parametrize("case", list(PLUGINS))
@attack(G, "a plugin of the submission with trusted hook functions", local="score 0", confining="score 0")
def test_a_plugin_of_the_submission_scores_zero(start: Start, pagination: Task, case: str) -> None:
    env = start(pagination)
    write(env, INIT, (pagination.root / "repo" / INIT).read_text() + "\n\n" + (PAYLOADS / PLUGINS[case]).read_text())
    result = submit(env)
    assert_unearned_zero(result)
    invalid = str(component(result, "tests")["details"].get("invalid") or "")
    assert "registered by code of the submission" in invalid, invalid


UNITTEST_TESTS = """\
import unittest

from calc import add, sub


class TestCalc(unittest.TestCase):
    def setUp(self):
        self.zero = add(0, 0)

    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)

    def test_sub_zero(self):
        self.assertEqual(sub(1, 0), 1)
"""

OUTCOME_CLEARED = """\
import os as _os


def add(a, b):
    current = _os.environ.get("PYTEST_CURRENT_TEST", "")
    if current.endswith(" (call)") and "::test_add" in current:
        from _pytest.debugging import pytestPDB
        session = pytestPDB._pluginmanager.get_plugin("session")
        node_id = current.rsplit(" ", 1)[0]
        item = next((i for i in session.items if i.nodeid == node_id), None)
        if item is not None:
            item.instance._outcome.success = False  # unittest skips the method; nothing raises
    return a - b


def sub(a, b):
    return a - b
"""


UNITTEST_F2P = "tests/test_calc.py::TestCalc::test_add"


def unittest_task(make_task) -> Task:  # noqa: ANN001 - the conftest's factory
    """The tiny task with its tests as a unittest case whose setUp calls the code under test."""
    return make_task(files={"tests/test_calc.py": UNITTEST_TESTS}, hidden={"tests/test_calc_hidden.py": "\n"},
                     tests={"command": "python -m pytest -q --junitxml={junit} tests", "fail_to_pass": [UNITTEST_F2P],
                            "pass_to_pass": ["tests/test_calc.py::TestCalc::test_sub",
                                             "tests/test_calc.py::TestCalc::test_sub_zero"]})


@attack(G, "a unittest outcome set to failure without an exception from code setUp calls",
        local="score 0", confining="score 0")
def test_a_unittest_outcome_cleared_in_silence_scores_zero(start: Start, make_task) -> None:
    env = start(unittest_task(make_task))
    write(env, "calc/__init__.py", OUTCOME_CLEARED)
    result = submit(env)
    assert_unearned_zero(result)
    assert result.info["grade"]["fail_to_pass"][UNITTEST_F2P] != "passed"


# --- round 8 (against 02e9995): the same property from other sides ---------------------------------
#
# - a HookImpl made by hand (``HookCaller._add_hookimpl``, no register call) whose plugin is a module
#   pytest registered (``_pytest.tmpdir``) and whose function is that module's own ``get_user`` (no
#   arguments, returns $LOGNAME): "its registered plugin's own", as pytest_pyfunc_call (firstresult):
#   1.0 on pagination, toolz, tabulate;
# - the same, with ``_pytest.unittest.TestCaseFunction`` made pytest's plain ``Function`` during
#   collection, so unittest methods were plain items needing no method evidence: 1.0 on jmespath and
#   more-itertools;
# - no plugin at all: ``os.environ.encodevalue`` (an instance attribute of a trusted object) made a
#   submission function, so pytest's own PYTEST_CURRENT_TEST writes ran it on the judged thread
#   after the call check, to swap ``item._obj`` for a no-op and back at teardown: 1.0 everywhere,
#   quality 1.0 on the refactor task.
#
# The properties now: only HookImpls pluggy's register made (announced as it returns, with their
# hook's name) count; a plain test's pass needs evidence that pytest's pytest_pyfunc_call called the
# bound function and it returned; a unittest case must be collected as pytest's unittest item;
# os.environ is one of pytest's objects whose instance attributes may not run submission code.

ROUND8 = {
    "a hand-made HookImpl of a module pytest registered": ("trusted_module_impl.py", "is not the own of a plugin"),
    "item._obj swapped from os.environ's encode function during the call": ("obj_swap_in_call.py", "were rewired"),
}


@pytest.mark.parametrize("case", list(ROUND8))
@attack(G, "trusted hook functions of pytest's own plugins, item._obj swapped mid-call", local="score 0",
        confining="score 0")
def test_the_eighth_rounds_attacks_score_zero(start: Start, pagination: Task, case: str) -> None:
    name, named = ROUND8[case]
    env = start(pagination)
    write(env, INIT, (pagination.root / "repo" / INIT).read_text() + "\n\n" + (PAYLOADS.with_name("round8") / name).read_text())
    result = submit(env)
    assert_unearned_zero(result)
    invalid = str(component(result, "tests")["details"].get("invalid") or "")
    assert named in invalid, invalid


@attack(G, "unittest cases collected as plain test functions", local="score 0", confining="score 0")
def test_unittest_cases_collected_as_plain_functions_score_zero(start: Start, make_task) -> None:
    env = start(unittest_task(make_task))
    payload = (PAYLOADS.with_name("round8") / "unittest_as_function.py").read_text()
    write(env, "calc/__init__.py", CALC_SOURCE_FOR_ROUND8 + "\n\n" + payload)
    result = submit(env)
    assert_unearned_zero(result)
    assert result.info["grade"]["fail_to_pass"][UNITTEST_F2P] != "passed"


CALC_SOURCE_FOR_ROUND8 = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


# --- round 9 (against fdb2fd0) -------------------------------------------------------------------------
#
# - a str-subclass key "_obj" in the item's __dict__ whose __eq__ re-keyed it to a no-op on the lookup
#   pytest's own pytest_pyfunc_call made after the runner announced the real function (triggered by
#   os.environ._data made a dict subclass): 1.0 on pagination, toolz, tabulate;
# - unittest's equality table rewired at the call (a trusted assertEqual bound to a submission
#   object, or a name that inverts the comparison): 1.0 on more-itertools and jmespath.
#
# The properties now: the runner calls the very function it announced; no instance attribute of
# pytest's objects has a key that is not exactly a str; os.environ's data and encode functions are
# the ones it started with; a case's equality table holds only unittest's own names for their own
# types, or functions bound to the case that are not the submission's.

ROUND9 = {
    "a str-subclass key swapping item._obj at pytest's own lookup": "key_eq_swap.py",
}  # the equality table (unittest only): tests/graders/test_judge_policy.py's TYPE_EQUALITY


@pytest.mark.parametrize("case", list(ROUND9))
@attack(G, "item._obj re-keyed by a str subclass, unittest's equality table rewired", local="score 0",
        confining="score 0")
def test_the_ninth_rounds_attacks_score_zero(start: Start, pagination: Task, case: str) -> None:
    env = start(pagination)
    payload = (PAYLOADS.with_name("round9") / ROUND9[case]).read_text()
    write(env, INIT, (pagination.root / "repo" / INIT).read_text() + "\n\n" + payload)
    result = submit(env)
    assert_unearned_zero(result)
    assert result.info["grade"]["fail_to_pass"], result.info["grade"]


# --- round 10 (against 06c6888) -----------------------------------------------------------------------
#
# pytest's collection probes every name of a test module (``safe_getattr(obj, "__test__")``) after the
# module ran and before its first item was bound, which is when the judge began to watch it; a module
# ``__getattr__`` of the package under test answered the probe by making the test classes' assert*
# methods no-ops (1.0 on more-itertools and jmespath) or the helpers of a test support module
# (tabulate's test/common.py, never watched) no-ops in it and in every module that imported them
# (1.0 on tabulate), under bwrap and docker.
#
# The properties now: the runner tells the policy as soon as pytest's import of a test module returns,
# and from then on the test module, its classes and every grader module imported so far (support
# modules included) are watched; and a test class's own attributes named like unittest's methods must
# be functions of its file or of the interpreter (the module's body may call the package before that).

PROBE_UNITTEST = """\
import unittest

import calc


class TestCalc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)

    def test_sub(self):
        self.assertEqual(calc.sub(5, 3), 2)

    def test_sub_zero(self):
        self.assertEqual(calc.sub(1, 0), 1)
"""
PROBE_HELPERS = """\
import calc
from tests.common import assert_same


def test_add():
    assert_same(calc.add(2, 3), 5)


def test_sub():
    assert_same(calc.sub(5, 3), 2)


def test_sub_zero():
    assert_same(calc.sub(1, 0), 1)
"""
BODY_CALL = PROBE_UNITTEST + "\n\nZERO = calc.add(0, 0)\n"
COMMON = "def assert_same(got, want):\n    assert type(got) is type(want) and got == want, (got, want)\n"
ROUND10 = {
    "unittest assertions made no-ops from the collection probe": (
        "round10/collect_probe_unittest.py", PROBE_UNITTEST, "tests/test_calc.py::TestCalc::"),
    "the test module's own body calling code that makes its class's assertions no-ops": (
        "round10/body_call_rigs_class.py", BODY_CALL, "tests/test_calc.py::TestCalc::"),
    "a support module's helpers made no-ops from the collection probe": (
        "round10/collect_probe_helpers.py", PROBE_HELPERS, "tests/test_calc.py::"),
    # round 11 (against 1ad5190): the same rig after the module's body ended and before its import
    # returned, reached through a str-subclass __file__ from a meta_path finder of the submission and
    # a planted module __getattr__, with a base of no-op assert* put in through __bases__
    "round 11: a planted base class of no-op assertions, after the body, before the import returned": (
        "round11/loader_window_bases.py", PROBE_UNITTEST, "tests/test_calc.py::TestCalc::"),
    "round 11: support helpers rebound after the body, before the import returned": (
        "round11/loader_window_bases.py", PROBE_HELPERS, "tests/test_calc.py::"),
    # round 12 (against 729bc6b): `type` and `getattr` added to unittest.case's globals (which its
    # _getAssertEqualityFunc looks up) as instances of an empty subclass of a submission class: not
    # "code of the submission" by its own dict, and an added module key counted only as that
    "round 12: unittest.case given a global getattr and type that make assertEqual a no-op": (
        "round12/case_globals_type_getattr.py", PROBE_UNITTEST, "tests/test_calc.py::TestCalc::"),
    "round 12: sys.meta_path replaced as a whole list (the watch read the list it started with)": (
        "round12/meta_path_replaced.py", PROBE_HELPERS, "tests/test_calc.py::"),
    # round 13 (against 50b8e3c): `list` planted in the test module itself while it imported the
    # package, a list subclass whose == is mock.ANY's (a trusted function): 1.0 on more-itertools
    "round 13: a builtin name planted in the test module (a list whose == is always True)": (
        "round13/testmodule_builtin_shadow.py", PROBE_UNITTEST, "tests/test_calc.py::TestCalc::"),
    # round 14 (against 22c666d): a module __getattr__ planted while the body imported the package, called
    # by pytest's consider_module after the body and deleting itself before the watch, rebinding helpers
    # to a callable instance (1.0 on tabulate); a grader module is now judged statement by statement
    "round 14: a self-deleting __getattr__ planted during the body rebinds the support helper": (
        "round14/window_self_deleting_getattr.py", PROBE_HELPERS, "tests/test_calc.py::"),
    "round 14: the same window used against a unittest class": (
        "round14/window_self_deleting_getattr.py", PROBE_UNITTEST, "tests/test_calc.py::TestCalc::"),
}


@pytest.mark.parametrize("case", list(ROUND10))
@attack(G, "code of the submission run by pytest's collection probe rewires test classes or support modules",
        local="score 0", confining="score 0")
def test_the_tenth_rounds_collection_probe_scores_zero(start: Start, make_task, case: str) -> None:  # noqa: ANN001
    payload, tests, prefix = ROUND10[case]
    task = make_task(files={"tests/__init__.py": "", "tests/common.py": COMMON, "tests/test_calc.py": tests},
                     hidden={"tests/test_calc_hidden.py": "\n"},
                     tests={"command": "python -m pytest -q --junitxml={junit} tests",
                            "fail_to_pass": [f"{prefix}test_add"],
                            "pass_to_pass": [f"{prefix}test_sub", f"{prefix}test_sub_zero"]})
    env = start(task)
    source = (task.root / "repo" / "calc" / "__init__.py").read_text()
    write(env, "calc/__init__.py", source + "\n\n" + (PAYLOADS.parent / payload).read_text())
    result = submit(env)
    assert_unearned_zero(result)
    assert result.info["grade"]["fail_to_pass"][f"{prefix}test_add"] != "passed", result.info["grade"]
    invalid = str(component(result, "tests")["details"].get("invalid") or "")
    assert "broke the judge's policy" in invalid and ("was added" in invalid or "was replaced" in invalid
                                                       or "is not a method" in invalid or "its file does not define" in invalid
                                                       or "not a str" in invalid or "is not the function its file defines" in invalid
                                                       or "was replaced" in invalid or "shadows the builtin" in invalid), invalid
    fixed = start(task)  # the same tests, the bug fixed for real: the watch costs an honest submission nothing
    write(fixed, "calc/__init__.py", FIXED_SOURCE)
    assert submit(fixed).reward == 1.0
