"""PerfGrader: the log-scaled speed-up score, the noise band, real interleaved benchmarks, reported timings."""

from __future__ import annotations

import collections
import doctest
import math
from pathlib import Path

import pytest

from repogym_gym.graders import CompositeGrader, PerfGrader, perf_score, perfstats
from repogym_gym.graders.perf import MIN_PAIRS_TO_ACCEPT
from repogym_gym.graders.perfstats import judge, worst_case_speedup
from repogym_gym.grading import grade_patch
from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE, MakeTask, grade_files, make_patch, tiny_spec

SLOW = "import time\n\n\ndef work():\n    time.sleep(0.3)\n"
FAST = SLOW.replace("time.sleep(0.3)", "time.sleep(0)")


def perf_task(make_task: MakeTask, files: dict[str, str], perf: dict[str, object], patch: str | None = None) -> Task:
    spec = tiny_spec()
    tests = {**spec["tests"], "fail_to_pass": []}
    return make_task(type="perf", files=files, tests=tests, perf=perf, patch=patch)


#: The real PerfGrader alone (no test gate), for checks of the timing itself.
PERF_ONLY = CompositeGrader([PerfGrader()])


# -- the formula ---------------------------------------------------------------------------------------------


def test_perf_score_of_a_2x_speedup_with_target_4_follows_the_log_formula() -> None:
    score = perf_score(2.0, 4.0, 1.15)
    assert score == math.log(2.0 / 1.15) / math.log(4.0 / 1.15)
    assert score == pytest.approx(0.44394, abs=1e-5)  # "about 0.45" in design doc 000


@pytest.mark.parametrize("speedup", [0.5, 1.0, 1.14, 1.15])
def test_perf_score_is_zero_up_to_the_noise_floor(speedup: float) -> None:
    assert perf_score(speedup, 4.0, 1.15) == 0.0


@pytest.mark.parametrize("speedup", [4.0, 4.5, 1000.0])
def test_perf_score_is_one_at_or_above_the_target(speedup: float) -> None:
    assert perf_score(speedup, 4.0, 1.15) == 1.0


@pytest.mark.parametrize("speedup", [math.nan, math.inf, -math.inf])
def test_perf_score_of_a_non_finite_speedup_is_zero(speedup: float) -> None:
    assert perf_score(speedup, 4.0, 1.15) == 0.0


def test_perf_score_grows_with_the_speedup_between_floor_and_target() -> None:
    scores = [perf_score(s, 3.0, 1.2) for s in (1.3, 1.6, 2.0, 2.5, 2.9)]
    assert scores == sorted(scores) and scores[0] > 0.0 and scores[-1] < 1.0


def test_perfstats_docstring_examples_run() -> None:
    failures, tried = doctest.testmod(perfstats, verbose=False)
    assert tried >= 4 and failures == 0


# -- the noise band ---------------------------------------------------------------------------------------------


def test_the_speedup_is_the_ratio_of_the_minima_and_the_worst_case_of_the_extremes() -> None:
    verdict = judge([2.0, 2.4, 2.2], [0.5, 0.8, 0.6], min_speedup=4.0, noise_floor=1.15)
    assert verdict.speedup == 2.0 / 0.5
    assert verdict.worst_case == worst_case_speedup([2.0, 2.4, 2.2], [0.5, 0.8, 0.6]) == 2.0 / 0.8
    assert (verdict.score, verdict.passed) == (1.0, True)


def test_a_speedup_over_the_floor_scores_0_while_the_two_sides_overlap() -> None:
    # one lucky candidate run: the minima say 1.5x, but the slowest candidate run is slower than the fastest baseline's
    verdict = judge([1.5, 1.6, 1.55], [1.0, 1.7, 1.6], min_speedup=2.0, noise_floor=1.15)
    assert verdict.speedup == 1.5 and perf_score(1.5, 2.0, 1.15) > 0
    assert verdict.worst_case < 1.0
    assert (verdict.score, verdict.passed) == (0.0, False)


