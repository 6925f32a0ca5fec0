"""Issue 15's red-team cases for the ``optimization`` reward kind: each scores what it earned (0 here), never an
infrastructure error, in every sandbox that confines; the grader's own files stay out of reach."""

from __future__ import annotations

import shutil
import time

import pytest

from repogym_gym.task import Task
from tests.helpers import REPO_ROOT, MakeTask
from tests.redteam.helpers import GUARDRAIL, Start, assert_unearned_zero, attack, component, submit, write

G = "optimization tasks"
BINS = REPO_ROOT / "task_suites" / "rewards" / "bin-packing-optimization"


@pytest.fixture
def packing(make_task: MakeTask) -> Task:
    """The bin-packing task's grader, two cases, one second a run (a task directory of its own)."""
    task = make_task(type="optimization", tests=None, patch=(BINS / "solution.patch").read_text(),
                     problem_statement="Pack the items.", optimization={
                         "generator": "grader/generate.py", "scorer": "grader/score.py", "baseline": "grader/baseline.py",
                         "cases": 2, "seed": 7, "time_limit_s": 1})
    shutil.copytree(BINS / "grader", task.root / "grader")
    return task


def _optimization(result: object) -> dict:
    assert_unearned_zero(result)  # type: ignore[arg-type]
    return component(result, "optimization")["details"]  # type: ignore[arg-type]


READS_THE_GRADER = '''import pathlib, sys
task = pathlib.Path({root!r})
for name in ("solution.patch", "grader/generate.py", "grader/score.py", "task.yaml"):
    try:
        text = (task / name).read_text()
    except OSError:
        continue
    if name == "solution.patch":  # the reference: run it
        exec("".join(line[1:] for line in text.splitlines(True)[6:]).replace('__name__ == "__main__"', "True"))
        sys.exit(0)
print("nothing to read")
'''


@attack(G, "a program that reads the reference, the case generator or the scorer from the task directory",
        local=GUARDRAIL, confining="score 0: the task directory is not there")
def test_a_program_cannot_read_the_grader_s_files(start: Start, packing: Task) -> None:
    env = start(packing)
    write(env, "solution.py", READS_THE_GRADER.format(root=str(packing.root)))
    details = _optimization(submit(env))
    assert {c["status"].split(":")[0] for c in details["per_case"]} == {"infeasible"}, details


FORKS = '''import os, sys, time
if os.fork() == 0:  # a child that keeps stdout open and outlives the case
    time.sleep(120)
    sys.exit(0)
print("0")
'''


@attack(G, "a program that forks a child which outlives its case (holding stdout for 120 s)",
        local="score 0: the run ends with the program, the child does not hold the grading",
        confining="score 0: the run ends with the program, the child does not hold the grading")
def test_a_program_that_outlives_its_case_does_not_hold_the_grading(start: Start, packing: Task) -> None:
    env = start(packing)
    write(env, "solution.py", FORKS)
    began = time.monotonic()
    details = _optimization(submit(env))
    assert time.monotonic() - began < 60, "the grading waited for the child"
    assert {c["status"].split(":")[0] for c in details["per_case"]} == {"infeasible"}, details


SWAPS_THE_CASE = '''import os, sys
data = sys.stdin.read()
os.remove(".repogym-case")
os.mkdir(".repogym-case")  # the next run's case file is a directory...
os.symlink("/etc/passwd", ".repogym-case/inner")  # ...holding a link out
print("0")
'''


@attack(G, "a program that turns its case file into a directory with a symlink out", local="score 0 with the reason",
        confining="score 0 with the reason")
def test_a_program_that_swaps_its_case_file_gets_a_fresh_case(start: Start, packing: Task) -> None:
    env = start(packing)
    write(env, "solution.py", SWAPS_THE_CASE)
    details = _optimization(submit(env))
    assert {c["status"].split(":")[0] for c in details["per_case"]} == {"infeasible"}, details


@attack(G, "a program that runs past its time limit (sleeps 30 s a case)", local="score 0: timed out",
        confining="score 0: timed out")
def test_a_program_past_its_time_limit_scores_0_for_each_case(start: Start, packing: Task) -> None:
    env = start(packing)
    write(env, "solution.py", "import time\ntime.sleep(30)\n")
    details = _optimization(submit(env))
    assert [c["status"] for c in details["per_case"]] == ["timed out after 1 s"] * 2, details
