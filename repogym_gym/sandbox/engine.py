"""The Docker engine: where it is, a lazily imported client, and exec output read streaming.

The engine's address is ``REPOGYM_DOCKER_HOST`` if set, else ``DOCKER_HOST``, else the
default socket (``unix:///var/run/docker.sock``); ``.ci/docker-up`` starts a private engine on
``unix:///run/repogym-docker/docker.sock``. The ``docker`` package is imported only when a
client is made, so nothing Docker costs anything until a Docker sandbox is used.

:func:`stream_exec` reads an exec's multiplexed stdout/stderr straight off the hijacked
connection with ``select``, into head+tail :class:`~repogym_gym.sandbox.process.CappedBuffer`
halves (memory stays O(cap) whatever the command prints), and calls ``kill`` once at the
deadline, or when a ``watch`` (a disk limit) objects: the caller kills the container, which ends
the stream.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

from repogym_gym.errors import SandboxError, SandboxUnavailableError
from repogym_gym.sandbox.process import DRAIN_GRACE_S, WATCH_INTERVAL_S, CappedBuffer

__all__ = ["DEFAULT_ENGINE", "ExecOutput", "connect", "engine_url", "socket_path", "stream_exec"]

#: The engine address used when neither REPOGYM_DOCKER_HOST nor DOCKER_HOST is set.
DEFAULT_ENGINE = "unix:///var/run/docker.sock"
_HEADER = struct.Struct(">BxxxL")  # stream (1 stdout, 2 stderr), 3 pad bytes, payload length
_CHUNK = 65536


def engine_url(url: str | None = None) -> str:
    """``url``, else ``$REPOGYM_DOCKER_HOST``, else ``$DOCKER_HOST``, else :data:`DEFAULT_ENGINE`."""
    return url or os.environ.get("REPOGYM_DOCKER_HOST") or os.environ.get("DOCKER_HOST") or DEFAULT_ENGINE


def socket_path(url: str) -> str | None:
    """The filesystem path of a ``unix://`` engine address (None for tcp/ssh addresses)."""
    return url[len("unix://"):] if url.startswith("unix://") else None


def connect(url: str | None = None, *, timeout_s: float = 60.0) -> Any:
    """A ``docker.DockerClient`` for the engine at :func:`engine_url` (``url``), pinged once.

    Args:
        url: Engine address (default: see :func:`engine_url`).
        timeout_s: Seconds each API call may take (image imports need more than the default).

    Raises:
        SandboxUnavailableError: when the ``docker`` package is missing or the engine does not
            answer at that address (the message names it and how to start one).
    """
    try:
        import docker
    except ImportError:
        raise SandboxUnavailableError("the docker sandbox needs the docker package: pip install 'docker>=7'") from None
    address = engine_url(url)
    path = socket_path(address)
    if path is not None:  # probe it first: docker-py leaks the socket of a failed unix connect
        try:
            with socket.socket(socket.AF_UNIX) as probe:
                probe.settimeout(timeout_s)
                probe.connect(path)
        except OSError as exc:
            raise SandboxUnavailableError(f"no Docker engine answers at {address!r} (REPOGYM_DOCKER_HOST): "
                                          f"{exc.strerror or exc}; start one with `bash .ci/docker-up`") from None
    try:
        if url is None and not os.environ.get("REPOGYM_DOCKER_HOST"):  # DOCKER_HOST, with its DOCKER_TLS_* settings
            client = docker.DockerClient.from_env(version="auto", timeout=int(timeout_s))
        else:
            client = docker.DockerClient(base_url=address, version="auto", timeout=int(timeout_s))
    except docker.errors.DockerException as exc:
        raise SandboxUnavailableError(f"no Docker engine answers at {address!r} (REPOGYM_DOCKER_HOST): {exc}; "
                                      "start one with `bash .ci/docker-up`") from None
    try:
        client.ping()
    except docker.errors.DockerException as exc:
        client.close()
        raise SandboxUnavailableError(f"the Docker engine at {address!r} does not answer: {exc}") from None
    return client


