"""Running a package's whole test suite for the miners, exactly as grading will run it.

Miners decide fail_to_pass / pass_to_pass from these runs, so they use the grader's own pytest
invocation (:func:`~repogym_gym.graders.testrun.run_tests`: grader-owned ini carrying the
package's settings, isolated interpreter, no plugin autoload, the judge's policy with every test
file of the suite as the grader's) with no id selection, so every test of the suite is collected.
Outcomes therefore match what grading will later see, and a run the judge voids is not used.
"""

from __future__ import annotations

import json
import re
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repogym_gym.errors import MiningError
from repogym_gym.graders.grader_files import suite_test_files
from repogym_gym.graders.testrun import HASH_SEED, baseline_pytest_settings, run_tests, write_ini
from repogym_gym.junit import failure_messages
from repogym_gym.sandbox import LocalSandbox, Sandbox
from repogym_gym.spec import TestSpec
from repogym_gym.venvs import venv_environ

__all__ = ["SuiteRun", "exercised_lines", "judged_files", "narrowed", "run_suite", "stable_outcomes"]

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


@dataclass(frozen=True)
class SuiteRun:
    """Outcomes of one whole-suite run.

    Attributes:
        statuses: Canonical test id -> passed / failed / error / skipped.
        messages: Failure or error message per failing id (memory addresses masked, so runs
            compare equal and problem statements stay deterministic).
        invalid: Why the run cannot be used (timeout, no report, the judge voided it), or None.
        duration_s: Wall-clock seconds.
    """

    statuses: dict[str, str]
    messages: dict[str, str] = field(default_factory=dict)
    invalid: str | None = None
    duration_s: float = 0.0

    def passing(self) -> set[str]:
        return {i for i, s in self.statuses.items() if s == "passed"}


def _messages(junit: Path, ids: Sequence[str]) -> dict[str, str]:
    """Each failing id's first message line, memory addresses masked (keyed by node id: tests that
    share a bare name in two files used to swap messages)."""
    return {i: _ADDRESS.sub("0x…", text)[:300] for i, text in failure_messages(junit, ids).items()}


def run_suite(
    tree: Path,
    tests: TestSpec,
    *,
    env_dir: Path | None,
    timeout_s: float = 600.0,
    sandbox: Sandbox | None = None,
) -> SuiteRun:
    """Run every test of ``tests.command`` in ``tree`` (ids in ``tests`` are ignored).

    Args:
        tree: The source tree (the package's own config files are read as the baseline's).
        tests: The task's test section (command, pythonpath).
        env_dir: The task's Python environment (or None for the current interpreter).
        timeout_s: Seconds for the whole run.
        sandbox: Where to run (default LocalSandbox).
    """
    spec = tests.model_copy(update={"fail_to_pass": [], "pass_to_pass": []})
    with tempfile.TemporaryDirectory(prefix="repogym-mine-") as scratch:
        run = run_tests(spec, repo=tree, scratch=Path(scratch), baseline_tree=tree, sandbox=sandbox or LocalSandbox(),
                        timeout_s=timeout_s, output_limit_bytes=200_000, sentinel=False, extra_env=venv_environ(env_dir))
        if run.report is None or run.invalid:  # a run the judge voids would be void when graded too
            return SuiteRun({}, {}, run.invalid or "no report", run.result.duration_s)
        statuses: dict[str, str] = {i: run.report.statuses[i] for i in run.report.ids}
        failing = [i for i, s in statuses.items() if s in ("failed", "error")]
        messages = _messages(run.junit_path, failing) if run.junit_path else {}
    return SuiteRun(statuses, messages, None, run.result.duration_s)


def narrowed(tests: TestSpec, files: Sequence[str], tree: Path) -> TestSpec:
    """``tests`` whose command runs only ``files`` (paths relative to ``tree``): its options and their values
    are kept, the paths it named in ``tree`` are replaced."""
    words = [w for w in shlex.split(tests.command) if w.startswith("-") or "{junit}" in w or not (tree / w.split("::", 1)[0]).exists()
             or w in ("python", "python3", "pytest")]
    return tests.model_copy(update={"command": shlex.join([*words, *files])})


