"""PerfGrader: the candidate's benchmark time against the pristine baseline's, interleaved.

Measuring: the pristine baseline is the task's cached post-setup baseline, materialised once and
kept; every run (either side) gets a fresh copy of it, verified against its manifest, with hidden
files injected and, on the candidate side, the submission carried in, and removed after the run,
so nothing a run leaves in its tree reaches another. A grading runs one untimed warm-up pair,
then up to ``runs`` timed pairs, alternating which side goes first. **Each pair gets its own random
``REPOGYM_PERF_SEED``** (a benchmark derives its inputs from it), shared by both sides of the pair
and by no other run: a cache kept anywhere (the tree, ``/tmp``, ``~``, a daemon's memory) never
sees the same inputs twice, and with ``perf.output_check`` the candidate's matched output must
equal the baseline's for the pair's seed, so a benchmark that detects itself and exits early, or
prints a remembered answer, scores 0. By default (``timing: wall``) the whole benchmark process is
timed from outside, so code the agent controls cannot fake the number (a monkeypatched clock only
changes what the benchmark prints): a run's time is ``max(wall seconds, CPU seconds)``, the grader's
monotonic clock against the CPU time the kernel counted for the run's whole process tree
(:mod:`repogym_gym.sandbox.cputime`; a Docker run: its container's cgroup). A single-threaded
benchmark's CPU time is at most its wall time, so this is the wall time; work split over processes
or threads is not a speed-up (red-team round 38 kept a quadratic scan, split it over two forked
processes, and scored 1.0 on the wall clock alone). Under LocalSandbox a worker whose parent does
not wait for it and which outlives the command is counted only up to the last reading.

Deciding (:mod:`repogym_gym.graders.perfstats`, pure functions), with ``b`` and ``c`` the timed
baseline and candidate runs::

    speedup    = min(b) / min(c)
    worst_case = min(b) / max(c)
    score      = min(1, log(speedup / noise_floor) / log(min_speedup / noise_floor))   if worst_case >= noise_floor
               = 0                                                                      otherwise
    passed     = score > 0 and speedup >= min_speedup

Where it comes from: ``speedup`` (the minimum of each side, so drift and additive noise cancel)
and the log scale are design doc 000's ("PerfGrader"; with ``min_speedup: 4`` and the default
floor 1.15, a 2x speed-up scores about 0.45). The noise band is issue 6's: the speed-up counts only
when the slowest candidate run beats the fastest baseline run by the floor, i.e. ``speedup >=
noise_floor * max(c) / min(c)``, the floor widened by the candidate's own spread in this grading
(:mod:`repogym_gym.graders.perfstats`). The floor alone does not hold on a busy machine. Measured
on this project's machine (2 cores, load average 4 to 8 from other test suites), with
baseline-vs-no-op pairs timed as here:

=====================================  ========================  ===============================
benchmark (median run; pairs)          ``speedup >= 1.15`` in    ``worst_case`` max, 3/4/5 pairs
=====================================  ========================  ===============================
starter at 200 records (0.13 s; 200)   17 % (3 pairs), 15 % (5)  1.20 / 1.02 / 1.00
starter at 3,000 records (0.7 s; 100)  7 % (3 pairs), 5 % (5)    1.07 / 0.97 / 0.85
the starter (6.5 s under load; 24)     27 % (3 pairs), 40 % (5)  1.00 / 0.87 / 0.85
=====================================  ========================  ===============================

On the 0.13 s benchmark ``worst_case`` reached the floor after 1, 2, 3 pairs in 25 %, 3.5 % and
0.5 % of windows (never after 4): about a factor 7 per pair, some 1e-4 after 5 pairs. Graded no-ops
(a comment or a renamed variable) on a 30 ms benchmark scored above 0 in 5 of 40 gradings (up to 0.61)
with the floor alone and 3 pairs, and in 0 of 50 with the band and 5 pairs.
``tests/redteam/test_perf_attacks.py`` re-measures the band on recorded no-op pairs and the 50-of-50
no-op zeros on every run. A task should use at least 5 pairs. The band's price: one candidate run
held up past ``min(b) / noise_floor`` (a stall of a loaded machine) voids a real speed-up, which
happened to a 4x speed-up of a 0.25 s benchmark in about 1 of 25 gradings here and to none of the
starter's golden gradings (10x to 23x); hence the benchmark should run for at least half a second,
as design doc 000 asks, and the golden margin be large. Once ``worst_case`` falls below the floor no
later pair can raise it, so the grading stops there (a no-op usually costs the warm-up and one
pair); once 3 or more pairs give a ``worst_case`` of ``min_speedup`` (score 1, far beyond any no-op
above) it stops too.

Results are compared as plain data: every run's copy holds the grader's canonical form
(:mod:`repogym_gym.graders.canon`, standard library only) at :data:`CANON_PATH`, written after the
submission so none can replace it, and ``REPOGYM_PERF_CANON`` names its absolute path. A benchmark
loads it before it imports the code under test, holds no reference answer, and prints
``digest(result)``: an object whose type is not exactly a builtin (a list subclass whose ``__eq__``
adopts what it is compared with, a lazy sequence) makes it raise, the benchmark exits non-zero and
the candidate scores 0; ``output_check`` compares the printed digest with the baseline's.

A submission that carries no change scores 0 without being timed (identical code cannot be
faster; timing it would measure noise alone). Non-finite or non-positive timings, and a candidate
benchmark that fails, score 0; a baseline benchmark that fails is an infrastructure error.

Known limit: under ``LocalSandbox`` a process the agent leaves behind (a ``setsid`` daemon from a
Run action, the test run or a benchmark run) can stop, slow or out-prioritise the baseline's
runs, which no timing from outside can tell from a slow baseline; ``sandbox="bwrap"`` ends every
command's processes with it (a PID namespace) and hides the other runs from it.
"""

