"""Helpers shared by the tests of redteam (plain functions and constants; the fixtures are in conftest.py)."""

from __future__ import annotations

import os
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from repogym_gym.episode import Episode, StepResult
from repogym_gym.errors import SandboxUnavailableError
from repogym_gym.interpreters import running_version
from repogym_gym.sandbox import Sandbox, make_sandbox
from repogym_gym.venvs import grader_python

#: Sandbox name -> whether it confines the host (filesystem, network, processes). Add "docker": True.
SANDBOXES: dict[str, bool] = {"local": False, "bwrap": True, "docker": True}


#: The table's columns; a column with no entry in SANDBOXES is "pending".
TABLE_SANDBOXES = ("local", "bwrap", "docker")


#: Outcomes a sandbox does not promise to stop; tests are not run for them.
NOT_RUN = ("not stopped", "n/a")


GUARDRAIL = "not stopped (guardrail)"


#: The CPython version the judged processes of these tests run on: the grader's test environment's,
#: ``$REPOGYM_GRADER_PYTHON`` when set (``tests/test_interpreters.py`` runs the judge's tests on 3.12).
JUDGED_PYTHON = tuple(int(p) for p in (grader_python() or running_version()).split("."))


TEST_ADD = "tests/test_calc.py::test_add"


HIDDEN_ID = "tests/test_calc_hidden.py::test_add_negative"


# A conftest / plugin body that turns every test outcome into a pass.
FORCE_PASS = textwrap.dedent(
    """\
    import pytest


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome = "passed"
        report.longrepr = None
    """
)


def attack(group: str, name: str, *, local: str, confining: str) -> pytest.MarkDecorator:
    """Mark a test as the attack ``name`` of ``group`` with its outcome per kind of sandbox."""
    return pytest.mark.attack(group=group, name=name, local=local, confining=confining)


def outcome_in(marker: pytest.Mark, sandbox_name: str) -> str:
    """The declared outcome of an attack marker in one sandbox."""
    return marker.kwargs["confining" if SANDBOXES.get(sandbox_name, True) else "local"]


def runs_in(marker: pytest.Mark, sandbox_name: str) -> bool:
    return not outcome_in(marker, sandbox_name).startswith(NOT_RUN)


def require_sandbox(name: str, **kwargs: Any) -> Sandbox:
    """The sandbox ``name``, or a skip (a failure under CI=true) naming why it cannot run."""
    try:
        return make_sandbox(name, **kwargs)
    except SandboxUnavailableError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true requires the {name} sandbox, which cannot run here: {exc}")
        pytest.skip(f"{name} sandbox unavailable: {exc}")


Start = Callable[..., Episode]


def processes_in(tree: Path) -> list[int]:
    """Live processes whose working directory is ``tree`` or below it (any sandbox, any uid).

    Other users of this machine run sandboxes too, so processes are told apart by where they
    work, not by the uid they run as.
    """
    found = []
    prefix = str(tree).rstrip("/") + "/"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if (cwd == str(tree) or cwd.startswith(prefix)) and state != "Z":
            found.append(int(entry.name))
    return found


def wait_for_no_processes_in(tree: Path, timeout_s: float = 5.0) -> list[int]:
    """:func:`processes_in` once it is empty or ``timeout_s`` passed (killed processes take a moment)."""
    deadline = time.monotonic() + timeout_s
    while (left := processes_in(tree)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


# -- acting as the agent ---------------------------------------------------------------------


def act(env: Episode, kind: str, **fields: Any) -> StepResult:
    """One step of the env's own action space."""
    return env.step({"kind": kind, **fields})


def run(env: Episode, command: str) -> StepResult:
    """A Run action (the allowlisted shell)."""
    return act(env, "run", command=command)


def write(env: Episode, path: str, content: str) -> StepResult:
    result = act(env, "write", path=path, content=content)
    assert result.observation.error is None, result.observation.text
    return result


def script(env: Episode, code: str, name: str = "attack.py") -> StepResult:
    """Write a Python script into the workspace and run it (``python`` is allowlisted)."""
    write(env, name, textwrap.dedent(code))
    return run(env, f"python {name}")


def submit(env: Episode) -> StepResult:
    result = act(env, "submit")
    assert result.terminated, result.observation.text
    return result


def assert_unearned_zero(result: StepResult) -> None:
    """The graded reward is exactly 0, not passed, and not masked as an infrastructure failure."""
    info = result.info
    assert info.get("infra_error") is None, info.get("infra_error")
    assert result.reward == 0.0 and info["score"] == 0.0, result.observation.text[-2000:]
    assert info["passed"] is False


def component(result: StepResult, name: str) -> dict[str, Any]:
    """The grade component called ``name`` (as JSON)."""
    found = [c for c in result.info["grade"]["components"] if c["name"] == name]
    assert found, f"no {name!r} component in {result.info['grade']['components']}"
    return found[0]


def violations(result: StepResult, check: str = "protected_files") -> list[str]:
    """The constraint grader's violations of one check."""
    return component(result, "constraints")["details"]["checks"][check]


def messages(result: StepResult) -> list[str]:
    return [m for c in result.info["grade"]["components"] for m in c["messages"]]
