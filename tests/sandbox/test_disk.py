"""Tests for repogym_gym.sandbox.disk and the ``watch`` of run_process: a command past its disk limit is stopped."""

from __future__ import annotations

import doctest
import os
import sys
from pathlib import Path

from repogym_gym.sandbox import disk as disk_module
from repogym_gym.sandbox.disk import DiskWatch, tree_bytes
from repogym_gym.sandbox.process import run_process

_MB = 1024 * 1024


def test_tree_bytes_counts_sizes_sparse_files_and_inodes_and_a_hard_linked_file_once(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.bin").write_bytes(b"x" * _MB)
    os.link(tmp_path / "d" / "a.bin", tmp_path / "b.bin")
    assert tree_bytes([tmp_path / "d"]) == _MB
    with open(tmp_path / "sparse.bin", "wb") as fh:
        fh.truncate(100 * _MB)  # allocates nothing, but hashing it reads 100 MiB
    for i in range(10):
        (tmp_path / f"empty{i}").touch()
    assert tree_bytes([tmp_path]) == _MB + 100 * _MB + 10 * 4096 + 4096  # d itself counts one block


def test_the_watch_says_nothing_under_the_limit_and_why_over_it(tmp_path: Path) -> None:
    watch = DiskWatch([tmp_path], limit_bytes=4 * _MB, step_bytes=_MB, walk_every_s=3600)
    (tmp_path / "small.bin").write_bytes(b"x" * (2 * _MB))
    os.sync()
    assert watch() is None
    (tmp_path / "big.bin").write_bytes(b"x" * (4 * _MB))
    os.sync()
    assert watch() == "the command's directories hold 6 MiB, over the disk limit of 4 MiB (limits.disk_mb)"


def test_run_process_kills_a_command_its_watch_stops(tmp_path: Path) -> None:
    calls: list[int] = []

    def watch() -> str | None:
        calls.append(1)
        return "enough" if len(calls) >= 3 else None

    result = run_process([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path, env={}, timeout_s=60,
                         watch=watch)
    assert result.exit_code == -9 and not result.timed_out and result.duration_s < 10
    assert result.stderr.endswith("[killed by repogym: enough]\n")


def test_disk_docstring_examples_run() -> None:
    assert doctest.testmod(disk_module).failed == 0


def test_the_watch_counts_the_trees_periodically_when_the_filesystem_does_not_grow(tmp_path: Path) -> None:
    """Sparse files and empty files allocate (almost) nothing; the periodic count still sees them."""
    watch = DiskWatch([tmp_path], limit_bytes=4 * _MB, walk_every_s=0.0)
    with open(tmp_path / "sparse.bin", "wb") as fh:
        fh.truncate(8 * _MB)
    assert watch() == "the command's directories hold 8 MiB, over the disk limit of 4 MiB (limits.disk_mb)"


def _nested_past_path_max(start: Path) -> int:
    """20 directories of 250 bytes below ``start`` (5,000 bytes of path); the deepest one's descriptor."""
    fd = os.open(start, os.O_RDONLY)
    for _ in range(20):
        os.mkdir("d" * 250, dir_fd=fd)
        child = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    return fd


def test_tree_bytes_counts_files_below_a_directory_nested_past_path_max(tmp_path: Path) -> None:
    fd = _nested_past_path_max(tmp_path)
    for i in range(3):
        with open(os.open(f"f{i}", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as fh:
            fh.write(b"x" * (4 * _MB))
    os.close(fd)
    assert tree_bytes([tmp_path]) == 12 * _MB + 20 * 4096


def test_tree_bytes_counts_a_chain_3000_directories_deep(deep_dir: Path) -> None:
    fd = os.open(deep_dir, os.O_RDONLY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    assert tree_bytes([deep_dir]) == 3000 * 4096


def test_a_tree_that_cannot_be_counted_fails_closed(tmp_path: Path) -> None:
    """What cannot be counted counts as over the limit (here a tree that is not a directory)."""
    (tmp_path / "tree").mkdir()
    watch = DiskWatch([tmp_path / "tree"], limit_bytes=4 * _MB, walk_every_s=0.0)
    (tmp_path / "tree").rmdir()
    (tmp_path / "tree").write_text("not a directory")
    stopped = watch()
    assert stopped is not None and stopped.startswith("the command's directories cannot be counted for the disk limit of 4 MiB")


def test_a_tree_that_is_gone_holds_nothing(tmp_path: Path) -> None:
    assert tree_bytes([tmp_path / "missing"]) == 0
