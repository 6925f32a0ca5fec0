"""A served env: episodes behind an HTTP server, for trainers that keep envs on other machines.

``repogym serve`` (FastAPI under uvicorn) holds many concurrent sessions, one env and workspace
each. The client is :class:`repogym_gym.gym.remote.RemoteEnv`, a ``gymnasium.Env``. Endpoints (JSON):

- ``POST /sessions`` ``{"env_id", "kwargs"}`` -> ``{"session_id"}``: ``gym.make(env_id, **kwargs)``
  on the server; ``kwargs`` may be ``task``, ``suite``, ``sandbox``, ``max_steps``,
  ``reward_shaping``, ``max_episode_steps``, ``observation_mode``, ``reward`` (nothing that names a path to write);
- ``POST /sessions/{id}/reset`` ``{"seed", "options"}`` -> ``{"observation", "info"}``;
- ``POST /sessions/{id}/step`` ``{"action"}`` -> ``{"observation", "reward", "terminated", "truncated", "info"}``;
- ``POST /sessions/{id}/truncate`` ``{"reason"}``: grade the running episode now (as the budget would);
- ``DELETE /sessions/{id}``; ``GET /health`` (how many sessions are open, and their idle seconds).

A session id is its client's capability: the server never lists them (red-team round 45: a listing
let any client step or close another's session).

A session idle for ``idle_timeout_s`` is closed (its workspace removed) by a sweep every
``idle_timeout_s / 4`` seconds (at most 5 s); all are closed when the server stops. Errors are JSON
``{"error": ...}``: 404 for an unknown or expired session, 409 for a call while another call of the
same session runs, 422 for a bad request, 429 past ``max_sessions``. Each call runs on a thread of
the server's pool, so a session's slow test run does not hold up the others.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from repogym_gym.errors import RepoGymError, ServeError
from repogym_gym.gym import make_env
from repogym_gym.gym.spaces import json_data

__all__ = ["ALLOWED_KWARGS", "SessionStore", "create_app"]

_log = logging.getLogger(__name__)

#: What a client may pass to ``gym.make`` on the server.
ALLOWED_KWARGS = frozenset({"task", "suite", "sandbox", "max_steps", "reward_shaping", "max_episode_steps", "observation_mode",
                            "reward"})


@dataclass
class _Session:
    env: Any
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)


class SessionStore:
    """The server's sessions: made, used one call at a time, expired when idle, closed at the end.

    Args:
        idle_timeout_s: Seconds a session may stay unused before it is closed.
        max_sessions: Most sessions at once.
    """

    def __init__(self, idle_timeout_s: float = 600.0, max_sessions: int = 64) -> None:
        self.idle_timeout_s = idle_timeout_s
        self.max_sessions = max_sessions
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()

    def open(self, env_id: str, kwargs: dict[str, Any]) -> str:
        unknown = sorted(set(kwargs) - ALLOWED_KWARGS)
        if unknown:
            raise ServeError(422, f"kwargs {unknown} are not allowed; allowed: {sorted(ALLOWED_KWARGS)}")
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                raise ServeError(429, f"{len(self._sessions)} sessions are open, the server's most (--max-sessions)")
        try:
            env = make_env(env_id, **kwargs)
        except Exception as exc:  # noqa: BLE001 - an unknown id, a bad option: the client's request
            raise ServeError(422, f"cannot make {env_id!r}: {type(exc).__name__}: {exc}") from None
        session_id = secrets.token_hex(8)
        with self._lock:
            self._sessions[session_id] = _Session(env)
        return session_id

    @contextlib.contextmanager
    def use(self, session_id: str) -> Iterator[Any]:
        """The session's env, held for one call."""
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None:
            raise ServeError(404, f"no session {session_id!r} (closed, expired after {self.idle_timeout_s:g} s idle, or never made)")
        if not session.lock.acquire(blocking=False):
            raise ServeError(409, f"session {session_id!r} is running another call; await it before the next")
        try:
            session.last_used = time.monotonic()
            yield session.env
        finally:
            session.last_used = time.monotonic()
            session.lock.release()

    def close(self, session_id: str) -> bool:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        with session.lock:  # a call still running finishes first
            session.env.close()
        return True

    def idle(self) -> dict[str, float]:
        """Session id -> seconds since its last call."""
        now = time.monotonic()
        with self._lock:
            return {k: now - s.last_used for k, s in self._sessions.items()}

    def expire(self) -> list[str]:
        """Close the sessions idle for longer than ``idle_timeout_s``; return their ids."""
        expired = []
        for session_id, idle in self.idle().items():
            with self._lock:
                session = self._sessions.get(session_id)
            if session is not None and idle > self.idle_timeout_s and not session.lock.locked() and self.close(session_id):
                expired.append(session_id)
        return expired

    def close_all(self) -> None:
        for session_id in list(self.idle()):
            self.close(session_id)


