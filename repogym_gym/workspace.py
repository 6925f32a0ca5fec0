"""An episode's workspace: a copy of the task's cached baseline that the agent may change.

Layout of one workspace (a fresh temporary directory)::

    <root>/repo/   the work tree: the only place the agent works (no .git inside)
    <root>/git/    bare git store borrowing the baseline's objects; outside the work tree and
                   passed to git explicitly, so deleting or rewriting repo/.git blinds nothing

The workspace history holds only the baseline commit: no source history, remotes, tags or
reflog. If ``<root>/git`` is destroyed, :meth:`Workspace.snapshot` raises
:class:`~repogym_gym.errors.GitMetadataError` and grading fails closed (score 0).

Example:
    >>> with Workspace.create(task) as ws:          # doctest: +SKIP
    ...     ws.write("pkg/mod.py", "x = 1\\n")
    ...     print(ws.diff())
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from repogym_gym.baseline import Baseline, BaselineStore, copy_tree
from repogym_gym.changes import CarryPolicy, ChangeSet, collect_changes
from repogym_gym.errors import GitMetadataError, PathEscapeError, WorkspaceError
from repogym_gym.gitstore import BASELINE_REF, CANDIDATE_REF, GitStore, NumStat, git_apply
from repogym_gym.owners import TEMP_PREFIXES, owned_tempdir, sweep_tempdirs
from repogym_gym.task import Task
from repogym_gym.tree import check_parents, diff_manifests, force_rmtree, remove_path, scan_tree, write_file_safely

__all__ = ["MAX_PATH_PARTS", "Snapshot", "Workspace", "default_baseline_store"]

#: How many parts (directories and the file) a path in the work tree may have (Linux's PATH_MAX of
#: 4,096 bytes allows 2,048; a 2,000-part Write crashed ``Path.mkdir(parents=True)`` with a RecursionError).
MAX_PATH_PARTS = 256

_DEFAULT_STORES: dict[Path | None, BaselineStore] = {}


def default_baseline_store() -> BaselineStore:
    """The process-wide BaselineStore for the default cache directory."""
    return _DEFAULT_STORES.setdefault(None, BaselineStore())


@dataclass(frozen=True)
class Snapshot:
    """A submission frozen at one instant: its classified changes and its patch.

    Attributes:
        changes: What is carried, rejected and ignored.
        patch: git-format diff of the carried changes against the baseline ("" when none).
        numstat: Added/removed lines per carried path.
    """

    changes: ChangeSet
    patch: str
    numstat: tuple[NumStat, ...]

    @property
    def lines_changed(self) -> int:
        """Added plus removed lines over carried text files."""
        return sum((s.added or 0) + (s.removed or 0) for s in self.numstat)


class Workspace:
    """A task materialised in a temporary directory.

    Use :meth:`create`; close it (or use it as a context manager) to remove everything it made.

    Attributes:
        task: The task.
        baseline: The cached baseline it was copied from.
        root: The directory holding ``repo/`` and ``git/``.
        path: The work tree (``root/repo``).
    """

    def __init__(self, task: Task, baseline: Baseline, root: Path, store: BaselineStore | None = None) -> None:
        self.task = task
        self.baseline = baseline
        self.store = store
        self.root = root
        self.path = root / "repo"
        self.git = GitStore(root / "git", alternate=baseline.store.git_dir)
        self.policy = CarryPolicy.for_task(task)
        self._closed = False

    @classmethod
    def create(
        cls, task: Task, *, store: BaselineStore | None = None, parent_dir: str | os.PathLike[str] | None = None
    ) -> Workspace:
        """Copy the task's baseline (building it once if needed) into a new workspace.

        Args:
            task: The task.
            store: Where baselines are cached (default: the process-wide store).
            parent_dir: Where to make the workspace (default: the system temp directory).

        The copy is checked against the baseline manifest; a cached baseline that was modified
        is rebuilt once (running setup again) rather than handed out.

        Raises:
            SetupError: when building the baseline ran setup and it failed.
            WorkspaceError: when the copy or the git store cannot be made.
        """
        store = store or default_baseline_store()
        baseline = store.get(task)
        if parent_dir is None:
            sweep_tempdirs(TEMP_PREFIXES)  # what killed processes left, once per process
        root = owned_tempdir("repogym-workspace-", task.id, parent_dir)
        try:
            copy_tree(baseline.tree, root / "repo")
            if scan_tree(root / "repo") != dict(baseline.manifest):
                # The cache was modified since it was built: rebuild it once, never hand it out.
                store.invalidate(task)
                baseline = store.get(task)
                shutil.rmtree(root / "repo")
                copy_tree(baseline.tree, root / "repo")
                if scan_tree(root / "repo") != dict(baseline.manifest):
                    raise WorkspaceError(f"the baseline of {task.id!r} does not match its manifest after a rebuild")
            git = GitStore.create(root / "git", alternate=baseline.store.git_dir)
            git.git("update-ref", BASELINE_REF, baseline.commit)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return cls(task, baseline, root, store)

    def fork(self, parent_dir: str | os.PathLike[str] | None = None) -> Workspace:
        """A new workspace whose work tree is a copy of this one's, as it is now, with its own git store.

        The copy is ``cp -a`` (GNU coreutils): modes, owners, symlinks, hard links and special files
        (a FIFO is made, never read) as they are, trees deeper than ``PATH_MAX`` included. Nothing
        bounds its size but the disk: the work tree is already bounded by the task's disk limit.

        Raises:
            WorkspaceError: when the copy or the git store cannot be made (a full disk, say).
        """
        root = owned_tempdir("repogym-workspace-", self.task.id, parent_dir)
        try:
            copied = subprocess.run(["cp", "-a", "--", str(self.path), str(root / "repo")], capture_output=True,
                                    text=True, errors="replace", check=False)
            if copied.returncode != 0:
                raise WorkspaceError(f"cannot fork workspace {self.path}: {copied.stderr.strip()[-500:]}")
            git = GitStore.create(root / "git", alternate=self.baseline.store.git_dir)
            git.git("update-ref", BASELINE_REF, self.baseline.commit)
        except BaseException:
            force_rmtree(root)
            raise
        return type(self)(self.task, self.baseline, root, self.store)

    # -- files -------------------------------------------------------------------------------

    def resolve(self, rel: str) -> Path:
        """Absolute path of ``rel`` inside the work tree, refusing anything that leaves it.

        Raises:
            PathEscapeError: for absolute paths, ``..`` escapes, or symlinks (anywhere on the
                path) that resolve outside the work tree.
        """
        if not rel or "\0" in rel:
            raise PathEscapeError(f"path {rel!r} is empty or contains a NUL byte")
        candidate = Path(rel)
        if candidate.is_absolute():
            raise PathEscapeError(f"path {rel!r} is absolute; give a path relative to the repository")
        if len(candidate.parts) > MAX_PATH_PARTS:  # Path.mkdir(parents=True) recursed once per missing part
            raise PathEscapeError(f"path {rel[:80]!r}... has {len(candidate.parts):,} parts, over the {MAX_PATH_PARTS} a "
                                  "path in the repository may have")
        full = self.path / candidate
        real_root = self.path.resolve()
        try:
            real = full.resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop
            raise PathEscapeError(f"path {rel!r} cannot be resolved: {exc}") from None
        if real != real_root and real_root not in real.parents:
            raise PathEscapeError(f"path {rel!r} resolves outside the repository")
        return full

    def _open_file(self, rel: str) -> BinaryIO:
        """``rel`` opened for reading; a fifo, device or directory is refused, never waited on."""
        path = self.resolve(rel)
        try:
            fh = open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb")  # noqa: SIM115 - returned to the caller
        except (FileNotFoundError, IsADirectoryError):
            raise FileNotFoundError(f"no file {rel!r} in the repository") from None
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            fh.close()
            raise FileNotFoundError(f"no file {rel!r} in the repository (it is not a regular file)")
        return fh

    def read(self, rel: str, *, max_bytes: int | None = None, errors: str = "replace") -> str:
        """Text of a file (utf-8, undecodable bytes replaced).

        With ``max_bytes``, a larger file gives its first and last ``max_bytes // 2`` bytes around
        a marker, and only those are read (the agent controls file sizes: a 1 GB file must not
        cost this process 2 GB).

        Args:
            rel: Path relative to the work tree.
            max_bytes: Most bytes read (None: the whole file).
            errors: How undecodable bytes are decoded (``"strict"`` raises instead).

        Raises:
            PathEscapeError: see :meth:`resolve`.
            FileNotFoundError: when there is no such regular file.
            UnicodeDecodeError: with ``errors="strict"``, when the file is not UTF-8.
        """
        with self._open_file(rel) as fh:
            size = os.fstat(fh.fileno()).st_size
            if max_bytes is None or size <= max_bytes:
                return fh.read().decode("utf-8", errors=errors)
            half = max(1, max_bytes // 2)
            head = fh.read(half)
            fh.seek(size - half)
            tail = fh.read(half)
        marker = f"\n[... {size - 2 * half} bytes of {rel} not shown ...]\n"
        return head.decode("utf-8", errors=errors) + marker + tail.decode("utf-8", errors=errors)

    def size(self, rel: str) -> int:
        """Bytes of a file of the work tree.

        Raises:
            PathEscapeError: see :meth:`resolve`.
            FileNotFoundError: when there is no such regular file.
        """
        with self._open_file(rel) as fh:
            return os.fstat(fh.fileno()).st_size

    def write(self, rel: str, content: str | bytes) -> None:
        """Create or overwrite a file (parents created), never writing through a symlink, and never
        in place of a directory (a Write to ``pagekit`` deleted the whole package).

        Raises:
            PathEscapeError: see :meth:`resolve`.
            IsADirectoryError: when a directory (not a symlink to one) stands at ``rel``.
        """
        self.resolve(rel)
        try:
            if stat.S_ISDIR(os.lstat(self.path / rel).st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory; write a file inside it (or remove the directory "
                                        "with a command first)", rel)
        except FileNotFoundError:
            pass
        data = content.encode("utf-8") if isinstance(content, str) else content
        write_file_safely(self.path, Path(rel).as_posix(), data)

    def list_files(self) -> list[str]:
        """Relative paths of every file and symlink in the work tree, sorted, caches excluded."""
        return sorted(p for p in scan_tree(self.path, max_hashed_bytes=0) if not self.policy.is_cache(p))

    # -- changes -----------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Freeze the submission: hash the tree, classify changes, build the patch.

        Raises:
            GitMetadataError: when the workspace's git metadata is gone or broken (fail closed).
        """
        self.git.harden()
        self.git.verify_commit(self.baseline.commit)
        changes = collect_changes(self.path, self.baseline.tree, dict(self.baseline.manifest), self.policy)
        if not changes.carried:
            return Snapshot(changes, "", ())
        files = [(c.path, c.git_mode, c.data or b"") for c in changes.carried if c.status != "deleted"]
        deleted = [c.path for c in changes.carried if c.status == "deleted"]
        candidate = self.git.write_commit(
            CANDIDATE_REF, files, parent=self.baseline.commit, deleted=deleted, message="candidate"
        )
        patch, numstat = self.git.diff(self.baseline.commit, candidate)
        self.git.git("update-ref", "-d", CANDIDATE_REF)  # the history keeps only the baseline commit
        return Snapshot(changes, patch, tuple(numstat))

    def baseline_fault(self) -> str | None:
        """Why the cached baseline this workspace borrows from can no longer be used, or None (no side effect).

        The workspace's git store reads the baseline's objects through git alternates and its
        changes are classified against the baseline's tree, so a cache removed or damaged while
        the episode runs (another process clearing ``<cache>/baselines``, a disk fault flipping a byte of
        an object, found by ``git fsck``, about 40 ms, run only here, after a snapshot failed) makes the
        snapshot fail for a reason the agent had no part in: grading reports it as an
        infrastructure error, never as the submission's 0 (and calls :meth:`forget_baseline`).
        Under bubblewrap and Docker the agent cannot see the cache; under LocalSandbox (a
        guardrail) it could remove it itself.
        """
        store = self.baseline.store
        if not self.baseline.tree.is_dir():
            return f"the cached baseline tree {self.baseline.tree} of task {self.task.id!r} is gone"
        if not (store.git_dir / "objects").is_dir() or not (store.git_dir / "HEAD").is_file():
            return f"the cached baseline git store {store.git_dir} of task {self.task.id!r} is gone or incomplete"
        try:
            store.verify_commit(self.baseline.commit)
        except GitMetadataError:
            return (f"the cached baseline git store {store.git_dir} of task {self.task.id!r} no longer holds "
                    f"commit {self.baseline.commit[:12]}")
        try:  # a byte flipped in an object after the store verified it (issue 13's audit: a live env's later
            store.verify_objects()  # episodes scored the fixed bug 0 as the agent's fault, and never rebuilt)
        except GitMetadataError as exc:
            return f"the cached baseline git store {store.git_dir} of task {self.task.id!r} holds a corrupt object ({exc})"
        return None

    def forget_baseline(self) -> None:
        """Make the store this workspace came from verify (and rebuild) the cached baseline at the next reset."""
        if self.store is not None:
            self.store.forget(self.task)

    def diff(self) -> str:
        """The carried changes as a git-format patch against the baseline."""
        return self.snapshot().patch

    def changed_paths(self) -> list[str]:
        """Paths that differ from the baseline (caches included), sorted; cheap (no git)."""
        return [c.path for c in diff_manifests(self.baseline.manifest, scan_tree(self.path))]

    def apply_patch(self, patch: str) -> None:
        """Apply a patch to the work tree, all or nothing.

        Raises:
            PatchError: when the text is not a patch or does not apply (git's reason quoted).
            DiskFullError: when the disk is too full to write it (an infrastructure fault).
        """
        git_apply(patch, self.path)

    def restore(self, paths: list[str]) -> None:
        """Put ``paths`` back to their baseline content (removing those the baseline lacks).

        Raises:
            PathEscapeError: for a path with ``..``, an absolute path, or one whose parent
                directory is a symlink or a file (nothing outside the work tree is touched).
        """
        for rel in paths:
            entry = self.baseline.manifest.get(rel)
            target = check_parents(self.path, rel)  # no '..', no symlinked parent
            if entry is None:
                remove_path(target)
            elif entry.kind == "symlink":
                remove_path(target)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.readlink(self.baseline.tree / rel), target)
            else:
                write_file_safely(self.path, rel, (self.baseline.tree / rel).read_bytes(), entry.mode)

    def reset(self) -> None:
        """Make the work tree equal to the baseline again (every change and cache removed)."""
        try:
            force_rmtree(self.path)
            copy_tree(self.baseline.tree, self.path)
        except OSError as exc:
            raise WorkspaceError(f"cannot reset workspace {self.path}: {exc}") from None

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Remove the workspace directory and everything in it; idempotent."""
        if self._closed:
            return
        self._closed = True
        force_rmtree(self.root)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
