"""The red-team harness: each attack declared once, run in every sandbox it applies to.

Every test is one attack, carried out through the env's own actions (read, write, edit, run,
test, submit) as an agent would, with the task's bug left unfixed. Its :func:`attack` marker
names its row of the attack × sandbox table (``tests/redteam/README.md``) and the outcome in
each kind of sandbox:

- ``local``: under LocalSandbox, a guardrail;
- ``confining``: under every sandbox that confines the host (bwrap now, docker next).

An outcome that starts with "not stopped" or "n/a" is not run (the attack is beyond what that
sandbox promises, and the test's docstring says so); every other outcome is asserted by the test.
The sandboxes are :data:`SANDBOXES`: adding Docker is one entry there. A sandbox that cannot run
on this machine skips, except under ``CI=true``, where it fails (a silently skipped boundary is
no boundary), as ``tests/sandbox/helpers.py`` does for bwrap."""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repogym_gym.episode import Episode
from repogym_gym.sandbox import Sandbox
from tests.redteam.helpers import (
    SANDBOXES,
    Start,
    require_sandbox,
    runs_in,
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "attack(group, name, local, confining): a red-team attack and its outcomes")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``sandbox_name`` over the sandboxes the test's attack applies to."""
    if "sandbox_name" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("attack")
    names = [n for n in SANDBOXES if marker is None or runs_in(marker, n)]
    metafunc.parametrize("sandbox_name", names)


@pytest.fixture
def sandbox(sandbox_name: str) -> Iterator[Sandbox]:
    """The sandbox under test (see :data:`SANDBOXES`)."""
    box = require_sandbox(sandbox_name)
    yield box
    box.close()


@pytest.fixture
def confines(sandbox_name: str) -> bool:
    """Whether the sandbox under test confines the host."""
    return SANDBOXES[sandbox_name]


@pytest.fixture
def start(sandbox: Sandbox) -> Iterator[Start]:
    """Factory: ``start(task, **Episode options) -> Episode`` reset and running in the sandbox."""
    envs: list[Episode] = []

    def factory(task: Any, **options: Any) -> Episode:
        env = Episode(task, sandbox=sandbox, **options)
        envs.append(env)
        _, info = env.reset()
        assert "infra_error" not in info, info
        return env

    yield factory
    for env in envs:
        env.close()


@pytest.fixture
def host_dir() -> Iterator[Path]:
    """A fresh directory on the host outside /tmp (whose host copy no sandboxed command sees
    anyway), so only the sandbox's own hiding stands between a command and what is put here."""
    path = Path("/var/cache") / f"repogym-redteam-{secrets.token_hex(4)}"
    path.mkdir(mode=0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
