"""Is a task's answer in sight? A file visible inside its sandbox holding a golden version, or one of its hunks.

The answer to a task is the golden version of each file its golden patch changes. If a file
visible to the task's commands anywhere holds it (another release of the package in an
interpreter's ``site-packages``, a vendored copy under ``/usr``, a second checkout), ``diff``
hands the agent the golden patch and the task is no reward signal. Another release is rarely
the same bytes: it differs elsewhere in the file (jmespath 0.10.0's ``visitor.py`` in a cloud
SDK, more_itertools 8.8.0 vendored by setuptools), yet holds the changed lines as the golden
version has them. So a scan looks for two things:

- **copies**: a file, of any name, with the bytes of a golden file (size, then sha256);
- **hunks**: a file named like a changed file (``more.py``; for ``pkg/__init__.py`` also
  ``pkg.py``) holding one of the golden version's *hunks*: each changed region of the golden
  file with :data:`HUNK_CONTEXT` non-blank lines around it (as a unified diff shows it, at
  most :data:`MAX_HUNK_LINES` lines), compared line by line with surrounding whitespace and
  blank lines ignored. A hunk the task's own baseline file already holds is not looked for (it
  tells nothing apart), nor are files that are not UTF-8 text.

:func:`scan_for_answers` looks *inside* the sandbox an untrusted episode of the task gets, from
a real workspace of the task, so it sees exactly what the agent would: a confining sandbox shows
only its allowlist, so the walk covers only that (about 20,000 files and 1 s under bubblewrap on
a Debian host with CUDA and a cloud SDK under ``/usr``, page cache warm). Only files of a golden
file's size are hashed and only same-named files are read for hunks, after a search for the
hunk's longest line in their bytes; ``/proc``, ``/sys`` and ``/dev`` are skipped; symlinks are
not followed (their targets are visited where visible); empty golden files are not looked for.
Not looked at: code inside archives (wheels, zips), renamed near-copies.

Example:
    >>> scan = scan_for_answers(task, BubblewrapSandbox())               # doctest: +SKIP
    >>> scan.copies                                                      # doctest: +SKIP
    []
"""

from __future__ import annotations

import difflib
import json
import posixpath
import secrets
import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from repogym_gym.baseline import Baseline, BaselineStore, copy_tree
from repogym_gym.gitstore import git_apply
from repogym_gym.grading import confined
from repogym_gym.owners import owned_temporary
from repogym_gym.sandbox import Sandbox
from repogym_gym.task import Task
from repogym_gym.tree import scan_tree
from repogym_gym.venvs import venv_environ
from repogym_gym.workspace import Workspace, default_baseline_store

__all__ = ["HUNK_CONTEXT", "MAX_HUNK_LINES", "SCANNER", "AnswerCopy", "AnswerScan", "GoldenHunk", "golden_files",
           "golden_hunks", "scan_for_answers"]

#: Most copies a scan reports.
MAX_COPIES = 200
#: Unchanged non-blank lines kept on each side of a changed region of a golden file, in a hunk looked for.
HUNK_CONTEXT = 2
#: Most (non-blank) lines of a hunk looked for; a longer one is cut to its first lines.
MAX_HUNK_LINES = 40

#: The walk run inside the sandbox: ``python -I -c SCANNER <targets JSON file> <marker>``; prints
#: ``<marker>{"scanned": files, "found": [[golden path, visible path, what], ...]}`` last, where
#: ``what`` is ``"file"`` (the golden bytes) or ``"hunk:<line>"`` (the hunk at that golden line).
SCANNER = r"""
import hashlib, json, os, sys
own, marker = os.path.abspath(sys.argv[1]), sys.argv[2]
with open(own, encoding="utf-8") as fh:
    targets = json.load(fh)
by_size, by_name = {}, {}
for size, digest, rel in targets["files"]:
    by_size.setdefault(size, []).append((digest, rel))
for rel, names, line, needle, block in targets["hunks"]:
    for name in names:
        by_name.setdefault(name, []).append((rel, line, needle.encode(), "\n" + block + "\n"))

def normal(data):
    text = data.decode("utf-8", "replace")
    return "\n" + "\n".join(s for s in (x.strip() for x in text.splitlines()) if s) + "\n"

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
                if not entry.is_file(follow_symlinks=False) or entry.path == own:
                    continue
                scanned += 1
                size = entry.stat(follow_symlinks=False).st_size
                wanted, hunks = by_size.get(size), by_name.get(entry.name)
                if not (wanted or hunks) or len(found) >= %d or size > (32 << 20):
                    continue
                with open(entry.path, "rb") as fh:
                    data = fh.read()
                if wanted:
                    digest = hashlib.sha256(data).hexdigest()
                    found += [[rel, entry.path, "file"] for want, rel in wanted if want == digest]
                if hunks:
                    text = None
                    for rel, line, needle, block in hunks:
                        if needle in data:
                            text = normal(data) if text is None else text
                            if block in text:
                                found.append([rel, entry.path, "hunk:%%d" %% line])
            except OSError:
                continue
print(marker + json.dumps({"scanned": scanned, "found": found}))
""" % MAX_COPIES


class AnswerCopy(BaseModel):
    """A visible file holding a golden version, or a hunk of one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    golden: str = Field(description="The changed file, relative to the repository.")
    found: str = Field(description="The absolute path, inside the sandbox, of the file holding it.")
    kind: Literal["file", "hunk"] = Field("file", description="'file': the golden bytes; 'hunk': a golden hunk.")
    line: int | None = Field(None, description="For a hunk, its first line in the golden file (1-based); else None.")

    def describe(self) -> str:
        """``'pkg/mod.py at /usr/.../mod.py'``, with ``' (hunk at line N)'`` for a hunk."""
        return f"{self.golden} at {self.found}" + (f" (hunk at line {self.line})" if self.kind == "hunk" else "")


class GoldenHunk(BaseModel):
    """A changed region of a golden file, with its context, as a scan looks for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(description="The changed file, relative to the repository.")
    line: int = Field(description="First line of the hunk in the golden file (1-based).")
    lines: tuple[str, ...] = Field(description="Its non-blank lines, stripped of surrounding whitespace.")