def test_the_band_widens_with_the_candidates_own_spread() -> None:
    # the same 1.5x speed-up of the minima: inside the band when the candidate's runs spread 1.4x, beyond it at 1.2x
    wide = judge([1.5, 1.5], [1.0, 1.4], min_speedup=2.0, noise_floor=1.15)
    tight = judge([1.5, 1.5], [1.0, 1.2], min_speedup=2.0, noise_floor=1.15)
    assert wide.speedup == tight.speedup == 1.5
    assert wide.score == 0.0
    assert tight.score == perf_score(1.5, 2.0, 1.15) > 0 and tight.passed is False


def test_the_verdict_needs_timings_on_both_sides() -> None:
    with pytest.raises(ValueError, match="both sides need timings, got 0 baseline and 1 candidate"):
        judge([], [1.0], min_speedup=2.0, noise_floor=1.15)


# -- wall-clock timing on a real benchmark ----------------------------------------------------------------------

WALL = {"command": "python bench.py", "runs": 2, "min_speedup": 2.0}
BENCH = "from calc.slow import work\n\nwork()\n"


def test_a_golden_speedup_above_the_target_scores_one(make_task: MakeTask) -> None:
    task = perf_task(make_task, {"calc/slow.py": SLOW, "bench.py": BENCH}, WALL, patch=make_patch("calc/slow.py", SLOW, FAST))
    result = grade_patch(task, task.golden_patch())
    perf = result.component("perf")
    assert perf.role == "objective"
    assert len(perf.details["baseline_s"]) == len(perf.details["candidate_s"]) == 2
    assert min(perf.details["baseline_s"]) >= 0.3
    assert perf.details["speedup"] == min(perf.details["baseline_s"]) / min(perf.details["candidate_s"])
    assert perf.details["speedup"] >= 2.0
    assert (perf.score, perf.passed) == (1.0, True)
    assert result.component("tests").role == "gate"
    assert (result.score, result.passed) == (1.0, True)


def test_a_failing_candidate_benchmark_scores_zero_with_a_message(make_task: MakeTask) -> None:
    task = perf_task(make_task, {"calc/slow.py": SLOW, "bench.py": BENCH}, WALL)
    result = grade_files(task, {"calc/slow.py": "def work():\n    raise SystemExit(3)\n"})
    perf = result.component("perf")
    assert (perf.score, perf.passed) == (0.0, False)
    assert perf.messages[0].startswith("candidate benchmark: exited 3")
    assert result.component("tests").passed is True
    assert result.infra_error is None
    assert (result.score, result.passed) == (0.0, False)


# -- reported timing --------------------------------------------------------------------------------------------

REPORTED = {"command": "python bench.py", "runs": 2, "min_speedup": 4.0, "timing": "reported"}
REPORTER = "def report():\n    return '{\"seconds\": 1.0}'\n"


def _bench_logging_cwd(log: Path) -> str:
    return f"import os\n\nfrom calc.slow import report\n\nwith open({str(log)!r}, 'a') as fh:\n    fh.write(os.getcwd() + '\\n')\nprint('warming up')\nprint(report())\n"


@pytest.fixture
def reported_task(make_task: MakeTask, tmp_path: Path) -> Task:
    return perf_task(make_task, {"calc/slow.py": REPORTER, "bench.py": _bench_logging_cwd(tmp_path / "cwd.log")}, REPORTED)


def reporting(seconds: str) -> dict[str, str]:
    return {"calc/slow.py": f"def report():\n    return {seconds!r}\n"}


def test_reported_seconds_are_read_from_the_last_output_line(reported_task: Task) -> None:
    result = grade_files(reported_task, reporting('{"seconds": 0.5}'), PERF_ONLY)
    perf = result.component("perf")
    assert perf.details["baseline_s"] == [1.0, 1.0]
    assert perf.details["candidate_s"] == [0.5, 0.5]
    assert perf.details["speedup"] == 2.0
    assert perf.score == perf_score(2.0, 4.0, 1.15)
    assert perf.passed is False
    assert result.score == perf_score(2.0, 4.0, 1.15)
    assert result.passed is False