class _Make(BaseModel):
    model_config = ConfigDict(extra="forbid")
    env_id: str
    kwargs: dict[str, Any] = Field(default_factory=dict)


class _Reset(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seed: int | None = None
    options: dict[str, Any] | None = None


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Any


class _Truncate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = "the client"


def create_app(store: SessionStore | None = None) -> FastAPI:
    """The FastAPI app over ``store`` (default: a new :class:`SessionStore`)."""
    sessions = store or SessionStore()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()

        def sweep() -> None:
            while not stop.wait(min(5.0, sessions.idle_timeout_s / 4)):
                for session_id in sessions.expire():
                    _log.info("session %s expired", session_id)

        sweeper = threading.Thread(target=sweep, name="repogym-serve-sweep", daemon=True)
        sweeper.start()
        try:
            yield
        finally:
            stop.set()
            await run_in_threadpool(sessions.close_all)

    app = FastAPI(title="repogym_gym", lifespan=lifespan)
    app.state.sessions = sessions

    @app.exception_handler(ServeError)
    async def refused(request: Request, exc: ServeError) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    @app.exception_handler(RepoGymError)
    async def failed(request: Request, exc: RepoGymError) -> JSONResponse:
        return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=422)

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> JSONResponse:
        _log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return JSONResponse({"error": f"the server failed: {type(exc).__name__}: {exc}"}, status_code=500)

    @app.get("/health")
    def health() -> dict[str, Any]:
        idle = sorted(round(v, 3) for v in sessions.idle().values())
        return {"ok": True, "sessions": len(idle), "idle_s": idle}

    @app.post("/sessions")
    def make(body: _Make) -> dict[str, Any]:
        return {"session_id": sessions.open(body.env_id, body.kwargs)}

    @app.post("/sessions/{session_id}/reset")
    def reset(session_id: str, body: _Reset) -> dict[str, Any]:
        with sessions.use(session_id) as env:
            try:
                obs, info = env.reset(seed=body.seed, options=body.options)
            except ValueError as exc:  # an unknown reset option
                raise ServeError(422, str(exc)) from None
        return json_data({"observation": obs, "info": info})

    @app.post("/sessions/{session_id}/step")
    def step(session_id: str, body: _Step) -> dict[str, Any]:
        with sessions.use(session_id) as env:
            obs, reward, terminated, truncated, info = env.step(body.action)
        return json_data({"observation": obs, "reward": float(reward), "terminated": bool(terminated),
                         "truncated": bool(truncated), "info": info})

    @app.post("/sessions/{session_id}/truncate")
    def truncate(session_id: str, body: _Truncate) -> dict[str, Any]:
        with sessions.use(session_id) as env:
            obs, reward, terminated, truncated, info = env.get_wrapper_attr("truncate")(body.reason)
        return json_data({"observation": obs, "reward": float(reward), "terminated": bool(terminated),
                         "truncated": bool(truncated), "info": info})

    @app.delete("/sessions/{session_id}")
    def close(session_id: str) -> dict[str, Any]:
        if not sessions.close(session_id):
            raise ServeError(404, f"no session {session_id!r}")
        return {"closed": session_id}

    return app
