"""HistoryMiner: bugfix tasks from the commits of a git repository (or a package's releases).

For each commit ``C`` of ``git rev-list --reverse --first-parent <rev_range>`` with first
parent ``P``, the changed paths (``--no-renames``) are split into *test* files
(``test_globs``), *source* files (``source_globs``, minus test files) and the rest (docs,
metadata), which are ignored. A commit is a candidate when it changes both tests and source,
deletes no test file, stays within the size limits (source change only) and its source change
can be carried into grading (no protected file such as ``conftest.py``). Each candidate runs
the whole suite (:func:`~repogym_gym.mine.suiterun.run_suite`) on three trees, which are exactly
what grading will see:

1. ``P`` as is;
2. ``P`` + ``C``'s test files: the task's baseline with its hidden tests (a noop grade);
3. ``P`` + ``C``'s test and source files: the golden submission, run ``repeats`` times; tests
   whose outcome changes between these runs are flaky and excluded.

fail_to_pass: passing in every run of (3), and failing or erroring in (2), or absent in (2) and
not passing in (1) (a test that passed on the parent is not made to pass by the fix when ``C``'s
version of its module merely fails to import there; one that ran and failed was changed by ``C``).
pass_to_pass: passing in (1), (2) and every run of (3). A test that passed in (1) or (2) and
fails in (3), or disappears from a test file ``C`` did not change, rejects the commit.

A task is ``task.yaml`` (``repo.source``: the git repository at ``P``, so no later history
reaches a workspace), ``hidden/`` (``C``'s version of every changed test file) and
``solution.patch`` (``git diff --binary P C`` of the source files). The problem statement is the
commit's message (for a merge, its body and the merged commits' subjects; trailers dropped) and the
failing tests with their first message line (for a test whose module fails to import, the error
that names what is missing), never the diff; a task whose tests only miss something is a
``feature`` ("implement"), else a ``bugfix`` (:func:`~repogym_gym.mine.statement.statement_kind`).

:func:`mine_releases` does the same over consecutive pinned sdists of one package, committed to
a throwaway repository; its tasks start from the older sdist (a ``pypi`` source).

Same repository, range and options give byte-identical tasks.

Example:
    >>> tasks, report = mine_history(Path("~/src/lib").expanduser(), "v1.0..v1.1", tests,
    ...     {"limits": {"max_steps": 30}}, HistoryOptions(package="lib"), Path("out"),
    ...     env_dir=None)                                                     # doctest: +SKIP
    >>> report.skipped                                                        # doctest: +SKIP
    {'no_test_change': 41, 'no_fail_to_pass': 3, 'too_large': 2}
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec
from pydantic import BaseModel, ConfigDict, Field, field_validator

from repogym_gym.changes import CarryPolicy
from repogym_gym.errors import GitMetadataError
from repogym_gym.gitstore import (
    GitCommandError,
    GitStore,
    export_tree,
    files_from_manifest,
    run_git,
)
from repogym_gym.mine.statement import commit_text, failing_tests_statement, statement_kind, statement_message
from repogym_gym.mine.suiterun import SuiteRun, run_suite, stable_outcomes
from repogym_gym.mine.writer import StatementFacts, StatementWriter, record_statement  # no LLM SDK at import
from repogym_gym.paths import default_cache_dir
from repogym_gym.sources import materialize_source
from repogym_gym.spec import PypiSource, TaskSpec, TestSpec, check_task_id
from repogym_gym.task import Task, dump_yaml
from repogym_gym.tree import git_mode, scan_tree

__all__ = ["HistoryOptions", "HistoryReport", "MinedHistoryTask", "mine_history", "mine_releases"]

_DIFF = ("-r", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv")
_FAILING = ("failed", "error")


class HistoryOptions(BaseModel):
    """Which commits count and how the after state is checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str = Field(description="Name used in task ids (``<package>-<commit[:8]>``) and problem statements.")
    test_globs: list[str] = Field(
        default_factory=lambda: ["tests/**", "test/**", "**/test_*.py", "**/*_test.py", "**/conftest.py"],
        description="gitignore-style globs of test files (they become hidden tests).",
    )
    source_globs: list[str] = Field(
        default_factory=lambda: ["**/*.py"],
        description="gitignore-style globs of source files (minus test files; they make the golden patch).",
    )
    max_files_changed: int = Field(10, ge=1, description="Most source files a commit may change.")
    max_lines_changed: int = Field(300, ge=1, description="Most source lines (added + removed) a commit may change.")
    repeats: int = Field(2, ge=1, description="Runs of the after state; tests whose outcome changes are excluded.")
    test_timeout_s: float = Field(300.0, gt=0, description="Seconds per whole-suite run.")

    @field_validator("package")
    @classmethod
    def _id_safe(cls, v: str) -> str:
        check_task_id(f"{v}-0")
        return v