def test_reported_speedup_at_the_target_scores_one(reported_task: Task) -> None:
    result = grade_files(reported_task, reporting('{"seconds": 0.25}'), PERF_ONLY)
    assert result.component("perf").details["speedup"] == 4.0
    assert (result.score, result.passed) == (1.0, True)


@pytest.mark.parametrize("output", ["fast", '{"secs": 0.1}', '{"seconds": "quick"}',
                                    '{"seconds": 1' + "0" * 400 + "}",  # round 42: float() of it overflows
                                    '{"seconds": ' + "[" * 100_000 + "]" * 100_000 + "}"])  # too deep for json
def test_malformed_reported_timing_scores_zero(reported_task: Task, output: str) -> None:
    result = grade_files(reported_task, reporting(output), PERF_ONLY)
    perf = result.component("perf")
    assert (perf.score, perf.passed) == (0.0, False)
    assert perf.messages[0].startswith("candidate benchmark:")
    assert result.score == 0.0
    assert result.infra_error is None


@pytest.mark.parametrize("output", ['{"seconds": 0}', '{"seconds": NaN}', '{"seconds": Infinity}'])
def test_non_positive_or_non_finite_reported_timing_scores_zero(reported_task: Task, output: str) -> None:
    result = grade_files(reported_task, reporting(output), PERF_ONLY)
    perf = result.component("perf")
    assert (perf.score, perf.passed) == (0.0, False)
    assert "not a positive finite number" in perf.messages[0]
    assert result.score == 0.0


def test_the_pristine_baseline_is_built_once_and_every_run_starts_clean(make_task: MakeTask, tmp_path: Path) -> None:
    setup_log, runs_log = tmp_path / "setup.log", tmp_path / "runs.log"
    bench = (
        "import os\n\nfrom calc.slow import report\n\n"
        "state = 'dirty' if os.path.exists('residue.txt') else 'clean'\n"
        "open('residue.txt', 'w').close()\n"
        f"with open({str(runs_log)!r}, 'a') as fh:\n"
        "    fh.write(f'{os.getcwd()} {state} {report()}\\n')\n"
        "print(report())\n"
    )
    task = make_task(type="perf", files={"calc/slow.py": REPORTER, "bench.py": bench},
                     tests={**tiny_spec()["tests"], "fail_to_pass": []}, perf=REPORTED, patch=None,
                     repo={"setup": [f"echo built >> {setup_log}"]})
    for _ in range(2):
        assert grade_files(task, reporting('{"seconds": 0.25}')).score == 1.0
    assert setup_log.read_text() == "built\n"  # the baseline was materialised once
    runs = [line.split(" ", 2) for line in runs_log.read_text().splitlines()]
    assert len(runs) == 2 * 2 * 3  # per grade and side: one warm-up and `runs` timed runs
    assert {state for _, state, _ in runs} == {"clean"}  # no run sees what an earlier one left
    assert sorted(seconds for _, _, seconds in runs) == ['{"seconds": 0.25}'] * 6 + ['{"seconds": 1.0}'] * 6
    baseline_dirs = {cwd for cwd, _, seconds in runs if seconds == '{"seconds": 1.0}'}
    candidate_dirs = {cwd for cwd, _, seconds in runs if seconds == '{"seconds": 0.25}'}
    assert not baseline_dirs & candidate_dirs


def test_benchmarks_are_skipped_once_a_gate_failed(reported_task: Task, tmp_path: Path) -> None:
    broken_sub = CALC_SOURCE.replace("def sub(a, b):\n    return a - b", "def sub(a, b):\n    return a + b")
    result = grade_files(reported_task, {**reporting('{"seconds": 0.25}'), "calc/__init__.py": broken_sub})
    assert result.component("tests").passed is False
    perf = result.component("perf")
    assert (perf.score, perf.passed) == (0.0, False)
    assert "skipped" in perf.messages[0]
    assert not (tmp_path / "cwd.log").exists()
    assert result.score == 0.0


