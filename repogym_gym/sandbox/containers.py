"""The Docker sandbox's containers: how each is configured, and the set a sandbox family holds.

:func:`container_config` is the whole security recipe of a container (see
:mod:`repogym_gym.sandbox.docker` for what each part is for); :class:`Containers` starts,
tracks and removes the containers of one sandbox and its scoped copies, over one client.

Example:
    >>> config = container_config(["/tmp/ws"], image_label="t", limits=SandboxLimits(), cpus=1.0,
    ...                           lifetime_s=60, engine_socket="/run/repogym-docker/docker.sock")
    >>> config["network_mode"], config["cap_drop"], config["read_only"], config["user"]
    ('none', ['ALL'], True, '61101:61101')
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from repogym_gym.errors import SandboxError
from repogym_gym.owners import process_owner
from repogym_gym.sandbox.bwrap import host_sockets
from repogym_gym.sandbox.engine import connect
from repogym_gym.sandbox.images import SANDBOX_USERS
from repogym_gym.sandbox.limits import SandboxLimits
from repogym_gym.sandbox.runtime import venv_runtimes

_log = logging.getLogger(__name__)
#: Engines whose orphans this process has reaped (once each).
_reaped: set[str] = set()

__all__ = ["COMMAND_UID", "OWNER_LABEL", "Containers", "IDLE_UID", "LABEL", "PID_LABEL", "container_config", "labelled", "real",
           "reap_orphans", "under"]

#: uid (and gid) of every command, and of the container's idle init; both exist in envs/ images.
COMMAND_UID, IDLE_UID = SANDBOX_USERS[0][1], SANDBOX_USERS[1][1]
#: Labels on every container: the sandbox family's token, and the pid of the host process.
LABEL, PID_LABEL = "repogym.sandbox", "repogym.pid"
#: ``<boot id>:<pid>:<start time>`` of the process that started a container: whether that process still lives.
OWNER_LABEL = "repogym.owner"
_MB = 1024 * 1024


def real(path: str | os.PathLike[str]) -> str:
    """The real absolute path of ``path``."""
    return os.path.realpath(os.fspath(path))


def under(path: str, parent: str) -> bool:
    """True when real path ``path`` is ``parent`` or lies inside it."""
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _runtime_paths(reveal: Sequence[str]) -> tuple[list[str], list[str]]:
    """The minimal interpreter's read-only mounts (its standard library, executable, shared
    library and the ``python`` names leading to them: a mount of a symlink shows its target), and
    those of a revealed task environment's own interpreter, and the site directories under them
    to cover (see :mod:`repogym_gym.sandbox.runtime`)."""
    runtimes = venv_runtimes(reveal)
    shown = [p for r in runtimes for p in (*r.dirs, *r.files, *(path for path, _ in r.links))]
    return list(dict.fromkeys(shown)), list(dict.fromkeys(p for r in runtimes for p in r.hidden))


def container_config(
    trees: Sequence[str],
    *,
    image_label: str,
    limits: SandboxLimits,
    cpus: float | None,
    lifetime_s: int,
    engine_socket: str | None,
    reveal: Sequence[str] = (),
    hide: Sequence[str] = (),
) -> dict[str, Any]:
    """``containers.create`` keyword arguments for a container writing ``trees`` (real paths).

    Args:
        trees: Directories bind-mounted read-write at their own paths.
        image_label: Value of :data:`LABEL` (the family's token).
        limits: Memory, pids, rlimits and ``/tmp`` size.
        cpus: CPUs (a CFS quota), None for no cap.
        lifetime_s: Seconds the container's idle process sleeps; the container ends (and is
            auto-removed) then.
        engine_socket: The engine's unix socket, which no mount may hold.
        reveal: Host paths mounted read-only at their own paths (missing ones are skipped),
            besides the minimal interpreter (the base interpreter's standard library and
            executable; its ``site-packages`` covered).
        hide: Host paths covered where a mount would show them.

    Raises:
        SandboxError: when a mount would hold the engine's socket.
    """
    from docker.types import Mount, Ulimit

    rw = list(dict.fromkeys(trees))
    runtime, site_dirs = _runtime_paths(reveal)
    ro = [p for p in dict.fromkeys([*runtime, *reveal]) if os.path.exists(p) and p not in rw]
    for source in (*rw, *ro):
        if engine_socket and under(real(engine_socket), source):
            raise SandboxError(f"refusing to mount {source!r} into a container: it holds the Docker engine's socket "
                               f"{engine_socket} (a root escape); run commands elsewhere")
    mounts = [Mount(p, p, type="bind", read_only=False) for p in rw] + [Mount(p, p, type="bind", read_only=True) for p in ro]
    # no "tmpcopyup": a tmpfs starts empty (what it covers, a hidden secret, is not copied in)
    tmpfs = {"/tmp": f"rw,exec,nosuid,nodev,size={limits.tmp_size_mb}m,mode=1777",
             "/root": "rw,noexec,nosuid,nodev,size=1m,mode=755"}
    tmpfs = {k: v for k, v in tmpfs.items() if k not in (*rw, *ro)}
    # a listening host socket under a mount would be reachable through it: cover it like a secret
    for secret in dict.fromkeys([*hide, *site_dirs, *host_sockets()]):
        if not any(under(secret, m) for m in (*rw, *ro)) or secret in (*rw, *ro) or not os.path.lexists(secret):
            continue
        if os.path.isdir(secret) and not os.path.islink(secret):
            tmpfs[secret] = "ro,noexec,nosuid,nodev,size=1m,mode=755"
        else:
            mounts.append(Mount(secret, "/dev/null", type="bind", read_only=True))
    ulimits = [Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files), Ulimit(name="core", soft=0, hard=0)]
    if limits.cpu_s is not None:
        ulimits.append(Ulimit(name="cpu", soft=limits.cpu_s, hard=limits.cpu_s))
    if limits.file_size_mb is not None:
        ulimits.append(Ulimit(name="fsize", soft=limits.file_size_mb * _MB, hard=limits.file_size_mb * _MB))
    config: dict[str, Any] = dict(
        command=["sleep", str(lifetime_s)], user=f"{IDLE_UID}:{IDLE_UID}", init=True, auto_remove=True,
        network_mode="none", read_only=True, cap_drop=["ALL"], security_opt=["no-new-privileges"], ipc_mode="private",
        hostname="repogym", mounts=mounts, tmpfs=tmpfs, shm_size=f"{limits.tmp_size_mb}m", ulimits=ulimits,
        labels={LABEL: image_label, PID_LABEL: str(os.getpid()), OWNER_LABEL: process_owner(os.getpid())},
        pids_limit=limits.max_processes or -1,
    )
    if limits.memory_mb is not None:
        config |= {"mem_limit": f"{limits.memory_mb}m", "memswap_limit": f"{limits.memory_mb}m"}
    if cpus:
        config["nano_cpus"] = int(cpus * 1e9)
    return config


def labelled(client: Any, label: str, *, running_only: bool = False) -> list[tuple[str, dict[str, str]]]:
    """``(id, labels)`` of the containers that carry ``label`` (``"key"`` or ``"key=value"``), from one
    list call. ``client.containers.list`` inspects each listed container in a second call, which
    raises ``NotFound`` when one removes itself in between (an auto-removed container past its
    lifetime); this never inspects.

    Raises:
        docker.errors.DockerException: when the engine refuses the list.
    """
    rows = client.api.containers(all=not running_only, filters={"label": label})
    return [(row["Id"], dict(row.get("Labels") or {})) for row in rows]


def reap_orphans(client: Any) -> list[str]:
    """Remove every repogym container whose starting process is dead (killed before it could close
    its sandbox): its lifetime would otherwise keep it running for up to a day. Containers of live
    processes, and containers that carry no owner, are left alone. Returns the removed ids.

    Never raises: a container that goes away meanwhile, or an engine that refuses, is skipped.
    """
    import docker

    removed: list[str] = []
    try:
        found = labelled(client, OWNER_LABEL)
    except docker.errors.DockerException:
        return removed
    for container_id, labels in found:
        owner = labels.get(OWNER_LABEL, "")
        parts = owner.split(":")
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        if process_owner(int(parts[1])) == owner:
            continue  # its process lives (the same pid, boot and start time)
        try:
            client.api.remove_container(container_id, force=True)
            removed.append(container_id)
        except docker.errors.DockerException:
            continue
    if removed:
        _log.warning("removed %d container(s) left by dead processes: %s", len(removed), [i[:12] for i in removed])
    return removed


class Containers:
    """The client and the live containers of a sandbox family (a sandbox and its scoped copies).

    Args:
        url: The engine's address (connected on first use).
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.token = os.urandom(6).hex()
        self._client: Any = None
        self._lock = threading.Lock()
        self._live: dict[str, Any] = {}

    def client(self) -> Any:
        """The ``docker.DockerClient`` (connected once).

        Raises:
            SandboxUnavailableError: when no engine answers.
        """
        with self._lock:
            if self._client is None:
                self._client = connect(self.url)
                if self.url not in _reaped:  # once per engine and process: what crashed runs left behind
                    _reaped.add(self.url)
                    reap_orphans(self._client)
            return self._client

    def start(self, image: str, config: dict[str, Any]) -> Any:
        """Create and start a container of ``image``; nothing is left behind when that fails.

        Raises:
            SandboxError: naming ``repogym envs build`` for a missing image, or quoting the engine.
        """
        import docker

        try:
            container = self.client().containers.create(image, **config)
        except docker.errors.ImageNotFound:
            raise SandboxError(f"image={image!r} is not on the Docker engine at {self.url}; build it with "
                               "`repogym envs build base` (or name a built image)") from None
        except docker.errors.DockerException as exc:
            raise SandboxError(f"could not create a container of {image!r}: {exc}") from None
        with self._lock:
            self._live[container.id] = container
        try:
            container.start()
        except docker.errors.DockerException as exc:
            self.remove(container)
            raise SandboxError(f"could not start a container of {image!r}: {exc}") from None
        return container

    def remove(self, container: Any) -> None:
        """Remove ``container`` (killing it) and wait until the engine has let go of it.

        Raises:
            SandboxError: when the engine refuses for another reason than the container being gone.
        """
        import docker

        with self._lock:
            self._live.pop(container.id, None)
        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            return
        except docker.errors.APIError as exc:
            if exc.status_code != 409:  # 409: auto-removal already in progress
                raise SandboxError(f"could not remove container {container.id[:12]}: {exc}") from None
        for _ in range(200):
            try:
                container.reload()
            except docker.errors.NotFound:
                return
            time.sleep(0.05)

    def close(self) -> None:
        """Remove every live container and close the client; idempotent."""
        with self._lock:
            live = list(self._live.values())
        for container in live:
            self.remove(container)
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