@dataclass(frozen=True)
class MinedHistoryTask:
    """One mined task: its id, directory and the commit it came from."""

    id: str
    root: Path
    commit: str
    parent: str
    subject: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    source_files: tuple[str, ...]
    test_files: tuple[str, ...]


class HistoryReport(BaseModel):
    """What a mining run did.

    Attributes:
        commits: Commits walked.
        candidates: Commits whose suite was run (they passed the static filters).
        tasks: Ids of the tasks written, in commit order.
        skipped: Reason -> commits skipped or rejected for it. Reasons: ``root_commit``,
            ``no_test_change``, ``no_source_change``, ``deletes_tests``, ``too_large``,
            ``export_failed``, ``test_not_regular_file``, ``suite_did_not_run`` (timeout or no
            report), ``does_not_run_here`` (not one test passes with the fix: the code needs another
            interpreter, ``--python``, or packages, ``--requirement``), ``breaks_a_passing_test``,
            ``no_fail_to_pass``, ``protected_source`` (the golden patch would touch a file grading
            never carries).
        outcomes: Commit -> ``"task"`` or the reason, in commit order.
        flaky: Commit -> test ids excluded because their outcome changed between after runs.
        duration_s: Wall-clock seconds.
    """

    model_config = ConfigDict(extra="forbid")

    package: str
    commits: int = 0
    candidates: int = 0
    tasks: list[str] = Field(default_factory=list)
    skipped: dict[str, int] = Field(default_factory=dict)
    outcomes: dict[str, str] = Field(default_factory=dict)
    flaky: dict[str, list[str]] = Field(default_factory=dict)
    duration_s: float = 0.0

    def record(self, commit: str, outcome: str) -> None:
        self.outcomes[commit] = outcome
        if outcome != "task":
            self.skipped[outcome] = self.skipped.get(outcome, 0) + 1


@dataclass(frozen=True)
class _Change:
    tests: dict[str, str]  # path -> git status letter (A, M, D, T)
    sources: dict[str, str]
    subject: str
    text: str = ""  # what the statement quotes of the commit (statement.commit_text)


# --- git ------------------------------------------------------------------------------------------


def _repo_dirs(repo: Path) -> tuple[Path, Path]:
    """The git dir (for refs and HEAD) and common dir (for objects) of a work tree or bare repo."""
    if not repo.is_dir():
        raise GitMetadataError(f"repository {repo} is not a directory; pass a git work tree or bare repository")
    out = run_git(["rev-parse", "--path-format=absolute", "--absolute-git-dir", "--git-common-dir"],
                   git_dir=None, cwd=repo).decode().split("\n")
    return Path(out[0]), Path(out[1])


def _commits(git_dir: Path, rev_range: str) -> list[tuple[str, str | None]]:
    """(commit, first parent or None) along the first-parent chain of ``rev_range``, oldest first."""
    if not rev_range.strip() or rev_range.startswith("-"):
        raise ValueError(f"rev_range {rev_range!r} must be a revision range such as 'v1.0..main' (no options)")
    out = run_git(["rev-list", "--reverse", "--first-parent", "--parents", "--end-of-options", rev_range],
                   git_dir=git_dir, cwd=git_dir).decode()
    rows = [line.split() for line in out.splitlines() if line.strip()]
    return [(row[0], row[1] if len(row) > 1 else None) for row in rows]


def _scratch_store(path: Path, objects_of: Path) -> GitStore:
    """A hardened bare repository borrowing ``objects_of``'s objects."""
    return GitStore.create(path, alternate=objects_of)


