"""Tests for repogym_gym.sandbox.slots: one uid per concurrent command, and handing trees over."""

from __future__ import annotations

import doctest
import fcntl
import os
import sys
import threading
from pathlib import Path

import pytest

from repogym_gym.errors import SandboxError
from repogym_gym.sandbox import slots as slots_module
from repogym_gym.sandbox.slots import SlotPool, check_handable, hand_over

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing owners needs root")


def test_concurrent_holders_get_distinct_uids(tmp_path: Path) -> None:
    pool = SlotPool(first_uid=61000, size=8, lock_dir=tmp_path)
    held: list[int] = []
    barrier = threading.Barrier(8)

    def hold() -> None:
        with pool.slot() as uid:
            held.append(uid)
            barrier.wait(timeout=10)  # all eight hold a slot at once

    threads = [threading.Thread(target=hold) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(held) == sorted(set(held)) and len(held) == 8


def test_a_slot_locked_by_another_process_is_skipped(tmp_path: Path) -> None:
    pool = SlotPool(first_uid=61000, size=2, lock_dir=tmp_path)
    first = pool.uids[0]
    # another process's lock: an independent open file description holding the flock
    fd = os.open(tmp_path / f"{first}.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        for _ in range(4):
            with pool.slot() as uid:
                assert uid != first
    finally:
        os.close(fd)


def test_a_busy_pool_raises_after_waiting(tmp_path: Path) -> None:
    pool = SlotPool(first_uid=61000, size=1, lock_dir=tmp_path, wait_s=0.05)
    with pool.slot(), pytest.raises(SandboxError, match=r"all 1 sandbox slots stayed busy for 0.05 s"), pool.slot():
        pass


def test_a_lock_directory_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give the directory away")
    os.chown(tmp_path, 61999, 61999)
    with pytest.raises(SandboxError, match="belongs to uid 61999"), SlotPool(lock_dir=tmp_path).slot():
        pass


def test_uids_that_name_real_users_are_never_handed_out() -> None:
    pool = SlotPool(first_uid=65533, size=3)  # 65534 is 'nobody' on Debian
    assert 65534 not in pool.uids and pool.uids


@needs_root
def test_hand_over_gives_the_tree_to_the_uid(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "mod.py").write_text("x = 1\n")
    assert hand_over([tree], 61007) == 3
    assert {p.stat().st_uid for p in (tree, tree / "pkg", tree / "pkg" / "mod.py")} == {61007}
    assert hand_over([tree], 61007) == 0  # nothing left to change


@needs_root
def test_hand_over_never_reaches_host_files_through_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("host file\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    os.link(outside, tree / "hard")
    (tree / "soft").symlink_to(outside)
    hand_over([tree], 61007)
    assert outside.stat().st_uid == 0
    assert (tree / "soft").lstat().st_uid == 61007  # the link itself changes hands


@needs_root
def test_hand_over_leaves_files_of_unrelated_owners_alone(tmp_path: Path) -> None:
    (tmp_path / "theirs").write_text("")
    os.chown(tmp_path / "theirs", 4242, 4242)
    hand_over([tmp_path], 61007, reclaim=[61001])
    assert (tmp_path / "theirs").stat().st_uid == 4242


def test_slots_docstring_examples_run() -> None:
    assert doctest.testmod(slots_module).failed == 0


def test_a_preferred_free_uid_is_handed_out_and_a_busy_one_skipped(tmp_path: Path) -> None:
    pool = SlotPool(first_uid=61000, size=4, lock_dir=tmp_path)
    wanted = pool.uids[2]
    with pool.slot(prefer=wanted) as uid:
        assert uid == wanted
        with pool.slot(prefer=wanted) as other:
            assert other != wanted
    with pool.slot(prefer=12345) as uid:  # not a pool uid: ignored
        assert uid in pool.uids


@pytest.mark.parametrize("shared", ["/", "/tmp", "/work", "~", "cwd", "interpreter"])
def test_shared_directories_are_never_handed_over(shared: str) -> None:
    """Bug: a command run with cwd="/tmp" gave the host's whole /tmp to uid 61000. Checked without
    handing anything over, so a regression here cannot do that again."""
    path = {"~": os.path.expanduser("~"), "cwd": os.getcwd(), "interpreter": sys.prefix}.get(shared, shared)
    with pytest.raises(SandboxError, match="refusing to hand .* to a sandbox uid"):
        check_handable(path)


def test_a_sticky_directory_is_refused_and_nothing_changes_hands(tmp_path: Path) -> None:
    ok, shared = tmp_path / "ok", tmp_path / "shared"
    ok.mkdir()
    (shared / "someone").mkdir(parents=True)
    shared.chmod(0o1777)
    before = {p: p.lstat().st_uid for p in (ok, shared, shared / "someone")}
    with pytest.raises(SandboxError, match="shared \\(sticky\\) directory"):
        hand_over([ok, shared], 61007)
    assert {p: p.lstat().st_uid for p in before} == before  # refused before anything changed hands


def test_a_directory_made_for_the_command_is_handable(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert check_handable(workspace) == os.path.realpath(workspace)
