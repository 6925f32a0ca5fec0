"""Git, the one boundary: a hardened runner, a tree exporter, and a content store driven by plumbing.

Every git command of the package runs through :func:`run_git`: system and global config off,
hooks, fsmonitor, attributes, external diffs and the ``ext::`` transport off
(:data:`GIT_HARDENING`), a small environment, its own process group, a timeout. Git hardening is
a security property (an agent controls its work tree, a task author its source repository), so
it is written here once.

An agent controls its work tree, so git never runs with the work tree as its work tree while
grading: blobs enter through ``git fast-import`` (no attribute filters, no hooks, any path),
diffs come from ``git diff-tree`` in a bare repository (:class:`GitStore`), and the repository's
own config, hooks and info/ are rewritten to known contents first. :func:`export_tree` is the one
way a commit becomes a directory (task sources, mined tasks).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from repogym_gym.errors import DiskFullError, GitCommandError, GitMetadataError, PatchError
from repogym_gym.sandbox.process import run_captured
from repogym_gym.tree import GIT_MODE_SYMLINK, remove_path, write_file_safely

__all__ = [
    "BASELINE_REF",
    "CANDIDATE_REF",
    "GIT_HARDENING",
    "GitCommandError",
    "GitStore",
    "NumStat",
    "disk_full_reason",
    "export_tree",
    "files_from_manifest",
    "git_apply",
    "has_commit",
    "run_git",
]

_TIMEOUT_S = 120.0
_IDENT = "repogym <repogym@localhost> 0 +0000"
_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tlogAllRefUpdates = false\n"
#: ``-c`` settings every git call runs with: no hooks, fsmonitor, attribute or exclude files, external
#: diff or signing; paths unquoted; no automatic gc; no ``ext::`` transport (it runs a command).
GIT_HARDENING = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "core.autocrlf=false",
    "core.quotePath=false",
    "core.logAllRefUpdates=false",
    "gc.auto=0",
    "diff.external=",
    "commit.gpgSign=false",
    "protocol.ext.allow=never",
)
#: Variables passed on to git commands that reach the network (certificates, ssh agent, proxies).
_NETWORK_ENV_NAMES = frozenset({
    "SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO", "SSH_AUTH_SOCK", "HTTP_PROXY", "HTTPS_PROXY",
    "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
})
#: Attributes that make ``git archive`` drop (export-ignore) or rewrite (export-subst) files.
_NO_EXPORT_ATTRIBUTES = "* -export-ignore -export-subst\n"
BASELINE_REF = "refs/heads/baseline"
CANDIDATE_REF = "refs/heads/candidate"


def _git_env(network: bool) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "LANG": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
    }
    if network:
        env |= {k: v for k, v in os.environ.items() if k in _NETWORK_ENV_NAMES}
        env["GIT_ALLOW_PROTOCOL"] = "file:git:http:https:ssh"
    return env


def run_git(args: Sequence[str], *, git_dir: Path | None, cwd: Path, stdin: bytes | None = None,
            timeout_s: float = _TIMEOUT_S, network: bool = False) -> bytes:
    """Run ``git <GIT_HARDENING> [--git-dir=git_dir] <args>`` in ``cwd``; its standard output.

    Args:
        args: git's arguments (the subcommand first).
        git_dir: The repository, or None for commands that take none (``init``, ``clone``).
        cwd: Working directory of the process.
        stdin: Bytes fed to git's standard input (None: no input).
        timeout_s: Seconds before the process group is killed.
        network: Pass certificate, ssh-agent and proxy variables on and allow only the
            file, git, http(s) and ssh transports (``clone``, ``fetch``).

    Raises:
        GitCommandError: git exited non-zero (its stderr kept).
        GitMetadataError: git is not installed, or timed out.
    """
    argv = ["git", *(arg for setting in GIT_HARDENING for arg in ("-c", setting))]
    if git_dir is not None:
        argv.append(f"--git-dir={git_dir}")
    try:
        code, out, err = run_captured([*argv, *args], cwd=cwd, env=_git_env(network), timeout_s=timeout_s, stdin=stdin)
    except FileNotFoundError:
        raise GitMetadataError("the git program is not installed (or not on PATH); install git") from None
    except subprocess.TimeoutExpired:
        raise GitMetadataError(f"git {args[0]} timed out after {timeout_s:.0f} s") from None
    if code != 0:
        raise GitCommandError(args[0], code, err.decode("utf-8", "replace").strip())
    return out


def has_commit(git_dir: Path, commit: str) -> bool:
    """True if ``commit`` names a commit in the repository at ``git_dir``.

    Raises:
        GitMetadataError: git is not installed, or timed out.
    """
    try:
        run_git(["cat-file", "-e", f"{commit}^{{commit}}"], git_dir=git_dir, cwd=git_dir)
    except GitCommandError:
        return False
    return True


def export_tree(git_dir: Path, commit: str, dest: Path) -> None:
    """Write exactly ``commit``'s tree to the new directory ``dest`` (no ``.git``).

    In-tree ``.gitattributes`` may not drop (export-ignore) or rewrite (export-subst) files; the
    archive is unpacked with tarfile's ``data`` filter and renamed into place, so ``dest`` holds the
    whole tree or does not exist.

    Raises:
        GitCommandError: ``commit`` is not in the repository.
        GitMetadataError: the archive cannot be written or unpacked (the reason quoted).
    """
    (git_dir / "info").mkdir(exist_ok=True)
    write_file_safely(git_dir, "info/attributes", _NO_EXPORT_ATTRIBUTES.encode())
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.git-", dir=dest.parent))
    try:
        archive = staging / "tree.tar"
        run_git(["archive", "--format=tar", f"--output={archive}", commit], git_dir=git_dir, cwd=git_dir)
        (staging / "tree").mkdir()
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(staging / "tree", filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise GitMetadataError(f"cannot unpack commit {commit}'s tree: {exc}") from None
        os.rename(staging / "tree", dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _path_bytes(path: str) -> bytes:
    """A path as fast-import wants it: the file system's bytes, C-quoted when needed."""
    raw = os.fsencode(path)
    if not any(ch in raw for ch in b'"\\\n') and not raw.startswith(b'"'):
        return raw
    return b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n") + b'"'


