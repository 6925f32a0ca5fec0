"""Gym test fixtures: the tiny task registered as a gym id, and a clean registry per test."""

from __future__ import annotations

import pytest

from repogym_gym.gym import register_suite


@pytest.fixture(autouse=True)
def _restore_registry(restore_registry: None) -> None:
    """Ids registered by a test are removed after it (tasks of different tests share ids)."""


@pytest.fixture
def tiny_gym_id(tiny_task) -> str:
    """Register the tiny task's directory as a one-task suite and return its gym id."""
    [env_id] = register_suite(tiny_task.root.parent)
    return env_id
