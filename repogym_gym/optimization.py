"""The optimization score's task-owned code, run apart: cases from the seeded generator, outputs through the scorer.

An optimization task (design doc 004, "Optimization score") owns two Python files in its task directory,
never shown to the agent: a generator, ``generate(rng: random.Random, index: int) -> str`` (one case: the
program's stdin), and a scorer, ``score(case: str, output: str) -> float`` in [0, 1] (raising for an
infeasible or malformed output). Both run on the host in a child interpreter of their own (this module's
``__main__``), never in the grading process: a scorer that loops on a strange output, or a generator that
leaks memory, costs a time limit (``optimization.scorer_timeout_s``) and a 2 GiB address-space limit, not
the trainer.

Example:
    >>> cases = generate_cases(task)                                            # doctest: +SKIP
    >>> score_outputs(task, [(cases[0], "3 1 2\\n")])                             # doctest: +SKIP
    [(0.75, '')]
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from repogym_gym.errors import BrokenTaskError
from repogym_gym.task import Task

__all__ = ["generate_cases", "score_outputs"]

_CHILD_MEMORY_BYTES = 2 << 30


def generate_cases(task: Task) -> list[str]:
    """The task's ``optimization.cases`` cases from its generator and seed (the same every time).

    Raises:
        BrokenTaskError: when the generator fails, times out or returns something other than text.
    """
    spec = _spec(task)
    reply = _child(task, {"mode": "generate", "file": str(task.root / spec.generator), "seed": spec.seed, "n": spec.cases})
    if not isinstance(reply, list) or len(reply) != spec.cases or not all(isinstance(c, str) for c in reply):
        raise BrokenTaskError(f"task {task.id!r}: the generator did not give {spec.cases} text cases")
    return reply


def score_outputs(task: Task, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, str]]:
    """``(score, why)`` of each ``(case, output)``: the scorer's value in [0, 1] with ``why`` empty, or 0.0 and why
    not (the scorer raised, answered something that is not a number in [0, 1]).

    Raises:
        BrokenTaskError: when the scorer cannot be loaded or runs past ``optimization.scorer_timeout_s`` for all.
    """
    spec = _spec(task)
    reply = _child(task, {"mode": "score", "file": str(task.root / spec.scorer), "pairs": [list(p) for p in pairs]})
    if not isinstance(reply, list) or len(reply) != len(pairs):
        raise BrokenTaskError(f"task {task.id!r}: the scorer did not answer once per case")
    results = []
    for item in reply:
        value, why = (item[0], str(item[1])) if isinstance(item, list) and len(item) == 2 else (None, "no answer")
        if why or not isinstance(value, float) or not (math.isfinite(value) and 0 <= value <= 1):
            results.append((0.0, why or f"the scorer answered {value!r}"))
        else:
            results.append((value, ""))
    return results


def _spec(task: Task) -> Any:
    if task.spec.optimization is None:
        raise BrokenTaskError(f"task {task.id!r} has no optimization section")
    return task.spec.optimization


def _child(task: Task, request: dict[str, Any]) -> Any:
    timeout = _spec(task).scorer_timeout_s
    try:
        out = subprocess.run([sys.executable, "-m", "repogym_gym.optimization"], input=json.dumps(request),
                             capture_output=True, text=True, timeout=timeout, check=False,
                             env={**os.environ, "PYTHONSAFEPATH": "1", "PYTHONHASHSEED": "0"})
    except subprocess.TimeoutExpired:
        raise BrokenTaskError(f"task {task.id!r}: the {request['mode']} step ran past {timeout:g} s") from None
    if out.returncode != 0:
        raise BrokenTaskError(f"task {task.id!r}: the {request['mode']} step failed: {out.stderr.strip()[-300:]}")
    try:
        return json.loads(out.stdout)
    except ValueError:
        raise BrokenTaskError(f"task {task.id!r}: the {request['mode']} step's reply is not JSON") from None


def _main() -> None:
    """The child: reads a request on stdin, prints the reply as JSON (module docstring)."""
    import random
    import resource
    import runpy

    resource.setrlimit(resource.RLIMIT_AS, (_CHILD_MEMORY_BYTES, _CHILD_MEMORY_BYTES))
    request = json.loads(sys.stdin.read())
    reply, sys.stdout = sys.stdout, sys.stderr  # what the task's own code prints is not the reply
    code = runpy.run_path(request["file"])
    if request["mode"] == "generate":
        rng = random.Random(request["seed"])
        reply.write(json.dumps([code["generate"](rng, index) for index in range(request["n"])]))
        return
    replies: list[list[Any]] = []
    for case, output in request["pairs"]:
        try:
            value = code["score"](case, output)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            replies.append([float(value), ""] if number else [None, "not a number"])  # float(10**400) raises too
        except Exception as exc:  # noqa: BLE001 - the scorer refusing an output is a 0 for that case, with why
            replies.append([None, f"infeasible: {type(exc).__name__}: {str(exc)[:200]}"])
    reply.write(json.dumps(replies, allow_nan=True))


if __name__ == "__main__":
    _main()
