"""TestGrader: the fail_to_pass / pass_to_pass score table, pure and through real grading runs."""

from __future__ import annotations

import pytest

from repogym_gym.graders import score_tests
from repogym_gym.grading import grade_patch
from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE, FIXED_SOURCE, MakeTask, grade_files, tiny_spec

ADD = "tests/test_calc.py::test_add"
ADD_NEG = "tests/test_calc_hidden.py::test_add_negative"
SUB = "tests/test_calc.py::test_sub"
SUB_ZERO = "tests/test_calc.py::test_sub_zero"

#: Fixes add for positive numbers only: test_add passes, the hidden test on negatives fails.
HALF_FIX = CALC_SOURCE.replace("return a - b", "return a + b if a > 0 else a - b", 1)
#: Fixes add fully but breaks sub so that test_sub fails (sub(5, 3) == 8) and test_sub_zero passes.
FIX_BREAKING_SUB = FIXED_SOURCE.replace("def sub(a, b):\n    return a - b", "def sub(a, b):\n    return a + b")
HALF_FIX_BREAKING_SUB = HALF_FIX.replace("def sub(a, b):\n    return a - b", "def sub(a, b):\n    return a + b")


def grading(**overrides: object) -> dict[str, object]:
    return {"grading": overrides}


# -- the pure table ----------------------------------------------------------------------------


def test_score_tests_gives_k_of_n_with_partial_credit() -> None:
    score, passed, messages = score_tests(
        {"a": "passed", "b": "failed", "c": "passed"}, {"p": "passed"}, partial_credit=True, require_all_pass_to_pass=True
    )
    assert score == 2 / 3
    assert passed is False
    assert "2/3 fail_to_pass tests pass" in messages


def test_score_tests_is_all_or_nothing_without_partial_credit() -> None:
    score, passed, _ = score_tests({"a": "passed", "b": "failed"}, {}, partial_credit=False, require_all_pass_to_pass=True)
    assert (score, passed) == (0.0, False)
    score, passed, _ = score_tests({"a": "passed", "b": "passed"}, {}, partial_credit=False, require_all_pass_to_pass=True)
    assert (score, passed) == (1.0, True)


def test_score_tests_zeroes_a_broken_pass_to_pass_when_all_are_required() -> None:
    score, passed, messages = score_tests(
        {"a": "passed"}, {"p": "passed", "q": "failed"}, partial_credit=True, require_all_pass_to_pass=True
    )
    assert (score, passed) == (0.0, False)
    assert any("1/2 pass_to_pass tests broken" in m and "'q'" in m for m in messages)


def test_score_tests_scales_by_the_unbroken_fraction_when_not_all_are_required() -> None:
    f2p = {"a": "passed", "b": "failed"}
    p2p = {"p": "passed", "q": "failed", "r": "passed", "s": "error"}
    score, passed, _ = score_tests(f2p, p2p, partial_credit=True, require_all_pass_to_pass=False)
    assert score == 0.5 * (1 - 2 / 4)
    assert passed is False


def test_score_tests_without_fail_to_pass_is_one_iff_every_pass_to_pass_passes() -> None:
    assert score_tests({}, {"p": "passed", "q": "passed"}, partial_credit=True, require_all_pass_to_pass=True) == (1.0, True, [])
    score, passed, _ = score_tests({}, {"p": "passed", "q": "failed"}, partial_credit=True, require_all_pass_to_pass=True)
    assert (score, passed) == (0.0, False)
    score, passed, _ = score_tests({}, {"p": "passed", "q": "failed"}, partial_credit=True, require_all_pass_to_pass=False)
    assert (score, passed) == (0.5, False)


@pytest.mark.parametrize("status", ["failed", "error", "skipped", "missing"])
def test_score_tests_counts_every_status_but_passed_as_not_passing(status: str) -> None:
    score, passed, _ = score_tests({"a": "passed", "b": status}, {}, partial_credit=True, require_all_pass_to_pass=True)  # type: ignore[dict-item]
    assert (score, passed) == (0.5, False)
    score, passed, _ = score_tests({"a": "passed"}, {"p": status}, partial_credit=True, require_all_pass_to_pass=True)  # type: ignore[dict-item]
    assert (score, passed) == (0.0, False)


# -- real grading runs ---------------------------------------------------------------------------


