"""``repogym envs build [NAME]``: build an environment image of ``envs/`` on the Docker engine."""

from __future__ import annotations

from typing import Annotated

import typer

from repogym_gym.cli.output import stdout_console
from repogym_gym.sandbox.images import build_image

__all__ = ["build_command", "envs_app"]

envs_app = typer.Typer(help="Environment images of the Docker sandbox (envs/<name>/env.toml).", no_args_is_help=True)


@envs_app.command("build")
def build_command(
    name: Annotated[str, typer.Argument(help="Recipe under envs/ (a directory holding env.toml).")] = "base",
    force: Annotated[bool, typer.Option("--force", help="Re-import even when the image is up to date.")] = False,
) -> None:
    """Build NAME's image (debootstrap + docker import) on $REPOGYM_DOCKER_HOST; a no-op when it is up to date."""
    result = build_image(name, force=force)
    if not result.built:
        what = "up to date, not rebuilt"
    else:
        what = "built from the cached root tarball" if result.tarball_cached else "built (debootstrap + import)"
    stdout_console().print(f"{result.image} ({result.image_id[7:19]}): {what} in {result.duration_s:.1f} s", highlight=False)
