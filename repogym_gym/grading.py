"""Grading a submission: the patch, carried into a fresh copy of the baseline, never the workspace.

``grade_workspace`` freezes the agent's workspace into a :class:`~repogym_gym.workspace.Snapshot`
(hashing every file; git-ignored ones included), then :func:`grade_snapshot` copies the cached
baseline into a grader-owned temporary directory, verifies the copy against the baseline
manifest, writes the carried bytes in, injects hidden tests and runs the task's graders there.
The agent's workspace and its processes never see that copy or the hidden tests.

``grade_patch`` is the pure-function form: reward = f(task, patch). ``run_visible_tests`` is the
agent's Test action: the same grading copy, settings, sentinel, canaries and tamper checks, with
the hidden tests left out and the planted tests taken out of what it returns.

Example:
    >>> result = grade_patch(task, task.golden_patch())     # doctest: +SKIP
    >>> result.summary()                                    # doctest: +SKIP
    'PASS 1.000 (constraints=1.00✓(gate), tests=1.00✓)'
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repogym_gym.baseline import Baseline, BaselineStore
from repogym_gym.changes import collect_changes
from repogym_gym.errors import (
    DiskFullError,
    PatchError,
    PathEscapeError,
    RepoGymError,
    SetupError,
    SourceError,
    WorkspaceError,
)
from repogym_gym.gitstore import disk_full_reason
from repogym_gym.graders import (
    AnswerGrader,
    CompositeGrader,
    ConstraintGrader,
    DiffSimilarityGrader,
    GradingContext,
    OptimizationGrader,
    PerfGrader,
    QualityGrader,
    TestGrader,
)
from repogym_gym.graders.composite import combine
from repogym_gym.graders.testrun import judge_dir, pycache_dir, run_tests
from repogym_gym.grading_copy import build_grading_copy
from repogym_gym.hiding import secret_paths
from repogym_gym.owners import TEMP_PREFIXES, owned_tempdir, sweep_tempdirs
from repogym_gym.paths import default_cache_dir
from repogym_gym.results import GradeComponent, GradeResult
from repogym_gym.sandbox import LocalSandbox, Sandbox, make_sandbox
from repogym_gym.spec import REWARD_KINDS
from repogym_gym.task import Task
from repogym_gym.tree import discard_tree
from repogym_gym.venvs import grader_venv_dir, venv_dir, venv_environ
from repogym_gym.workspace import Snapshot, Workspace

__all__ = [
    "VisibleTestRun", "confined", "default_grader", "grade_patch", "grade_snapshot", "grade_workspace", "reward_kind",
    "run_visible_tests", "task_python_env",
]


def confined(sandbox: Sandbox, task: Task, cache_dir: Path | None = None) -> Sandbox:
    """``sandbox`` narrowed to ``task``, when it can be (it has a ``scoped`` method, as bubblewrap does).

    A confining sandbox shows an allowlist (see :mod:`repogym_gym.sandbox.bwrap`); to it this
    adds, read-only, the task's own Python environment (or the grader's test environment, for a
    task without one) and the grader's bytecode cache, never the cache's other environments.
    In case any of them lies under a shown directory, it hides the task directory (hidden tests,
    golden patch), the suite around it, the git checkout holding either, a git source on this
    machine (see :func:`~repogym_gym.hiding.secret_paths`) and the cache (baselines, sources
    with their history). The task's ``limits`` apply, and in Docker its ``environment.image``. Grading copies
    hidden tests in before its commands run, so it needs none of the hidden originals. Other
    sandboxes are returned unchanged.

    Args:
        sandbox: The sandbox to narrow.
        task: The task whose secrets are hidden.
        cache_dir: The baseline cache (default :func:`~repogym_gym.paths.default_cache_dir`).
    """
    if not sandbox.confining:
        return sandbox
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    hide = [task.root, cache, *secret_paths(task)[1:]]
    image = {"image": task.spec.environment.image} if task.spec.environment.image and sandbox.runs_images else {}
    return sandbox.scoped(hide=hide, reveal=[task_python_env(task, cache), pycache_dir(), judge_dir()], limits=task.spec.limits, **image)


def task_python_env(task: Task, cache_dir: Path) -> Path:
    """Where ``task``'s commands find their Python environment under ``cache_dir`` (nothing is built):
    its own (``repo.env``), else the grader's test environment."""
    env = task.spec.repo.env
    return venv_dir(env.requirements, cache_dir=cache_dir, python=env.python) if env is not None else grader_venv_dir(cache_dir)