def test_fixing_one_of_two_fail_to_pass_scores_one_half(tiny_task: Task) -> None:
    result = grade_files(tiny_task, {"calc/__init__.py": HALF_FIX})
    assert result.fail_to_pass == {ADD: "passed", ADD_NEG: "failed"}
    assert result.pass_to_pass == {SUB: "passed", SUB_ZERO: "passed"}
    assert result.component("tests").score == 0.5
    assert result.score == 0.5
    assert result.passed is False
    assert result.infra_error is None


def test_fixing_one_of_two_fail_to_pass_scores_zero_without_partial_credit(make_task: MakeTask) -> None:
    task = make_task(**grading(partial_credit=False))
    result = grade_files(task, {"calc/__init__.py": HALF_FIX})
    assert result.fail_to_pass == {ADD: "passed", ADD_NEG: "failed"}
    assert result.score == 0.0
    assert result.passed is False


def test_a_broken_pass_to_pass_scores_zero_when_all_are_required(tiny_task: Task) -> None:
    result = grade_files(tiny_task, {"calc/__init__.py": FIX_BREAKING_SUB})
    assert result.fail_to_pass == {ADD: "passed", ADD_NEG: "passed"}
    assert result.pass_to_pass == {SUB: "failed", SUB_ZERO: "passed"}
    assert result.score == 0.0
    assert result.passed is False


def test_a_broken_pass_to_pass_scales_the_score_when_not_all_are_required(make_task: MakeTask) -> None:
    task = make_task(**grading(require_all_pass_to_pass=False))
    result = grade_files(task, {"calc/__init__.py": FIX_BREAKING_SUB})
    assert result.pass_to_pass == {SUB: "failed", SUB_ZERO: "passed"}
    assert result.score == 1.0 * (1 - 1 / 2)
    assert result.passed is False


def test_partial_fail_to_pass_and_broken_pass_to_pass_multiply(make_task: MakeTask) -> None:
    task = make_task(**grading(require_all_pass_to_pass=False))
    result = grade_files(task, {"calc/__init__.py": HALF_FIX_BREAKING_SUB})
    assert result.fail_to_pass == {ADD: "passed", ADD_NEG: "failed"}
    assert result.pass_to_pass == {SUB: "failed", SUB_ZERO: "passed"}
    assert result.score == 0.25


def test_without_fail_to_pass_the_tests_score_is_one_iff_all_pass_to_pass_pass(make_task: MakeTask) -> None:
    spec = tiny_spec()
    tests = {**spec["tests"], "fail_to_pass": [], "pass_to_pass": [SUB, SUB_ZERO]}
    task = make_task(
        type="refactor", tests=tests,
        constraints={"paths": ["calc/__init__.py"], "max_function_length": 50},
    )
    unchanged_behaviour = CALC_SOURCE.replace("def sub(a, b):\n    return a - b", "def sub(a, b):\n    result = a - b\n    return result")
    kept = grade_files(task, {"calc/__init__.py": unchanged_behaviour})
    assert kept.component("tests").role == "gate"
    assert kept.component("tests").score == 1.0
    assert kept.component("tests").passed is True
    assert kept.score == 1.0
    broken = grade_files(task, {"calc/__init__.py": HALF_FIX_BREAKING_SUB})
    assert broken.component("tests").score == 0.0
    assert broken.component("tests").passed is False
    assert broken.score == 0.0


def test_a_fail_to_pass_id_absent_from_the_report_counts_as_missing(make_task: MakeTask) -> None:
    spec = tiny_spec()
    ghost = "tests/test_calc.py::test_not_there"
    task = make_task(tests={**spec["tests"], "fail_to_pass": [ADD, ADD_NEG, ghost]})
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE})
    assert result.fail_to_pass == {ADD: "passed", ADD_NEG: "passed", ghost: "missing"}
    assert result.score == 2 / 3
    assert result.passed is False


def test_a_skipped_fail_to_pass_counts_as_not_passing(make_task: MakeTask) -> None:
    skipped = "import pytest\n\nfrom calc import add\n\n\n@pytest.mark.skip(reason='not today')\ndef test_add_negative():\n    assert add(-2, -3) == -5\n"
    task = make_task(hidden={"tests/test_calc_hidden.py": skipped})
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE})
    assert result.fail_to_pass == {ADD: "passed", ADD_NEG: "skipped"}
    assert result.score == 0.5
    assert result.passed is False