class AnswerScan(BaseModel):
    """What :func:`scan_for_answers` found.

    Attributes:
        sandbox: The sandbox the scan ran in.
        golden_files: Golden files looked for (non-empty ones the patch adds or changes).
        hunks: Golden hunks looked for.
        copies: Visible files holding a golden version or hunk (at most :data:`MAX_COPIES`).
        scanned: Regular files the walk saw.
        error: Why the scan did not complete (None when it did); copies are then incomplete.
        duration_s: Seconds the scan took, workspace included.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    sandbox: str
    golden_files: list[str]
    hunks: int = 0
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
    return {path: (size, digest) for path, (size, digest, _) in _golden(task, baseline).items()}


def _golden(task: Task, baseline: Baseline) -> dict[str, tuple[int, str, bytes]]:
    patch = task.golden_patch()
    with owned_temporary("repogym-golden-", task.id) as tmp:
        tree = tmp / "repo"
        copy_tree(baseline.tree, tree)
        git_apply(patch, tree)
        after = scan_tree(tree)
        return {path: (entry.size, entry.digest, (tree / path).read_bytes()) for path, entry in sorted(after.items())
                if entry.kind == "file" and entry.size > 0 and baseline.manifest.get(path) != entry}


def _normal(text: str) -> list[str]:
    return [s for s in (line.strip() for line in text.splitlines()) if s]


def golden_hunks(task: Task, baseline: Baseline) -> list[GoldenHunk]:
    """The hunks of the golden version of each changed text file (see the module docstring).

    Raises:
        TaskNotFoundError: when the task has no golden patch.
        PatchError: when the golden patch does not apply to the baseline.
    """
    return _hunks(_golden(task, baseline), baseline)


def _hunks(golden: dict[str, tuple[int, str, bytes]], baseline: Baseline) -> list[GoldenHunk]:
    hunks = []
    for path, (_, _, data) in golden.items():
        try:
            new = data.decode("utf-8").splitlines()
            old_file = baseline.tree / path
            old = old_file.read_bytes().decode("utf-8").splitlines() if baseline.manifest.get(path) else []
        except (OSError, UnicodeDecodeError):
            continue  # binary: the whole-file comparison is all there is
        held = "\n" + "\n".join(_normal("\n".join(old))) + "\n"
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for group in matcher.get_grouped_opcodes(HUNK_CONTEXT):
            changed = [op for op in group if op[0] != "equal"]
            start, end = _widen(new, changed[0][3], changed[-1][4])
            lines = tuple(_normal("\n".join(new[start:end])))[:MAX_HUNK_LINES]
            if lines and "\n" + "\n".join(lines) + "\n" not in held:
                hunks.append(GoldenHunk(path=path, line=start + 1, lines=lines))
    return hunks


def _widen(lines: list[str], start: int, end: int) -> tuple[int, int]:
    """``lines[start:end]`` widened by :data:`HUNK_CONTEXT` non-blank lines on each side (blank
    lines tell nothing apart), as far as the file goes."""
    for _ in range(HUNK_CONTEXT):
        while start > 0 and not lines[start - 1].strip():
            start -= 1
        start = max(0, start - 1)
    for _ in range(HUNK_CONTEXT):
        while end < len(lines) and not lines[end].strip():
            end += 1
        end = min(len(lines), end + 1)
    return start, end


def _names(path: str) -> list[str]:
    """The file names a copy of ``path`` goes by: its own, and ``pkg.py`` for ``pkg/__init__.py``."""
    name, parent = posixpath.basename(path), posixpath.basename(posixpath.dirname(path))
    return [name, f"{parent}.py"] if name == "__init__.py" and parent else [name]


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
        golden = _golden(task, workspace.baseline)
        hunks = _hunks(golden, workspace.baseline)
        base = AnswerScan(sandbox=sandbox.name, golden_files=list(golden), hunks=len(hunks))
        if not golden:
            return base.model_copy(update={"duration_s": time.monotonic() - start})
        token = secrets.token_hex(8)
        wanted = {"files": [[size, digest, p] for p, (size, digest, _) in golden.items()],
                  "hunks": [[h.path, _names(h.path), h.line, max(h.lines, key=len), "\n".join(h.lines)] for h in hunks]}
        targets = f".repogym-scan-{token}.json"  # in the scan's own workspace (too long for argv), skipped by the walk
        (workspace.path / targets).write_text(json.dumps(wanted), encoding="utf-8")
        box = confined(sandbox, task, store.cache_dir)
        opener = getattr(box, "open", None)
        if opener is not None:
            opener(workspace.path)
        try:
            marker = f"@@repogym-scan-{token}@@"
            argv = ["python", "-I", "-c", SCANNER, targets, marker]
            result = box.run(argv, cwd=workspace.path, timeout_s=timeout_s, env=venv_environ(workspace.baseline.python_env),
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
    copies = [AnswerCopy(golden=g, found=f, kind="file") if what == "file" else
              AnswerCopy(golden=g, found=f, kind="hunk", line=int(what.split(":")[1])) for g, f, what in report.get("found", [])]
    return base.model_copy(update={"copies": copies, "scanned": int(report.get("scanned", 0)), "duration_s": elapsed})
