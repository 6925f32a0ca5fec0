"""MutationMiner: bugfix tasks made by injecting one fault into a package that has tests.

For one source tree (e.g. a pinned sdist) and its test suite:

1. the original runs ``repeats`` times; tests whose outcome changes are flaky and excluded
   everywhere (the original is the golden solution, so its run must be stable);
2. coverage.py finds the lines the suite executes: only functions containing executed lines
   are mutated;
3. mutation sites (:mod:`repogym_gym.mine.operators`) are shuffled with ``seed`` and tried in
   that order; a candidate is dropped when it compiles to the original bytecode (equivalent),
   breaks no test (survived), breaks too many (``max_failure_ratio``), or leaves no stable
   fail_to_pass after ``repeats`` runs; at most one task per function;
4. a task is written as ``task.yaml`` + ``bug.patch`` (the fault, applied to the pinned source
   when the baseline is built) + ``solution.patch`` (its minimal reverse edit). fail_to_pass:
   tests passing on the original and failing on every mutant run; pass_to_pass: every other test
   passing in every run of both, in every test file (the package's whole stable passing suite,
   so a regression anywhere costs reward; ``p2p_limit`` caps it when set).

The problem statement lists the failing tests and their first assertion line, never the
operator or the patch. Same tree, seed and options give byte-identical tasks.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repogym_gym.errors import MiningError
from repogym_gym.metrics import function_metrics
from repogym_gym.mine.operators import (
    Mutation,
    apply_mutation,
    find_mutations,
    is_equivalent,
    unified_diff,
)
from repogym_gym.mine.statement import failing_tests_statement
from repogym_gym.mine.suiterun import exercised_lines, judged_files, narrowed, run_suite, stable_outcomes
from repogym_gym.spec import TestSpec
from repogym_gym.task import dump_yaml

__all__ = ["MinedTask", "MinedTaskSummary", "MutationOptions", "MutationReport", "mine_mutations", "operator_yield"]


class MutationOptions(BaseModel):
    """What to mutate and how many tasks to keep."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str = Field(description="Name used in task ids and problem statements.")
    files: list[str] = Field(description="Source files (relative to the tree) that may be mutated.")
    operators: list[str] | None = Field(None, description="Operator ids to use (None: all).")
    seed: int = 0
    max_tasks: int = Field(6, ge=1)
    max_candidates: int = Field(80, ge=1, description="Mutants tried at most (each costs test runs).")
    max_failure_ratio: float = Field(0.3, gt=0, le=1, description="Largest share of passing tests a fault may break.")
    repeats: int = Field(3, ge=1, description="Runs of the original and of each kept mutant (flake detection).")
    p2p_limit: int | None = Field(None, ge=1, description="Cap on pass_to_pass, first ids in sorted order (None: "
                                  "the whole stable passing suite; a cap lets regressions past it go unpunished).")
    test_timeout_s: float = Field(600.0, gt=0)
    max_removed_lines: int = Field(8, ge=1, description="Most source lines a fault may remove or replace: the "
                                   "golden patch asks an agent to write them again, and a block of 34 lines is a "
                                   "rewrite from scratch, not a fix.")


@dataclass(frozen=True)
class MinedTask:
    """One mined task: its id, directory and where its fault is."""

    id: str
    root: Path
    operator: str
    function: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]