def test_a_skipped_pass_to_pass_counts_as_broken(make_task: MakeTask) -> None:
    visible = (
        "import pytest\n\nfrom calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(5, 3) == 2\n\n\n@pytest.mark.skip(reason='x')\ndef test_sub_zero():\n    assert sub(1, 0) == 1\n"
    )
    task = make_task(files={"tests/test_calc.py": visible})
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE})
    assert result.pass_to_pass == {SUB: "passed", SUB_ZERO: "skipped"}
    assert result.score == 0.0


def test_the_golden_patch_scores_one_and_the_empty_submission_zero(tiny_task: Task) -> None:
    golden = grade_patch(tiny_task, tiny_task.golden_patch())
    assert (golden.score, golden.passed) == (1.0, True)
    assert golden.component("tests").messages == ["2/2 fail_to_pass tests pass"]
    noop = grade_patch(tiny_task, "")
    assert (noop.score, noop.passed) == (0.0, False)
    assert noop.fail_to_pass == {ADD: "failed", ADD_NEG: "failed"}
    assert noop.pass_to_pass == {SUB: "passed", SUB_ZERO: "passed"}


def test_edits_to_the_visible_test_file_are_not_carried_into_grading(tiny_task: Task) -> None:
    rigged = "def test_add():\n    pass\n\n\ndef test_sub():\n    pass\n\n\ndef test_sub_zero():\n    pass\n"
    result = grade_files(tiny_task, {"tests/test_calc.py": rigged})
    assert result.fail_to_pass[ADD] == "failed"
    assert result.component("constraints").passed is False
    assert result.score == 0.0


# -- inherited test methods (issue 12) ----------------------------------------------------------

#: Test methods defined once in a mixin of another file and inherited by a pytest class and a
#: unittest class: pytest's node ids name the inheriting class's file, while its xunit1 ``file``
#: attribute names the mixin's (cachetools' suite is built this way).
MIXIN_FILES = {
    "tests/mixins.py": "from calc import add, sub\n\n\nclass AddChecks:\n"
                       "    def test_add(self):\n        assert add(2, 3) == 5\n\n"
                       "    def test_sub(self):\n        assert sub(5, 3) == 2\n",
    "tests/test_plain.py": "from tests.mixins import AddChecks\n\n\nclass TestPlain(AddChecks):\n    pass\n",
    "tests/test_unit.py": "import unittest\n\nfrom tests.mixins import AddChecks\n\n\n"
                          "class TestUnit(AddChecks, unittest.TestCase):\n    pass\n",
    "tests/__init__.py": "",
}
MIXIN_TESTS = {"command": "python -m pytest -q --junitxml={junit} tests",
               "fail_to_pass": ["tests/test_plain.py::TestPlain::test_add", "tests/test_unit.py::TestUnit::test_add"],
               "pass_to_pass": ["tests/test_plain.py::TestPlain::test_sub", "tests/test_unit.py::TestUnit::test_sub"]}


@pytest.mark.slow
def test_tests_inherited_from_a_mixin_in_another_file_are_graded_by_their_node_ids(make_task: MakeTask) -> None:
    """Before: the JUnit ids fell back to a dotted form the runner never recorded, the run was voided
    as "the report was rewritten", and the golden patch scored 0 (5 of 8 mined cachetools tasks)."""
    task = make_task(files=MIXIN_FILES, tests=MIXIN_TESTS)
    golden = grade_patch(task, task.golden_patch())
    assert golden.score == 1.0, golden.summary()
    assert golden.fail_to_pass == dict.fromkeys(MIXIN_TESTS["fail_to_pass"], "passed")
    assert golden.pass_to_pass == dict.fromkeys(MIXIN_TESTS["pass_to_pass"], "passed")
    noop = grade_patch(task, "")
    assert noop.score == 0.0 and not noop.infra_error, noop.summary()
    assert set(noop.fail_to_pass.values()) == {"failed"} and set(noop.pass_to_pass.values()) == {"passed"}


# -- a helper the test file decorates with the package's own decorator (issue 12) -----------------