def judged_files(tree: Path, tests: TestSpec, *, env_dir: Path | None, timeout_s: float = 600.0,
                 sandbox: Sandbox | None = None) -> tuple[list[str], dict[str, str]]:
    """The suite's test files whose run, each alone, the judge accepts, and why it voided each other one.

    A run is void as a whole when one test or the module it imports breaks the judge's policy (boltons'
    ``typeutils`` reads a caller's frame with ``sys._getframe``, its ``ecoutils`` probes ``tkinter``), and a
    graded run of a task whose tests import such a module would be void too; the other files' tests
    make sound tasks. Files in pytest's collection order.

    Called once the whole suite's run is void, it tries the files in halves: a group whose run the judge
    accepts is kept whole, a void one is split until each void run names one file. ``n`` files of which
    ``k`` are refused cost at most ``2n - 2`` runs, and about ``2k log2(n/k)`` when ``k`` is small (one
    refused file among 300: 18 runs rather than 300 pytest starts)."""
    files = sorted(suite_test_files(tree, tests, baseline_pytest_settings(tree).get("python_files", "")))
    kept: list[str] = []
    refused: dict[str, str] = {}
    groups = [files[: len(files) // 2], files[len(files) // 2:]] if len(files) > 1 else [files] if files else []
    while groups:
        group = groups.pop(0)
        run = run_suite(tree, narrowed(tests, group, tree), env_dir=env_dir, timeout_s=timeout_s, sandbox=sandbox)
        if not run.invalid:
            kept.extend(group)
        elif len(group) == 1:
            refused[group[0]] = run.invalid
        else:
            groups[:0] = [group[: len(group) // 2], group[len(group) // 2:]]
    return sorted(kept), refused


def exercised_lines(
    tree: Path,
    tests: TestSpec,
    *,
    env_dir: Path | None,
    files: Sequence[str],
    timeout_s: float = 900.0,
    sandbox: Sandbox | None = None,
) -> Mapping[str, set[int]]:
    """Lines of ``files`` (relative to ``tree``) that the test suite executes, via coverage.py.

    The environment must have ``coverage`` installed. Files never executed map to an empty set.
    Coverage reads the grader's own empty rcfile, never the package's ``[tool.coverage]``
    settings (``parallel = true`` would write a data file this never reads, ``omit`` would
    drop the files to mutate).

    Raises:
        MiningError: when coverage recorded no line of any of ``files`` (the suite did not run,
            or runs none of them), naming the command and the tail of its output.
    """
    sandbox = sandbox or LocalSandbox()
    with tempfile.TemporaryDirectory(prefix="repogym-cov-") as scratch_dir:
        scratch = Path(scratch_dir)
        ini = scratch / "pytest.ini"
        write_ini(ini, tree, tree, tests)
        rcfile = scratch / "coveragerc"
        rcfile.write_text("[run]\n")
        data, report = scratch / "coverage.data", scratch / "coverage.json"
        args = [a for a in tests.command.split() if "{junit}" not in a]
        for launcher in (["python", "-m", "pytest"], ["python3", "-m", "pytest"], ["pytest"]):
            if args[: len(launcher)] == launcher:
                args = args[len(launcher):]
                break
        include = ",".join(str(tree / f) for f in files)
        env = {**venv_environ(env_dir), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONHASHSEED": HASH_SEED}
        run = sandbox.run(["python", "-m", "coverage", "run", f"--rcfile={rcfile}", f"--data-file={data}",
                           f"--include={include}", "-m", "pytest", "-c", str(ini), "--rootdir", str(tree),
                           "-p", "no:cacheprovider", *args], cwd=tree, timeout_s=timeout_s, env=env)
        sandbox.run(["python", "-m", "coverage", "json", f"--rcfile={rcfile}", f"--data-file={data}", "-o", str(report)],
                    cwd=tree, timeout_s=120, env=env)
        try:
            payload = json.loads(report.read_text())
        except (OSError, ValueError):
            payload = {}
    lines: dict[str, set[int]] = {f: set() for f in files}
    for path, info in payload.get("files", {}).items():
        rel = Path(path).resolve().relative_to(tree.resolve()).as_posix() if Path(path).is_absolute() else path
        if rel in lines:
            lines[rel] = set(info.get("executed_lines", []))
    if not any(lines.values()):
        tail = (run.stdout + run.stderr).strip()[-1500:]
        raise MiningError(f"coverage recorded no line of {', '.join(files)} running `{tests.command}` (exit "
                          f"{run.exit_code}): check the files and the test command; its output ends:\n{tail}")
    return lines


def stable_outcomes(runs: list[SuiteRun]) -> tuple[dict[str, str], set[str]]:
    """Outcomes identical in every run, and the ids whose outcome changed (or went missing).

    A parametrised test with one such id is flaky as a whole: pytest numbers parameters it cannot
    name (``test_x[value3]``), so when their order changes between processes (a set of objects hashed
    by address: ``hash(None)`` on Python 3.11, isodate) an id names another case in the next process,
    and its outcomes agreeing in these runs proves nothing about grading's."""
    ids = set().union(*(r.statuses for r in runs))
    stable, flaky = {}, set()
    for test_id in ids:
        outcomes = {r.statuses.get(test_id, "missing") for r in runs}
        if len(outcomes) == 1:
            stable[test_id] = outcomes.pop()
        else:
            flaky.add(test_id)
    moved = {i.split("[", 1)[0] for i in flaky if "[" in i}
    for test_id in [i for i in stable if "[" in i and i.split("[", 1)[0] in moved]:
        del stable[test_id]
        flaky.add(test_id)
    return stable, flaky
