"""DockerSandbox: an episode's commands as execs in its own container, grading in fresh ones.

Lifecycle: :meth:`DockerSandbox.open` (Episode calls it at ``reset``) starts a container for a
workspace; every command whose ``cwd`` and ``writable`` directories lie in that tree is an
``exec`` in it; :meth:`~DockerSandbox.release` (at ``close``) removes it. Any other command (a
grading copy, the Test action's copy) gets a one-shot container, removed when it ends.

Each container (configured by :func:`~repogym_gym.sandbox.containers.container_config`):

- **filesystem**: the image's root read-only; the tree (a workspace, or the command's ``cwd``
  and ``writable`` directories) bind-mounted read-write at the same absolute path and handed
  to the command uid (:func:`~repogym_gym.sandbox.slots.hand_over`, so git sees its own files);
  the minimal interpreter (the base interpreter's standard library, executable and shared
  library, its ``site-packages`` covered: :mod:`repogym_gym.sandbox.runtime`) and the
  ``reveal`` paths (the task's Python environment or the grader's test environment, the
  grader's bytecode cache) bind-mounted read-only at the same paths, so grading runs the same
  interpreter and packages as in the other sandboxes; nothing else of the host (no host
  ``site-packages``, no venv of repogym_gym's own), so a task's directory and the cache stay
  unseen (``hide`` paths under a mount are covered with an empty tmpfs, or ``/dev/null`` for a
  file, and so is every listening host unix socket under a mount); what else a command finds
  is the image's own (``envs/``: Debian, git, bash; no Python tree, which the build leaves out);
  a private size-limited ``/tmp`` and ``/dev/shm``; an empty ``/root``. No mount may hold the
  engine's socket (that would be a root escape).
- **isolation**: network ``none`` (loopback only), its own PID/IPC/UTS namespaces, every
  capability dropped, ``no-new-privileges``; PID 1 is Docker's init (tini) with an idle
  ``sleep`` as uid :data:`IDLE_UID`, commands run as uid :data:`COMMAND_UID`.
- **limits**: memory (a cgroup cap on the whole container, swap included; unlike bubblewrap's
  per-process address-space cap, the JVM and Go start under it), pids (processes plus threads
  of the container), ``cpus`` CPUs, rlimits for CPU seconds, file size and open files, and the
  disk use of the writable trees (:class:`~repogym_gym.sandbox.disk.DiskWatch`, which kills the
  container past ``disk_mb``).
- **commands**: ``sh -c '"$@"; kill -9 -1'``, then a separate trusted exec of ``kill -9 -1``
  as the command uid (a command that kills its own wrapper shell cannot skip that): once the
  command ends, every process it left (``setsid`` daemons included) is killed, as in the other
  sandboxes. Output is read streaming
  with a head+tail cap; at the timeout the container is killed (a fork bomb cannot stop that),
  and an episode's container is started afresh on the same tree at its next command.
- **leaks**: each container runs for at most its lifetime and is auto-removed when it stops, so
  even a crashed host process leaves nothing behind for long. An episode's container lives
  ``lifetime_s`` (15 min by default; scoped to a task, no longer than its longest command limit
  plus :data:`LIFETIME_MARGIN_S`); a command that would outlive the container starts it afresh
  first, and one that is idle past its life is started again at the next command.

The sandbox needs root (to hand trees to the command uid) and an engine with the image
(``available()`` is False otherwise, with the reason in ``unavailable_reason()``). Known gaps:
one command at a time per episode container (a command's end kills every process of the
command uid in it); the idle init and ``sleep`` count against ``max_processes``; the disk limit
is checked while the command runs, like bubblewrap's; output past the cap is dropped, not stopped.

Example:
    >>> with DockerSandbox() as sb:                                           # doctest: +SKIP
    ...     sb.run(["bash", "-c", "id -un; ls /run/repogym-docker"], cwd="/tmp/ws", timeout_s=10).stdout
    'repogym\\n'
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from repogym_gym.errors import SandboxError, SandboxUnavailableError
from repogym_gym.results import CommandResult
from repogym_gym.sandbox.base import DEFAULT_ENV_ALLOWLIST, SandboxBase, scrubbed_env
from repogym_gym.sandbox.containers import (
    COMMAND_UID,
    IDLE_UID,
    LABEL,
    PID_LABEL,
    Containers,
    container_config,
    real,
    under,
)
from repogym_gym.sandbox.cputime import cgroup_cpu_s
from repogym_gym.sandbox.disk import DiskWatch
from repogym_gym.sandbox.engine import engine_url, socket_path, stream_exec
from repogym_gym.sandbox.limits import DEFAULT_LIFETIME_S, LIFETIME_MARGIN_S, SandboxLimits, episode_lifetime
from repogym_gym.sandbox.runtime import sandbox_path
from repogym_gym.sandbox.slots import hand_over

__all__ = ["COMMAND_UID", "DEFAULT_IMAGE", "DockerSandbox", "IDLE_UID", "LABEL", "PID_LABEL"]

#: The image used unless one is named (``repogym envs build base`` builds it).
DEFAULT_IMAGE = "repogym/base:bookworm"
#: Variables every command gets (the caller's ``env`` may override them); ``/tmp`` is the container's own.
SANDBOX_ENV = {"HOME": "/tmp", "TMPDIR": "/tmp", "USER": "repogym", "LOGNAME": "repogym"}
#: What each command runs as: its argv, then a kill of every process of the command uid it left.
_WRAPPER = '"$@"; status=$?; kill -9 -1 2>/dev/null; exit $status'
_MB = 1024 * 1024
_probed: set[tuple[str, str]] = set()


class DockerSandbox(SandboxBase):
    """Runs commands in Docker containers (see the module docstring).

    Args:
        image: The image (default :data:`DEFAULT_IMAGE`; build it with ``repogym envs build``).
        limits: Resource limits (a :class:`SandboxLimits`, or a mapping of its fields).
        hide: Host paths commands must not read, where a mount would otherwise show them.
        reveal: Host paths bind-mounted read-only at the same path (missing ones are skipped).
        env_allowlist: Host variables passed through (default
            :data:`~repogym_gym.sandbox.base.DEFAULT_ENV_ALLOWLIST`).
        cpus: CPUs a container may use (a CFS quota; None for no cap).
        url: Engine address (default: ``$REPOGYM_DOCKER_HOST``, ``$DOCKER_HOST``, the default socket).
        lifetime_s: Seconds an episode's container lives at most (then it is restarted on demand);
            :meth:`scoped` with a task's limits lowers it to the task's longest command limit plus
            :data:`LIFETIME_MARGIN_S`.

    Example:
        >>> sb = DockerSandbox(limits={"max_processes": 64}, url="unix:///run/x.sock")
        >>> sb.limits.max_processes, sb.name, sb.url
        (64, 'docker', 'unix:///run/x.sock')
    """

    name = "docker"
    confining = True
    runs_images = True

    def __init__(
        self,
        *,
        image: str = DEFAULT_IMAGE,
        limits: SandboxLimits | Mapping[str, Any] | None = None,
        hide: Iterable[str | os.PathLike[str]] = (),
        reveal: Iterable[str | os.PathLike[str]] = (),
        env_allowlist: Sequence[str] = DEFAULT_ENV_ALLOWLIST,
        cpus: float | None = 2.0,
        url: str | None = None,
        lifetime_s: int = DEFAULT_LIFETIME_S,
        _engine: Containers | None = None,
    ) -> None:
        self.image = image
        self.limits = limits if isinstance(limits, SandboxLimits) else SandboxLimits().merged(limits)
        self.hide = tuple(dict.fromkeys(real(p) for p in hide))
        self.reveal = tuple(dict.fromkeys(real(p) for p in reveal))
        self.cpus = min(cpus, float(os.cpu_count() or 1)) if cpus else None
        self.lifetime_s = lifetime_s
        self._allowlist = tuple(env_allowlist)
        self._owner = _engine is None
        self._engine = _engine or Containers(engine_url(url))
        self._held: dict[str, Any] = {}  # tree -> its episode container (None: to be restarted)
        self._ends: dict[str, float] = {}  # tree -> when its container's life ends (time.monotonic())
        self._init_pids: dict[str, int | None] = {}  # container id -> its init's host pid (its cgroup's CPU time)

    @property
    def url(self) -> str:
        """The engine's address."""
        return self._engine.url

    def scoped(self, *, hide: Iterable[str | os.PathLike[str]] = (), reveal: Iterable[str | os.PathLike[str]] = (),
               limits: SandboxLimits | Mapping[str, Any] | BaseModel | None = None, image: str | None = None) -> DockerSandbox:
        """A sandbox like this one that also hides ``hide``, reveals ``reveal``, applies the
        non-None fields of ``limits`` (a task's :class:`~repogym_gym.spec.LimitsSpec`) and runs
        ``image`` if given; it shares this one's engine connection, and this one's :meth:`close`
        removes its containers too."""
        merged = limits if isinstance(limits, SandboxLimits) else self.limits.merged(limits)
        return DockerSandbox(image=image or self.image, limits=merged, hide=[*self.hide, *hide], reveal=[*self.reveal, *reveal],
                             env_allowlist=self._allowlist, cpus=self.cpus, lifetime_s=episode_lifetime(self.lifetime_s, limits),
                             _engine=self._engine)

    # -- episode containers ------------------------------------------------------------------

    def open(self, tree: str | os.PathLike[str]) -> None:
        """Start the container of an episode whose commands run in ``tree`` (idempotent).

        Raises:
            SandboxError: when the container cannot start (a missing image names
                ``repogym envs build``), or ``tree`` cannot be handed to the command uid.
        """
        path = real(tree)
        if self._held.get(path) is None:
            self._hold(path, 0.0)

    def release(self, tree: str | os.PathLike[str]) -> None:
        """Remove the container :meth:`open` started for ``tree``; idempotent."""
        container = self._held.pop(real(tree), None)
        self._ends.pop(real(tree), None)
        if container is not None:
            self._engine.remove(container)

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
        """Run ``argv`` (no shell) in ``cwd``: an exec in the episode container holding ``cwd``
        and ``writable``, else in a one-shot container.

        Args:
            argv: Program and arguments.
            cwd: Working directory; writable, and handed to the command uid with its tree.
            timeout_s: Seconds before the container is killed (``exit_code`` -9, ``timed_out``).
            env: Variables on top of the allowlisted host ones and :data:`SANDBOX_ENV`.
            output_limit_bytes: Bytes of stdout and of stderr kept (head and tail halves).
            writable: More directories the command may write (handed over like ``cwd``).

        Returns:
            The CommandResult (``exit_code`` None when ``cwd`` is not a directory).

        Raises:
            SandboxError: when the engine is unreachable, the image is missing, a ``writable``
                entry is not a directory, or a mount would expose the engine's socket.

        One command at a time per episode container: a command's end kills every process of
        the command uid in it.
        """
        work = real(cwd)
        if not os.path.isdir(work):
            return CommandResult(argv=list(argv), exit_code=None, duration_s=0.0,
                                 stderr=f"could not start {argv[0]!r}: cwd {os.fspath(cwd)!r} is not a directory")
        extra = [real(w) for w in writable]
        for path, given in zip(extra, writable, strict=False):
            if not os.path.isdir(path):
                raise SandboxError(f"writable={os.fspath(given)!r} is not a directory; create it before the run")
        tree = next((t for t in self._held if all(under(p, t) for p in (work, *extra))), None)
        if tree is None:
            container = self._start([work, *extra], int(timeout_s) + 120)
            try:
                return self._exec(container, [work, *extra], argv, work, env, timeout_s, output_limit_bytes)
            finally:
                self._engine.remove(container)
        hand_over([Path(tree)], COMMAND_UID)
        if self._held[tree] is None or self._ends.get(tree, 0.0) < time.monotonic() + timeout_s + LIFETIME_MARGIN_S:
            self._hold(tree, timeout_s)  # never started, killed, or its life would end before the command can
        try:
            result = self._exec(self._held[tree], [tree], argv, work, env, timeout_s, output_limit_bytes)
        except _Gone:  # the container died (it was killed, or the engine restarted): start it afresh
            self._hold(tree, timeout_s)
            result = self._exec(self._held[tree], [tree], argv, work, env, timeout_s, output_limit_bytes)
        if result.timed_out or result.exit_code == -9:  # killed: its container with it
            self._engine.remove(self._held[tree])
            self._held[tree] = None
        return result

    def _init_pid(self, api: Any, container: Any) -> int | None:
        """The host pid of ``container``'s init (whose cgroup is the container's), looked up once; None if unknown."""
        if container.id not in self._init_pids:
            import docker

            try:
                self._init_pids[container.id] = int(api.inspect_container(container.id)["State"]["Pid"]) or None
            except (docker.errors.DockerException, KeyError, TypeError, ValueError):
                return None
        return self._init_pids[container.id]

    @staticmethod
    def _sweep(api: Any, container: Any, kill: Any) -> None:
        """Kill every process of the command uid still in ``container``, from an exec of its own.

        The wrapper's ``kill -9 -1`` runs only if the wrapper shell lives: a command that forks,
        ``setsid``s the child and SIGKILLs its shell left a daemon racing the host's Read and
        Write actions. This exec is trusted; two passes catch a child forked during the first.
        When the engine refuses it, the container is killed instead.
        """
        import docker

        try:
            for _ in range(2):
                exec_id = api.exec_create(container.id, ["/bin/sh", "-c", "kill -9 -1 2>/dev/null; exit 0"],
                                          user=f"{COMMAND_UID}:{COMMAND_UID}")["Id"]
                api.exec_start(exec_id)
        except docker.errors.DockerException:
            kill()

    def _exec(self, container: Any, trees: Sequence[str], argv: Sequence[str], work: str,
              env: Mapping[str, str] | None, timeout_s: float, limit: int) -> CommandResult:
        """One exec of ``argv`` in ``container``, whose writable ``trees`` the disk limit counts."""
        import docker

        api = self._engine.client().api
        full_env = scrubbed_env({**SANDBOX_ENV, **(env or {})}, allowlist=self._allowlist)
        full_env["PATH"] = sandbox_path(full_env["PATH"])  # the running interpreter's venv is not mounted
        init_pid = self._init_pid(api, container)
        cpu_before = cgroup_cpu_s(init_pid) if init_pid else None
        start = time.monotonic()
        try:
            exec_id = api.exec_create(container.id, ["/bin/sh", "-c", _WRAPPER, "repogym", *argv], stdout=True, stderr=True,
                                      user=f"{COMMAND_UID}:{COMMAND_UID}", workdir=work, environment=full_env)["Id"]
        except docker.errors.NotFound:
            raise _Gone() from None
        except docker.errors.APIError as exc:
            if exc.status_code == 409:
                raise _Gone() from None
            raise SandboxError(f"the Docker engine refused to run {list(argv)[:3]}: {exc}") from None

        def kill() -> None:
            try:
                container.kill()
            except docker.errors.DockerException:
                pass  # already gone

        watch = None
        if self.limits.disk_mb is not None:
            watch = DiskWatch([Path(t) for t in trees], limit_bytes=self.limits.disk_mb * _MB)
        out = stream_exec(api, exec_id, timeout_s=timeout_s, limit=limit, kill=kill, watch=watch)
        exit_code: int | None = -9
        if not (out.timed_out or out.stopped):
            exit_code = None
            for _ in range(100):
                info = api.exec_inspect(exec_id)
                if not info.get("Running"):
                    exit_code = info.get("ExitCode")
                    break
                time.sleep(0.02)
        cpu_after = cgroup_cpu_s(init_pid) if init_pid and cpu_before is not None else None
        if not (out.timed_out or out.stopped):
            self._sweep(api, container, kill)
        stderr = out.stderr.text() + (f"\n[killed by repogym: {out.stopped}]\n" if out.stopped else "")
        return CommandResult(argv=list(argv), exit_code=exit_code, stdout=out.stdout.text(), stderr=stderr,
                             duration_s=time.monotonic() - start, timed_out=out.timed_out,
                             cpu_s=max(0.0, cpu_after - cpu_before) if cpu_after is not None and cpu_before is not None else None,
                             truncated=out.stdout.truncated or out.stderr.truncated)

    # -- containers --------------------------------------------------------------------------

    def _hold(self, tree: str, timeout_s: float) -> None:
        """(Re)start ``tree``'s episode container, to live ``lifetime_s`` and at least a command of ``timeout_s``."""
        old = self._held.get(tree)
        if old is not None:
            self._engine.remove(old)
        life = max(self.lifetime_s, int(timeout_s) + 2 * LIFETIME_MARGIN_S) if timeout_s else self.lifetime_s
        self._held[tree] = None
        self._held[tree] = self._start([tree], life)
        self._ends[tree] = time.monotonic() + life

    def _start(self, trees: Sequence[str], lifetime_s: int) -> Any:
        """Start a container with ``trees`` read-write, after handing them to the command uid."""
        config = container_config(trees, image_label=self._engine.token, limits=self.limits, cpus=self.cpus,
                                  lifetime_s=lifetime_s, engine_socket=socket_path(self.url), reveal=self.reveal,
                                  hide=self.hide)  # refuses a mount holding the engine's socket first
        hand_over([Path(t) for t in trees], COMMAND_UID)
        return self._engine.start(self.image, config)

    # -- availability ------------------------------------------------------------------------

    def unavailable_reason(self) -> str | None:
        """Why commands cannot run (None when they can): not root, no engine, or no image."""
        if os.geteuid() != 0:
            return (f"it must run as root, to hand each workspace to the command uid {COMMAND_UID}; this process is "
                    f"uid {os.geteuid()}")
        if (self.url, self.image) in _probed:
            return None
        import docker

        try:
            self._engine.client().images.get(self.image)
        except SandboxUnavailableError as exc:
            return str(exc)
        except docker.errors.ImageNotFound:
            return f"image={self.image!r} is not on the Docker engine at {self.url}; build it with `repogym envs build base`"
        except docker.errors.DockerException as exc:
            return f"the Docker engine at {self.url} failed: {exc}"
        _probed.add((self.url, self.image))
        return None

    def available(self) -> bool:
        """True when this process is root, the engine answers and the image exists."""
        return self.unavailable_reason() is None

    def close(self) -> None:
        """Remove this sandbox's episode containers; the family's owner (the sandbox that was not
        made by :meth:`scoped`) removes every container of the family and closes the client.
        Idempotent."""
        for tree in list(self._held):
            self.release(tree)
        if self._owner:
            self._engine.close()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Gone(Exception):
    """The episode container is not running any more."""