def reward_kind(task: Task, reward: str | None = None) -> str:
    """The reward kind an episode of ``task`` is graded by: ``reward``, else the task's default (the
    first of ``grading.rewards``). ``tests``, the task type's own pipeline, is always offered.

    Raises:
        ValueError: when the task does not offer ``reward`` (the message lists what it offers).
    """
    offered = task.spec.reward_kinds()
    if reward is None:
        return offered[0]
    if reward not in offered and not (reward == "tests" and task.spec.tests is not None):  # the type's own pipeline
        raise ValueError(f"reward={reward!r}: task {task.id!r} offers {offered} (task.yaml grading.rewards; "
                         f"kinds: {list(REWARD_KINDS)})")
    return reward


def default_grader(task: Task, reward: str | None = None) -> CompositeGrader:
    """The pipeline of the task's reward kind (:func:`reward_kind`).

    ``tests`` (the default) follows the task type: constraints, quality (if limits are set), tests,
    perf (perf tasks). Tests are the objective of bugfix/feature tasks and a gate elsewhere; quality
    is the objective of refactor tasks and a gate elsewhere. Quality is measured before the tests
    run: the code under test can rewrite the grading copy while they run (a module that leaves a
    short version of itself behind), so only what was carried counts. ``graded`` and ``binary`` are
    the same pipeline with the tests scored ``f2p_rate × p2p_rate`` or all-or-nothing;
    ``diff_similarity`` is constraints and the patch's resemblance to the golden patch, nothing run;
    ``answer`` is constraints and the answer file against the reference; ``optimization`` is constraints and
    the program's mean score on generated cases.

    Raises:
        ValueError: when the task does not offer ``reward``.
    """
    spec = task.spec
    kind = reward_kind(task, reward)
    graders: list = [ConstraintGrader()]
    if kind in ("diff_similarity", "answer", "optimization"):
        only = {"diff_similarity": DiffSimilarityGrader, "answer": AnswerGrader, "optimization": OptimizationGrader}[kind]()
        return CompositeGrader([*graders, only], pass_threshold=spec.grading.pass_threshold, reward_kind=kind)
    objectives = spec.objectives()
    if spec.constraints.has_quality_limits():
        graders.append(QualityGrader(role="objective" if "quality" in objectives else "gate"))
    scoring = {"graded": (True, False), "binary": (False, True)}.get(kind, (None, None))
    graders.append(TestGrader(role="objective" if "tests" in objectives else "gate", partial_credit=scoring[0],
                              require_all_pass_to_pass=scoring[1]))
    if spec.perf is not None:
        graders.append(PerfGrader())
    return CompositeGrader(graders, weights=spec.grading.weights, pass_threshold=spec.grading.pass_threshold,
                           reward_kind=kind)


def _failed(task: Task, name: str, message: str, start: float, *, infra: bool, snapshot: Snapshot | None = None,
            grader: CompositeGrader | None = None) -> GradeResult:
    comp = GradeComponent(name=name, role="gate", score=0.0, passed=False, messages=[message])
    return GradeResult(
        reward_kind=grader.reward_kind if grader is not None else task.spec.reward_kinds()[0],
        task_id=task.id, score=0.0, passed=False, components=[comp],
        patch=snapshot.patch if snapshot else "",
        files_changed=snapshot.changes.files_changed() if snapshot else [],
        lines_changed=snapshot.lines_changed if snapshot else 0,
        infra_error=message if infra else None, duration_s=time.monotonic() - start,
    )