def _change(store: GitStore, parent: str, commit: str, tests: pathspec.GitIgnoreSpec,
            sources: pathspec.GitIgnoreSpec) -> _Change:
    fields = store.git("diff-tree", *_DIFF, "--name-status", "-z", parent, commit).split(b"\0")
    test_files, source_files = {}, {}
    for status, raw in zip(fields[0::2], fields[1::2], strict=False):
        path, letter = os.fsdecode(raw), status.decode()[:1]
        if tests.match_file(path):
            test_files[path] = letter
        elif sources.match_file(path):
            source_files[path] = letter
    header, _, message = store.git("cat-file", "commit", commit).decode("utf-8", "replace").partition("\n\n")
    subject = message.strip().split("\n", 1)[0].strip()
    parents = [line.split()[1] for line in header.splitlines() if line.startswith("parent ")]
    branch = []
    if len(parents) > 1:  # a merge: the merged branch's own commits say what it did
        branch = store.git("log", "--format=%s", "--no-merges", "--reverse", "-n", "10", f"{parents[0]}..{parents[1]}",
                           "--").decode("utf-8", "replace").splitlines()
    return _Change(dict(sorted(test_files.items())), dict(sorted(source_files.items())), subject,
                   commit_text(message, branch))


def _lines_changed(store: GitStore, parent: str, commit: str, paths: Iterable[str]) -> int:
    out = store.git("--literal-pathspecs", "diff-tree", *_DIFF, "--numstat", "-z", parent, commit, "--", *paths)
    total = 0
    for record in out.split(b"\0"):
        added, _, rest = record.decode("utf-8", "replace").partition("\t")
        removed = rest.partition("\t")[0]
        total += sum(int(n) for n in (added, removed) if n.isdigit())
    return total


def _patch(store: GitStore, parent: str, commit: str, paths: Iterable[str]) -> str:
    out = store.git("--literal-pathspecs", "diff-tree", *_DIFF, "-p", "--binary", "--src-prefix=a/",
                    "--dst-prefix=b/", parent, commit, "--", *paths)
    return out.decode("utf-8", "surrogateescape")


def _export(store: GitStore, commit: str, dest: Path) -> None:
    """``commit``'s tree at ``dest`` (no .git), as :mod:`repogym_gym.sources` exports a git source."""
    export_tree(store.git_dir, commit, dest)


def _overlay(src: Path, dest: Path, changes: dict[str, str]) -> None:
    """Make ``changes``'s paths in ``dest`` what they are in ``src`` (deleted ones removed)."""
    for rel, letter in changes.items():
        target = dest / rel
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        if letter != "D":
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, target, follow_symlinks=False)


# --- mining ---------------------------------------------------------------------------------------


def mine_history(
    repo: Path,
    rev_range: str,
    tests: TestSpec,
    template: dict[str, Any],
    options: HistoryOptions,
    out_dir: Path,
    *,
    env_dir: Path | None,
    url: str | None = None,
    progress: Callable[[str], None] | None = None,
    writer: StatementWriter | None = None,
) -> tuple[list[MinedHistoryTask], HistoryReport]:
    """Mine bugfix tasks from the commits of ``rev_range`` in ``repo`` into ``out_dir``.

    Args:
        repo: A git work tree or bare repository (read only; nothing in it is written).
        rev_range: What ``git rev-list`` walks (first parents only), e.g. ``"v1.0..main"``.
        tests: The test section every task gets (command, pythonpath); ids are filled in and
            ``hidden`` is set to ``"hidden"``.
        template: task.yaml fields shared by every task (``limits``, ``tags``, ``repo.setup``...);
            ``repo.source`` is set per task.
        options: Mining options.
        out_dir: Where task directories are written (one per task id, ``<package>-<commit[:8]>``).
        env_dir: The tasks' Python environment (None: the current interpreter).
        url: ``repo.source.url`` of the tasks (default: ``repo``'s absolute path).
        progress: Called with a short status line.
        writer: Rewrites each statement as an issue (:mod:`repogym_gym.mine.writer`; off by default).

    Returns:
        The tasks written and the report.

    Raises:
        ValueError: ``rev_range`` is empty or looks like an option.
        GitMetadataError: ``repo`` is not a git repository or ``rev_range`` does not resolve.
        MiningError: when the ``writer``'s model server cannot be used.
    """
    repo = Path(repo).resolve()
    git_dir, common_dir = _repo_dirs(repo)
    commits = _commits(git_dir, rev_range)
    location = url or str(repo)
    return _mine(common_dir, commits, tests, template, options, out_dir, env_dir,
                 lambda parent: {"type": "git", "url": location, "commit": parent}, progress, writer)


