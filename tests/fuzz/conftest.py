"""The fuzz tests' task: the tiny calc task, made once per module."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from repogym_gym.task import Task, load_task
from tests.helpers import CALC_SOURCE, GOLDEN_PATCH, HIDDEN_TESTS, VISIBLE_TESTS, tiny_spec


@pytest.fixture(scope="module")
def fuzz_task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    root: Path = tmp_path_factory.mktemp("fuzz-task")
    for rel, text in {"repo/calc/__init__.py": CALC_SOURCE, "repo/tests/test_calc.py": VISIBLE_TESTS,
                      "hidden/tests/test_calc_hidden.py": HIDDEN_TESTS, "solution.patch": GOLDEN_PATCH}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "task.yaml").write_text(yaml.safe_dump(tiny_spec(), sort_keys=False))
    return load_task(root)