class MinedTaskSummary(BaseModel):
    """A mined task's held-in quality figures: what kind of fault, how large, how much of the suite it moves."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    operator: str = Field(description="The fault's operator (statement kind: failing tests, for mutation tasks).")
    function: str = Field(description="The function the fault is in.")
    lines_changed: int = Field(description="Lines the golden patch adds plus removes (the bug's size).")
    fail_to_pass: int = Field(description="Tests the fix makes pass.")
    pass_to_pass: int = Field(description="Tests that must keep passing.")


class MutationReport(BaseModel):
    """What a mining run did (yield per operator, exclusions, time, each task's figures)."""

    model_config = ConfigDict(extra="forbid")

    package: str
    tests: int = Field(0, description="Tests of the package's suite (the original's stable outcomes).")
    flaky_original: list[str] = Field(default_factory=list)
    refused_files: dict[str, str] = Field(default_factory=dict, description="Test files left out, and why: the judge "
                                          "voided their run (the package's code breaks its policy under them).")
    candidates: int = 0
    tasks: list[str] = Field(default_factory=list)
    per_operator: dict[str, dict[str, int]] = Field(default_factory=dict)
    duration_s: float = 0.0
    summaries: list[MinedTaskSummary] = Field(default_factory=list, description="One per task, in ``tasks`` order.")

    def count(self, operator: str, outcome: str) -> None:
        row = self.per_operator.setdefault(operator, {})
        row[outcome] = row.get(outcome, 0) + 1


def _exercised_functions(tree: Path, files: list[str], lines: dict[str, set[int]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for rel in files:
        hit = lines.get(rel, set())
        metrics = function_metrics((tree / rel).read_text(encoding="utf-8"), rel)
        out[rel] = {m.qualname for m in metrics if any(m.lineno < line <= m.end_lineno for line in hit)}
    return out


def _patch_lines(patch: str) -> int:
    """Added plus removed lines of a unified diff."""
    return sum(1 for line in patch.splitlines() if line.startswith(("+", "-")) and not line.startswith(("+++ ", "--- ")))


def _draw_order(candidates: list[Mutation], seed: int) -> list[Mutation]:
    """Candidates in the order they are tried: each operator's sites shuffled by ``seed``, then
    taken one per operator in turn (operators by name), so every operator that has a site is tried
    among the first candidates. A plain shuffle left the operators with few sites untried (five of
    15 on five packages) once ``max_candidates`` or ``max_tasks`` was reached.

    >>> from repogym_gym.mine.operators import find_mutations
    >>> src = "def f(a, b):\\n    if a < b:\\n        return a + b + 1\\n    return -a\\n"
    >>> [m.operator for m in _draw_order(find_mutations(src, "m.py"), 0)][:5]
    ['arithmetic_change', 'comparison_swap', 'constant_off_by_one', 'negate_condition', 'remove_return_value']
    """
    rng = random.Random(seed)
    groups: dict[str, list[Mutation]] = {}
    for mutation in candidates:
        groups.setdefault(mutation.operator, []).append(mutation)
    for name in sorted(groups):
        rng.shuffle(groups[name])
    rounds = itertools.zip_longest(*(groups[name] for name in sorted(groups)))
    return [m for row in rounds for m in row if m is not None]


def _task_id(package: str, mutation: Mutation) -> str:
    key = f"{mutation.path}:{mutation.lineno}:{mutation.col}:{mutation.operator}:{mutation.replacement}"
    return f"{package}-mut-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def mine_mutations(
    base_tree: Path,
    tests: TestSpec,
    template: dict[str, Any],
    options: MutationOptions,
    out_dir: Path,
    *,
    env_dir: Path | None,
    coverage_env_dir: Path | None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[MinedTask], MutationReport]:
    """Mine up to ``options.max_tasks`` bugfix tasks from ``base_tree`` into ``out_dir``.

    Args:
        base_tree: The package's source tree (not modified).
        tests: The test section every task gets (command, pythonpath); ids are filled in.
        template: task.yaml fields shared by every task (``repo``, ``limits``, ``tags``...).
        options: Mining options.
        out_dir: Where task directories are written (one per task id).
        env_dir: The tasks' Python environment (test runs).
        coverage_env_dir: An environment with coverage.py installed (the coverage run).
        progress: Called with a short status line.

    Returns:
        The tasks written and the report (yield per operator).
    """
    say = progress or (lambda _m: None)
    start = time.monotonic()
    report = MutationReport(package=options.package)
    with tempfile.TemporaryDirectory(prefix=f"repogym-mine-{options.package}-") as scratch:
        work = Path(scratch) / "tree"
        shutil.copytree(base_tree, work, symlinks=True)
        say("running the original suite")
        originals = [run_suite(work, tests, env_dir=env_dir, timeout_s=options.test_timeout_s) for _ in range(options.repeats)]
        if any(r.invalid for r in originals) and "broke the judge's policy" in str(originals[0].invalid):
            say("the judge voided the whole suite's run: running each test file alone")
            files, report.refused_files = judged_files(work, tests, env_dir=env_dir, timeout_s=options.test_timeout_s)
            if not files:
                raise MiningError(f"{options.package}: the judge voided the run of every test file, e.g. "
                                  f"{next(iter(report.refused_files.values()), originals[0].invalid)}")
            tests = narrowed(tests, files, work)  # the tasks run (and record) only the files it accepts
            originals = [run_suite(work, tests, env_dir=env_dir, timeout_s=options.test_timeout_s) for _ in range(options.repeats)]
        if any(r.invalid for r in originals):
            raise MiningError(f"{options.package}: the original test suite did not run: {originals[0].invalid}")
        # A mutant that loops forever must not cost the full test timeout: 5x the original's time.
        options = options.model_copy(update={"test_timeout_s": min(
            options.test_timeout_s, max(30.0, 5 * max(r.duration_s for r in originals)))})
        golden, flaky = stable_outcomes(originals)
        report.tests, report.flaky_original = len(golden), sorted(flaky)
        passing = {i for i, s in golden.items() if s == "passed"}
        say("measuring coverage")
        lines = exercised_lines(work, tests, env_dir=coverage_env_dir, files=options.files)
        functions = _exercised_functions(work, options.files, dict(lines))
        candidates = [m for rel in sorted(options.files) for m in find_mutations(
            (work / rel).read_text(encoding="utf-8"), rel, functions=sorted(functions[rel]), operators=options.operators)
            if m.original.count("\n") + 1 - m.original.endswith("\n") <= options.max_removed_lines]
        candidates = _draw_order(candidates, options.seed)
        mined: list[MinedTask] = []
        used_functions: set[tuple[str, str]] = set()
        for mutation in candidates:
            if len(mined) >= options.max_tasks or report.candidates >= options.max_candidates:
                break
            if (mutation.path, mutation.function) in used_functions:
                continue
            report.candidates += 1
            outcome, task = _try(work, mutation, tests, template, options, passing, out_dir, env_dir, say)
            report.count(mutation.operator, outcome)
            if task is not None:
                mined.append(task)
                report.tasks.append(task.id)
                report.summaries.append(MinedTaskSummary(
                    id=task.id, operator=task.operator, function=task.function,
                    lines_changed=_patch_lines((task.root / "solution.patch").read_text(encoding="utf-8")),
                    fail_to_pass=len(task.fail_to_pass), pass_to_pass=len(task.pass_to_pass)))
                used_functions.add((mutation.path, mutation.function))
    report.duration_s = time.monotonic() - start
    return mined, report


def _try(work: Path, mutation: Mutation, tests: TestSpec, template: dict[str, Any], options: MutationOptions,
         passing: set[str], out_dir: Path, env_dir: Path | None,
         say: Callable[[str], None]) -> tuple[str, MinedTask | None]:
    target = work / mutation.path
    original = target.read_text(encoding="utf-8")
    mutated = apply_mutation(original, mutation)
    if is_equivalent(original, mutated):
        return "equivalent", None
    say(f"trying {mutation.operator} in {mutation.function}")
    target.write_text(mutated, encoding="utf-8")
    try:
        runs = [run_suite(work, tests, env_dir=env_dir, timeout_s=options.test_timeout_s)]
        broken = passing - runs[0].passing()
        if runs[0].invalid or not broken:
            return ("timeout" if runs[0].invalid and "timed out" in runs[0].invalid
                else "invalid" if runs[0].invalid else "survived"), None
        if len(broken) > options.max_failure_ratio * len(passing):
            return "too_broad", None
        runs += [run_suite(work, tests, env_dir=env_dir, timeout_s=options.test_timeout_s) for _ in range(options.repeats - 1)]
    finally:
        target.write_text(original, encoding="utf-8")
    stable, _flaky = stable_outcomes(runs)
    f2p = sorted(i for i in passing if stable.get(i) in ("failed", "error"))
    if not f2p:
        return "flaky", None
    p2p = sorted(i for i in passing if stable.get(i) == "passed")[: options.p2p_limit]
    if not p2p:
        return "no_pass_to_pass", None
    task_id = _task_id(options.package, mutation)
    root = out_dir / task_id
    root.mkdir(parents=True, exist_ok=True)
    (root / "bug.patch").write_text(unified_diff(original, mutated, mutation.path))
    (root / "solution.patch").write_text(unified_diff(mutated, original, mutation.path))
    spec = {
        "id": task_id,
        "type": "bugfix",
        "problem_statement": failing_tests_statement(options.package, f2p, runs[0].messages),
        **{k: v for k, v in template.items() if k not in ("tests", "repo")},
        "repo": {**template.get("repo", {}), "patches": ["bug.patch"]},
        "tests": {**tests.model_dump(mode="json", exclude_defaults=True), "fail_to_pass": f2p, "pass_to_pass": p2p},
    }
    (root / "task.yaml").write_text(dump_yaml(spec))
    return "task", MinedTask(task_id, root, mutation.operator, mutation.function, tuple(f2p), tuple(p2p))


def operator_yield(report: MutationReport) -> dict[str, float]:
    """Share of tried candidates that became tasks, per operator."""
    return {op: row.get("task", 0) / max(1, sum(row.values())) for op, row in sorted(report.per_operator.items())}