class ExecOutput:
    """What :func:`stream_exec` read: capped stdout and stderr, whether the deadline passed, and
    why a ``watch`` stopped the exec (None when it did not)."""

    def __init__(self, limit: int) -> None:
        self.stdout = CappedBuffer(limit)
        self.stderr = CappedBuffer(limit)
        self.timed_out = False
        self.stopped: str | None = None


def _raw_socket(response: Any) -> tuple[Any, Any]:
    """The buffered reader http.client read the headers through, and the socket under it."""
    reader = response.raw._fp.fp  # what docker-py's own socket=True path digs out, one level up
    raw = reader.raw
    return reader, getattr(raw, "_sock", raw)


def stream_exec(api: Any, exec_id: str, *, timeout_s: float, limit: int, kill: Callable[[], None],
                watch: Callable[[], str | None] | None = None) -> ExecOutput:
    """Start exec ``exec_id`` and read its output until it ends, the deadline passes or ``watch`` objects.

    Args:
        api: The client's low-level ``APIClient``.
        exec_id: An exec created with stdout and stderr attached and no TTY.
        timeout_s: Seconds from now until the exec is killed (``timed_out``).
        limit: Bytes of stdout and of stderr kept (head and tail halves).
        kill: Called once, at the deadline or when ``watch`` objects; must end the exec (kill its
            container). Output is then drained for at most ``DRAIN_GRACE_S`` seconds more.
        watch: Called about every ``WATCH_INTERVAL_S`` seconds (a
            :class:`~repogym_gym.sandbox.disk.DiskWatch`); a string it returns is why the exec
            must stop (kept in ``stopped``).

    Raises:
        SandboxError: when the engine refuses to start the exec.
    """
    import docker

    out = ExecOutput(limit)
    start = time.monotonic()
    try:
        response = api._post_json(api._url("/exec/{0}/start", exec_id), data={"Tty": False, "Detach": False},
                                  headers={"Connection": "Upgrade", "Upgrade": "tcp"}, stream=True)
    except docker.errors.DockerException as exc:
        raise SandboxError(f"the Docker engine did not start exec {exec_id[:12]}: {exc}") from None
    try:
        api._raise_for_status(response)
        reader, sock = _raw_socket(response)
    except docker.errors.DockerException as exc:
        response.close()
        raise SandboxError(f"the Docker engine did not start exec {exec_id[:12]}: {exc}") from None
    demux = _Demux(out)
    try:
        sock.setblocking(False)
        early = reader.peek(0) or b""  # bytes http.client read ahead with the headers, if any
        demux.feed(reader.read(len(early)) if early else b"")
        deadline, drain_until, next_watch = start + timeout_s, None, start + WATCH_INTERVAL_S
        while True:
            now = time.monotonic()
            if drain_until is None and watch is not None and now >= next_watch:
                next_watch = now + WATCH_INTERVAL_S
                out.stopped = watch()
            if drain_until is None and (out.stopped or now >= deadline):
                out.timed_out = not out.stopped
                kill()
                now = time.monotonic()
                drain_until = now + DRAIN_GRACE_S
            if drain_until is not None and now >= drain_until:
                break
            wait = min(WATCH_INTERVAL_S if watch else 0.5, max(0.0, (drain_until or deadline) - now))
            if not getattr(sock, "pending", lambda: 0)() and not select.select([sock], [], [], wait)[0]:
                continue
            try:
                data = sock.recv(_CHUNK)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                break
            if not data:
                break
            demux.feed(data)
    finally:
        sock.close()
        response.close()
    return out


class _Demux:
    """Splits Docker's multiplexed stream (8-byte frame headers) into stdout and stderr, payload
    bytes passed on as they arrive (a frame is never held whole)."""

    def __init__(self, out: ExecOutput) -> None:
        self._out = out
        self._header = bytearray()
        self._left = 0
        self._target = out.stdout

    def feed(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if self._left:
                take = view[: self._left]
                self._target.feed(bytes(take))
                self._left -= len(take)
                view = view[len(take):]
                continue
            need = _HEADER.size - len(self._header)
            self._header += view[:need]
            view = view[need:]
            if len(self._header) == _HEADER.size:
                stream, self._left = _HEADER.unpack(self._header)
                self._header.clear()
                self._target = self._out.stderr if stream == 2 else self._out.stdout
