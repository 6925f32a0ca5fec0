"""Is a task's answer in sight? A file visible inside its sandbox with the bytes of a golden version.

The answer to a task is the golden version of each file its golden patch changes. If a file
with exactly those bytes is visible to the task's commands anywhere (another release of the
package in an interpreter's ``site-packages``, a vendored copy under ``/usr``, a second
checkout), ``diff`` hands the agent the golden patch and the task is no reward signal.

:func:`scan_for_answers` looks for such files *inside* the sandbox an untrusted episode of the
task gets, from a real workspace of the task, so it sees exactly what the agent would: a
confining sandbox shows only its allowlist, so the walk covers only that (about 120,000 files
and 2 s on a Debian host with CUDA and a cloud SDK under ``/usr``, once the page cache is warm).
Only files of a golden file's size are read and hashed (sha256); ``/proc``, ``/sys`` and
``/dev`` are skipped; symlinks are not followed (their targets are visited where visible);
empty golden files are not looked for (every empty file would match).

Example:
    >>> scan = scan_for_answers(task, BubblewrapSandbox())               # doctest: +SKIP
    >>> scan.copies                                                      # doctest: +SKIP
    []
"""

from __future__ import annotations

import json
import secrets
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from repogym_gym.baseline import Baseline, BaselineStore, copy_tree
from repogym_gym.gitstore import git_apply
from repogym_gym.grading import confined
from repogym_gym.pyenv import command_env
from repogym_gym.sandbox import Sandbox
from repogym_gym.task import Task
from repogym_gym.tree import scan_tree
from repogym_gym.workspace import Workspace, default_baseline_store

__all__ = ["SCANNER", "AnswerCopy", "AnswerScan", "golden_files", "scan_for_answers"]

#: Most copies a scan reports.
MAX_COPIES = 200

#: The walk run inside the sandbox: ``python -I -c SCANNER <targets JSON> <marker>``; prints
#: ``<marker>{"scanned": files, "found": [[golden path, visible path], ...]}`` last.
SCANNER = r"""
import hashlib, json, os, sys
targets, marker = json.loads(sys.argv[1]), sys.argv[2]
by_size = {}
for size, digest, rel in targets:
    by_size.setdefault(size, []).append((digest, rel))
found, scanned, stack = [], 0, ["/"]
while stack:
    try:
        entries = os.scandir(stack.pop())
    except OSError:
        continue
    with entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.path not in ("/proc", "/sys", "/dev"):
                        stack.append(entry.path)
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                scanned += 1
                wanted = by_size.get(entry.stat(follow_symlinks=False).st_size)
                if not wanted or len(found) >= %d:
                    continue
                digest = hashlib.sha256()
                with open(entry.path, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(chunk)
                found += [[rel, entry.path] for want, rel in wanted if want == digest.hexdigest()]
            except OSError:
                continue
print(marker + json.dumps({"scanned": scanned, "found": found}))
""" % MAX_COPIES


class AnswerCopy(BaseModel):
    """A visible file with the bytes of a golden version."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    golden: str = Field(description="The changed file, relative to the repository.")
    found: str = Field(description="The absolute path, inside the sandbox, of the file with its golden bytes.")


class AnswerScan(BaseModel):
    """What :func:`scan_for_answers` found.

    Attributes:
        sandbox: The sandbox the scan ran in.
        golden_files: Golden files looked for (non-empty ones the patch adds or changes).
        copies: Visible files holding a golden version (at most :data:`MAX_COPIES`).
        scanned: Regular files the walk saw.
        error: Why the scan did not complete (None when it did); copies are then incomplete.
        duration_s: Seconds the scan took, workspace included.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    sandbox: str
    golden_files: list[str]
    copies: list[AnswerCopy] = Field(default_factory=list)
    scanned: int = 0
    error: str | None = None
    duration_s: float = 0.0


def golden_files(task: Task, baseline: Baseline) -> dict[str, tuple[int, str]]:
    """The golden version of each file the golden patch adds or changes: path -> (bytes, sha256).

    Raises:
        TaskNotFoundError: when the task has no golden patch.
        PatchError: when the golden patch does not apply to the baseline.
    """
    patch = task.golden_patch()
    with tempfile.TemporaryDirectory(prefix=f"repogym-golden-{task.id}-") as tmp:
        tree = Path(tmp) / "repo"
        copy_tree(baseline.tree, tree)
        git_apply(patch, tree)
        after = scan_tree(tree)
    return {path: (entry.size, entry.digest) for path, entry in sorted(after.items())
            if entry.kind == "file" and entry.size > 0 and baseline.manifest.get(path) != entry}


def scan_for_answers(task: Task, sandbox: Sandbox, *, store: BaselineStore | None = None,
                     timeout_s: float = 600.0) -> AnswerScan:
    """Look for the golden versions of ``task``'s changed files among the files visible inside
    ``sandbox``, narrowed to the task as its episodes are (:func:`~repogym_gym.grading.confined`),
    from a fresh workspace of the task.

    Args:
        task: The task (it must have a golden patch).
        sandbox: The sandbox its untrusted episodes run in (bubblewrap, Docker).
        store: Baseline cache (default: the process-wide one).
        timeout_s: Seconds the walk may take.

    Returns:
        The scan; ``error`` set when the walk failed or timed out.

    Raises:
        TaskNotFoundError: when the task has no golden patch.
        PatchError: when the golden patch does not apply.
        SetupError, SourceError, WorkspaceError, SandboxError: when no workspace or sandbox
            can be made.
    """
    start = time.monotonic()
    store = store or default_baseline_store()
    workspace = Workspace.create(task, store=store)
    try:
        targets = golden_files(task, workspace.baseline)
        base = AnswerScan(sandbox=sandbox.name, golden_files=list(targets))
        if not targets:
            return base.model_copy(update={"duration_s": time.monotonic() - start})
        box = confined(sandbox, task, store.cache_dir)
        opener = getattr(box, "open", None)
        if opener is not None:
            opener(workspace.path)
        try:
            marker = f"@@repogym-scan-{secrets.token_hex(8)}@@"
            argv = ["python", "-I", "-c", SCANNER, json.dumps([[s, d, p] for p, (s, d) in targets.items()]), marker]
            result = box.run(argv, cwd=workspace.path, timeout_s=timeout_s, env=command_env(workspace.baseline.python_env),
                             output_limit_bytes=1_000_000)
        finally:
            release = getattr(box, "release", None)
            if release is not None:
                release(workspace.path)
    finally:
        workspace.close()
    elapsed = time.monotonic() - start
    _, _, tail = result.stdout.rpartition(marker)
    try:
        report = json.loads(tail) if marker in result.stdout else None
    except json.JSONDecodeError:
        report = None
    if result.timed_out or not isinstance(report, dict):
        why = f"timed out after {timeout_s:g} s" if result.timed_out else f"exit {result.exit_code}: {result.tail(400).strip()}"
        return base.model_copy(update={"error": f"the scan in the {sandbox.name} sandbox failed ({why})", "duration_s": elapsed})
    copies = [AnswerCopy(golden=g, found=f) for g, f in report.get("found", [])]
    return base.model_copy(update={"copies": copies, "scanned": int(report.get("scanned", 0)), "duration_s": elapsed})