def _mine(objects_of: Path, commits: list[tuple[str, str | None]], tests: TestSpec, template: dict[str, Any],
          options: HistoryOptions, out_dir: Path, env_dir: Path | None, source_of: Callable[[str], dict[str, Any]],
          progress: Callable[[str], None] | None,
          writer: StatementWriter | None = None) -> tuple[list[MinedHistoryTask], HistoryReport]:
    say = progress or (lambda _m: None)
    start = time.monotonic()
    report = HistoryReport(package=options.package)
    test_spec = pathspec.GitIgnoreSpec.from_lines(options.test_globs)
    source_spec = pathspec.GitIgnoreSpec.from_lines(options.source_globs)
    mined: list[MinedHistoryTask] = []
    with tempfile.TemporaryDirectory(prefix=f"repogym-history-{options.package}-") as scratch_dir:
        scratch = Path(scratch_dir)
        store = _scratch_store(scratch / "objects.git", objects_of)
        run = _Run(store, tests, template, options, out_dir, env_dir, source_of, report, writer)
        for commit, parent in commits:
            report.commits += 1
            if parent is None:
                report.record(commit, "root_commit")
                continue
            change = _change(store, parent, commit, test_spec, source_spec)
            reason = _static_reason(store, parent, commit, change, options)
            if reason is not None:
                report.record(commit, reason)
                continue
            report.candidates += 1
            say(f"trying {commit[:8]} {change.subject[:60]}")
            work = scratch / commit
            work.mkdir()
            try:
                outcome, task = _try(run, parent, commit, change, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            report.record(commit, outcome)
            if task is not None:
                mined.append(task)
                report.tasks.append(task.id)
    report.duration_s = time.monotonic() - start
    return mined, report


def _static_reason(store: GitStore, parent: str, commit: str, change: _Change, options: HistoryOptions) -> str | None:
    """Why ``commit`` is skipped without running anything, or None."""
    if not change.tests:
        return "no_test_change"
    if not change.sources:
        return "no_source_change"
    if "D" in change.tests.values():
        return "deletes_tests"
    if len(change.sources) > options.max_files_changed:
        return "too_large"
    if _lines_changed(store, parent, commit, change.sources) > options.max_lines_changed:
        return "too_large"
    return None


@dataclass(frozen=True)
class _Run:
    """What every commit of one mining run shares (the options, where tasks go, the report)."""

    store: GitStore
    tests: TestSpec
    template: dict[str, Any]
    options: HistoryOptions
    out_dir: Path
    env_dir: Path | None
    source_of: Callable[[str], dict[str, Any]]
    report: HistoryReport
    writer: StatementWriter | None = None

    def suite(self, tree: Path) -> SuiteRun:
        """The task's tests run once in ``tree``."""
        return run_suite(tree, self.tests, env_dir=self.env_dir, timeout_s=self.options.test_timeout_s)


@dataclass(frozen=True)
class _Trees:
    """The four trees of one commit: before it, with only its tests, with all of it (the golden), after it."""

    before: Path
    with_tests: Path
    golden: Path
    after: Path


def _try(run: _Run, parent: str, commit: str, change: _Change, work: Path) -> tuple[str, MinedHistoryTask | None]:
    """Mine ``commit`` (its tests' fail_to_pass and pass_to_pass); the outcome for the report, and the task or None."""
    trees = _trees(run.store, parent, commit, change, work)
    if isinstance(trees, str):
        return trees, None
    outcome = _outcomes(run, commit, change, trees)
    if isinstance(outcome, str):
        return outcome, None
    f2p, p2p, messages = outcome
    return _write_mined(run, parent, commit, change, trees, f2p, p2p, messages)


def _trees(store: GitStore, parent: str, commit: str, change: _Change, work: Path) -> _Trees | str:
    """The commit's trees under ``work``, or why they cannot be made."""
    trees = _Trees(work / "before", work / "with_tests", work / "golden", work / "after")
    try:
        _export(store, parent, trees.before)
        _export(store, commit, trees.after)
    except GitCommandError:
        raise  # git itself failed on a commit it listed: the repository is broken, not this commit
    except (GitMetadataError, OSError):
        return "export_failed"
    if any(not (trees.after / rel).is_file() or (trees.after / rel).is_symlink() for rel in change.tests):
        return "test_not_regular_file"
    shutil.copytree(trees.before, trees.with_tests, symlinks=True)
    _overlay(trees.after, trees.with_tests, change.tests)
    shutil.copytree(trees.with_tests, trees.golden, symlinks=True)
    _overlay(trees.after, trees.golden, change.sources)
    return trees


def _outcomes(run: _Run, commit: str, change: _Change, trees: _Trees) -> tuple[list[str], list[str], dict[str, str]] | str:
    """fail_to_pass, pass_to_pass and the failure messages of fail_to_pass before the fix; or why there are none."""
    runs_before, runs_hidden, first = run.suite(trees.before), run.suite(trees.with_tests), run.suite(trees.golden)
    if any(r.invalid for r in (runs_before, runs_hidden, first)):
        return "suite_did_not_run"
    if not first.passing():
        return "does_not_run_here"  # not one test passes with the fix: the code does not import on this interpreter
    passed_before = runs_before.passing() | runs_hidden.passing()
    new_passes = any(runs_hidden.statuses.get(i) in (*_FAILING, None) for i in first.passing())
    if not new_passes and not _broken(passed_before, first.statuses, change):
        return "no_fail_to_pass"  # exact: a test needs to pass in every after run to count
    runs_golden = [first] + [run.suite(trees.golden) for _ in range(run.options.repeats - 1)]
    if any(r.invalid for r in runs_golden):
        return "suite_did_not_run"
    stable, flaky = stable_outcomes(runs_golden)
    if flaky:
        run.report.flaky[commit] = sorted(flaky)
    if _broken(passed_before - flaky, stable, change):
        return "breaks_a_passing_test"
    passing_after = {i for i, s in stable.items() if s == "passed"}
    # A test C's version of its module hides (the module fails to import there: the new tests import
    # what C adds) is fail_to_pass only if it did not pass on the parent: a stub that only makes the
    # module importable would earn it back (toolz). The baseline cannot import it either, so it is
    # not pass_to_pass. A test that runs and fails with C's tests counts whatever it did before: C
    # changed it (toolz's test_partition_all gained the assertions of its fix).
    before = runs_before.passing()
    f2p = sorted(i for i in passing_after if runs_hidden.statuses.get(i) in _FAILING
                 or (runs_hidden.statuses.get(i) is None and i not in before))
    p2p = sorted(passing_after & before & runs_hidden.passing())
    if not f2p:
        return "no_fail_to_pass"
    return f2p, p2p, {i: _mask(runs_hidden.messages.get(i) or _not_collected(runs_hidden, i), trees.with_tests) for i in f2p}


def _not_collected(run: SuiteRun, test_id: str) -> str:
    """Why ``test_id`` is absent: its module's collection error (pytest reports it under the module's
    dotted name), which names what the tests import that does not exist yet."""
    module = test_id.split("::", 1)[0].removesuffix(".py").replace("/", ".")
    error = run.messages.get(module) or run.messages.get(test_id.split("::", 1)[0])
    return f"not collected: {error}" if error else "not collected"


def _write_mined(run: _Run, parent: str, commit: str, change: _Change, trees: _Trees, f2p: list[str], p2p: list[str],
                 messages: dict[str, str]) -> tuple[str, MinedHistoryTask | None]:
    """Write the task of ``commit`` (unless its fix touches a file grading protects)."""
    options, template = run.options, run.template
    task_id = f"{options.package}-{commit[:8]}"
    kind = statement_kind(f2p, messages)
    body = failing_tests_statement(options.package, f2p, messages, kind)  # the commit's own words first, if any
    spec = {
        "id": task_id,
        "type": kind,
        "problem_statement": f"{change.text}\n\n{body}" if change.text else body,
        **{k: v for k, v in template.items() if k not in ("tests", "repo")},
        "repo": {**{k: v for k, v in template.get("repo", {}).items() if k != "source"}, "source": run.source_of(parent)},
        "tests": {**run.tests.model_dump(mode="json", exclude_defaults=True), "hidden": "hidden",
                  "fail_to_pass": f2p, "pass_to_pass": p2p},
    }
    root = run.out_dir / task_id
    policy = CarryPolicy.for_task(Task(TaskSpec.model_validate(spec), root))
    if any(policy.is_protected(rel) for rel in change.sources):
        return "protected_source", None
    patch = _patch(run.store, parent, commit, change.sources)
    written = None
    if run.writer is not None:  # the templated statement is what the model may rewrite, never the patch
        facts = StatementFacts(options.package, kind, change.text,
                               {i: statement_message(messages.get(i)) or "" for i in f2p}, tuple(change.sources),
                               spec["problem_statement"])
        written = run.writer.write(facts, patch)
        spec["problem_statement"] = written.text
    _write_task(root, spec, patch, trees.after, change.tests)
    if written is not None:
        record_statement(root, written)
    return "task", MinedHistoryTask(task_id, root, commit, parent, change.subject, tuple(f2p), tuple(p2p),
                                    tuple(change.sources), tuple(change.tests))


def _broken(passed_before: set[str], after: dict[str, str], change: _Change) -> bool:
    """A test that passed before fails after, or vanished from a test file the commit did not change."""
    for test_id in passed_before:
        status = after.get(test_id)
        if status in _FAILING or (status is None and test_id.split("::", 1)[0] not in change.tests):
            return True
    return False


def _mask(message: str, tree: Path) -> str:
    """A message without the run's temporary paths (so statements are deterministic)."""
    for prefix in (str(tree.resolve()), str(tree)):
        message = message.replace(prefix + os.sep, "").replace(prefix, ".")
    return message


def _write_task(root: Path, spec: dict[str, Any], patch: str, after: Path, test_files: dict[str, str]) -> None:
    if (root / "hidden").exists():
        shutil.rmtree(root / "hidden")  # a previous run's hidden tests must not linger
    root.mkdir(parents=True, exist_ok=True)
    for rel in test_files:
        target = root / "hidden" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(after / rel, target)
        target.chmod(0o755 if (after / rel).stat().st_mode & 0o111 else 0o644)
    (root / "solution.patch").write_text(patch, encoding="utf-8", errors="surrogateescape")
    (root / "task.yaml").write_text(dump_yaml(spec))


# --- release history ------------------------------------------------------------------------------


def mine_releases(
    package: str,
    versions: list[tuple[str, str]],
    tests: TestSpec,
    template: dict[str, Any],
    options: HistoryOptions,
    out_dir: Path,
    *,
    env_dir: Path | None,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[MinedHistoryTask], HistoryReport]:
    """Mine tasks from consecutive releases of ``package``, each release treated as a commit.

    Every sdist is fetched and verified (:func:`repogym_gym.sources.materialize_source`) and
    committed, in the given order, to a throwaway repository with a fixed identity and date;
    :func:`mine_history` logic then runs on it. A task's ``repo.source`` is the *older* sdist
    (``type: pypi``), its ``solution.patch`` the source change to the newer one.

    Args:
        package: The project name on the package index.
        versions: ``(version, sha256 of the sdist)`` pairs, oldest first (at least two).
        tests, template, options, out_dir, env_dir, progress: As for :func:`mine_history`.
        cache_dir: The download cache root (default: the baseline cache, as grading uses).

    Raises:
        ValueError: fewer than two versions.
        SourceError: an sdist cannot be downloaded, verified or unpacked.
    """
    if len(versions) < 2:
        raise ValueError(f"versions must list at least two (version, sha256) pairs, got {len(versions)}")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    say = progress or (lambda _m: None)
    sources: dict[str, dict[str, Any]] = {}
    commits: list[tuple[str, str | None]] = []
    with tempfile.TemporaryDirectory(prefix=f"repogym-releases-{options.package}-") as scratch_dir:
        scratch = Path(scratch_dir)
        store = GitStore.create(scratch / "releases.git")
        parent: str | None = None
        previous: set[str] = set()
        for index, (version, sha256) in enumerate(versions):
            say(f"fetching {package}=={version}")
            source = PypiSource(type="pypi", package=package, version=version, sha256=sha256)
            tree = scratch / f"release-{index}"
            materialize_source(source, scratch, tree, cache_dir=cache)
            paths = {rel: git_mode(e) for rel, e in scan_tree(tree).items() if e.kind in ("file", "symlink")}
            commit = store.write_commit("refs/heads/releases", files_from_manifest(tree, paths), parent=parent,
                                        deleted=sorted(previous - paths.keys()), message=f"{package} {version}\n")
            shutil.rmtree(tree)
            sources[commit] = source.model_dump(mode="json", exclude_defaults=True)
            commits.append((commit, parent))
            parent, previous = commit, set(paths)
        return _mine(store.git_dir, commits[1:], tests, template, options, out_dir, env_dir,
                     lambda older: sources[older], progress)
