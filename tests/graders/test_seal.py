"""Sealed tests (issue 10): a hidden test's verdict decided on the host against the golden patch's observations.

The tiny task's hidden test is ``assert add(-2, -3) == -5``; its ``calc.add`` subtracts until the
golden patch fixes it. Real pytest runs, real grading copies, the real golden run.
"""

from __future__ import annotations

import ast
import json
import os
import secrets
import stat
import textwrap
from pathlib import Path

import pytest

from repogym_gym.graders.seal import Seal, compare_observations, seal_source
from repogym_gym.graders.testrun import run_tests
from repogym_gym.grading import grade_patch
from repogym_gym.grading_copy import build_grading_copy
from repogym_gym.sandbox import LocalSandbox
from repogym_gym.task import Task
from repogym_gym.workspace import default_baseline_store
from tests.helpers import HIDDEN_TESTS, MakeTask, make_patch, tiny_spec

HIDDEN_ID = "tests/test_calc_hidden.py::test_add_negative"

SAMPLE = textwrap.dedent(
    '''\
    """A docstring stays first."""
    from __future__ import annotations

    import pytest

    from pkg import parse, Thing


    def same(got, want):
        return type(got) is type(want) and got == want


    def test_compare():
        assert parse("2d") == 172_800, "two days"
        assert parse("x") is None
        assert same(parse("1h"), list(range(3600, 3601)))
        assert Thing() is Thing()
        assert not parse("")
        assert parse("a") and parse("b") == {"k": (1, -2)}


    def test_raises():
        with pytest.raises(KeyError, match="zzz"):
            parse("q")


    class TestCase:
        def test_unittest(self):
            self.assertEqual(parse("m"), 60)
            self.assertIs(parse("n"), parse("n"))
    '''
)


def _constants(text: str) -> set[object]:
    return {n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant)}


def test_the_candidate_form_holds_no_expected_value_and_the_golden_form_keeps_every_assertion() -> None:
    candidate = seal_source(SAMPLE, golden=False)
    golden = seal_source(SAMPLE, golden=True)
    body = candidate.text[candidate.text.index("def test_compare"):]
    for value in (172_800, 3600, 3601, "two days", "k", 60, "zzz"):
        assert value not in _constants(body), value
    assert "KeyError" not in body and "-2" not in body
    # the inputs stay, and a relation between two results (no expected value in it) is still asserted
    assert {"2d", "x", "1h", "q", "m"} <= _constants(body)
    assert "assert _repogym_observe(" in body and " is _repogym_observe(" in body
    assert "self.assertIs(_repogym_observe(" in body
    golden_body = golden.text[golden.text.index("def test_compare"):]
    assert {172_800, 3600, "two days", 60, "zzz"} <= _constants(golden_body) and "KeyError" in golden_body
    assert golden.lines == candidate.lines and len(candidate.lines) == 12
    assert candidate.text.startswith('"""A docstring stays first."""\nfrom __future__ import annotations\n')


def test_a_file_that_does_not_parse_is_named_as_the_task_s_error() -> None:
    from repogym_gym.errors import GraderError

    with pytest.raises(GraderError, match="does not parse"):
        seal_source("def test(:\n", golden=False)


def _sealed_task(make_task: MakeTask, **hidden: str) -> Task:
    spec = tiny_spec()
    spec["tests"]["sealed"] = True
    return make_task(hidden=hidden or None, tests=spec["tests"])


def _tests_component(result):  # noqa: ANN001, ANN202
    return next(c for c in result.components if c.name == "tests")


def test_the_bug_passes_the_judged_process_s_own_verdict_and_fails_only_on_the_host(make_task: MakeTask, tmp_path: Path) -> None:
    """The candidate form asserts nothing the bug breaks, so pytest itself reports the hidden test
    passed with the bug in place: whatever the judged process says, the host's comparison decides."""
    task = _sealed_task(make_task)
    store = default_baseline_store()
    baseline = store.get(task)
    repo = tmp_path / "repo"
    build_grading_copy(task, baseline, None, repo)
    run = run_tests(task.spec.tests, repo=repo, scratch=tmp_path / "scratch", baseline_tree=baseline.tree,
                    sandbox=LocalSandbox(), timeout_s=60, output_limit_bytes=100_000, seal=Seal(("tests/test_calc_hidden.py",)))
    assert run.invalid is None and run.report is not None
    assert run.report.status_of(HIDDEN_ID) == "passed"  # the in-process verdict, with add() still subtracting
    assert run.observed is not None and run.observed[HIDDEN_ID][0] == 1 and len(run.observed[HIDDEN_ID][1]) == 64

    noop = grade_patch(task, "")
    tests = _tests_component(noop)
    assert noop.score == 0.0 and noop.infra_error is None
    assert tests.details["fail_to_pass"][HIDDEN_ID] == "failed"
    assert tests.details["sealed"]["differing"] == {HIDDEN_ID: "its 1 observations differ from the golden patch's"}
    golden = grade_patch(task, task.golden_patch())
    assert golden.score == 1.0 and _tests_component(golden).details["sealed"] == {"tests": 1, "observations": 1, "differing": {}}


def test_the_golden_observations_are_recorded_once_and_kept_private(make_task: MakeTask) -> None:
    task = _sealed_task(make_task, **{"tests/test_calc_hidden.py": HIDDEN_TESTS + f"# {secrets.token_hex(8)}\n"})
    cache = Path(os.environ["REPOGYM_CACHE_DIR"]) / "sealed"
    before_run = set(cache.glob("*.json"))
    assert grade_patch(task, task.golden_patch()).score == 1.0
    [path] = set(cache.glob(f"{task.id}-*.json")) - before_run  # its own key: the hidden file's bytes differ
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert set(data) == {"version", "task", "tests"} and data["tests"][HIDDEN_ID][0] == 1
    assert len(data["tests"][HIDDEN_ID][1]) == 64
    before = path.stat().st_mtime_ns
    assert grade_patch(task, "").score == 0.0
    assert path.stat().st_mtime_ns == before  # the second grading read the cache, no second golden run