@dataclass(frozen=True)
class NumStat:
    """Added and removed lines of one path (None for binary files)."""

    path: str
    added: int | None
    removed: int | None


class GitStore:
    """A bare repository at ``git_dir`` whose ``baseline`` ref is the task's baseline commit.

    Args:
        git_dir: The repository directory (outside any work tree).
        alternate: Another store whose objects this one borrows (git alternates), or None.
    """

    def __init__(self, git_dir: Path, alternate: Path | None = None) -> None:
        self.git_dir = Path(git_dir)
        self.alternate = alternate

    @classmethod
    def create(cls, git_dir: Path, *, alternate: Path | None = None) -> GitStore:
        """Initialise a bare repository; ``alternate`` borrows another store's objects (no copy).

        Raises:
            GitMetadataError: when git fails.
        """
        git_dir.mkdir(parents=True, exist_ok=True)
        run_git(["init", "--bare", "-q", str(git_dir)], git_dir=None, cwd=git_dir)
        store = cls(git_dir, alternate)
        store.harden()
        return store

    def harden(self) -> None:
        """Rewrite config; drop hooks/, info/ (exclude, attributes, grafts), replace refs, shallow and
        commondir; re-point alternates. Nothing planted in the store runs or rewrites history.

        Raises:
            GitMetadataError: when the repository is gone.
        """
        if not (self.git_dir / "objects").is_dir() or not (self.git_dir / "HEAD").is_file():
            raise GitMetadataError(f"git metadata at {self.git_dir} is missing or incomplete; grading fails closed")
        write_file_safely(self.git_dir, "config", _CONFIG.encode())  # never through a planted symlink or fifo
        for name in ("hooks", "info", "refs/replace", "shallow", "commondir", "objects/info/http-alternates"):
            remove_path(self.git_dir / name)  # whatever was planted there: any depth, any name
        if self.alternate is not None:
            write_file_safely(self.git_dir, "objects/info/alternates", os.fsencode(self.alternate / "objects") + b"\n")

    def git(self, *args: str, stdin: bytes | None = None) -> bytes:
        """Run a git plumbing command against this store (bare, hardened).

        Raises:
            GitMetadataError: when git fails or times out.
        """
        return run_git(list(args), git_dir=self.git_dir, cwd=self.git_dir, stdin=stdin)

    def write_commit(
        self,
        ref: str,
        files: Iterable[tuple[str, int, bytes]],
        *,
        parent: str | None = None,
        deleted: Iterable[str] = (),
        message: str = "baseline",
    ) -> str:
        """Write a commit at ``ref`` holding ``files`` (path, git mode, content) on top of ``parent``.

        With no parent the commit holds exactly ``files``; with a parent, ``files`` are
        changed or added and ``deleted`` removed. Dates and identity are fixed, so the same
        content gives the same commit id.

        Returns:
            The commit id (40 hex).
        """
        chunks = [f"commit {ref}\ncommitter {_IDENT}\ndata {len(message)}\n{message}\n".encode()]
        if parent is not None:
            chunks.append(f"from {parent}\n".encode())
        else:
            chunks.append(b"deleteall\n")
        for path in deleted:
            chunks.append(b"D " + _path_bytes(path) + b"\n")
        for path, mode, data in files:
            chunks.append(f"M {mode:o} inline ".encode() + _path_bytes(path) + f"\ndata {len(data)}\n".encode())
            chunks.append(data + b"\n")
        chunks.append(b"done\n")
        self.git("fast-import", "--quiet", "--force", "--done", stdin=b"".join(chunks))
        return self.git("rev-parse", "--verify", f"{ref}^{{commit}}").decode().strip()

    def diff(self, old: str, new: str) -> tuple[str, list[NumStat]]:
        """The git-format patch (binary-safe) and per-path line counts from ``old`` to ``new``."""
        base = ["diff-tree", "-r", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames"]
        patch = self.git(*base, "-p", "--binary", old, new).decode("utf-8", "replace")
        stats = []
        for record in self.git(*base, "--numstat", "-z", old, new).split(b"\0"):
            if not record.strip():
                continue
            added, removed, path = os.fsdecode(record).split("\t", 2)
            stats.append(NumStat(path, None if added == "-" else int(added), None if removed == "-" else int(removed)))
        return patch, stats

    def verify_commit(self, commit: str) -> None:
        """Raise GitMetadataError unless ``commit`` exists in this store."""
        self.git("cat-file", "-e", f"{commit}^{{commit}}")

    def verify_objects(self) -> None:
        """Raise GitMetadataError unless every object of the store reads back to its own hash
        (``git fsck --full``: a flipped byte in a cached blob made every later golden patch fail
        to apply, counted as the submission's 0). About 40 ms for a real-code baseline."""
        self.git("fsck", "--full", "--no-dangling", "--no-progress")


#: What git says when a write fails for want of space (ENOSPC, EDQUOT; fast-import: "write error. Out of diskspace").
_DISK_FULL = ("No space left on device", "Disk quota exceeded", "Out of diskspace")


def disk_full_reason(exc: BaseException) -> str | None:
    """"the disk is full" when ``exc`` is a write that failed for want of space, else None.

    Recognises an ``OSError`` with ``ENOSPC`` / ``EDQUOT`` and a git command whose stderr says so
    (git reports the errno as text only). Such a failure is the host's, never the submission's.
    """
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full"
    text = (exc.stderr or "") if isinstance(exc, GitCommandError) else str(exc)
    return "the disk is full" if any(m in text for m in _DISK_FULL) else None


def git_apply(patch: str, work_tree: Path, *, check_only: bool = False) -> None:
    """Apply a git-format or unified ``patch`` to ``work_tree`` (all or nothing).

    Raises:
        PatchError: quoting git's reason when the text is not a patch or does not apply.
        DiskFullError: when git could not write for want of space (an infrastructure fault).
    """
    if not patch.strip():
        return
    if not patch.endswith("\n"):
        patch += "\n"
    try:
        data = patch.encode("utf-8", "surrogateescape")  # the bytes of a patch read with surrogateescape
    except UnicodeEncodeError as exc:
        raise PatchError(f"patch is not valid text: a lone surrogate at character {exc.start}") from None
    args = ["apply", "--whitespace=nowarn", "--recount"]
    if check_only:
        args.append("--check")
    scratch = work_tree.parent / f".{work_tree.name}.apply-git"
    try:
        # A throwaway empty git dir: git apply never looks at a .git the agent may have planted.
        run_git(["init", "--bare", "-q", str(scratch)], git_dir=None, cwd=work_tree.parent)
        run_git(
            [f"--work-tree={work_tree}", *args, "-"],
            git_dir=scratch,
            cwd=work_tree,
            stdin=data,
        )
    except GitCommandError as exc:
        reason = exc.stderr or "git apply failed"
        if any(m in reason for m in _DISK_FULL):  # the host's fault: no patch applies to a full disk
            raise DiskFullError(f"no space left to apply a patch in {work_tree}: {reason.strip()[-300:]}; free "
                                "disk space (or quota) on that filesystem") from None
        raise PatchError(f"patch does not apply: {reason}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def files_from_manifest(root: Path, paths: Mapping[str, int]) -> Iterable[tuple[str, int, bytes]]:
    """Yield (path, git mode, content) for ``paths`` (path -> git mode) under ``root``, lazily."""
    for path, mode in sorted(paths.items()):
        full = root / path
        data = os.fsencode(os.readlink(full)) if mode == GIT_MODE_SYMLINK else full.read_bytes()
        yield path, mode, data