#: cachetools' tests/test_threading.py does ``@cached(cache=LRUCache(1), ...) def func(): ...``: the
#: name binds the package's wrapper (``functools.update_wrapper``), code under test, not the function
#: the file defines. The judge voided every run of such a file ("func is not the function its file
#: defines"), so 6 of 11 cachetools history candidates (the commit that added the file and every
#: later one) were "suite_did_not_run". A test file's own decorator's wrapper counts the same way.
DECORATED_FILES = {
    "calc/memo.py": "import functools\n\n\ndef memo(func):\n    seen = {}\n\n"
                    "    def wrapper(*args):\n        if args not in seen:\n            seen[args] = func(*args)\n"
                    "        return seen[args]\n\n    return functools.update_wrapper(wrapper, func)\n",
    "tests/test_decorated.py": "from calc import add\nfrom calc.memo import memo\n\n\n"
                               "def logged(func):\n    def inner(*args):\n        return func(*args)\n    return inner\n\n\n"
                               "@memo\ndef double(x):\n    return add(x, x)\n\n\n@logged\ndef triple(x):\n    return add(add(x, x), x)\n\n\n"
                               "def test_double():\n    assert double(2) == 4\n\n\ndef test_triple():\n    assert triple(1) == 3\n",
}
DECORATED_TESTS = {"command": "python -m pytest -q --junitxml={junit} tests",
                   "fail_to_pass": ["tests/test_decorated.py::test_double", "tests/test_decorated.py::test_triple"],
                   "pass_to_pass": ["tests/test_calc.py::test_sub"]}


@pytest.mark.slow
def test_a_helper_decorated_by_the_package_or_by_the_test_file_is_not_a_policy_violation(make_task: MakeTask) -> None:
    task = make_task(files=DECORATED_FILES, tests=DECORATED_TESTS)
    golden = grade_patch(task, task.golden_patch())
    assert golden.score == 1.0 and not golden.infra_error, golden.summary()
    noop = grade_patch(task, "")
    assert noop.score == 0.0 and not noop.infra_error, noop.summary()
    assert set(noop.fail_to_pass.values()) == {"failed"}


#: Red-team round 45: the hidden file decorates a helper that calls the code and an oracle with its own
#: decorator; the submission (the bug left in) rebinds the helper to the oracle's wrapper when the
#: code is first called, after the hidden module was imported and before its first test.
CROSSBIND_HIDDEN = {
    "tests/test_calc_hidden.py": "import functools\n\nfrom calc import add\n\n\n"
                                 "def checked(f):\n    @functools.wraps(f)\n    def wrapper(*args):\n"
                                 "        result = f(*args)\n        assert type(result) is int\n        return result\n"
                                 "    return wrapper\n\n\n@checked\ndef total(a, b):\n    return add(a, b)\n\n\n"
                                 "@checked\ndef expected(a, b):\n    return a + b\n\n\n"
                                 "def test_add_negative():\n    assert total(-2, -3) == expected(-2, -3)\n",
}
CROSSBIND_PAYLOAD = (
    "\n\ndef _crossbind():\n    import sys\n    for module in list(sys.modules.values()):\n"
    "        ns = getattr(module, '__dict__', None)\n"
    "        if isinstance(ns, dict) and 'expected' in ns and 'total' in ns and ns['total'] is not ns['expected']:\n"
    "            ns['total'] = ns['expected']\n\n\n_add = add\n\n\ndef add(a, b):\n    _crossbind()\n    return _add(a, b)\n"
)


@pytest.mark.slow
def test_rebinding_a_decorated_helper_to_another_decorated_helper_scores_0(make_task: MakeTask) -> None:
    task = make_task(hidden=CROSSBIND_HIDDEN, tests={"command": "python -m pytest -q --junitxml={junit} tests",
                                                     "fail_to_pass": ["tests/test_calc_hidden.py::test_add_negative"],
                                                     "pass_to_pass": ["tests/test_calc.py::test_sub"]})
    assert grade_patch(task, task.golden_patch()).score == 1.0
    assert grade_patch(task, "").score == 0.0
    result = grade_files(task, {"calc/__init__.py": CALC_SOURCE + CROSSBIND_PAYLOAD})
    assert result.score == 0.0 and not result.infra_error, result.summary()
    assert "total was" in str(result.components), result.components  # the judge names the rebound helper
