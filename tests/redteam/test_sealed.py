"""Sealed tests, attacked where their secret lives: the golden patch's observations in the grader's cache.

A sealed hidden test (``tests.sealed``, :mod:`repogym_gym.graders.seal`) passes only if what it
observed equals what the golden patch observed; those values are held by the host, in
``<cache>/sealed/``. Whatever the judged process forges in its own memory (round 22 could forge
anything there), it needs those values, so the one place to attack is where they are kept. The
payload below reads every file there while the hidden test calls ``add`` and, if it finds the
test's golden observations, answers correctly (what a forger with the values could hand the judge). Under bubblewrap and Docker the cache is not in the sandbox's view and the bug stays:
score 0. Under the local sandbox (a guardrail, no boundary) the file is readable; the probe's
success there is asserted too, so the confined result is the hiding and not a broken probe.
"""

from __future__ import annotations

import os
from pathlib import Path

from repogym_gym.grading import grade_patch
from repogym_gym.task import Task, resolve_task
from tests.helpers import CALC_SOURCE, MakeTask, make_patch, tiny_spec
from tests.redteam.helpers import HIDDEN_ID, Start, assert_unearned_zero, attack, component, submit, write

PROBE = '''

import glob as _glob
import json as _json
import os as _os


def _golden_seen():
    test = _os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    for path in _glob.glob(_os.path.join({sealed!r}, "*.json")):
        try:
            with open(path, encoding="utf-8") as handle:
                if _json.load(handle)["tests"].get(test):
                    return True
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return False


def add(a, b):
    return a + b if _golden_seen() else a - b
'''


def _sealed_task(make_task: MakeTask) -> Task:
    spec = tiny_spec()
    spec["tests"] = {**spec["tests"], "fail_to_pass": [HIDDEN_ID], "sealed": True}
    return make_task(tests=spec["tests"])


def _probe_source() -> str:
    sealed = str(Path(os.environ["REPOGYM_CACHE_DIR"]) / "sealed")
    return CALC_SOURCE.replace("def add(a, b):\n    return a - b\n", PROBE.replace("{sealed!r}", repr(sealed)))


@attack("the judge", "a sealed test's golden observations read from the grader's cache (the values the host "
        "compares with)", local="not stopped (guardrail)", confining="score 0")
def test_the_golden_observations_are_out_of_the_sandbox_s_view(start: Start, make_task: MakeTask) -> None:
    task = _sealed_task(make_task)
    env = start(task)
    write(env, "calc/__init__.py", _probe_source())
    result = submit(env)
    assert_unearned_zero(result)
    assert HIDDEN_ID in component(result, "tests")["details"]["sealed"]["differing"]


def test_the_probe_finds_the_golden_observations_where_nothing_hides_them(make_task: MakeTask) -> None:
    """Under the local sandbox the same probe reads the cache and the bug is 'fixed' by what it read."""
    task = _sealed_task(make_task)
    assert grade_patch(task, task.golden_patch()).score == 1.0  # the cache entry exists from here on
    result = grade_patch(task, make_patch("calc/__init__.py", CALC_SOURCE, _probe_source()))
    assert result.score == 1.0 and result.infra_error is None


#: Round 23 (against 20ed6b3, tests/redteam/round23/): the golden refactor with its validation reordered
#: (zone and service before weight, declared value before the economy rule): prices unchanged, other
#: ValueErrors. The candidate's form kept only the exception's class of ``pytest.raises(..., match=...)``.
REORDERED = (Path(__file__).parent / "round23" / "validation_reordered_rates.py").read_text()


@attack("the judge", "a sealed pytest.raises(..., match=...) checked by class only: a refactor that raises other "
        "messages (round 23)", local="score 0", confining="score 0")
def test_a_sealed_raises_block_still_checks_the_message_it_matched(start: Start) -> None:
    env = start(resolve_task("shipping-quote-refactor"))
    write(env, "shipping/rates.py", REORDERED)
    result = submit(env)
    assert_unearned_zero(result)
    differing = component(result, "tests")["details"]["sealed"]["differing"]
    assert "tests/test_rates_hidden.py::test_validation_order" in differing


FORGER = '''

def add(a, b):
    import sys
    module = next(m for n, m in list(sys.modules.items()) if n.endswith("test_calc_hidden"))
    module._repogym_observe(0, -5)  # the expected value, observed by the sealed file's own function
    return a - b
'''


@attack("the judge", "a sealed test's observation made by the code under test: the sealed file's own observe "
        "function called with the expected value (round 24 rewrote the file observations then went through; "
        "they now reach only the signed record)", local="score 0", confining="score 0")
def test_an_observation_made_by_the_code_under_test_voids_the_run(start: Start, make_task: MakeTask) -> None:
    env = start(_sealed_task(make_task))
    write(env, "calc/__init__.py", CALC_SOURCE.replace("def add(a, b):\n    return a - b\n", FORGER))
    result = submit(env)
    assert_unearned_zero(result)
    assert "an observation was reached through code of the submission" in " ".join(component(result, "tests")["messages"])


@attack("the judge", "a stub that rejects every input (parse_duration raises ValueError): the rejection-only "
        "tests passed it, 2 of 7 fail_to_pass by partial credit (round 38: 0.286)", local="score 0", confining="score 0")
def test_a_stub_that_rejects_everything_earns_nothing(start: Start) -> None:
    """The starter's rejection tests now also parse the well-formed neighbours of what they reject."""
    env = start(resolve_task("parse-duration"))
    write(env, "timefmt/__init__.py", '"""timefmt: human-friendly durations."""\n\nfrom timefmt.durations import '
          'UNITS, format_duration\n\n__all__ = ["UNITS", "format_duration", "parse_duration"]\n\n\n'
          'def parse_duration(text):\n    raise ValueError(text)\n')
    result = submit(env)
    assert_unearned_zero(result)
    tests = component(result, "tests")
    assert tests["messages"][0] == "0/7 fail_to_pass tests pass" and "passed" not in tests["details"]["fail_to_pass"].values()


@attack("the judge", "no parser: a child process reads the sealed hidden tests and parse_duration answers from a table "
        "of the (text, seconds) pairs their loops bound to names (round 40: 0.571)",
        local="not stopped (guardrail)", confining="score 2/7 (the visible test and the round trip of listed inputs)")
def test_expected_values_are_inline_in_the_starter_s_hidden_tests(start: Start) -> None:
    """Sealing drops an expected value written inline, not one a test binds to a name first (the README says so);
    the starter's own hidden tests bound pairs in loops. They are inline now; what the table still answers is the
    visible test and the round trip, whose expected values are its listed inputs (parse inverts format on them)."""
    env = start(resolve_task("parse-duration"))
    write(env, "timefmt/_oracle.py", (Path(__file__).parent / "round40" / "sealed_loop_oracle.py").read_text())
    write(env, "timefmt/__init__.py", '"""timefmt: human-friendly durations."""\n\nfrom timefmt._oracle import parse_duration\n'
          'from timefmt.durations import UNITS, format_duration\n\n__all__ = ["UNITS", "format_duration", "parse_duration"]\n')
    result = submit(env)
    outcomes = component(result, "tests")["details"]["fail_to_pass"]
    assert sorted(k for k, v in outcomes.items() if v == "passed") == [
        "tests/test_parse.py::test_parse_hours_and_minutes", "tests/test_parse_hidden.py::test_parse_round_trips_format_duration"]
    assert result.reward == 2 / 7
