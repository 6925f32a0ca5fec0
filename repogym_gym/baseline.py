"""Post-setup baselines, built once per task and cached on disk.

A baseline is the task's source after ``repo.setup`` ran, with setup's build artefacts folded
in: a directory tree, its manifest (path -> hash) and a bare git store holding one commit of
it. Episodes copy the tree; graders copy it again for every grading run. Setup never reruns
for a task whose fingerprint (task.yaml + source files) has not changed.

Cache layout (``$REPOGYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/repogym_gym``, else
``~/.cache/repogym_gym``)::

    baselines/<task-id>-<fingerprint[:20]>/
        tree/            the post-setup work tree
        git/             bare store, ref refs/heads/baseline
        baseline.json    commit id and manifest
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from repogym_gym.errors import PatchError, SetupError, TaskError, WorkspaceError
from repogym_gym.gitstore import BASELINE_REF, GitStore, files_from_manifest, git_apply
from repogym_gym.owners import owned_tempdir, sweep_tempdirs
from repogym_gym.paths import (
    default_cache_dir,  # re-exported: the cache's public home was here
)
from repogym_gym.sandbox import LocalSandbox, Sandbox
from repogym_gym.sources import materialize
from repogym_gym.task import Task, read_patch
from repogym_gym.tree import Entry, Manifest, git_mode, scan_tree
from repogym_gym.venvs import ensure_venv, grader_venv, venv_environ

__all__ = ["Baseline", "BaselineStore", "copy_tree", "default_cache_dir"]

_FORMAT = 1
#: A baseline being built, beside the store's entries: ``<_STAGING><pid>.<start>-<entry>-XXXX`` (:mod:`owners`).
_STAGING = "repogym-staging-"


def copy_tree(src: Path, dest: Path) -> None:
    """Copy a tree keeping symlinks as symlinks and file modes (``dest`` must not exist)."""
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))


@dataclass(frozen=True)
class Baseline:
    """A task's cached post-setup snapshot.

    Attributes:
        task_id: The task's id.
        fingerprint: The task fingerprint the baseline was built from.
        tree: The post-setup work tree (read-only by convention: copy it, never edit it).
        store: Bare git store holding ``commit``.
        commit: The baseline commit id.
        manifest: Relative path -> Entry for every path of ``tree``.
        python_env: The Python environment the task's commands run in: its own (``repo.env``),
            else the grader's test environment (:func:`~repogym_gym.venvs.grader_venv`).
    """

    task_id: str
    fingerprint: str
    tree: Path
    store: GitStore
    commit: str
    manifest: Mapping[str, Entry] = field(repr=False)
    python_env: Path | None = None


def _manifest_to_json(manifest: Manifest) -> dict[str, list[object]]:
    return {p: [e.kind, e.mode, e.size, e.digest] for p, e in manifest.items()}


def _manifest_from_json(data: dict[str, list[object]]) -> Manifest:
    return {p: Entry(str(k), int(m), int(s), str(d))  # type: ignore[arg-type, call-overload]
            for p, (k, m, s, d) in data.items()}


class BaselineStore:
    """Builds and caches baselines.

    Args:
        cache_dir: Cache root (default :func:`default_cache_dir`).
        sandbox: Where setup commands run (default a LocalSandbox).

    Example:
        >>> store = BaselineStore()                    # doctest: +SKIP
        >>> baseline = store.get(task)                 # doctest: +SKIP
    """

    def __init__(self, cache_dir: Path | None = None, sandbox: Sandbox | None = None) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.sandbox = sandbox if sandbox is not None else LocalSandbox()
        self._memo: dict[tuple[str, str], Baseline] = {}
        self._lock = threading.Lock()

    def get(self, task: Task) -> Baseline:
        """The task's baseline, built (running setup) only if no valid cached one exists.

        Raises:
            SetupError: when a setup command fails or times out.
            WorkspaceError: when the source cannot be copied or the cache cannot be written.
        """
        key = (task.id, task.fingerprint)
        with self._lock:
            if key in self._memo:
                return self._memo[key]
            entry = self.cache_dir / "baselines" / f"{task.id}-{task.fingerprint[:20]}"
            entry.parent.mkdir(parents=True, exist_ok=True)
            with open(entry.parent / f"{entry.name}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                baseline = self._load(task, entry)
                if baseline is None:
                    shutil.rmtree(entry, ignore_errors=True)
                    baseline = self._build(task, entry)
            self._memo[key] = baseline
            return baseline

    def forget(self, task: Task) -> None:
        """Drop the task's baseline from this store's memory (not from disk): the next ``get`` loads
        and verifies the cached copy again, rebuilding it if it fails (e.g. it was removed under a
        live workspace)."""
        with self._lock:
            self._memo.pop((task.id, task.fingerprint), None)

    def invalidate(self, task: Task) -> None:
        """Forget and delete the task's cached baseline (it is rebuilt on the next ``get``)."""
        with self._lock:
            baseline = self._memo.pop((task.id, task.fingerprint), None)
            if baseline is not None:
                shutil.rmtree(baseline.tree.parent, ignore_errors=True)

    def _load(self, task: Task, entry: Path) -> Baseline | None:
        meta_path = entry / "baseline.json"
        try:
            meta = json.loads(meta_path.read_text())
            if meta.get("format") != _FORMAT or meta.get("fingerprint") != task.fingerprint:
                return None
            manifest = _manifest_from_json(meta["manifest"])
            if scan_tree(entry / "tree") != manifest:
                return None  # the cached tree was touched: rebuild rather than trust it
            store = GitStore(entry / "git")
            store.harden()
            store.verify_commit(meta["commit"])
            store.verify_objects()  # by hash: a corrupt object means a rebuild, never a wrong grade
        except (OSError, ValueError, KeyError, TypeError, WorkspaceError):
            return None
        return Baseline(task.id, task.fingerprint, entry / "tree", store, meta["commit"], manifest, self._python_env(task))

    def _build(self, task: Task, entry: Path) -> Baseline:
        # named for its process, so a build killed half-way is swept by the next one (issue 13)
        sweep_tempdirs((_STAGING,), entry.parent)
        staging = owned_tempdir(_STAGING, entry.name, entry.parent)
        try:
            tree = staging / "tree"
            try:
                materialize(task, tree, cache_dir=self.cache_dir)
            except OSError as exc:
                raise WorkspaceError(f"task {task.id!r}: cannot materialise its source into {tree}: {exc}") from None
            self._apply_patches(task, tree)
            env_dir = self._python_env(task)
            # setup is trusted and runs on the host: a task without an environment of its own keeps the host's
            self._run_setup(task, tree, env_dir if task.spec.repo.env is not None else None)
            manifest = scan_tree(tree)
            specials = sorted(p for p, e in manifest.items() if e.kind == "special")
            if specials:
                raise SetupError(f"task {task.id!r}: setup left special files (fifo/socket/device): {specials[:5]}")
            unreadable = sorted(f"{p} ({e.digest})" for p, e in manifest.items() if e.kind == "unreadable")
            if unreadable:
                raise SetupError(f"task {task.id!r}: setup left paths that cannot be read: {unreadable[:5]}")
            store = GitStore.create(staging / "git")
            commit = store.write_commit(BASELINE_REF, files_from_manifest(tree, {p: git_mode(e) for p, e in manifest.items()}))
            meta = {"format": _FORMAT, "task_id": task.id, "fingerprint": task.fingerprint, "commit": commit,
                    "manifest": _manifest_to_json(manifest)}
            (staging / "baseline.json").write_text(json.dumps(meta))
            os.replace(staging, entry)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return Baseline(task.id, task.fingerprint, entry / "tree", GitStore(entry / "git"), commit, manifest, env_dir)

    def _python_env(self, task: Task) -> Path:
        env = task.spec.repo.env
        return grader_venv(self.cache_dir) if env is None else ensure_venv(env.requirements, cache_dir=self.cache_dir, python=env.python)

    @staticmethod
    def _apply_patches(task: Task, tree: Path) -> None:
        for rel in task.spec.repo.patches:
            patch = task.root / rel
            if not patch.is_file():
                raise SetupError(f"task {task.id!r}: repo.patches names {rel!r}, which is not a file of the task")
            try:
                git_apply(read_patch(patch, what=f"task {task.id!r}: repo.patches {rel!r}"), tree)
            except TaskError as exc:
                raise SetupError(str(exc)) from None
            except PatchError as exc:
                raise SetupError(f"task {task.id!r}: repo.patches {rel!r} does not apply to the source: {exc}") from None

    def _run_setup(self, task: Task, tree: Path, env_dir: Path | None) -> None:
        limits = task.spec.limits
        for command in task.spec.repo.setup:
            result = self.sandbox.run(
                ["bash", "-c", command],
                cwd=tree,
                timeout_s=limits.setup_timeout_s,
                env=venv_environ(env_dir),
                output_limit_bytes=limits.output_limit_bytes,
            )
            if result.timed_out:
                raise SetupError(
                    f"task {task.id!r}: setup command {command!r} timed out after {limits.setup_timeout_s:g} s"
                )
            if result.exit_code != 0:
                raise SetupError(
                    f"task {task.id!r}: setup command {command!r} failed (exit {result.exit_code}):\n{result.tail()}"
                )
