"""HistoryMiner end to end on small real git repositories (and sdists): tasks, rejections, validation."""

from __future__ import annotations

import hashlib
import io
import subprocess
import tarfile
import textwrap
from pathlib import Path

import pytest

from repogym_gym.baseline import default_cache_dir
from repogym_gym.errors import GitMetadataError
from repogym_gym.mine.history import HistoryOptions, mine_history, mine_releases
from repogym_gym.spec import TestSpec
from repogym_gym.task import load_task
from repogym_gym.validate import validate_task
from tests.helpers import git

TESTS_SPEC = TestSpec(command="python -m pytest -q --junitxml={junit} tests", hidden="hidden")
TEMPLATE = {"limits": {"max_steps": 20}, "tags": ["mined", "history"]}

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = BUGGY.replace("return a - b", "return a + b")
OLD_TESTS = textwrap.dedent(
    """\
    from pkg.core import mul


    def test_mul():
        assert mul(2, 3) == 6


    def test_mul_zero():
        assert mul(5, 0) == 0
    """
)
NEW_TESTS = OLD_TESTS.replace("import mul", "import add, mul") + "\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FLAKY = textwrap.dedent(
    """\
    from pathlib import Path

    COUNTER = Path({counter!r})


    def test_flaky_every_other_run():
        n = int(COUNTER.read_text()) if COUNTER.exists() else 0
        COUNTER.write_text(str(n + 1))
        assert n % 2 == 0
    """
)
F2P = "tests/test_core.py::test_add"
P2P = ["tests/test_core.py::test_mul", "tests/test_core.py::test_mul_zero"]