def _bench_logging_seed(log: Path) -> str:
    return ("import os\n\nfrom calc.slow import report\n\n"
            f"with open({str(log)!r}, 'a') as fh:\n"
            "    fh.write(os.environ['REPOGYM_PERF_SEED'] + ' ' + report() + '\\n')\n"
            "print(report())\n")


def test_each_pair_gets_a_seed_of_its_own_shared_by_both_sides(make_task: MakeTask, tmp_path: Path) -> None:
    log = tmp_path / "seeds.log"
    task = perf_task(make_task, {"calc/slow.py": REPORTER, "bench.py": _bench_logging_seed(log)}, {**REPORTED, "runs": 3})
    grade_files(task, reporting('{"seconds": 0.5}'), PERF_ONLY)
    runs = [line.split(" ", 1) for line in log.read_text().splitlines()]
    assert len(runs) == 2 * (1 + 3)  # the warm-up pair and 3 timed pairs
    by_seed = collections.defaultdict(list)
    for seed, seconds in runs:
        by_seed[seed].append(seconds)
    assert len(by_seed) == 4  # no seed is used by two pairs: a cache keyed by the inputs never hits
    assert all(sorted(sides) == ['{"seconds": 0.5}', '{"seconds": 1.0}'] for sides in by_seed.values())


def test_a_grading_stops_at_the_first_pair_inside_the_noise_band(reported_task: Task) -> None:
    result = grade_files(reported_task, reporting('{"seconds": 1.00}'), PERF_ONLY)  # a change that is not faster
    perf = result.component("perf")
    assert perf.details["pairs"] == 1 and perf.details["baseline_s"] == [1.0] and perf.details["candidate_s"] == [1.0]
    assert (perf.score, perf.passed) == (0.0, False)
    assert perf.messages[0] == ("speed-up 1.00x (baseline 1.000 s, candidate 1.000 s; target 4x), within the noise band: "
                                "the slowest candidate run beat the fastest baseline run 1.00x, under the floor 1.15x "
                                "(1 of 2 pairs run)")


def test_a_grading_stops_once_every_candidate_run_beat_every_baseline_run_by_the_target(make_task: MakeTask) -> None:
    task = perf_task(make_task, {"calc/slow.py": REPORTER, "bench.py": "from calc.slow import report\n\nprint(report())\n"},
                     {**REPORTED, "runs": 6})
    result = grade_files(task, reporting('{"seconds": 0.25}'), PERF_ONLY)
    perf = result.component("perf")
    assert perf.details["pairs"] == MIN_PAIRS_TO_ACCEPT == 3
    assert perf.details["worst_case"] == 4.0 and (perf.score, perf.passed) == (1.0, True)


def test_a_failing_baseline_benchmark_is_an_infrastructure_error(make_task: MakeTask) -> None:
    broken = "def report():\n    raise SystemExit(4)\n"
    task = perf_task(make_task, {"calc/slow.py": broken, "bench.py": "from calc.slow import report\n\nprint(report())\n"}, REPORTED)
    result = grade_files(task, {"calc/slow.py": REPORTER})
    assert result.infra_error is not None and "baseline benchmark exited 4" in result.infra_error
    assert (result.score, result.passed) == (0.0, False)


def test_the_baseline_side_runs_each_task_s_own_hidden_benchmark(make_task: MakeTask) -> None:
    files = {"calc/slow.py": REPORTER}
    first = perf_task(make_task, files, {**REPORTED, "command": "python bench_hidden.py"})
    (first.root / "hidden" / "bench_hidden.py").write_text("print('{\"seconds\": 4.0}')\n")
    second = perf_task(make_task, files, {**REPORTED, "command": "python bench_hidden.py"})
    (second.root / "hidden" / "bench_hidden.py").write_text("print('{\"seconds\": 1.0}')\n")
    irrelevant = {"calc/notes.py": "# nothing to see\n"}  # a change that cannot affect the timing
    assert grade_files(first, irrelevant).component("perf").details["speedup"] == 1.0
    result = grade_files(second, irrelevant)
    assert result.component("perf").details["baseline_s"] == [1.0]  # a 1.0x pair ends the grading
    assert result.score == 0.0
