"""Fixtures of the sandbox tests: a bubblewrap and a Docker sandbox, and helpers that look for survivors.

Without bubblewrap (or a Docker engine with the base image) those tests skip, except under
``CI=true``, where a missing sandbox is a failure (CI installs and starts them; a silently
skipped boundary is no boundary)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from repogym_gym.sandbox.bwrap import BubblewrapSandbox
from repogym_gym.sandbox.docker import DockerSandbox
from tests.sandbox.helpers import (
    require_bwrap,
    require_docker,
)


@pytest.fixture
def docker_sandbox() -> Iterator[DockerSandbox]:
    """The Docker sandbox with default limits, closed (every container removed) after the test."""
    sandbox = require_docker()
    yield sandbox
    sandbox.close()


@pytest.fixture
def bwrap() -> BubblewrapSandbox:
    """The bubblewrap sandbox with default limits."""
    return require_bwrap()
