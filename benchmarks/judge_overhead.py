"""What the judge's policy adds to a graded test run: the same run with and without the audit hook.

For each task, one grading copy (the golden patch applied, hidden tests injected) is tested by
three commands, interleaved pair by pair so machine drift cancels:

- ``judged``: the grader's run as it is (runner + policy: ``repogym_gym/graders/judge_policy.py``);
- ``no policy``: the same runner, plugin and sentinel with a policy whose ``install`` does nothing;
- ``bare``: the task's own test command alone (``python -m pytest ...`` on the same tree).

Prints medians (seconds) and ratios measured in this run. The machine is shared and noisy: read
the ratios, not the times.

    python benchmarks/judge_overhead.py [--pairs 7] [--sandbox local] [TASK_DIR ...]

With no task directories: the starter bugfix task and every task of the cached real-code suite
(``repogym realcode`` builds it) whose package is named by ``--package`` (default: all four).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import repogym_gym as rg
from repogym_gym.baseline import BaselineStore
from repogym_gym.graders import testrun
from repogym_gym.grading_copy import build_grading_copy
from repogym_gym.sandbox import make_sandbox
from repogym_gym.suites import built_suite
from repogym_gym.venvs import venv_environ

ROOT = Path(__file__).resolve().parents[1]
NO_POLICY = '"""A policy that installs nothing (benchmarks only)."""\n\n\ndef install(config):\n    return None\n'


def tasks_to_time(paths: list[str], packages: list[str]) -> list[rg.Task]:
    if paths:
        return [rg.load_task(p) for p in paths]
    tasks = [rg.load_task(ROOT / "task_suites" / "starter" / "pagination-off-by-one")]
    suite = built_suite(ROOT / "task_suites" / "realcode" / "recipe.yaml")
    if suite is not None:
        for package in packages:
            found = sorted(p for p in suite.iterdir() if p.name.startswith(package + "-mut-"))
            tasks += [rg.load_task(p) for p in found[:1]]
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", help="task directories (default: starter + one per real-code package)")
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--sandbox", default="local")
    parser.add_argument("--package", action="append", default=None)
    args = parser.parse_args()
    sandbox = make_sandbox(args.sandbox)
    store = BaselineStore()
    real_policy = testrun.POLICY_SCRIPTS
    with tempfile.TemporaryDirectory(prefix="judge-overhead-") as tmp:
        off = Path(tmp) / "no_policy" / "judge_policy.py"
        off.parent.mkdir()
        off.write_text(NO_POLICY)
        print(f"{'task':32} {'tests':>5} {'bare s':>8} {'no policy s':>12} {'judged s':>9} "
              f"{'judged/no policy':>17} {'judged/bare':>12}")
        for task in tasks_to_time(args.tasks, args.package or ["toolz", "tabulate", "more-itertools", "jmespath"]):
            baseline = store.get(task)
            repo = Path(tmp) / task.id / "repo"
            build_grading_copy(task, baseline, None, repo)
            golden = Path(tmp) / task.id / "golden.patch"
            golden.write_text(task.golden_patch())
            subprocess.run(["git", "apply", str(golden)], cwd=repo, check=True, capture_output=True)
            env = venv_environ(baseline.python_env)
            bare_argv = ["bash", "-c", task.spec.tests.command.replace("{junit}", shlex.quote(str(Path(tmp) / "bare.xml")))]
            times: dict[str, list[float]] = {"bare": [], "off": [], "on": []}
            n_tests = 0
            for _ in range(args.pairs):
                for side in ("bare", "off", "on"):
                    start = time.perf_counter()
                    if side == "bare":
                        sandbox.run(bare_argv, cwd=repo, timeout_s=600, env=env, output_limit_bytes=1_000_000)
                    else:
                        # the policy's other parts stay beside the runner (it imports judge_values itself)
                        testrun.POLICY_SCRIPTS = (off, *(p for p in real_policy if p.name != off.name)) \
                            if side == "off" else real_policy
                        try:
                            run = testrun.run_tests(task.spec.tests, repo=repo, scratch=Path(tmp) / task.id / side,
                                                    baseline_tree=baseline.tree, sandbox=sandbox, timeout_s=600,
                                                    output_limit_bytes=1_000_000, extra_env=env)
                        finally:
                            testrun.POLICY_SCRIPTS = real_policy
                        if side == "on":
                            if run.invalid:
                                raise SystemExit(f"{task.id}: the judged golden run is invalid: {run.invalid}")
                            n_tests = len(run.report.ids) if run.report is not None else 0
                    times[side].append(time.perf_counter() - start)
            bare, no_policy, judged = (statistics.median(times[k]) for k in ("bare", "off", "on"))
            print(f"{task.id:32} {n_tests:5d} {bare:8.3f} {no_policy:12.3f} {judged:9.3f} "
                  f"{judged / no_policy:17.2f} {judged / bare:12.2f}")
            shutil.rmtree(repo, ignore_errors=True)


if __name__ == "__main__":
    main()
