"""``repogym serve``: episodes behind an HTTP server (:mod:`repogym_gym.serve`), or OpenEnv's HTTP and
WebSocket server (:mod:`repogym_gym.integrations.openenv`), for remote trainers."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["serve_command"]


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default: the server runs any task it can read).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    idle_timeout: Annotated[float, typer.Option("--idle-timeout", help="Seconds a session may stay unused before it is closed.")] = 600.0,
    max_sessions: Annotated[int, typer.Option("--max-sessions", help="Most concurrent sessions.")] = 64,
    openenv: Annotated[bool, typer.Option("--openenv", help="Serve OpenEnv's protocol (WebSocket /ws sessions; client: "
                                          "openenv's GenericEnvClient) instead of RepoGym's own HTTP sessions.")] = False,
    suite: Annotated[list[str] | None, typer.Option(help="With --openenv: register this suite's tasks (a bundled name or a "
                                                    "directory; repeatable) so a reset can name them.")] = None,
    env_id: Annotated[str | None, typer.Option("--env-id", help="With --openenv: the task a reset plays when it names none.")] = None,
    sandbox: Annotated[str | None, typer.Option(help="With --openenv: the sandbox of every session (auto by default).")] = None,
    reward: Annotated[str | None, typer.Option(help="With --openenv: the reward kind of every session (each task's "
                                               "default when not given).")] = None,
) -> None:
    """Serve episodes: each session is one env with its own workspace (client: repogym_gym.gym.remote.RemoteEnv,
    or with --openenv any OpenEnv client). Needs the serve extra: pip install "repogym_gym\\[serve]" (--openenv: the
    openenv extra)."""
    if idle_timeout <= 0 or max_sessions < 1:
        raise typer.BadParameter(f"--idle-timeout must be > 0 and --max-sessions >= 1 (got {idle_timeout:g}, {max_sessions})")
    if not openenv and (suite or env_id or sandbox or reward):
        raise typer.BadParameter("--suite, --env-id, --sandbox and --reward belong to --openenv (RepoGym's own sessions "
                                 "choose them per session)")
    try:
        import uvicorn

        if openenv:
            from repogym_gym.integrations.openenv import create_openenv_app
        else:
            from repogym_gym.serve import SessionStore, create_app
    except ImportError as exc:
        extra = "openenv" if openenv else "serve"
        raise typer.BadParameter(f"repogym serve needs {'openenv-core' if openenv else 'FastAPI and uvicorn'}: "
                                 f"pip install 'repogym_gym[{extra}]' ({exc})") from None
    if openenv:
        from repogym_gym.gym import register_suite

        for name in suite or ():
            register_suite(name)
        try:
            app = create_openenv_app(env_id, sandbox=sandbox, reward=reward, max_sessions=max_sessions,
                                     idle_timeout_s=idle_timeout)
        except ValueError as exc:  # a bad --sandbox, --env-id or --reward: refused at start, not in every session
            raise typer.BadParameter(str(exc)) from None
    else:
        app = create_app(SessionStore(idle_timeout_s=idle_timeout, max_sessions=max_sessions))
    uvicorn.run(app, host=host, port=port, log_level="info")