def test_a_golden_patch_that_fails_a_sealed_test_is_a_broken_task_not_a_submission_s_zero(make_task: MakeTask) -> None:
    task = _sealed_task(make_task, **{"tests/test_calc_hidden.py": HIDDEN_TESTS.replace("== -5", "== -6")})
    result = grade_patch(task, task.golden_patch())
    assert result.score == 0.0
    assert result.infra_error and "the task is broken (grader" in result.infra_error and HIDDEN_ID in result.infra_error


def test_values_are_compared_as_exact_builtins(make_task: MakeTask) -> None:
    """An int subclass equal to the golden value, or a float of the same value, is another value (the
    visible test, unsealed, passes with both: half the fail_to_pass credit)."""
    task = _sealed_task(make_task)
    for body in ("class _I(int):\n    pass\n\n\ndef add(a, b):\n    return _I(a + b)\n",
                 "def add(a, b):\n    return float(a + b)\n"):
        source = (task.root / "repo" / "calc" / "__init__.py").read_text().replace("def add(a, b):\n    return a - b\n", body)
        patch = make_patch("calc/__init__.py", (task.root / "repo" / "calc" / "__init__.py").read_text(), source)
        result = grade_patch(task, patch)
        assert result.score == 0.5, body
        assert HIDDEN_ID in _tests_component(result).details["sealed"]["differing"]


# Code under test that knows the expected value (-5) and tries to hand it to the judge as an
# observation of the hidden test, while add() keeps subtracting: {how} replaces the last line.
FORGER = '''

def add(a, b):
    import sys, threading
    module = next(m for n, m in list(sys.modules.items()) if n.endswith("test_calc_hidden"))
    {how}
    return a - b
'''
FORGERIES = {  # how -> (the forgery, what the grade says)
    # the sealed file's own function, called from the code under test: a violation
    "call": ("module._repogym_observe(0, -5)", "an observation was reached through code of the submission"),
    # the audit event itself: a violation
    "audit": ("sys.audit('repogym.judge', 'observe', 0, -5)", "an observation was made outside a sealed test file's own function"),
    # the real observation silenced: the test module's global is compared
    "silence": ("module._repogym_audit = lambda *args: None", "_repogym_audit was replaced"),
    # from a thread of its own, straight into the sealed function (no submission frame on that thread's
    # stack): its caller is threading's, not the sealed test at a line that observes (red-team round 25)
    "thread": ("t = threading.Thread(target=module._repogym_observe, args=(0, -5)); t.start(); t.join()",
               "an observation was not made by its sealed test"),
}


@pytest.mark.parametrize("how", sorted(FORGERIES))
def test_an_observation_the_code_under_test_makes_or_silences_never_counts(make_task: MakeTask, how: str) -> None:
    """Red-team round 24 rewrote the file observations were appended to from a thread of the code
    under test (a guessable bool or exception name became the golden one). Observations now reach
    only the signed record, and only from the sealed file's own code with no submission frame below."""
    task = _sealed_task(make_task)
    original = (task.root / "repo" / "calc" / "__init__.py").read_text()
    forgery, said = FORGERIES[how]
    forged = original.replace("def add(a, b):\n    return a - b\n", FORGER.replace("{how}", forgery))
    result = grade_patch(task, make_patch("calc/__init__.py", original, forged))
    assert result.score == 0.0 and result.infra_error is None
    tests = _tests_component(result)
    text = " ".join(tests.messages)
    assert said in text, text
    assert tests.details["fail_to_pass"][HIDDEN_ID] in ("failed", "missing")


def test_a_runner_that_is_not_pytest_cannot_seal() -> None:
    from pydantic import ValidationError

    from repogym_gym.spec import TestSpec

    with pytest.raises(ValidationError, match="sealed: true needs runner: pytest"):
        TestSpec(runner="generic", command="bash run.sh {junit}", fail_to_pass=["t"], sealed=True)


def test_observations_are_compared_by_count_then_by_digest_and_quote_neither_line_nor_value() -> None:
    good, bad = "a" * 64, "b" * 64
    expected = {"t::a": [1, good], "t::b": [2, good], "t::c": [1, good], "t::d": [3, good]}
    observed = {"t::a": (1, good), "t::b": (3, good), "t::d": (3, bad)}
    assert compare_observations(expected, observed) == {
        "t::b": "3 observations where the golden patch made 2",
        "t::c": "0 observations where the golden patch made 1",
        "t::d": "its 3 observations differ from the golden patch's"}


CALLBACK_TEST = '''from calc import add
from calc.apply import apply


def test_add_negative():
    def check(value):
        assert value == -5

    apply(check, add(-2, -3))
'''


def test_a_sealed_assertion_in_a_callback_of_the_code_under_test_is_the_task_s_error(make_task: MakeTask) -> None:
    """The code under test calling a sealed assertion could call it with any value: such an
    observation voids the run, the golden one too, so the task author hears of it at once."""
    spec = tiny_spec()
    spec["tests"]["sealed"] = True
    task = make_task(files={"calc/apply.py": "def apply(function, value):\n    return function(value)\n"},
                     hidden={"tests/test_calc_hidden.py": CALLBACK_TEST}, tests=spec["tests"])
    result = grade_patch(task, task.golden_patch())
    assert result.score == 0.0 and result.infra_error is not None
    assert "the task is broken (grader" in result.infra_error and "through code of the submission" in result.infra_error
