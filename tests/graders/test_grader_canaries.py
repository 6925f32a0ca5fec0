"""Canaries planted in scored test files: valid Python, named like their neighbours, always failing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from repogym_gym.graders.testrun import _plant_canaries
from repogym_gym.spec import TestSpec

TEST_FILE = '''\
import pytest


def helper():
    return 3


def test_multiline_expected_output():
    expected = """\\
line one
  line two"""
    assert expected.splitlines()[0] == "line one"


def test_uses_skip():
    pytest.skip("optional dependency missing")


def test_plain_arithmetic():
    assert helper() + 1 == 4


def test_another_plain_check():
    assert [helper()] * 2 == [3, 3]
'''


def test_canaries_compile_fail_and_look_like_their_neighbours(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text(TEST_FILE)
    spec = TestSpec(command="python -m pytest -q --junitxml={junit} tests",
                    fail_to_pass=["tests/test_mod.py::test_plain_arithmetic"])
    for attempt in range(10):  # random donors, names and positions
        (tmp_path / "tests" / "test_mod.py").write_text(TEST_FILE)
        canaries = _plant_canaries(tmp_path, spec)
        assert canaries and all(c.startswith("tests/test_mod.py::test_") for c in canaries)
        words = {w for name in ("multiline_expected_output", "uses_skip", "plain_arithmetic", "another_plain_check")
                 for w in name.split("_")}
        assert all(set(c.rsplit("::", 1)[1].split("_")[1:]) <= words for c in canaries), canaries
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "tests"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120).stdout
        for canary in canaries:
            assert f"FAILED {canary}" in out, (attempt, out[-2000:])
        assert "4 passed" in out or "3 passed" in out, out[-500:]  # the real tests still run