def grade_snapshot(
    task: Task,
    baseline: Baseline,
    snapshot: Snapshot,
    *,
    sandbox: Sandbox | None = None,
    grader: CompositeGrader | None = None,
) -> GradeResult:
    """Grade a frozen submission in a fresh, grader-owned copy of the baseline.

    Never raises for anything the submission did; infrastructure failures come back as a
    0 score with ``infra_error`` set.
    """
    start = time.monotonic()
    sandbox = sandbox or LocalSandbox()
    grader = grader or default_grader(task)
    sweep_tempdirs(TEMP_PREFIXES)  # once per process: what killed gradings left (hidden tests) goes
    root = owned_tempdir("repogym-grade-", task.id)
    try:
        try:
            hidden = build_grading_copy(task, baseline, snapshot, root / "repo")
        except PathEscapeError as exc:  # the submission's own layout; never a reason to mask
            return _failed(task, "grading_copy", f"the submission cannot be carried: {exc}", start, infra=False,
                           snapshot=snapshot, grader=grader)
        except (OSError, RepoGymError) as exc:
            return _failed(task, "grading_copy", f"cannot build the grading copy: {exc}", start, infra=True,
                           snapshot=snapshot, grader=grader)
        (root / "scratch").mkdir()
        ctx = GradingContext(task, baseline, snapshot, root / "repo", root / "scratch", sandbox, hidden)
        components, infra_error = grader.grade(ctx)
    finally:
        discard_tree(root)  # the submission's code ran there: any depth, any name
    score, passed = combine(components, grader.pass_threshold)
    tests = next((c for c in components if c.name == "tests"), None)
    return GradeResult(
        task_id=task.id,
        score=0.0 if infra_error else score,
        passed=passed and not infra_error,
        components=components,
        patch=snapshot.patch,
        files_changed=snapshot.changes.files_changed(),
        lines_changed=snapshot.lines_changed,
        fail_to_pass=tests.details.get("fail_to_pass", {}) if tests else {},
        pass_to_pass=tests.details.get("pass_to_pass", {}) if tests else {},
        infra_error=infra_error,
        reward_kind=grader.reward_kind,
        duration_s=time.monotonic() - start,
    )


def grade_workspace(
    workspace: Workspace, *, sandbox: Sandbox | None = None, grader: CompositeGrader | None = None
) -> GradeResult:
    """Freeze ``workspace`` and grade the submission (see :func:`grade_snapshot`).

    Destroyed git metadata or a work tree that cannot be read fails closed: score 0 with a message
    (not an infrastructure error: the agent controls both).
    """
    start = time.monotonic()
    try:
        snapshot = workspace.snapshot()
    except (WorkspaceError, OSError) as exc:  # the agent's own tree (work tree or git metadata destroyed)...
        fault = workspace.baseline_fault()  # ...unless the host's cache or disk failed
        if fault is not None:
            workspace.forget_baseline()  # the next reset verifies the cache again (and rebuilds it)
        fault = fault or disk_full_reason(exc)
        if fault is not None:
            return _failed(workspace.task, "snapshot", f"cannot snapshot the workspace: {fault} ({exc}); rerun the "
                           "episode (the next reset rebuilds the baseline)", start, infra=True, grader=grader)
        return _failed(workspace.task, "snapshot", f"cannot snapshot the workspace: {exc}", start, infra=False, grader=grader)
    return grade_snapshot(workspace.task, workspace.baseline, snapshot, sandbox=sandbox, grader=grader)


def grade_patch(
    task: Task,
    patch: str,
    *,
    store: BaselineStore | None = None,
    sandbox: Sandbox | str | Mapping[str, Any] | None = None,
    grader: CompositeGrader | None = None,
) -> GradeResult:
    """Grade ``patch`` against ``task``: reward as a pure function of task and patch.

    ``sandbox`` is a Sandbox, or a name or config that :func:`~repogym_gym.sandbox.make_sandbox` builds
    (and this call closes); None grades in the local sandbox. A patch that does not apply scores 0 with
    git's reason (a ``patch`` component); a task whose setup fails, or a disk too full to apply the patch
    on, comes back with ``infra_error``.

    Raises:
        SandboxConfigError: for an unknown sandbox name or option; SandboxUnavailableError: for a
            sandbox this machine cannot run.
    """
    if isinstance(sandbox, str | Mapping):
        with closing(make_sandbox(sandbox)) as built:
            return grade_patch(task, patch, store=store, sandbox=built, grader=grader)
    start = time.monotonic()
    if sandbox is not None:
        sandbox = confined(sandbox, task, store.cache_dir if store is not None else None)
    try:
        workspace = Workspace.create(task, store=store)
    except (SetupError, SourceError, WorkspaceError) as exc:
        return _failed(task, "setup", str(exc), start, infra=True, grader=grader)
    with workspace:
        try:
            workspace.apply_patch(patch)
        except PatchError as exc:
            return _failed(task, "patch", str(exc), start, infra=False, grader=grader)
        except DiskFullError as exc:  # the host's disk, not the patch
            return _failed(task, "patch", str(exc), start, infra=True, grader=grader)
        return grade_workspace(workspace, sandbox=sandbox, grader=grader)


