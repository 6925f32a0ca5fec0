"""repogym_gym.answers: the golden hunks a scan looks for, and what it finds of them."""

from __future__ import annotations

import difflib
import shutil
import tempfile
from pathlib import Path

import pytest

from repogym_gym.answers import AnswerCopy, golden_hunks, scan_for_answers
from repogym_gym.baseline import BaselineStore
from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE, MakeTask
from tests.sandbox.helpers import require_bwrap

# validation walks the system directories, where a red-team test plants golden look-alikes
pytestmark = pytest.mark.usefixtures("system_dirs")

#: A module of 30 functions; the golden patch fixes one in the middle.
LONG_SOURCE = "".join(f"def f{i}(a, b):\n    return a * b + {i}\n\n\n" for i in range(30))
LONG_FIXED = LONG_SOURCE.replace("return a * b + 15\n", "return a * b - 15\n")


def patch_for(rel: str, old: str, new: str) -> str:
    body = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{rel}", f"b/{rel}"))
    return f"diff --git a/{rel} b/{rel}\n{body}"


def long_task(make_task: MakeTask) -> Task:
    return make_task(files={"calc/long.py": LONG_SOURCE}, patch=patch_for("calc/long.py", LONG_SOURCE, LONG_FIXED))


def test_a_hunk_is_the_changed_lines_with_two_non_blank_lines_of_context(make_task: MakeTask, tmp_path: Path) -> None:
    task = long_task(make_task)
    [hunk] = golden_hunks(task, BaselineStore(tmp_path / "cache").get(task))
    assert hunk.path == "calc/long.py" and hunk.line == 58  # f14's return, in the golden file
    assert hunk.lines == ("return a * b + 14", "def f15(a, b):", "return a * b - 15", "def f16(a, b):", "return a * b + 16")


def test_a_hunk_the_baseline_already_holds_is_not_looked_for(make_task: MakeTask, tmp_path: Path) -> None:
    """It tells nothing apart: every workspace shows it."""
    twice = CALC_SOURCE + "\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    fixed = twice.replace("return a - b", "return a + b", 1)
    task = make_task(files={"calc/__init__.py": twice}, patch=patch_for("calc/__init__.py", twice, fixed))
    assert golden_hunks(task, BaselineStore(tmp_path / "cache").get(task)) == []


def test_a_near_copy_anywhere_in_sight_is_found_by_its_hunk(make_task: MakeTask) -> None:
    """Another release of the module: reformatted, with a function more, its bytes differ from the
    golden file's, as jmespath 0.10.0's visitor.py in a cloud SDK differs from 1.0.1's."""
    bwrap = require_bwrap()
    task = long_task(make_task)
    release = Path(tempfile.mkdtemp(prefix="repogym-answers-release-", dir="/var/cache"))
    try:
        (release / "calc").mkdir()
        near = "# release 0.9\n" + LONG_FIXED.replace("    return", "        return").replace("\n\n\n", "\n\n") + "def extra():\n    pass\n"
        (release / "calc" / "long.py").write_text(near)
        (release / "unrelated.py").write_text(LONG_FIXED)  # another name: not read for hunks
        release.chmod(0o755)
        scan = scan_for_answers(task, bwrap.scoped(reveal=[release]))
    finally:
        shutil.rmtree(release)
    assert scan.error is None and scan.hunks == 1
    assert AnswerCopy(golden="calc/long.py", found=f"{release}/calc/long.py", kind="hunk", line=58) in scan.copies
    assert AnswerCopy(golden="calc/long.py", found=f"{release}/unrelated.py", kind="file") in scan.copies  # same bytes
    assert not [c for c in scan.copies if c.found.endswith("unrelated.py") and c.kind == "hunk"]
    assert not [c for c in scan.copies if c.found.startswith("/work") or "/repo/" in c.found], scan.copies


def test_a_single_module_release_of_a_package_is_found_by_its_hunk(make_task: MakeTask) -> None:
    """``calc/__init__.py`` was ``calc.py`` in an older release (tabulate 0.8 was one module)."""
    bwrap = require_bwrap()
    task = make_task()
    release = Path(tempfile.mkdtemp(prefix="repogym-answers-module-", dir="/var/cache"))
    try:
        (release / "calc.py").write_text('"""calc 0.1"""\n\ndef add(a, b):\n\treturn a + b\n\ndef sub(a, b):\n\treturn a - b\n')
        release.chmod(0o755)
        scan = scan_for_answers(task, bwrap.scoped(reveal=[release]))
    finally:
        shutil.rmtree(release)
    assert [c.describe() for c in scan.copies] == [f"calc/__init__.py at {release}/calc.py (hunk at line 1)"]


def test_the_tasks_own_buggy_file_and_a_bare_sandbox_show_no_hunk(make_task: MakeTask) -> None:
    bwrap = require_bwrap()
    scan = scan_for_answers(long_task(make_task), bwrap)
    assert scan.error is None and scan.copies == [] and scan.hunks == 1 and scan.scanned > 1000
