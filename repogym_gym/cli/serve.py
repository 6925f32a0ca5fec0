"""``repogym serve``: episodes behind an HTTP server (:mod:`repogym_gym.serve`), for remote trainers."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["serve_command"]


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default: the server runs any task it can read).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    idle_timeout: Annotated[float, typer.Option("--idle-timeout", help="Seconds a session may stay unused before it is closed.")] = 600.0,
    max_sessions: Annotated[int, typer.Option("--max-sessions", help="Most concurrent sessions.")] = 64,
) -> None:
    """Serve episodes over HTTP: each session is one env with its own workspace (client:
    repogym_gym.gym.remote.RemoteEnv). Needs the serve extra: pip install "repogym_gym\\[serve]"."""
    try:
        import uvicorn

        from repogym_gym.serve import SessionStore, create_app
    except ImportError as exc:
        raise typer.BadParameter(f"repogym serve needs FastAPI and uvicorn: pip install 'repogym_gym[serve]' ({exc})") from None
    if idle_timeout <= 0 or max_sessions < 1:
        raise typer.BadParameter(f"--idle-timeout must be > 0 and --max-sessions >= 1 (got {idle_timeout:g}, {max_sessions})")
    app = create_app(SessionStore(idle_timeout_s=idle_timeout, max_sessions=max_sessions))
    uvicorn.run(app, host=host, port=port, log_level="info")
