"""Helpers of the integration tests (plain functions; the fixtures are in conftest.py)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def require_library(module: str, extra: str) -> ModuleType:
    """``module`` imported, or a skip (a failure under CI=true) naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true requires {module} (pip install 'repogym_gym[{extra}]'): {exc}")
        pytest.skip(f"{module} is not installed (pip install 'repogym_gym[{extra}]')")
