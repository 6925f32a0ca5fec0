"""BubblewrapSandbox: every command in its own namespaces, as an unprivileged uid, under rlimits.

A command runs as ``prlimit <limits> -- bwrap <mounts> <namespaces> -- setpriv <drop> -- argv``:

- **filesystem**: an allowlist, not the host minus hidden paths: on bubblewrap's own empty root
  go the system directories (:data:`SYSTEM_DIRS`: ``/usr``, ``/etc`` and the ``/bin``, ``/lib*``
  links) read-only, the minimal interpreter (the base interpreter's standard library and
  executable, never a ``site-packages``: :mod:`repogym_gym.sandbox.runtime`) read-only, the
  ``reveal`` paths (a task's Python environment, the grader's bytecode cache) read-only, and the
  command's ``cwd`` and the ``writable`` directories read-write; every other Python tree of the
  system directories covered (a cloud SDK's vendored packages, another interpreter's library,
  ``dist-packages``: found by walking them once per process, see
  :func:`system_python_trees`), so the only Python code in sight is the interpreter's standard
  library, the task's environment and the workspace; a private, size-limited ``/tmp``
  and ``/dev/shm``; fresh ``/dev`` and ``/proc``. Nothing else of the host exists inside (no
  ``/root``, ``/home``, ``/opt``, ``/srv``, ``/var``, ``/run``, ``/sys``, no other checkout of a
  suite). Paths in ``hide`` (and every listening unix socket of the host, read from
  ``/proc/net/unix`` at each command) are covered where a bind would show them (an empty tmpfs
  on a directory; on a file, a device node no command may open); mounts apply parents first,
  so a workspace inside a hidden directory stays visible and a secret inside a revealed one
  stays hidden.
- **namespaces**: new PID, network (loopback only), IPC, UTS and cgroup namespaces; bwrap is PID 1
  of the command and dies with its parent, and the kernel kills every process of a PID namespace
  when its PID 1 ends, so a ``setsid`` daemon never outlives its command; ``--new-session``.
- **system calls**: a seccomp filter refuses the kernel keyring (``add_key``, ``request_key``,
  ``keyctl``: EPERM), the one store of a uid that outlives its processes and is not namespaced,
  through which a grading-time process could hand hidden tests to a later command of the same
  pool uid (:mod:`repogym_gym.sandbox.seccomp`). With the namespaces above, nothing of one
  command persists into another but what it wrote into its ``cwd`` and ``writable`` trees.
- **privileges**: bwrap (started as root) keeps only CAP_SETUID/SETGID/SETPCAP/DAC_OVERRIDE, which
  it needs to enter the working directory and ``setpriv`` needs to switch to the command's own
  unprivileged uid (see :mod:`repogym_gym.sandbox.slots`), clear groups, empty every capability
  set, the bounding set included, and set no-new-privs. Without that switch a root command could
  remount a read-only bind writable, and RLIMIT_NPROC would not hold. The ``cwd`` and
  ``writable`` trees are handed to that uid before the command starts (root, the host process,
  can still read and write everything in them afterwards).
- **limits**: :class:`~repogym_gym.sandbox.limits.SandboxLimits` through ``prlimit``, and the
  disk use of the writable directories through :class:`~repogym_gym.sandbox.disk.DiskWatch`.
- **environment**: cleared, then the allowlist of :func:`~repogym_gym.sandbox.base.scrubbed_env`
  with ``HOME`` and ``TMPDIR`` set to the private ``/tmp``, and on ``PATH`` the base
  interpreter's directory in place of the running interpreter's (which is not bound).
- **output**: streamed with a head+tail cap, the group killed on timeout
  (:func:`~repogym_gym.sandbox.process.run_process`).

The sandbox needs root (``available()`` is False otherwise, with the reason in
``unavailable_reason()``). Known gaps: the disk limit is checked while the command runs (what it
writes past the limit before the check sees it is bounded, not zero); memory is an address-space cap (see
:mod:`repogym_gym.sandbox.limits`); output past the cap is dropped, not stopped (the timeout
bounds an endless stream); what the system directories hold besides Python trees is visible,
and so is what was installed there after the walk (``repogym validate`` checks that no visible
file holds a task's golden version or one of its hunks).

Example:
    >>> sb = BubblewrapSandbox()                                             # doctest: +SKIP
    >>> sb.run(["bash", "-c", "id -u; ls -d /root /work"], cwd=".", timeout_s=10).stdout  # doctest: +SKIP
    '61000\\n'
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from repogym_gym.errors import SandboxError
from repogym_gym.results import CommandResult
from repogym_gym.sandbox.base import DEFAULT_ENV_ALLOWLIST, SandboxBase, scrubbed_env
from repogym_gym.sandbox.disk import DiskWatch
from repogym_gym.sandbox.limits import SandboxLimits, over_host_limits, prlimit_argv
from repogym_gym.sandbox.process import run_process
from repogym_gym.sandbox.pytrees import python_trees
from repogym_gym.sandbox.runtime import python_runtime, sandbox_path, venv_runtimes
from repogym_gym.sandbox.seccomp import filter_fd
from repogym_gym.sandbox.slots import SlotPool, hand_over

__all__ = ["BubblewrapSandbox", "SANDBOX_ENV", "SYSTEM_DIRS", "host_sockets", "system_python_trees"]

#: Variables every sandboxed command gets (the caller's ``env`` may override them).
SANDBOX_ENV = {"HOME": "/tmp", "TMPDIR": "/tmp", "USER": "repogym", "LOGNAME": "repogym"}
#: Host directories every command sees, read-only (or, where the host has a symlink, the same symlink).
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_HOST_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
_MB = 1024 * 1024
_KEPT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_DAC_OVERRIDE")

_default_pool: SlotPool | None = None
_pool_lock = threading.Lock()
_probes: dict[str, str | None] = {}


def _shared_pool() -> SlotPool:
    global _default_pool
    with _pool_lock:
        if _default_pool is None:
            _default_pool = SlotPool()
        return _default_pool


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(path))


def _depth(path: str) -> int:
    """Components of a real absolute path ('/' is 1, '/a/b' is 3)."""
    return path.rstrip("/").count("/") + 1


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def system_python_trees() -> tuple[str, ...]:
    """What every command's sandbox covers of the Python code in :data:`SYSTEM_DIRS` (all of it
    but the running interpreter's standard library: see :mod:`repogym_gym.sandbox.pytrees`);
    walked once per process (0.6 to 0.9 s on a host with a cloud SDK under ``/usr``)."""
    roots = [p for p in SYSTEM_DIRS if os.path.isdir(p) and not os.path.islink(p)]
    return python_trees([_real(p) for p in roots], keep=python_runtime().dirs)


def host_sockets() -> list[str]:
    """Paths of the filesystem unix sockets bound in this network namespace (``/proc/net/unix``)
    that exist in this mount namespace as sockets; abstract sockets (``@name``) are left out,
    since a sandbox's own network namespace already separates them."""
    try:
        lines = Path("/proc/net/unix").read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue
        try:
            if stat.S_ISSOCK(os.lstat(fields[7]).st_mode):
                found.append(fields[7])
        except OSError:
            continue
    return list(dict.fromkeys(found))


