"""The package's public surface: one sorted, importable __all__, and a cheap import."""

from __future__ import annotations

import subprocess
import sys

import repogym_gym


def test_all_is_sorted_and_every_name_resolves() -> None:
    names = repogym_gym.__all__
    assert names == sorted(names)
    assert len(names) == len(set(names))
    missing = [n for n in names if not hasattr(repogym_gym, n)]
    assert missing == []


def test_parse_junit_xml_is_exported_from_the_package() -> None:
    from repogym_gym.junit import parse_junit_xml

    assert repogym_gym.parse_junit_xml is parse_junit_xml


def test_import_creates_no_directories_and_prints_nothing(tmp_path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    proc = subprocess.run([sys.executable, "-c", "import repogym_gym"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    assert list(tmp_path.iterdir()) == []
