"""The golden patch's observations of a sealed task: recorded once in a run of their own, kept by the host.

The values a sealed test is about (:mod:`repogym_gym.graders.seal`) are taken from the golden patch
in the grader's sandbox, in a grader-owned copy of the baseline with the golden patch applied and
the hidden files injected, with the **golden form** of the sealed files (every assertion kept, so
the run also proves they hold). They are cached beside the baselines, 0600 in a 0700 folder::

    <cache>/sealed/<task-id>-<key[:24]>.json    {"version", "task", "tests": {id: [count, chained sha256]}}

The key covers the seal version, the task's fingerprint, the golden patch, the hidden files'
bytes, the sandbox's kind and image and the task's Python environment: the same values come out
of the same code run the same way. The cache is hidden from every confining sandbox (see
:func:`repogym_gym.grading.confined`), so no judged process reads what it will be compared with.
"""

from __future__ import annotations

import json
from pathlib import Path

from repogym_gym.baseline import copy_tree
from repogym_gym.errors import BrokenTaskError, PatchError
from repogym_gym.gitstore import git_apply
from repogym_gym.graders.base import GradingContext
from repogym_gym.graders.seal import SEAL_VERSION, Observations, Seal, cache_key, locked, store_json
from repogym_gym.graders.testrun import run_tests
from repogym_gym.grading_copy import inject_hidden
from repogym_gym.owners import owned_tempdir
from repogym_gym.safetext import short_text
from repogym_gym.tree import discard_tree
from repogym_gym.venvs import venv_environ

__all__ = ["GoldenObservations", "golden_observations"]

#: Test id -> the golden run's ``(count, chained sha256 hex)``.
GoldenObservations = dict[str, Observations]


def _cache_path(ctx: GradingContext, files: tuple[str, ...]) -> Path:
    task, baseline = ctx.task, ctx.baseline
    hidden = task.hidden_dir
    parts: list[str | bytes] = [task.id, baseline.fingerprint, task.golden_patch(), type(ctx.sandbox).__name__,
                                str(getattr(ctx.sandbox, "image", "") or ""), str(baseline.python_env or "")]
    for rel in files:
        parts += [rel, (hidden / rel).read_bytes() if hidden else b""]
    cache = baseline.tree.parents[2]  # <cache>/baselines/<task-fingerprint>/tree
    return cache / "sealed" / f"{task.id}-{cache_key(parts)[:24]}.json"


def _load(path: Path, ids: set[str]) -> GoldenObservations | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tests = {k: (int(count), str(digest)) for k, (count, digest) in data["tests"].items()}
        if data.get("version") != SEAL_VERSION or set(tests) != ids:
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return tests


def golden_observations(ctx: GradingContext, files: tuple[str, ...]) -> GoldenObservations:
    """The golden patch's observations for the scored tests of the sealed ``files`` (cached; one run per key).

    Raises:
        BrokenTaskError: when the golden patch does not apply, its run is void, or a sealed scored
            test does not pass with it (the task is broken, whatever the submission did).
    """
    spec = ctx.task.spec
    ids = {i for i in (*spec.tested().fail_to_pass, *spec.tested().pass_to_pass) if i.split("::", 1)[0] in files}
    path = _cache_path(ctx, files)
    with locked(path.with_suffix(".lock")):
        cached = _load(path, ids)
        if cached is not None:
            return cached
        root = owned_tempdir("repogym-golden-", ctx.task.id)  # swept if this process is killed meanwhile
        try:
            repo = root / "repo"
            copy_tree(ctx.baseline.tree, repo)
            try:
                git_apply(ctx.task.golden_patch(), repo)
            except PatchError as exc:
                raise BrokenTaskError(f"the golden patch of {ctx.task.id!r} does not apply: {exc}") from None
            inject_hidden(ctx.task, repo)
            run = run_tests(spec.tested(), repo=repo, scratch=root / "scratch", baseline_tree=ctx.baseline.tree,
                            sandbox=ctx.sandbox, timeout_s=spec.limits.test_timeout_s,
                            output_limit_bytes=spec.limits.output_limit_bytes,
                            extra_env=venv_environ(ctx.baseline.python_env), seal=Seal(files, golden=True))
        finally:
            discard_tree(root)
        if run.invalid is not None or run.report is None:
            raise BrokenTaskError(f"the golden patch's sealed run of {ctx.task.id!r} is void: {short_text(str(run.invalid), 300)}")
        failing = sorted(i for i in ids if run.report.status_of(i) != "passed")
        if failing:
            raise BrokenTaskError(f"with the golden patch, sealed tests of {ctx.task.id!r} do not pass: {failing[:5]}")
        observed = run.observed or {}
        tests: GoldenObservations = {i: observed.get(i, (0, "")) for i in sorted(ids)}
        store_json(path, {"version": SEAL_VERSION, "task": ctx.task.id, "tests": tests})
        return tests
