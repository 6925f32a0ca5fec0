"""PerfGrader: the candidate's benchmark time against the pristine baseline's, interleaved.

A pristine baseline copy (hidden files injected) is made once per task and sandbox and kept for
the process. Each grade runs one untimed warm-up per side, then ``runs`` pairs, alternating
which side goes first, and keeps the minimum of each side, so drift and additive noise cancel
(design doc 000, "PerfGrader"). By default (``timing: wall``) the whole benchmark process is
timed from outside, so code the agent controls cannot fake the number::

    speedup = baseline_s / candidate_s
    score   = 0                                                         if speedup < noise_floor
            = min(1, log(speedup / noise_floor) / log(min_speedup / noise_floor))   otherwise
    passed  = speedup >= min_speedup

With ``min_speedup: 4`` and the default floor 1.15, a 2x speed-up scores about 0.45.
A submission that carries no change scores 0 without being timed (identical code cannot be
faster; timing it would measure noise alone). Non-finite or non-positive timings, and a candidate benchmark that fails, score 0.
"""

from __future__ import annotations

import atexit
import json
import math
import shutil
import tempfile
import threading
from pathlib import Path

from repogym_gym.baseline import copy_tree
from repogym_gym.errors import GraderError
from repogym_gym.graders.base import GradingContext, component
from repogym_gym.results import GradeComponent, Role
from repogym_gym.spec import PerfSpec
from repogym_gym.workspace import inject_hidden

__all__ = ["PerfGrader", "perf_score"]

_PRISTINE: dict[tuple[str, str, str], Path] = {}
_PRISTINE_LOCK = threading.Lock()


def perf_score(speedup: float, min_speedup: float, noise_floor: float) -> float:
    """The log-scaled score of a speed-up (see the module docstring); 0 for non-finite input."""
    if not math.isfinite(speedup) or speedup < noise_floor:
        return 0.0
    return min(1.0, math.log(speedup / noise_floor) / math.log(min_speedup / noise_floor))


def _cleanup_pristine() -> None:
    for path in _PRISTINE.values():
        shutil.rmtree(path.parent, ignore_errors=True)
    _PRISTINE.clear()


atexit.register(_cleanup_pristine)


class PerfGrader:
    """Times the task's benchmark in the grading copy against a pristine baseline copy."""

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
        pristine = self._pristine(ctx)
        try:
            self._time(ctx, perf, ctx.repo)
        except GraderError as exc:
            return component(self, score=0.0, passed=False, messages=[f"candidate benchmark: {exc}"])
        self._time(ctx, perf, pristine, baseline=True)
        base_s: list[float] = []
        cand_s: list[float] = []
        for i in range(perf.runs):
            order = [(pristine, base_s, True), (ctx.repo, cand_s, False)]
            for where, sink, is_base in order if i % 2 == 0 else order[::-1]:
                try:
                    sink.append(self._time(ctx, perf, where, baseline=is_base))
                except GraderError as exc:
                    return component(self, score=0.0, passed=False, messages=[f"candidate benchmark: {exc}"])
        baseline_s, candidate_s = min(base_s), min(cand_s)
        speedup = baseline_s / candidate_s
        score = perf_score(speedup, perf.min_speedup, perf.noise_floor)
        details = {"baseline_s": base_s, "candidate_s": cand_s, "speedup": speedup, "timing": perf.timing,
                   "min_speedup": perf.min_speedup, "noise_floor": perf.noise_floor}
        message = f"speed-up {speedup:.2f}x (baseline {baseline_s:.3f} s, candidate {candidate_s:.3f} s; target {perf.min_speedup:g}x)"
        return component(self, score=score, passed=speedup >= perf.min_speedup, messages=[message], details=details)

    def _time(self, ctx: GradingContext, perf: PerfSpec, where: Path, *, baseline: bool = False) -> float:
        result = ctx.sandbox.run(["bash", "-c", perf.command], cwd=where, timeout_s=perf.timeout_s,
                                 output_limit_bytes=ctx.task.spec.limits.output_limit_bytes)
        if result.timed_out or result.exit_code != 0:
            why = "timed out" if result.timed_out else f"exited {result.exit_code}"
            if baseline:
                raise RuntimeError(f"the baseline benchmark {why}; the task is broken:\n{result.tail()}")
            raise GraderError(f"{why}:\n{result.tail(800)}")
        seconds = result.duration_s
        if perf.timing == "reported":
            seconds = _reported_seconds(result.stdout)
        if not math.isfinite(seconds) or seconds <= 0:
            raise GraderError(f"timing {seconds!r} is not a positive finite number of seconds")
        return seconds

    @staticmethod
    def _pristine(ctx: GradingContext) -> Path:
        key = (ctx.baseline.commit, ",".join(ctx.hidden_files) + ctx.task.fingerprint, ctx.sandbox.name)
        with _PRISTINE_LOCK:
            if key not in _PRISTINE or not _PRISTINE[key].is_dir():
                root = Path(tempfile.mkdtemp(prefix=f"repogym-perf-{ctx.task.id}-"))
                copy_tree(ctx.baseline.tree, root / "repo")
                inject_hidden(ctx.task, root / "repo")
                _PRISTINE[key] = root / "repo"
            return _PRISTINE[key]


def _reported_seconds(stdout: str) -> float:
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    try:
        value = json.loads(lines[-1])["seconds"]
        return float(value)
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise GraderError(f'the benchmark must end its output with {{"seconds": x}} when timing is "reported": {exc!r}') from None
