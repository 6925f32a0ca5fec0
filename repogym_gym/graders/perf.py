"""PerfGrader: the candidate's benchmark time against the pristine baseline's, interleaved.

The pristine baseline is the task's cached post-setup baseline, materialised once and kept; every
run (warm-up and timed, either side) gets a fresh copy of it, verified against its manifest, with
hidden files injected and, on the candidate side, the submission carried in, so nothing one run
leaves behind (caches, a tampered baseline) reaches another. Each grade runs one untimed warm-up
per side, then ``runs`` pairs, alternating which side goes first, and keeps the minimum of each
side, so drift and additive noise cancel (design doc 000, "PerfGrader"). By default (``timing: wall``) the whole benchmark process is
timed from outside, so code the agent controls cannot fake the number::

    speedup = baseline_s / candidate_s
    score   = 0                                                         if speedup < noise_floor
            = min(1, log(speedup / noise_floor) / log(min_speedup / noise_floor))   otherwise
    passed  = speedup >= min_speedup

With ``min_speedup: 4`` and the default floor 1.15, a 2x speed-up scores about 0.45.
Every run of one grading gets the same random ``REPOGYM_PERF_SEED`` (a benchmark should derive
its inputs from it); with ``perf.output_check`` the candidate's matched output must equal the
baseline's, so a benchmark that detects itself and exits early, or prints a remembered answer,
scores 0.
A submission that carries no change scores 0 without being timed (identical code cannot be
faster; timing it would measure noise alone). Non-finite or non-positive timings, and a candidate benchmark that fails, score 0.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import tempfile
from pathlib import Path

from repogym_gym.errors import GraderError, PathEscapeError
from repogym_gym.graders.base import GradingContext, component
from repogym_gym.results import GradeComponent, Role
from repogym_gym.pyenv import command_env
from repogym_gym.spec import PerfSpec
from repogym_gym.workspace import build_grading_copy

__all__ = ["PerfGrader", "perf_score"]

def perf_score(speedup: float, min_speedup: float, noise_floor: float) -> float:
    """The log-scaled score of a speed-up (see the module docstring); 0 for non-finite input."""
    if not math.isfinite(speedup) or speedup < noise_floor:
        return 0.0
    return min(1.0, math.log(speedup / noise_floor) / math.log(min_speedup / noise_floor))


class PerfGrader:
    """Times the task's benchmark in the grading copy against a pristine baseline copy."""

    name = "perf"
    #: Benchmarks take seconds: once a gate failed (score 0 anyway) they are not run.
    skip_after_failed_gate = True

    def __init__(self, role: Role = "objective") -> None:
        self.role: Role = role
        self._expected: dict[str, str] = {}

    def grade(self, ctx: GradingContext) -> GradeComponent:
        perf = ctx.task.spec.perf
        if perf is None:
            raise GraderError(f"task {ctx.task.id!r} has no perf section")
        if not ctx.snapshot.changes.carried:
            # Identical code cannot be faster; timing it would only measure noise.
            return component(self, score=0.0, passed=False, messages=["no change to time: the submission equals the baseline"],
                             details={"speedup": 1.0})
        seed = str(secrets.randbelow(2**31))
        try:
            self._time(ctx, perf, self._fresh(ctx, candidate=False), seed, baseline=True)
            self._time(ctx, perf, self._fresh(ctx, candidate=True), seed)
        except GraderError as exc:
            return component(self, score=0.0, passed=False, messages=[f"candidate benchmark: {exc}"])
        base_s: list[float] = []
        cand_s: list[float] = []
        for i in range(perf.runs):
            order = [(False, base_s), (True, cand_s)]
            for is_candidate, sink in order if i % 2 == 0 else order[::-1]:
                where = self._fresh(ctx, candidate=is_candidate)
                try:
                    sink.append(self._time(ctx, perf, where, seed, baseline=not is_candidate))
                except GraderError as exc:
                    return component(self, score=0.0, passed=False, messages=[f"candidate benchmark: {exc}"])
        baseline_s, candidate_s = min(base_s), min(cand_s)
        speedup = baseline_s / candidate_s
        score = perf_score(speedup, perf.min_speedup, perf.noise_floor)
        details = {"baseline_s": base_s, "candidate_s": cand_s, "speedup": speedup, "timing": perf.timing,
                   "min_speedup": perf.min_speedup, "noise_floor": perf.noise_floor}
        message = f"speed-up {speedup:.2f}x (baseline {baseline_s:.3f} s, candidate {candidate_s:.3f} s; target {perf.min_speedup:g}x)"
        return component(self, score=score, passed=speedup >= perf.min_speedup, messages=[message], details=details)

    def _time(self, ctx: GradingContext, perf: PerfSpec, where: Path, seed: str, *, baseline: bool = False) -> float:
        env = {**command_env(ctx.baseline.python_env), "REPOGYM_PERF_SEED": seed}
        result = ctx.sandbox.run(["bash", "-c", perf.command], cwd=where, timeout_s=perf.timeout_s, env=env,
                                 output_limit_bytes=ctx.task.spec.limits.output_limit_bytes)
        if result.timed_out or result.exit_code != 0:
            why = "timed out" if result.timed_out else f"exited {result.exit_code}"
            if baseline:
                raise RuntimeError(f"the baseline benchmark {why}; the task is broken:\n{result.tail()}")
            raise GraderError(f"{why}:\n{result.tail(800)}")
        if perf.output_check is not None:
            match = re.search(perf.output_check, result.stdout, re.MULTILINE)
            found = match.group(0) if match else None
            if baseline:
                if found is None:
                    raise RuntimeError(f"the baseline benchmark's output has no match for output_check {perf.output_check!r}")
                self._expected[seed] = found
            elif found != self._expected.get(seed):
                raise GraderError(f"its output {found!r} differs from the baseline's {self._expected.get(seed)!r} "
                                  "for the same inputs: the benchmark did not do the same work")
        seconds = result.duration_s
        if perf.timing == "reported":
            seconds = _reported_seconds(result.stdout)
        if not math.isfinite(seconds) or seconds <= 0:
            raise GraderError(f"timing {seconds!r} is not a positive finite number of seconds")
        return seconds

    @staticmethod
    def _fresh(ctx: GradingContext, *, candidate: bool) -> Path:
        """A new verified copy for one run: the baseline, or the baseline with the submission."""
        root = Path(tempfile.mkdtemp(prefix="perf-", dir=ctx.scratch))
        try:
            build_grading_copy(ctx.task, ctx.baseline, ctx.snapshot if candidate else None, root / "repo")
        except (OSError, PathEscapeError) as exc:
            if not candidate:
                raise
            raise GraderError(f"the submission cannot be copied for a benchmark run: {exc}") from None
        return root / "repo"


def _reported_seconds(stdout: str) -> float:
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    try:
        value = json.loads(lines[-1])["seconds"]
        return float(value)
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise GraderError(f'the benchmark must end its output with {{"seconds": x}} when timing is "reported": {exc!r}') from None