def commit(repo: Path, message: str, files: dict[str, str | None]) -> str:
    """Write (or delete, for None) ``files`` and commit them; returns the commit id."""
    for rel, text in files.items():
        if text is None:
            git(repo, "rm", "-q", rel)
            continue
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
        git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_repo(root: Path, *, flaky_counter: Path | None = None) -> tuple[Path, dict[str, str]]:
    """A package with history: a root, a real fix, then commits each miner rule must turn down."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = {"root": commit(repo, "Initial import", {
        "pkg/__init__.py": "", "pkg/core.py": BUGGY, "tests/test_core.py": OLD_TESTS,
        "tests/test_extra.py": "def test_truth():\n    assert True\n", "README.md": "pkg\n",
    })}
    fix_tests = {"tests/test_core.py": NEW_TESTS}
    if flaky_counter is not None:
        fix_tests["tests/test_flaky.py"] = FLAKY.format(counter=str(flaky_counter))
    shas["fix"] = commit(repo, "Fix add() subtracting its arguments\n\nadd(2, 3) returned -1.", {
        "pkg/core.py": FIXED, "pkg/__init__.py": '"""pkg: arithmetic."""\n', "README.md": "pkg, fixed\n",
        **fix_tests,
    })
    shas["source_only"] = commit(repo, "Reword a comment", {"pkg/__init__.py": '"""pkg: small arithmetic."""\n'})
    shas["breaks"] = commit(repo, "Add neg()", {
        "pkg/core.py": FIXED.replace("return a * b", "return a * b + 1") + "\n\ndef neg(a):\n    return -a\n",
        "tests/test_neg.py": "from pkg.core import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n",
    })
    shas["tests_only"] = commit(repo, "Test mul more", {"tests/test_extra.py": "def test_truth():\n    assert 1\n"})
    shas["deletes"] = commit(repo, "Drop the extra tests", {"tests/test_extra.py": None, "pkg/__init__.py": ""})
    return repo, shas


def mine(repo: Path, rev_range: str, out: Path, **options: object) -> tuple[list, object]:
    return mine_history(repo, rev_range, TESTS_SPEC, TEMPLATE, HistoryOptions(package="pkg", **options), out,
                        env_dir=None)


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], list, object]:
    root = tmp_path_factory.mktemp("history")
    repo, shas = make_repo(root)
    tasks, report = mine(repo, f"{shas['root']}..main", root / "out")
    return repo, shas, tasks, report


def test_a_real_fix_commit_yields_one_task_with_the_new_test_as_fail_to_pass(mined) -> None:
    repo, shas, tasks, _report = mined
    assert [t.commit for t in tasks] == [shas["fix"]]
    task = tasks[0]
    assert task.id == f"pkg-{shas['fix'][:8]}" and task.parent == shas["root"]
    assert task.fail_to_pass == (F2P,)
    assert set(P2P) <= set(task.pass_to_pass) and "tests/test_extra.py::test_truth" in task.pass_to_pass
    spec = load_task(task.root).spec
    assert spec.type == "bugfix" and spec.tests.hidden == "hidden"
    assert spec.tests.fail_to_pass == [F2P] and spec.tests.pass_to_pass == list(task.pass_to_pass)
    assert spec.repo.source.model_dump() == {"type": "git", "url": str(repo.resolve()), "commit": shas["root"]}
    assert [p.relative_to(task.root / "hidden").as_posix() for p in (task.root / "hidden").rglob("*.py")] == [
        "tests/test_core.py"]
    assert (task.root / "hidden" / "tests" / "test_core.py").read_text() == NEW_TESTS
    assert spec.limits.max_steps == 20 and spec.tags == ["mined", "history"]


def test_the_golden_patch_is_the_source_change_and_applies_to_the_parent(mined, tmp_path: Path) -> None:
    repo, shas, tasks, _report = mined
    patch = (tasks[0].root / "solution.patch").read_text()
    assert "diff --git a/pkg/core.py b/pkg/core.py" in patch and "+    return a + b" in patch
    assert "tests/" not in patch and "README.md" not in patch
    tree = tmp_path / "parent"
    tree.mkdir()
    subprocess.run(f"git -C {repo} archive {shas['root']} | tar -x -C {tree}", shell=True, check=True)
    subprocess.run(["git", "apply", "-"], cwd=tree, input=patch, text=True, check=True)
    assert (tree / "pkg" / "core.py").read_text() == FIXED
    assert (tree / "tests" / "test_core.py").read_text() == OLD_TESTS  # tests stay the parent's
    assert (tree / "README.md").read_text() == "pkg\n"


def test_the_statement_names_the_subject_and_failing_tests_not_the_diff(mined) -> None:
    _repo, _shas, tasks, _report = mined
    statement = load_task(tasks[0].root).spec.problem_statement
    assert statement.startswith("Fix add() subtracting its arguments\n\nadd(2, 3) returned -1.\n")  # the whole message
    assert F2P in statement and "assert -1 == 5" in statement
    assert "return a + b" not in statement
    assert "Find the fault" in statement and load_task(tasks[0].root).spec.type == "bugfix"  # the test runs and fails


def test_each_other_commit_is_skipped_or_rejected_with_its_reason(mined) -> None:
    _repo, shas, tasks, report = mined
    assert report.outcomes == {
        shas["fix"]: "task",
        shas["source_only"]: "no_test_change",
        shas["breaks"]: "breaks_a_passing_test",
        shas["tests_only"]: "no_source_change",
        shas["deletes"]: "deletes_tests",
    }
    assert report.commits == 5 and report.candidates == 2 and report.tasks == [tasks[0].id]
    assert report.skipped == {"no_test_change": 1, "breaks_a_passing_test": 1, "no_source_change": 1,
                              "deletes_tests": 1}


def test_the_mined_task_validates_from_the_parent_commit(mined) -> None:
    _repo, _shas, tasks, _report = mined
    verdict = validate_task(load_task(tasks[0].root), repeats=2)
    assert verdict.ok, verdict.failures()
    assert verdict.flags == []  # its new test runs on the baseline and fails


def test_size_limits_count_source_files_and_lines_only(tmp_path: Path) -> None:
    repo, shas = make_repo(tmp_path)
    fix_only = f"{shas['root']}..{shas['fix']}"
    # the fix changes 2 source files and 3 source lines (plus a test file and the README)
    for limits, outcome in (({"max_files_changed": 1}, "too_large"), ({"max_lines_changed": 2}, "too_large"),
                            ({"max_files_changed": 2, "max_lines_changed": 3}, "task")):
        tasks, report = mine(repo, fix_only, tmp_path / f"out-{outcome}-{len(limits)}", **limits)
        assert report.outcomes == {shas["fix"]: outcome}, limits
        assert len(tasks) == (outcome == "task")


def test_same_repository_and_range_give_byte_identical_tasks(tmp_path: Path) -> None:
    repo, shas = make_repo(tmp_path)
    rev_range = f"{shas['root']}..{shas['source_only']}"
    mine(repo, rev_range, tmp_path / "a")
    mine(repo, rev_range, tmp_path / "b")
    assert list((tmp_path / "a").iterdir()) and tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")


def test_a_test_whose_outcome_changes_after_the_fix_is_excluded_and_reported(tmp_path: Path) -> None:
    repo, shas = make_repo(tmp_path, flaky_counter=tmp_path / "counter")
    tasks, report = mine(repo, f"{shas['root']}..{shas['fix']}", tmp_path / "out")
    flaky_id = "tests/test_flaky.py::test_flaky_every_other_run"
    assert report.flaky == {shas["fix"]: [flaky_id]}
    assert [t.fail_to_pass for t in tasks] == [(F2P,)] and flaky_id not in tasks[0].pass_to_pass


def test_tests_not_collected_before_the_change_count_as_fail_to_pass(tmp_path: Path) -> None:
    repo, shas = make_repo(tmp_path)
    feature = commit(repo, "Add sub()", {
        "pkg/core.py": (repo / "pkg" / "core.py").read_text() + "\n\ndef sub(a, b):\n    return a - b\n",
        "tests/test_sub.py": "from pkg.core import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n",
    })
    tasks, report = mine(repo, f"{shas['fix']}..{feature}", tmp_path / "out")
    assert report.outcomes[feature] == "task" and report.tasks == [f"pkg-{feature[:8]}"]
    assert [t.fail_to_pass for t in tasks] == [("tests/test_sub.py::test_sub",)]
    spec = load_task(tasks[0].root).spec
    # the import error that names what is missing, not a bare "not collected"; a feature, framed as one
    assert "`tests/test_sub.py::test_sub`: not collected: ImportError: cannot import name 'sub' from 'pkg.core'" \
        in spec.problem_statement, spec.problem_statement
    assert spec.type == "feature" and "Implement it in the library" in spec.problem_statement
    assert "Find the fault" not in spec.problem_statement
    verdict = validate_task(load_task(tasks[0].root), repeats=1)  # sound, and flagged as only import errors
    assert verdict.ok, verdict.failures()
    assert [f.split(":")[0] for f in verdict.flags] == ["fail_to_pass is only import errors"]


def test_a_commit_whose_code_does_not_import_here_is_named_so_not_no_fail_to_pass(tmp_path: Path) -> None:
    """Issue 12: 18 of 32 toolz commits were rejected as ``no_fail_to_pass`` when nothing of them
    imported on the interpreter (an old era's code); the reason now says so, and what to try."""
    repo, shas = make_repo(tmp_path)
    era = commit(repo, "Use the old interpreter's module", {
        "pkg/__init__.py": "import module_of_another_interpreter_xyz\n"})
    fix = commit(repo, "Fix sub", {
        "pkg/core.py": (repo / "pkg" / "core.py").read_text() + "\n\ndef sub(a, b):\n    return a - b\n",
        "tests/test_sub.py": "from pkg.core import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n",
    })
    tasks, report = mine(repo, f"{era}..{fix}", tmp_path / "out")
    assert tasks == [] and report.outcomes == {fix: "does_not_run_here"}, report.outcomes


def test_a_merged_pull_request_is_stated_by_its_title_and_commits_not_its_merge_subject(tmp_path: Path) -> None:
    """Issue 12: 27 of 28 history statements were "Merge pull request #N from user/branch". A merge on
    the first-parent chain is stated by its body (GitHub's holds the pull request's title) and the
    subjects of the branch's commits; trailers such as Signed-off-by are dropped."""
    repo, shas = make_repo(tmp_path)
    git(repo, "checkout", "-q", "-b", "feature", shas["fix"])
    source = (repo / "pkg" / "core.py").read_text()
    commit(repo, "Add sub() for differences\n\nSigned-off-by: A Dev <dev@example.com>",
           {"pkg/core.py": source + "\n\ndef sub(a, b):\n    return a - b\n"})
    commit(repo, "Test sub()", {"tests/test_sub.py": "from pkg.core import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n"})
    git(repo, "checkout", "-q", "-b", "trunk", shas["fix"])
    git(repo, "merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #3 from dev/sub\n\nSubtraction helper")
    merge = git(repo, "rev-parse", "HEAD")
    tasks, report = mine(repo, f"{shas['fix']}..{merge}", tmp_path / "out")
    assert report.outcomes[merge] == "task", report.outcomes
    statement = load_task(tasks[0].root).spec.problem_statement
    assert statement.startswith("Subtraction helper\n\n- Add sub() for differences\n- Test sub()\n\n"), statement
    assert "Merge pull request" not in statement and "Signed-off-by" not in statement


def test_tests_that_passed_before_are_not_fail_to_pass_when_the_new_tests_break_their_module_s_import(
        tmp_path: Path) -> None:
    """toolz: the commit adds sub() and a test of it to the existing test module, which then fails to
    import on the parent; its old tests counted as fail_to_pass, and with partial credit a stub that
    only makes the module importable scored 0.980. Tests that passed before the commit are not
    fail_to_pass (nor pass_to_pass, since the baseline cannot import them)."""
    from repogym_gym.grading import grade_patch
    from tests.helpers import make_patch

    repo, shas = make_repo(tmp_path)
    source = (repo / "pkg" / "core.py").read_text()
    feature = commit(repo, "Add sub()", {
        "pkg/core.py": source + "\n\ndef sub(a, b):\n    return a - b\n",
        "tests/test_core.py": NEW_TESTS.replace("import add, mul", "import add, mul, sub")
                              + "\n\ndef test_sub():\n    assert sub(3, 2) == 1\n",
    })
    tasks, report = mine(repo, f"{shas['fix']}..{feature}", tmp_path / "out")
    assert report.outcomes[feature] == "task", report.outcomes
    (task,) = tasks
    assert task.fail_to_pass == ("tests/test_core.py::test_sub",)
    assert not {F2P, *P2P} & set(task.pass_to_pass)
    loaded = load_task(task.root)
    assert loaded.spec.grading.partial_credit  # the default, under which the stub scored 0.980
    stub = make_patch("pkg/core.py", source, source + "\n\ndef sub(a, b):\n    raise NotImplementedError\n")
    graded = grade_patch(loaded, stub)
    assert graded.score == 0.0, graded.summary()
    assert grade_patch(loaded, loaded.golden_patch()).score == 1.0


def test_a_test_the_commit_changed_that_passed_before_and_now_fails_is_fail_to_pass(tmp_path: Path) -> None:
    """toolz 5a7e078: the fix adds assertions to an existing test (test_partition_all), which passed on
    the parent and fails with the commit's tests. The stub rule above (a test that passed before is
    not fail_to_pass) is for tests a module import hides, not for one that ran and failed: the
    commit was mined as "no_fail_to_pass"."""
    repo, shas = make_repo(tmp_path)
    git(repo, "checkout", "-q", "-b", "side", shas["fix"])
    source = (repo / "pkg" / "core.py").read_text()
    feature = commit(repo, "mul() multiplies by 1 by default", {
        "pkg/core.py": source.replace("def mul(a, b):", "def mul(a, b=1):"),
        "tests/test_core.py": NEW_TESTS.replace("assert mul(2, 3) == 6", "assert mul(2, 3) == 6\n    assert mul(4) == 4"),
    })
    tasks, report = mine(repo, f"{shas['fix']}..{feature}", tmp_path / "out")
    assert report.outcomes[feature] == "task", report.outcomes
    assert tasks[0].fail_to_pass == ("tests/test_core.py::test_mul",)
    assert {F2P, "tests/test_core.py::test_mul_zero"} <= set(tasks[0].pass_to_pass)


def test_a_range_that_looks_like_an_option_or_a_directory_without_git_is_refused(tmp_path: Path) -> None:
    repo, _shas = make_repo(tmp_path)
    with pytest.raises(ValueError, match="rev_range '--all'"):
        mine(repo, "--all", tmp_path / "out")
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitMetadataError):
        mine(tmp_path / "plain", "HEAD", tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --- releases ---------------------------------------------------------------------------------------


def sdist(files: dict[str, str], top: str) -> bytes:
    """A deterministic .tar.gz with ``files`` under ``top/``."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def seed_sdist(package: str, version: str, files: dict[str, str]) -> str:
    """Put an sdist in the (session's isolated) download cache, as fetch_sdist would; returns its sha256."""
    data = sdist(files, f"{package}-{version}")
    sha256 = hashlib.sha256(data).hexdigest()
    entry = default_cache_dir() / "sdists" / f"{package}-{version}-{sha256[:16]}"
    entry.mkdir(parents=True, exist_ok=True)
    (entry / f"{package}-{version}.tar.gz").write_bytes(data)
    return sha256


def test_consecutive_releases_mine_a_task_whose_baseline_is_the_older_sdist(tmp_path: Path) -> None:
    base = {"pkg/__init__.py": "", "PKG-INFO": "Version: 1.0\n"}
    old = seed_sdist("histpkg", "1.0", {**base, "pkg/core.py": BUGGY, "tests/test_core.py": OLD_TESTS})
    new = seed_sdist("histpkg", "1.1", {**base, "PKG-INFO": "Version: 1.1\n", "pkg/core.py": FIXED,
                                        "tests/test_core.py": NEW_TESTS})
    tasks, report = mine_releases("histpkg", [("1.0", old), ("1.1", new)], TESTS_SPEC, TEMPLATE,
                                  HistoryOptions(package="histpkg"), tmp_path / "out", env_dir=None)
    assert report.commits == 1 and [t.fail_to_pass for t in tasks] == [(F2P,)]
    task = load_task(tasks[0].root)
    assert task.spec.repo.source.model_dump(exclude_none=True) == {
        "type": "pypi", "package": "histpkg", "version": "1.0", "sha256": old}
    patch = task.golden_patch()
    assert "pkg/core.py" in patch and "PKG-INFO" not in patch and "tests/" not in patch
    verdict = validate_task(task, repeats=2)
    assert verdict.ok, verdict.failures()
