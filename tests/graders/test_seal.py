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

from repogym_gym.graders.seal import (
    MAX_CHANNEL_BYTES,
    Seal,
    compare_observations,
    read_observations,
    seal_source,
)
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
    candidate = seal_source(SAMPLE, "/chan.jsonl", golden=False)
    golden = seal_source(SAMPLE, "/chan.jsonl", golden=True)
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
        seal_source("def test(:\n", "/chan.jsonl", golden=False)


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
    assert isinstance(run.observed, dict) and len(run.observed[HIDDEN_ID]) == 1

    noop = grade_patch(task, "")
    tests = _tests_component(noop)
    assert noop.score == 0.0 and noop.infra_error is None
    assert tests.details["fail_to_pass"][HIDDEN_ID] == "failed"
    assert tests.details["sealed"]["differing"] == {HIDDEN_ID: "observation 1 (line 5) differs from the golden patch's"}
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
    assert data["lines"] == {"tests/test_calc_hidden.py": [5]} and len(data["tests"][HIDDEN_ID][0][1]) == 64
    before = path.stat().st_mtime_ns
    assert grade_patch(task, "").score == 0.0
    assert path.stat().st_mtime_ns == before  # the second grading read the cache, no second golden run


def test_a_golden_patch_that_fails_a_sealed_test_is_a_broken_task_not_a_submission_s_zero(make_task: MakeTask) -> None:
    task = _sealed_task(make_task, **{"tests/test_calc_hidden.py": HIDDEN_TESTS.replace("== -5", "== -6")})
    result = grade_patch(task, task.golden_patch())
    assert result.score == 0.0
    assert result.infra_error and "BrokenTaskError" in result.infra_error and HIDDEN_ID in result.infra_error


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


CHANNEL_WRITER = '''

import os as _os


def add(a, b):
    import sys
    test = _os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    for module in list(sys.modules.values()):
        observe = getattr(module, "_repogym_observe", None)
        if observe is None:
            continue
        channel = [c for c in observe.__code__.co_consts if isinstance(c, str) and c.endswith(".jsonl")][0]
        with open(channel, "a") as handle:  # guesses: every digest of a small int
            import hashlib, json
            for guess in range(-10, 11):
                digest = hashlib.sha256(("int:%d" % guess).encode()).hexdigest()
                handle.write(json.dumps([test, 0, digest]) + "\\n")
    return a - b
'''


def test_observations_the_code_under_test_writes_into_the_channel_only_add_to_its_sequence(make_task: MakeTask) -> None:
    task = _sealed_task(make_task)
    original = (task.root / "repo" / "calc" / "__init__.py").read_text()
    forged = original.replace("def add(a, b):\n    return a - b\n", CHANNEL_WRITER)
    result = grade_patch(task, make_patch("calc/__init__.py", original, forged))
    assert result.score == 0.0 and result.infra_error is None
    why = _tests_component(result).details["sealed"]["differing"][HIDDEN_ID]
    assert why.startswith("observation 1 ") or "observations where the golden patch made 1" in why


@pytest.mark.parametrize("kind", ["fifo", "symlink", "huge", "directory"])
def test_a_channel_the_code_under_test_replaced_fails_the_sealed_tests_without_hanging(tmp_path: Path, kind: str) -> None:
    channel = tmp_path / "observed.jsonl"
    if kind == "fifo":
        os.mkfifo(channel)
    elif kind == "symlink":
        (tmp_path / "elsewhere").write_text("")
        channel.symlink_to(tmp_path / "elsewhere")
    elif kind == "huge":
        with open(channel, "wb") as handle:
            handle.truncate(MAX_CHANNEL_BYTES + 1)
    else:
        channel.mkdir()
    reason = read_observations(channel, ("tests/test_x.py",))
    assert isinstance(reason, str) and "observation channel" in reason


def test_malformed_lines_are_skipped_and_sequences_compared_slot_by_slot(tmp_path: Path) -> None:
    channel = tmp_path / "observed.jsonl"
    good = "a" * 64
    channel.write_text("\n".join([
        json.dumps(["tests/test_x.py::t", 0, good]), "not json", json.dumps(["tests/test_x.py::t", "1", good]),
        json.dumps(["tests/other.py::t", 0, good]), json.dumps(["tests/test_x.py::t", 1, "b" * 63]),
        json.dumps([["tests/test_x.py::t"], 1, good]), json.dumps(["tests/test_x.py::u", 3, good]), "[" * 100_000,
    ]) + "\n")
    observed = read_observations(channel, ("tests/test_x.py",))
    assert observed == {"tests/test_x.py::t": [(0, good)], "tests/test_x.py::u": [(3, good)]}
    expected = {"tests/test_x.py::t": [[0, good]], "tests/test_x.py::u": [[3, good], [4, good]],
                "tests/test_x.py::v": [[0, good]]}
    differing = compare_observations(expected, observed, {"tests/test_x.py": [7, 8, 9, 10, 11]})
    assert differing == {"tests/test_x.py::u": "1 observations where the golden patch made 2",
                         "tests/test_x.py::v": "0 observations where the golden patch made 1"}
    assert compare_observations({"tests/test_x.py::t": [[1, good]]}, observed, {"tests/test_x.py": [7, 8]}) == {
        "tests/test_x.py::t": "observation 1 (line 8) differs from the golden patch's"}
