"""Helpers shared by the tests (plain functions and constants; the fixtures are in conftest.py)."""

from __future__ import annotations

import difflib
import os
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repogym_gym.graders.composite import CompositeGrader
from repogym_gym.grading import grade_workspace
from repogym_gym.results import GradeResult
from repogym_gym.task import Task
from repogym_gym.workspace import Workspace

REPO_ROOT = Path(__file__).resolve().parents[1]


STARTER = REPO_ROOT / "task_suites" / "starter"


CALC_SOURCE = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


VISIBLE_TESTS = textwrap.dedent(
    """\
    from calc import add, sub


    def test_add():
        assert add(2, 3) == 5


    def test_sub():
        assert sub(5, 3) == 2


    def test_sub_zero():
        assert sub(1, 0) == 1
    """
)


HIDDEN_TESTS = textwrap.dedent(
    """\
    from calc import add


    def test_add_negative():
        assert add(-2, -3) == -5
    """
)


GOLDEN_PATCH = textwrap.dedent(
    """\
    diff --git a/calc/__init__.py b/calc/__init__.py
    --- a/calc/__init__.py
    +++ b/calc/__init__.py
    @@ -1,5 +1,5 @@
     def add(a, b):
    -    return a - b
    +    return a + b
     
     
     def sub(a, b):
    """
)


FIXED_SOURCE = CALC_SOURCE.replace("return a - b", "return a + b", 1)


def tiny_spec(**overrides: Any) -> dict[str, Any]:
    """The tiny task's task.yaml as a dict; top-level keys in ``overrides`` replace the defaults."""
    spec: dict[str, Any] = {
        "id": "tiny-calc",
        "type": "bugfix",
        "problem_statement": "add(2, 3) returns -1 instead of 5.",
        "tests": {
            "command": "python -m pytest -q --junitxml={junit} tests",
            "fail_to_pass": ["tests/test_calc.py::test_add", "tests/test_calc_hidden.py::test_add_negative"],
            "pass_to_pass": ["tests/test_calc.py::test_sub", "tests/test_calc.py::test_sub_zero"],
        },
        "limits": {"max_steps": 10, "test_timeout_s": 60},
        "tags": ["tiny"],
    }
    spec.update(overrides)
    return spec


MakeTask = Callable[..., Task]


def grade_files(task: Task, files: dict[str, str], grader: CompositeGrader | None = None, *, patch: str = "") -> GradeResult:
    """Grade a submission that applies ``patch`` and then writes ``files`` (path -> text) into a fresh
    workspace; ``grader=None`` runs the task's own pipeline."""
    with Workspace.create(task) as ws:
        ws.apply_patch(patch)
        for rel, text in files.items():
            ws.write(rel, text)
        return grade_workspace(ws, grader=grader)


def make_patch(rel: str, old: str, new: str) -> str:
    """A git-format patch turning ``old`` into ``new`` at ``rel``."""
    body = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{rel}", f"b/{rel}"))
    return f"diff --git a/{rel} b/{rel}\n{body}"


#: A git environment that reads no user or system config, with a fixed author, committer and date.
GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000", "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
}


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with :data:`GIT_ENV` (60 s at most); its stdout, stripped.

    Raises:
        subprocess.CalledProcessError: when git exits non-zero.
    """
    return subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True, text=True,
                          timeout=60).stdout.strip()
