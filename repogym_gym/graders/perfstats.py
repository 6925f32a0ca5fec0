"""The perf reward's statistic: a speed-up from interleaved timings, and the noise band it must clear.

Pure functions over seconds: :class:`~repogym_gym.graders.perf.PerfGrader` measures, this module
decides. With ``b`` the timed baseline runs and ``c`` the timed candidate runs of one grading::

    speedup    = min(b) / min(c)          the minimum of each side (design doc 000, "PerfGrader")
    worst_case = min(b) / max(c)          the slowest candidate run against the fastest baseline run
    score      = perf_score(speedup)      if worst_case >= noise_floor, else 0
    passed     = score > 0 and speedup >= min_speedup

``perf_score`` is design doc 000's log scale: 0 below the floor, 1 from ``min_speedup`` on.
``worst_case >= noise_floor`` is the same as ``speedup >= noise_floor * max(c) / min(c)``: the band
a speed-up must clear is the static floor widened by the candidate's own run-to-run spread,
measured in the same grading, so a noisy moment asks for a bigger gain. It is a rank condition
too (every candidate run beats every baseline run), so a no-op passes it only when chance sorts
all its runs below all the baseline's, with a 15 % gap on top. Adding runs can only lower
``worst_case``, so the grader stops at the first pair that breaks it (a no-op costs about one
pair) without changing any decision.

Example:
    >>> v = judge([2.0, 2.2, 2.1], [0.5, 0.55, 0.6], min_speedup=4.0, noise_floor=1.15)
    >>> round(v.speedup, 2), round(v.worst_case, 2), v.score, v.passed
    (4.0, 3.33, 1.0, True)
    >>> judge([1.0, 1.3], [0.8, 1.1], min_speedup=2.0, noise_floor=1.15).score   # 1.25x, inside the band
    0.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PerfVerdict", "judge", "perf_score", "worst_case_speedup"]


def perf_score(speedup: float, min_speedup: float, noise_floor: float) -> float:
    """The log-scaled score of a speed-up: 0 up to ``noise_floor``, 1 from ``min_speedup``; 0 for non-finite input.

    Example:
        >>> round(perf_score(2.0, 4.0, 1.15), 3)   # "about 0.45" in design doc 000
        0.444
    """
    if not math.isfinite(speedup) or speedup < noise_floor:
        return 0.0
    return min(1.0, math.log(speedup / noise_floor) / math.log(min_speedup / noise_floor))


def worst_case_speedup(baseline_s: Sequence[float], candidate_s: Sequence[float]) -> float:
    """``min(baseline_s) / max(candidate_s)``: how much the slowest candidate run beat the fastest baseline run.

    Raises:
        ValueError: when either side has no timing.
    """
    if not baseline_s or not candidate_s:
        raise ValueError(f"both sides need timings, got {len(baseline_s)} baseline and {len(candidate_s)} candidate")
    return min(baseline_s) / max(candidate_s)


@dataclass(frozen=True)
class PerfVerdict:
    """The decision on one grading's timings.

    Attributes:
        speedup: ``min(baseline) / min(candidate)``, a ratio (1.0: no change).
        worst_case: ``min(baseline) / max(candidate)``, a ratio; must reach the noise floor.
        score: In [0, 1]; 0 unless ``worst_case >= noise_floor``.
        passed: ``score > 0`` and ``speedup >= min_speedup``.
    """

    speedup: float
    worst_case: float
    score: float
    passed: bool


def judge(baseline_s: Sequence[float], candidate_s: Sequence[float], *, min_speedup: float, noise_floor: float) -> PerfVerdict:
    """The verdict on timed runs (seconds, positive and finite) by the formula in the module docstring.

    Raises:
        ValueError: when either side has no timing.
    """
    worst = worst_case_speedup(baseline_s, candidate_s)
    speedup = min(baseline_s) / min(candidate_s)
    score = perf_score(speedup, min_speedup, noise_floor) if worst >= noise_floor else 0.0
    return PerfVerdict(speedup=speedup, worst_case=worst, score=score, passed=score > 0.0 and speedup >= min_speedup)