class BubblewrapSandbox(SandboxBase):
    """Runs each command in a fresh bubblewrap sandbox (see the module docstring).

    Args:
        limits: Resource limits (a :class:`SandboxLimits`, or a mapping of its fields).
        hide: Host paths commands must not read (e.g. a task's hidden tests, a cache).
        reveal: Paths under ``hide`` bound back read-only (e.g. a Python environment in a cache).
        env_allowlist: Host variables passed through (default
            :data:`~repogym_gym.sandbox.base.DEFAULT_ENV_ALLOWLIST`).
        pool: The uids commands run as (default: one pool shared by the process).

    Example:
        >>> sb = BubblewrapSandbox(limits={"max_processes": 64}, hide=["/srv/secrets"])
        >>> sb.limits.max_processes, sb.name
        (64, 'bwrap')
    """

    name = "bwrap"
    confining = True

    def __init__(
        self,
        *,
        limits: SandboxLimits | Mapping[str, Any] | None = None,
        hide: Iterable[str | os.PathLike[str]] = (),
        reveal: Iterable[str | os.PathLike[str]] = (),
        env_allowlist: Sequence[str] = DEFAULT_ENV_ALLOWLIST,
        pool: SlotPool | None = None,
    ) -> None:
        self.limits = limits if isinstance(limits, SandboxLimits) else SandboxLimits().merged(limits)
        self.hide = tuple(dict.fromkeys(_real(p) for p in hide))
        self.reveal = tuple(dict.fromkeys(_real(p) for p in reveal))
        self._allowlist = tuple(env_allowlist)
        self._pool = pool
        self._bwrap = shutil.which("bwrap")
        self._prlimit = shutil.which("prlimit")
        self._setpriv = shutil.which("setpriv")

    def scoped(
        self,
        *,
        hide: Iterable[str | os.PathLike[str]] = (),
        reveal: Iterable[str | os.PathLike[str]] = (),
        limits: SandboxLimits | Mapping[str, Any] | BaseModel | None = None,
        image: str | None = None,
    ) -> BubblewrapSandbox:
        """A sandbox like this one that also hides ``hide``, reveals ``reveal`` and applies the
        non-None fields of ``limits`` (e.g. a task's :class:`~repogym_gym.spec.LimitsSpec`);
        ``image`` is ignored (bubblewrap runs the host's system directories, not images).

        The new sandbox shares this one's uid pool; this one is unchanged.
        """
        merged = limits if isinstance(limits, SandboxLimits) else self.limits.merged(limits)
        return BubblewrapSandbox(limits=merged, hide=[*self.hide, *hide], reveal=[*self.reveal, *reveal],
                                 env_allowlist=self._allowlist, pool=self._pool)

    # -- running -----------------------------------------------------------------------------

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        timeout_s: float,
        env: Mapping[str, str] | None = None,
        output_limit_bytes: int = 64_000,
        writable: Sequence[str | os.PathLike[str]] = (),
    ) -> CommandResult:
        """Run ``argv`` (no shell) in ``cwd`` inside a fresh sandbox.

        Args:
            argv: Program and arguments.
            cwd: Working directory; writable inside the sandbox, and handed to the command's
                uid (with everything in it) before the command starts.
            timeout_s: Seconds before the sandbox is killed.
            env: Variables on top of the allowlisted host ones and :data:`SANDBOX_ENV`.
            output_limit_bytes: Bytes of stdout and of stderr kept (head and tail halves).
            writable: More directories the command may write (handed over like ``cwd``).

        Returns:
            The CommandResult (``exit_code`` None when ``cwd`` is not a directory).

        Raises:
            SandboxError: when bubblewrap is missing, a limit is over the host's hard limit (which
                ``prlimit`` could not set), a ``writable`` entry is not a directory, or no uid slot frees up.

        Two commands running at once in the same ``cwd`` would take the tree from each other's
        uid; an episode runs its commands one at a time.
        """
        reason = self.unavailable_reason() or over_host_limits(self.limits)
        if reason is not None:
            raise SandboxError(f"the bwrap sandbox cannot run {list(argv)[:3]}: {reason}")
        return self._run_checked(argv, cwd, timeout_s=timeout_s, env=env, output_limit_bytes=output_limit_bytes,
                                 writable=writable)

    def _run_checked(self, argv: Sequence[str], cwd: str | os.PathLike[str], *, timeout_s: float = 30,
                     env: Mapping[str, str] | None = None, output_limit_bytes: int = 4000,
                     writable: Sequence[str | os.PathLike[str]] = ()) -> CommandResult:
        work = _real(cwd)
        if not os.path.isdir(work):
            return CommandResult(argv=list(argv), exit_code=None, stderr=f"could not start {argv[0]!r}: "
                                 f"cwd {os.fspath(cwd)!r} is not a directory", duration_s=0.0)
        extra = [_real(w) for w in writable]
        for path, given in zip(extra, writable, strict=False):
            if not os.path.isdir(path):
                raise SandboxError(f"writable={os.fspath(given)!r} is not a directory; create it before the run")
        pool = self._uid_pool()
        with pool.slot(prefer=os.stat(work).st_uid) as uid:
            hand_over([Path(work), *map(Path, extra)], uid, reclaim=pool.uids)
            disk_mb = self.limits.disk_mb
            watch = DiskWatch([Path(work), *map(Path, extra)], disk_mb * _MB) if disk_mb is not None else None
            program = filter_fd()
            try:
                command = self.command(argv, cwd=work, env=env, writable=extra, uid=uid, seccomp_fd=program)
                return run_process(command, cwd=work, env=_HOST_ENV, timeout_s=timeout_s, pass_fds=[program],
                                   output_limit_bytes=output_limit_bytes, display_argv=list(argv), watch=watch)
            finally:
                os.close(program)

    def command(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str] | None = None,
        writable: Sequence[str] = (),
        uid: int,
        seccomp_fd: int | None = None,
    ) -> list[str]:
        """The full host argv that runs ``argv`` as ``uid`` in the sandbox (paths already real),
        under the seccomp filter bwrap reads from ``seccomp_fd``
        (:func:`~repogym_gym.sandbox.seccomp.filter_fd`; None: no filter, for inspection only)."""
        limits = self.limits
        tmp_size = str(limits.tmp_size_mb * _MB)
        args = [self._prlimit or "prlimit", *prlimit_argv(limits)[1:], self._bwrap or "bwrap"]
        args += self._mounts(cwd, writable, tmp_size)
        args += ["--chdir", cwd, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                 "--unshare-cgroup-try", "--hostname", "repogym", "--die-with-parent", "--new-session"]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        # kept only for bwrap's own chdir (into a tree the command's uid owns) and for setpriv, whose
        # switch to the slot uid clears them all; it also empties the bounding set
        args += ["--cap-drop", "ALL", *(a for cap in _KEPT_CAPS for a in ("--cap-add", cap)), "--clearenv"]
        full_env = scrubbed_env({**SANDBOX_ENV, **(env or {})}, allowlist=self._allowlist)
        full_env["PATH"] = sandbox_path(full_env["PATH"])
        for key, value in full_env.items():
            args += ["--setenv", key, value]
        args += ["--", self._setpriv or "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        return [*args, *argv]

    def _mounts(self, cwd: str, writable: Sequence[str], tmp_size: str) -> list[str]:
        """The sandbox's filesystem: the allowlist, then hides, binds and links, parents first.

        The root is bubblewrap's own empty tmpfs; on it go :data:`SYSTEM_DIRS` (read-only, or
        as the symlinks they are), fresh ``/dev`` and ``/proc``, private ``/tmp`` and
        ``/dev/shm``; then, shallowest first (a deeper mount covers a shallower one), the
        ``hide`` paths and the host's listening sockets where a bind would show them, the
        minimal interpreter (:func:`~repogym_gym.sandbox.runtime.python_runtime`, and a revealed task
        environment's own: :func:`~repogym_gym.sandbox.runtime.venv_runtimes`) and the
        ``reveal`` paths read-only, and ``writable`` and ``cwd`` read-write (a cover under which
        nothing else is mounted is emitted after the binds: each bind reads the mount table).
        A missing parent of a bind is made 0755, so the command's uid can reach what is bound
        in it; the root is read-only once everything is mounted.
        """
        args: list[str] = []
        # path -> kind of the last mount there: "bind" shows the host tree below it, "empty" is an
        # empty directory, "link" a symlink or a covered file
        mounted: dict[str, str] = {"/": "empty"}
        for path in SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
                mounted[path] = "link"
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
                mounted[path] = "bind"
        args += ["--dev", "/dev", "--proc", "/proc",
                 "--perms", "1777", "--size", tmp_size, "--tmpfs", "/tmp",
                 "--perms", "1777", "--size", tmp_size, "--tmpfs", "/dev/shm"]
        mounted |= {"/dev": "bind", "/proc": "bind", "/tmp": "empty", "/dev/shm": "empty"}

        runtimes = venv_runtimes(self.reveal)  # the grader's interpreter, and a task environment's own
        own = [cwd, *writable]
        ops: list[tuple[int, int, str, str, str]] = []  # (depth, rank, kind, path, link target): binds win ties
        # Python code of the system directories, except what a revealed tree holds (its own business)
        code = [p for p in system_python_trees() if not any(_under(p, r) for r in self.reveal)]
        hidden = [*self.hide, *(p for r in runtimes for p in r.hidden), *code, *(p for p in host_sockets() if not any(_under(p, t) for t in own))]
        ops += [(_depth(p), 0, "hide", p, "") for p in dict.fromkeys(hidden) if os.path.lexists(p)]
        shown_runtime = [p for r in runtimes for p in (*r.dirs, *r.files)]
        ops += [(_depth(p), 1, "ro", p, "") for p in dict.fromkeys([*shown_runtime, *self.reveal])]
        ops += [(_depth(p), 1, "link", p, target) for p, target in dict.fromkeys(lk for r in runtimes for lk in r.links)]
        ops += [(_depth(p), 2, "rw", p, "") for p in dict.fromkeys([*writable, cwd])]
        ops.sort()

        def covering(path: str) -> tuple[str, str]:
            """The deepest mount at ``path`` or above it: (its kind, its path)."""
            at = path
            while at not in mounted:
                at = os.path.dirname(at)
            return mounted[at], at

        def shown(path: str) -> bool:
            """Whether ``path`` exists in the sandbox as mounted so far."""
            kind, at = covering(path)
            return kind == "bind" or at == path

        # every bind makes bwrap read the whole mount table: a cover that nothing later is mounted
        # under goes after the binds (44 covers of a host's Python trees cost 13 ms before them, 5 after)
        bound = [path for _, _, kind, path, _ in ops if kind != "hide"]
        late_files: list[str] = []
        late_dirs: list[str] = []
        for _, _, kind, path, target in ops:
            if kind == "hide":
                if not shown(path) or covering(path)[0] != "bind":
                    continue  # out of sight already
                late = not any(_under(b, path) for b in bound)
                if os.path.isdir(path) and not os.path.islink(path):
                    (late_dirs if late else args).extend(["--tmpfs", path])
                    mounted[path] = "empty"
                else:
                    (late_files if late else args).extend(["--ro-bind", "/dev/null", path])
                    mounted[path] = "link"
                continue
            if kind == "ro" and not os.path.lexists(path):
                continue
            if kind == "link" and shown(path) and covering(path)[0] == "bind":
                continue  # the host's own link is already there
            # bwrap makes a missing parent with the mode of the host's (/root: 0700, root's)
            for parent in reversed(Path(path).parents[:-1]):
                if not shown(str(parent)):
                    args += ["--perms", "0755", "--dir", str(parent)]
                    mounted[str(parent)] = "empty"
            if kind == "link":
                args += ["--symlink", target, path]
                mounted[path] = "link"
            else:
                args += ["--ro-bind", path, path] if kind == "ro" else ["--bind", path, path]
                mounted[path] = "bind"
        return [*args, *late_files, *late_dirs, "--remount-ro", "/"]  # the root tmpfs and the directories made in it

    def _uid_pool(self) -> SlotPool:
        return self._pool if self._pool is not None else _shared_pool()

    # -- availability ------------------------------------------------------------------------

    def unavailable_reason(self) -> str | None:
        """Why this machine cannot run the sandbox (None when it can); probed once per process."""
        tools = (("bwrap", self._bwrap), ("prlimit", self._prlimit), ("setpriv", self._setpriv))
        missing = [name for name, found in tools if not found]
        if missing:
            return (f"{', '.join(missing)} not found on PATH; install Debian's bubblewrap and util-linux "
                    "(apt-get install bubblewrap util-linux)")
        if os.geteuid() != 0:
            return ("it must run as root, to start each command as a dedicated unprivileged uid (the kernel "
                    f"ignores the process limit for root, and counts it per uid); this process is uid {os.geteuid()}")
        key = str(self._bwrap)
        if key not in _probes:
            _probes[key] = self._probe()
        return _probes[key]

    def _probe(self) -> str | None:
        try:
            with tempfile.TemporaryDirectory(prefix="repogym-bwrap-probe-") as tmp:
                result = BubblewrapSandbox(pool=self._pool)._run_checked(["python", "-c", "print('ok')"], tmp)
        except SandboxError as exc:
            return str(exc)
        if result.exit_code == 0 and result.stdout.strip() == "ok":
            return None
        return f"a probe sandbox failed (exit {result.exit_code}): {result.tail(400).strip()}"

    def available(self) -> bool:
        """True when this process is root, bwrap, prlimit and setpriv exist and a probe command runs."""
        return self.unavailable_reason() is None

    def close(self) -> None:
        """Nothing to release (each command's sandbox ends with it); idempotent."""
        return None

    def __enter__(self) -> BubblewrapSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