from __future__ import annotations

import functools
import json
import math
import re
import secrets
import tempfile
from pathlib import Path

from repogym_gym.errors import BrokenTaskError, GraderError, PathEscapeError
from repogym_gym.graders import canon
from repogym_gym.graders.base import GradingContext, component
from repogym_gym.graders.perfstats import judge, perf_score, worst_case_speedup
from repogym_gym.grading_copy import build_grading_copy
from repogym_gym.results import GradeComponent, Role
from repogym_gym.safetext import short_text
from repogym_gym.spec import PerfSpec
from repogym_gym.tree import discard_tree, write_file_safely
from repogym_gym.venvs import venv_environ

__all__ = ["CANON_ENV", "CANON_PATH", "MIN_PAIRS_TO_ACCEPT", "PerfGrader", "perf_score"]

#: Timed pairs after which a grading whose worst case already reaches ``min_speedup`` stops (score 1).
MIN_PAIRS_TO_ACCEPT = 3
#: Where every benchmark run's copy holds the canonical form (relative to the copy's root).
CANON_PATH = ".repogym/repogym_canon.py"
#: The environment variable naming its absolute path.
CANON_ENV = "REPOGYM_PERF_CANON"


class PerfGrader:
    """Times the task's benchmark in fresh copies, candidate against pristine baseline (see the module docstring)."""

    name = "perf"
    #: Benchmarks take seconds: once a gate failed (score 0 anyway) they are not run.
    skip_after_failed_gate = True

    def __init__(self, role: Role = "objective") -> None:
        self.role: Role = role

    def grade(self, ctx: GradingContext) -> GradeComponent:
        perf = ctx.task.spec.perf
        if perf is None:
            raise GraderError(f"task {ctx.task.id!r} has no perf section")
        if not ctx.snapshot.changes.carried:
            # Identical code cannot be faster; timing it would only measure noise.
            return component(self, score=0.0, passed=False, messages=["no change to time: the submission equals the baseline"],
                             details={"speedup": 1.0})
        base_s: list[float] = []
        cand_s: list[float] = []
        try:
            for i in range(perf.runs + 1):  # pair 0 is the untimed warm-up
                baseline, candidate = self._pair(ctx, perf, candidate_first=i % 2 == 1)
                if i == 0:
                    continue
                base_s.append(baseline)
                cand_s.append(candidate)
                worst = worst_case_speedup(base_s, cand_s)
                if worst < perf.noise_floor:
                    break  # no later pair can lift it back into the band
                if len(base_s) >= MIN_PAIRS_TO_ACCEPT and worst >= perf.min_speedup:
                    break  # every candidate run beat every baseline run by the full target: score 1
        except GraderError as exc:
            return component(self, score=0.0, passed=False, messages=[f"candidate benchmark: {exc}"])
        verdict = judge(base_s, cand_s, min_speedup=perf.min_speedup, noise_floor=perf.noise_floor)
        details = {"baseline_s": base_s, "candidate_s": cand_s, "speedup": verdict.speedup, "worst_case": verdict.worst_case,
                   "noise_band": perf.noise_floor * max(cand_s) / min(cand_s), "pairs": len(base_s), "timing": perf.timing,
                   "min_speedup": perf.min_speedup, "noise_floor": perf.noise_floor}
        message = (f"speed-up {verdict.speedup:.2f}x (baseline {min(base_s):.3f} s, candidate {min(cand_s):.3f} s; "
                   f"target {perf.min_speedup:g}x)")
        if verdict.worst_case < perf.noise_floor:
            message += (f", within the noise band: the slowest candidate run beat the fastest baseline run "
                        f"{verdict.worst_case:.2f}x, under the floor {perf.noise_floor:g}x "
                        f"({len(base_s)} of {perf.runs} pairs run)")
        return component(self, score=verdict.score, passed=verdict.passed, messages=[message], details=details)

    def _pair(self, ctx: GradingContext, perf: PerfSpec, *, candidate_first: bool) -> tuple[float, float]:
        """(baseline, candidate) seconds of one pair run on a seed of its own; outputs checked."""
        seed = str(secrets.randbelow(2**31))
        seconds: dict[bool, float] = {}
        found: dict[bool, str | None] = {}
        for is_candidate in (True, False) if candidate_first else (False, True):
            seconds[is_candidate], found[is_candidate] = self._run(ctx, perf, seed, candidate=is_candidate)
        if perf.output_check is not None and found[True] != found[False]:
            raise GraderError(f"its output {short_text(str(found[True]), 160)!r} differs from the baseline's "
                              f"{short_text(str(found[False]), 160)!r} "
                              "for the same inputs: the benchmark did not do the same work")
        return seconds[False], seconds[True]

    def _run(self, ctx: GradingContext, perf: PerfSpec, seed: str, *, candidate: bool) -> tuple[float, str | None]:
        """One benchmark run in a fresh copy: (seconds, the output_check match or None)."""
        root = Path(tempfile.mkdtemp(prefix="perf-", dir=ctx.scratch))
        try:
            try:
                # No hidden tests in a benchmark's copy (a hidden benchmark still is): nothing judges
                # this run, and what it prints is quoted in the grade.
                build_grading_copy(ctx.task, ctx.baseline, ctx.snapshot if candidate else None, root / "repo",
                                   hidden_tests=False)
                # After the submission: whatever it put at CANON_PATH (a file, a link, a directory) is replaced.
                write_file_safely(root / "repo", CANON_PATH, _canon_source(), clear_parents=True)
            except (OSError, PathEscapeError) as exc:
                if not candidate:
                    raise
                raise GraderError(f"the submission cannot be copied for a benchmark run: {exc}") from None
            env = {**venv_environ(ctx.baseline.python_env), "REPOGYM_PERF_SEED": seed,
                   CANON_ENV: str(root / "repo" / CANON_PATH)}
            result = ctx.sandbox.run(["bash", "-c", perf.command], cwd=root / "repo", timeout_s=perf.timeout_s, env=env,
                                     output_limit_bytes=ctx.task.spec.limits.output_limit_bytes)
        finally:
            discard_tree(root)  # the candidate's code ran there: any depth, any name
        if result.timed_out or result.exit_code != 0:
            why = "timed out" if result.timed_out else f"exited {result.exit_code}"
            if not candidate:
                raise BrokenTaskError(f"the baseline benchmark {why}; the task is broken:\n{result.tail()}")
            raise GraderError(f"{why}:\n{result.tail(800)}")
        found = None
        if perf.output_check is not None:
            match = re.search(perf.output_check, result.stdout, re.MULTILINE)
            found = match.group(0) if match else None
            if found is None and not candidate:
                raise BrokenTaskError(f"the baseline benchmark's output has no match for output_check {perf.output_check!r}")
        # work handed to other processes or threads costs its CPU time (red-team round 38: two forked halves of a
        # quadratic scan scored 1.0 on the wall clock alone)
        seconds = max(result.duration_s, result.cpu_s or 0.0) if perf.timing == "wall" else _reported_seconds(result.stdout)
        if not math.isfinite(seconds) or seconds <= 0:
            raise GraderError(f"timing {seconds!r} is not a positive finite number of seconds")
        return seconds, found


@functools.cache
def _canon_source() -> bytes:
    """The bytes of :mod:`repogym_gym.graders.canon`, written into every benchmark run's copy."""
    return Path(canon.__file__).read_bytes()


def _reported_seconds(stdout: str) -> float:
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    try:
        value = json.loads(lines[-1])["seconds"]
        return float(value)
    except (IndexError, ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:  # a 400-digit int, [[[...
        raise GraderError(f'the benchmark must end its output with {{"seconds": x}} when timing is "reported": '
                          f"{short_text(repr(exc), 200)}") from None
