"""Tests for repogym_gym.changes: which changes of a real work tree are carried, rejected or ignored.

Each test builds a baseline directory, copies it to a work tree, changes the work tree on disk
and classifies the difference with ``collect_changes``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from repogym_gym import changes as changes_module
from repogym_gym.changes import (
    MAX_CARRIED_FILE_BYTES,
    MAX_CARRIED_TOTAL_BYTES,
    CarriedFile,
    CarryPolicy,
    ChangeSet,
    collect_changes,
)
from repogym_gym.task import Task
from repogym_gym.tree import scan_tree
from tests.helpers import CALC_SOURCE, VISIBLE_TESTS, MakeTask

PYPROJECT = """\
[project]
name = "calc"
version = "1.0"

[tool.pytest.ini_options]
addopts = "-q"

[tool.black]
line-length = 100
"""


@dataclass
class Trees:
    base: Path
    work: Path

    def collect(self, policy: CarryPolicy | None = None) -> ChangeSet:
        return collect_changes(self.work, self.base, scan_tree(self.base), policy or CarryPolicy())

    def write(self, rel: str, text: str) -> None:
        (self.work / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.work / rel).write_text(text)


@pytest.fixture
def trees(tmp_path: Path) -> Trees:
    base = tmp_path / "base"
    files = {
        "calc/__init__.py": CALC_SOURCE,
        "tests/test_calc.py": VISIBLE_TESTS,
        "pyproject.toml": PYPROJECT,
        "conftest.py": "",
        "docs/index.md": "# calc\n",
    }
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    shutil.copytree(base, tmp_path / "work", symlinks=True)
    return Trees(base, tmp_path / "work")


def verdicts(changes: ChangeSet) -> dict[str, str]:
    """path -> 'carried' | the rejection rule | 'ignored'."""
    out = {c.path: "carried" for c in changes.carried}
    out.update({r.path: r.rule for r in changes.rejected})
    out.update({p: "ignored" for p in changes.ignored})
    return out


# --- carried -------------------------------------------------------------------------------------


def test_untouched_tree_has_no_changes(trees: Trees) -> None:
    changes = trees.collect()
    assert changes == ChangeSet((), (), ())
    assert changes.empty and changes.files_changed() == []


def test_modified_added_and_deleted_files_are_carried_with_their_bytes(trees: Trees) -> None:
    trees.write("calc/__init__.py", "fixed\n")
    trees.write("calc/new.py", "new\n")
    (trees.work / "docs" / "index.md").unlink()
    changes = trees.collect()
    assert changes.carried == (
        CarriedFile("calc/__init__.py", "modified", 0o100644, b"fixed\n"),
        CarriedFile("calc/new.py", "added", 0o100644, b"new\n"),
        CarriedFile("docs/index.md", "deleted", 0, None),
    )
    assert changes.rejected == () and not changes.empty
    assert changes.files_changed() == ["calc/__init__.py", "calc/new.py", "docs/index.md"]


def test_executable_file_is_carried_with_git_mode_755(trees: Trees) -> None:
    trees.write("run.sh", "#!/bin/sh\n")
    (trees.work / "run.sh").chmod(0o755)
    (trees.work / "calc" / "__init__.py").chmod(0o755)
    assert {c.path: c.git_mode for c in trees.collect().carried} == {
        "calc/__init__.py": 0o100755,
        "run.sh": 0o100755,
    }


def test_carried_bytes_are_the_bytes_at_snapshot_time(trees: Trees) -> None:
    trees.write("calc/__init__.py", "first\n")
    changes = trees.collect()
    trees.write("calc/__init__.py", "second\n")
    assert changes.carried[0].data == b"first\n"


# --- ignored caches ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "calc/__pycache__/__init__.cpython-311.pyc",
        "__pycache__/x.pyc",
        ".pytest_cache/v/cache/lastfailed",
        "deep/er/.pytest_cache/README.md",
        "stray.pyc",
        "calc/old.pyo",
        ".mypy_cache/3.11/calc.meta.json",
        ".ruff_cache/0.1/x",
        ".hypothesis/examples/x",
    ],
)
def test_caches_are_ignored_not_carried_not_rejected(trees: Trees, rel: str) -> None:
    trees.write(rel, "cache")
    changes = trees.collect()
    assert verdicts(changes) == {rel: "ignored"}
    assert changes.empty and changes.files_changed() == []


def test_running_the_visible_tests_leaves_only_ignored_caches(trees: Trees) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests"],
        cwd=trees.work,
        env={"PATH": os.environ["PATH"], "HOME": str(trees.work.parent)},
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stdout  # test_add fails on the buggy baseline
    changes = trees.collect()
    tag = sys.implementation.cache_tag
    assert f"calc/__pycache__/__init__.{tag}.pyc" in changes.ignored
    assert any(p.startswith(".pytest_cache/") for p in changes.ignored)
    assert changes.empty and changes.files_changed() == []


# --- protected defaults --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "conftest.py",
        "tests/conftest.py",
        "a/b/c/conftest.py",
        "pytest.ini",
        "sub/pytest.ini",
        "tox.ini",
        "setup.cfg",
        "sitecustomize.py",
        "lib/usercustomize.py",
        "evil.pth",
        "site-packages/deep/x.pth",
    ],
)
def test_default_protected_files_are_rejected_at_any_depth(trees: Trees, rel: str) -> None:
    trees.write(rel, "import os\n")
    changes = trees.collect()
    assert verdicts(changes) == {rel: "protected"}
    status = "modified" if rel == "conftest.py" else "added"
    assert changes.rejected[0].reason == f"{rel} is protected ({status}); the change is not carried"
    assert changes.carried == () and not changes.empty


def test_deleting_a_protected_file_is_rejected(trees: Trees) -> None:
    (trees.work / "conftest.py").unlink()
    changes = trees.collect()
    assert verdicts(changes) == {"conftest.py": "protected"}
    assert changes.rejected[0].reason == "conftest.py is protected (deleted); the change is not carried"


def test_a_name_that_only_contains_a_protected_name_is_carried(trees: Trees) -> None:
    trees.write("my_conftest.py", "")
    trees.write("conftest.py.bak", "")
    trees.write("pth_tools.py", "")
    assert verdicts(trees.collect()) == {
        "conftest.py.bak": "carried",
        "my_conftest.py": "carried",
        "pth_tools.py": "carried",
    }


# --- pyproject.toml ------------------------------------------------------------------------------


def test_pyproject_change_outside_tool_pytest_is_carried(trees: Trees) -> None:
    trees.write("pyproject.toml", PYPROJECT.replace('version = "1.0"', 'version = "1.1"').replace("100", "88"))
    assert verdicts(trees.collect()) == {"pyproject.toml": "carried"}


def test_pyproject_change_to_tool_pytest_is_rejected(trees: Trees) -> None:
    trees.write("pyproject.toml", PYPROJECT.replace('addopts = "-q"', 'addopts = "-p no:cacheprovider"'))
    changes = trees.collect()
    assert verdicts(changes) == {"pyproject.toml": "protected"}
    assert changes.rejected[0].reason == (
        "pyproject.toml: its [tool.pytest] test settings changed; the change is not carried"
    )


def test_adding_tool_pytest_to_a_nested_pyproject_is_rejected(trees: Trees) -> None:
    (trees.base / "sub").mkdir()
    (trees.base / "sub" / "pyproject.toml").write_text('[project]\nname = "sub"\n')
    trees.write("sub/pyproject.toml", '[project]\nname = "sub"\n\n[tool.pytest.ini_options]\ntestpaths = ["x"]\n')
    assert verdicts(trees.collect()) == {"sub/pyproject.toml": "protected"}


def test_new_pyproject_with_tool_pytest_is_rejected_and_without_is_carried(trees: Trees) -> None:
    trees.write("a/pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-x'\n")
    trees.write("b/pyproject.toml", "[tool.ruff]\nline-length = 90\n")
    assert verdicts(trees.collect()) == {"a/pyproject.toml": "protected", "b/pyproject.toml": "carried"}


def test_unparseable_pyproject_is_rejected(trees: Trees) -> None:
    trees.write("pyproject.toml", PYPROJECT + "\n[[[not toml\n")
    assert verdicts(trees.collect()) == {"pyproject.toml": "protected"}


def test_deleting_a_pyproject_with_tool_pytest_is_rejected(trees: Trees) -> None:
    (trees.work / "pyproject.toml").unlink()
    assert verdicts(trees.collect()) == {"pyproject.toml": "protected"}


def test_reformatting_tool_pytest_without_changing_its_values_is_carried(trees: Trees) -> None:
    trees.write("pyproject.toml", PYPROJECT.replace('addopts = "-q"', "addopts = '-q'  # same value"))
    assert verdicts(trees.collect()) == {"pyproject.toml": "carried"}


# --- the task's own policy -----------------------------------------------------------------------


def test_fail_to_pass_and_pass_to_pass_test_files_are_protected_exactly(trees: Trees, tiny_task: Task) -> None:
    policy = CarryPolicy.for_task(tiny_task)
    trees.write("tests/test_calc.py", VISIBLE_TESTS + "\n# weakened\n")
    trees.write("tests/test_calc_hidden.py", "def test_add_negative():\n    pass\n")
    trees.write("tests/test_calc2.py", "")
    trees.write("other/tests/test_calc.py", "")
    assert verdicts(trees.collect(policy)) == {
        "tests/test_calc.py": "protected",
        "tests/test_calc_hidden.py": "protected",
        "tests/test_calc2.py": "protected",  # beside the scored tests: test support, the grader's
        "other/tests/test_calc.py": "carried",
    }


def test_deleting_a_test_file_is_rejected(trees: Trees, tiny_task: Task) -> None:
    (trees.work / "tests" / "test_calc.py").unlink()
    assert verdicts(trees.collect(CarryPolicy.for_task(tiny_task))) == {"tests/test_calc.py": "protected"}


def test_tests_restore_files_are_protected_exactly(trees: Trees, make_task: MakeTask) -> None:
    task = make_task(tests={**make_task().spec.tests.model_dump(), "restore": ["docs/index.md"]})
    trees.write("docs/index.md", "changed\n")
    trees.write("docs/other.md", "new\n")
    assert verdicts(trees.collect(CarryPolicy.for_task(task))) == {
        "docs/index.md": "protected",
        "docs/other.md": "carried",
    }


def test_allow_protected_lifts_a_default(trees: Trees, make_task: MakeTask) -> None:
    task = make_task(constraints={"allow_protected": ["conftest.py", "setup.cfg"]})
    trees.write("conftest.py", "import pytest\n")
    trees.write("pkg/conftest.py", "")
    trees.write("setup.cfg", "[metadata]\n")
    trees.write("tox.ini", "")
    assert verdicts(trees.collect(CarryPolicy.for_task(task))) == {
        "conftest.py": "carried",
        "pkg/conftest.py": "carried",
        "setup.cfg": "carried",
        "tox.ini": "protected",
    }


@pytest.mark.parametrize("allow", [["tests/test_calc.py"], ["tests/**"], ["*.py"], ["*"]])
def test_allow_protected_never_lifts_a_test_file(trees: Trees, make_task: MakeTask, allow: list[str]) -> None:
    task = make_task(constraints={"allow_protected": allow})
    trees.write("tests/test_calc.py", "def test_add():\n    pass\n")
    assert verdicts(trees.collect(CarryPolicy.for_task(task))) == {"tests/test_calc.py": "protected"}


def test_constraints_protected_files_add_globs(trees: Trees, make_task: MakeTask) -> None:
    task = make_task(constraints={"protected_files": ["docs/**", "*.lock"]})
    trees.write("docs/index.md", "x\n")
    trees.write("deps/poetry.lock", "x\n")
    trees.write("calc/__init__.py", "x\n")
    assert verdicts(trees.collect(CarryPolicy.for_task(task))) == {
        "calc/__init__.py": "carried",
        "deps/poetry.lock": "protected",
        "docs/index.md": "protected",
    }


# --- symlinks, special files, size ---------------------------------------------------------------


def test_symlinks_are_rejected_by_default(trees: Trees) -> None:
    os.symlink("calc/__init__.py", trees.work / "alias.py")
    changes = trees.collect()
    assert verdicts(changes) == {"alias.py": "symlink"}
    assert changes.rejected[0].reason == "alias.py is a symlink; symlinks are not carried"


def test_replacing_a_file_by_a_symlink_is_rejected(trees: Trees) -> None:
    (trees.work / "docs" / "index.md").unlink()
    os.symlink("/etc/hostname", trees.work / "docs" / "index.md")
    assert verdicts(trees.collect()) == {"docs/index.md": "symlink"}


def test_allowed_symlink_pointing_inside_is_carried_with_its_target(trees: Trees) -> None:
    os.symlink("../calc/__init__.py", trees.work / "docs" / "calc.py")
    os.symlink("calc", trees.work / "calc_alias")
    changes = trees.collect(CarryPolicy(allow_symlinks=True))
    assert changes.carried == (
        CarriedFile("calc_alias", "added", 0o120000, b"calc"),
        CarriedFile("docs/calc.py", "added", 0o120000, b"../calc/__init__.py"),
    )
    assert changes.rejected == ()


@pytest.mark.parametrize("target", ["/etc/passwd", "../outside", "docs/../../outside", ".", "calc/.."])
def test_allowed_symlinks_pointing_outside_or_at_the_root_are_rejected(trees: Trees, target: str) -> None:
    os.symlink(target, trees.work / "link")
    assert verdicts(trees.collect(CarryPolicy(allow_symlinks=True))) == {"link": "symlink"}


def test_nested_symlink_escaping_through_dotdot_is_rejected(trees: Trees) -> None:
    os.symlink("../../outside", trees.work / "docs" / "link")
    assert verdicts(trees.collect(CarryPolicy(allow_symlinks=True))) == {"docs/link": "symlink"}


def test_a_fifo_is_rejected_as_special(trees: Trees) -> None:
    os.mkfifo(trees.work / "calc" / "pipe")
    changes = trees.collect()
    assert verdicts(changes) == {"calc/pipe": "special"}
    assert changes.rejected[0].reason == "calc/pipe is a fifo, socket or device; only regular files are carried"


def test_a_file_over_the_size_limit_is_rejected(trees: Trees) -> None:
    with open(trees.work / "big.bin", "wb") as fh:
        fh.truncate(MAX_CARRIED_FILE_BYTES + 1)
    changes = trees.collect()
    assert verdicts(changes) == {"big.bin": "too_large"}
    assert changes.rejected[0].reason == f"big.bin is {MAX_CARRIED_FILE_BYTES + 1} bytes, over the 20971520-byte limit"


def test_files_past_the_total_carried_budget_are_rejected(trees: Trees) -> None:
    size = MAX_CARRIED_FILE_BYTES // 2
    count = MAX_CARRIED_TOTAL_BYTES // size + 2
    for i in range(count):
        (trees.work / f"blob{i:02d}.bin").write_bytes(bytes([i]) * size)
    changes = trees.collect()
    carried = [c.path for c in changes.carried]
    assert sum(len(c.data or b"") for c in changes.carried) <= MAX_CARRIED_TOTAL_BYTES
    assert carried == [f"blob{i:02d}.bin" for i in range(MAX_CARRIED_TOTAL_BYTES // size)]
    assert {r.rule for r in changes.rejected} == {"too_large"} and len(changes.rejected) == count - len(carried)
    assert changes.rejected[0].reason == (f"{changes.rejected[0].path}: the submission passes {MAX_CARRIED_TOTAL_BYTES} "
                                          "bytes of carried files in all; it is not carried")


def test_files_past_the_hashing_budget_are_rejected_unread(trees: Trees, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(changes_module, "MAX_HASHED_BYTES", 3000)
    for name in ("a.txt", "b.txt"):
        (trees.work / name).write_text("x" * 1000)
    with open(trees.work / "sparse.bin", "wb") as fh:
        fh.truncate(10**12)  # a terabyte of holes: never read
    changes = trees.collect()
    assert verdicts(changes) == {"a.txt": "carried", "b.txt": "carried", "sparse.bin": "too_large"}
    assert changes.rejected[0].reason.startswith("sparse.bin was not read: the work tree holds more than 3000 bytes")


# --- nested git metadata -------------------------------------------------------------------------


def test_git_directories_in_the_work_tree_are_skipped(trees: Trees) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(trees.work.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=trees.work, check=True, env=env)
    subprocess.run(["git", "init", "-q", "calc/vendored"], cwd=trees.work, check=True, env=env)
    (trees.work / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    assert trees.collect() == ChangeSet((), (), ())


def test_files_changed_lists_carried_and_rejected_but_not_ignored(trees: Trees) -> None:
    trees.write("calc/__init__.py", "x\n")
    trees.write("conftest.py", "x\n")
    trees.write("calc/__pycache__/a.pyc", "x")
    assert trees.collect().files_changed() == ["calc/__init__.py", "conftest.py"]


# --- what the agent can make the host parse ---------------------------------------------------------


def test_a_path_that_is_not_utf8_is_rejected_and_shown_as_valid_utf8(trees: Trees) -> None:
    (trees.work / os.fsdecode(b"calc/bad\xff.py")).write_text("x = 1\n")
    changes = trees.collect()
    [rejection] = changes.rejected
    assert rejection.rule == "bad_name" and rejection.path == "calc/bad\ufffd.py"
    assert "b'calc/bad\\xff.py' is not valid UTF-8" in rejection.reason
    rejection.reason.encode("utf-8")
    assert changes.files_changed() == ["calc/bad\ufffd.py"]


def test_a_directory_nested_past_path_max_is_rejected_not_raised(trees: Trees) -> None:
    deep = os.open(trees.work, os.O_RDONLY)
    for _ in range(20):
        os.mkdir("d" * 250, dir_fd=deep)
        child = os.open("d" * 250, os.O_RDONLY, dir_fd=deep)
        os.close(deep)
        deep = child
    os.close(deep)
    [rejection] = trees.collect().rejected
    assert rejection.rule == "too_long" and len(rejection.path) < 200 and "1024-byte limit" in rejection.reason


@pytest.mark.parametrize("text", [
    "a = " + "[" * 5000 + "]" * 5000 + "\n",        # tomllib recurses per array
    "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n",  # and per inline table
])
def test_a_pyproject_too_deep_for_the_parser_is_rejected_not_raised(trees: Trees, text: str) -> None:
    trees.write("pyproject.toml", text)
    [rejection] = trees.collect().rejected
    assert rejection.rule == "protected" and "[tool.pytest]" in rejection.reason


def test_a_fifo_or_huge_sparse_pyproject_is_never_read(trees: Trees) -> None:
    """Read in full or waited on, these held the host (a read of all its bytes; one that never returns)."""
    (trees.work / "sub").mkdir()
    os.mkfifo(trees.work / "sub" / "pyproject.toml")
    with open(trees.work / "pyproject.toml", "r+b") as fh:
        fh.truncate(100 * 1024 * 1024)
    assert verdicts(trees.collect()) == {"sub/pyproject.toml": "special", "pyproject.toml": "protected"}


def test_an_allowed_symlink_whose_target_is_not_utf8_is_carried_as_bytes(trees: Trees) -> None:
    os.symlink(b"docs/x\xff.md", os.fsencode(trees.work / "link"))
    [carried] = trees.collect(CarryPolicy(allow_symlinks=True)).carried
    assert carried.git_mode == 0o120000 and carried.data == b"docs/x\xff.md"
