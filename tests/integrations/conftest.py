"""Fixtures of the integration tests, which run against the real libraries (optional extras; see helpers.require_library)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _restore_registry(restore_registry: None) -> None:
    """Ids registered by a test are removed after it (tasks of different tests share ids)."""