#: Characters of the visible test run's output kept (its tail).
VISIBLE_OUTPUT_CHARS = 6000


@dataclass(frozen=True)
class VisibleTestRun:
    """The agent's view of one visible test run, free of the tests the grader planted.

    Attributes:
        statuses: Node id -> "passed" / "failed" / "error" / "skipped" for the task's visible
            tests, in report order ({} when the run left no report).
        output: The tail of pytest's output (at most :data:`VISIBLE_OUTPUT_CHARS` characters), the
            planted tests' sections, summary lines and totals dropped, paths relative to the repository.
        rejected: Why changes of the workspace were not carried (grading would not carry them either).
        invalid: Why grading would not trust this run (None when it would).
        keys: The report's status under every key it registers (node ids and their aliases,
            see :meth:`~repogym_gym.junit.JUnitReport.status_of`), for :meth:`status_of`.
    """

    statuses: dict[str, str]
    output: str
    rejected: tuple[str, ...]
    invalid: str | None
    keys: dict[str, str] = field(default_factory=dict, repr=False)

    def status_of(self, test_id: str) -> str:
        """Status registered under ``test_id`` as grading reads it, or ``"missing"``."""
        return self.keys.get(test_id, "missing")

    @property
    def valid(self) -> bool:
        """Whether grading would count this run: a report, nothing invalid, nothing rejected."""
        return self.invalid is None and not self.rejected

    @property
    def failing(self) -> bool:
        """Whether the run is invalid or any visible test failed or errored."""
        return not self.valid or any(s in ("failed", "error") for s in self.statuses.values())


def run_visible_tests(workspace: Workspace, *, sandbox: Sandbox, timeout_s: float | None = None) -> VisibleTestRun:
    """Run ``workspace``'s visible tests as grading would, without the hidden tests.

    The changes are collected as for a submission and carried into a fresh grading copy (the
    workspace itself is never run); the task's test settings, the sentinel, the canaries and the
    runner's record checks all apply, so a change grading would reject, or a run it would not
    trust, shows here too.

    Args:
        workspace: The episode's workspace (read, never changed).
        sandbox: Where the tests run (already :func:`confined` by the caller).
        timeout_s: Wall-clock limit, seconds (default: the task's ``limits.test_timeout_s``).

    Raises:
        WorkspaceError: when the cached baseline no longer matches its manifest.
        PathEscapeError: when a carried path cannot be written inside the copy.
    """
    task, baseline = workspace.task, workspace.baseline
    spec = task.spec
    changes = collect_changes(workspace.path, baseline.tree, dict(baseline.manifest), workspace.policy)
    sweep_tempdirs(TEMP_PREFIXES)
    tmp = owned_tempdir("repogym-test-", task.id)
    try:
        copy = tmp / "repo"
        build_grading_copy(task, baseline, changes, copy, hidden=False)
        run = run_tests(spec.tested(), repo=copy, scratch=tmp / "scratch", baseline_tree=baseline.tree, sandbox=sandbox,
                        timeout_s=timeout_s if timeout_s is not None else spec.limits.test_timeout_s,
                        output_limit_bytes=spec.limits.output_limit_bytes, extra_env=venv_environ(baseline.python_env))
        output = run.task_output(VISIBLE_OUTPUT_CHARS).replace(str(copy) + "/", "")
    finally:
        discard_tree(tmp)  # the code under test ran there: any depth, any name
    invalid = run.invalid if run.report is not None else (run.invalid or "the run left no report")
    return VisibleTestRun(statuses=run.task_statuses(), output=output, rejected=tuple(r.reason for r in changes.rejected),
                          invalid=invalid, keys=dict(run.report.statuses) if run.report is not None else {})
