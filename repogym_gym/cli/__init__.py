"""Command-line interface (``repogym``)."""

from repogym_gym.cli.app import app, main

__all__ = ["app", "main"]
