"""MutationMiner end to end on a small local package: tasks, determinism, flakes, validation."""

from __future__ import annotations

import doctest
import hashlib
import textwrap
from pathlib import Path

from repogym_gym.mine.mutation import MutationOptions, mine_mutations, operator_yield
from repogym_gym.spec import TestSpec
from repogym_gym.task import load_task
from repogym_gym.validate import validate_task

SOURCE = textwrap.dedent(
    '''\
    """A small library with real logic."""


    def clamp(value, low, high):
        if value < low:
            return low
        if value > high:
            return high
        return value


    def chunks(items, size):
        out = []
        for start in range(0, len(items), size):
            out.append(items[start:start + size])
        return out


    def is_palindrome(text):
        cleaned = [c.lower() for c in text if c.isalnum()]
        return cleaned == cleaned[::-1]
    '''
)
TESTS = textwrap.dedent(
    """\
    from minilib import chunks, clamp, is_palindrome


    def test_clamp_low():
        assert clamp(-5, 0, 10) == 0


    def test_clamp_high():
        assert clamp(50, 0, 10) == 10


    def test_clamp_inside():
        assert clamp(5, 0, 10) == 5


    def test_chunks():
        assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


    def test_chunks_empty():
        assert chunks([], 3) == []


    def test_palindrome():
        assert is_palindrome("A man, a plan, a canal: Panama")


    def test_not_palindrome():
        assert not is_palindrome("repogym")
    """
)
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
TESTS_SPEC = TestSpec(command="python -m pytest -q --junitxml={junit} tests", hidden=None)
TEMPLATE = {"repo": {"source": {"type": "local", "path": "repo"}}, "limits": {"max_steps": 20}, "tags": ["mined"]}


def make_tree(root: Path, *, flaky_counter: Path | None = None) -> Path:
    tree = root / "tree"
    (tree / "minilib").mkdir(parents=True)
    (tree / "tests").mkdir()
    (tree / "minilib" / "__init__.py").write_text(SOURCE)
    (tree / "tests" / "test_minilib.py").write_text(TESTS)
    if flaky_counter is not None:
        (tree / "tests" / "test_flaky.py").write_text(FLAKY.format(counter=str(flaky_counter)))
    return tree


def mine(tree: Path, out: Path, **options: object) -> tuple[list, object]:
    opts = MutationOptions(**{"package": "minilib", "files": ["minilib/__init__.py"], "max_tasks": 3, "seed": 7, **options})
    return mine_mutations(tree, TESTS_SPEC, TEMPLATE, opts, out, env_dir=None, coverage_env_dir=None)


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def test_mined_tasks_break_tests_keep_others_and_validate(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    tasks, report = mine(tree, tmp_path / "out")
    assert len(tasks) == 3 and report.tasks == [t.id for t in tasks]
    import shutil

    for task in tasks:  # a mined task over a local source needs the tree beside it
        shutil.copytree(tree, task.root / "repo")
    for task in tasks:
        assert task.fail_to_pass and task.pass_to_pass
        assert not set(task.fail_to_pass) & set(task.pass_to_pass)
        statement = load_task(task.root).spec.problem_statement
        assert task.operator not in statement and "bug.patch" not in statement
        assert all(t in statement for t in task.fail_to_pass)
    verdict = validate_task(load_task(tasks[0].root), repeats=2)
    assert verdict.ok, verdict.failures()
    assert sum(sum(row.values()) for row in report.per_operator.values()) == report.candidates
    assert set(operator_yield(report)) == set(report.per_operator)
    # the held-in figures: one summary per task, its size read from its golden patch
    assert [s.id for s in report.summaries] == report.tasks and report.tests == 7
    for summary, task in zip(report.summaries, tasks, strict=True):
        patch = (task.root / "solution.patch").read_text()
        changed = [line for line in patch.splitlines()[2:] if line[:1] in ("+", "-") and line[:3] not in ("+++", "---")]
        assert (summary.operator, summary.lines_changed) == (task.operator, len(changed)) and summary.lines_changed >= 1
        assert (summary.fail_to_pass, summary.pass_to_pass) == (len(task.fail_to_pass), len(task.pass_to_pass))


def test_same_tree_seed_and_options_give_byte_identical_tasks(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    mine(tree, tmp_path / "a")
    mine(tree, tmp_path / "b")
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")
    assert list((tmp_path / "a").iterdir())


def test_a_test_that_fails_every_other_run_is_excluded_and_reported(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    tree = make_tree(tmp_path, flaky_counter=counter)
    tasks, report = mine(tree, tmp_path / "out")
    flaky_id = "tests/test_flaky.py::test_flaky_every_other_run"
    assert flaky_id in report.flaky_original
    assert tasks and all(flaky_id not in t.fail_to_pass + t.pass_to_pass for t in tasks)
    assert int(counter.read_text()) >= 3  # the original really ran three times


def test_only_functions_the_tests_exercise_are_mutated(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    (tree / "minilib" / "__init__.py").write_text(SOURCE + "\n\ndef never_called(x):\n    return x + 1\n")
    tasks, report = mine(tree, tmp_path / "out", max_tasks=10, max_candidates=200)
    assert tasks and all(t.function != "never_called" for t in tasks)


def test_a_statement_quotes_one_short_line_without_this_machines_paths(monkeypatch, tmp_path: Path) -> None:
    """An assertion printing os.environ once put the miner's PATH and cache path into a problem statement."""
    from repogym_gym.mine.statement import MAX_STATEMENT_MESSAGE, failing_tests_statement

    cache = tmp_path / "cache"
    monkeypatch.setenv("REPOGYM_CACHE_DIR", str(cache))
    leaky = f"assert environ({{'PATH': '{cache}/envs/abc/bin:/usr/bin', 'X': '{'y' * 500}'}}) == {{}}\nsecond line"
    text = failing_tests_statement("pkg", ["tests/test_a.py::test_env", "tests/test_a.py::test_b"],
                      {"tests/test_a.py::test_env": leaky, "tests/test_a.py::test_b": "assert 1 == 2"})
    env_line = next(line for line in text.splitlines() if "test_env" in line)
    assert str(cache) not in text and "<cache>/envs/abc/bin" in env_line
    assert "second line" not in text
    assert len(env_line) <= len("- `tests/test_a.py::test_env`: ") + MAX_STATEMENT_MESSAGE
    assert "- `tests/test_a.py::test_b`: assert 1 == 2" in text


def test_the_package_s_own_coverage_settings_do_not_hide_what_its_tests_run(tmp_path: Path) -> None:
    """python-slugify's ``[tool.coverage.run] parallel = true`` made coverage write a suffixed data
    file the miner never read: every line looked unexercised and mining found 0 candidates."""
    from repogym_gym.mine.suiterun import exercised_lines

    tree = make_tree(tmp_path)
    (tree / "pyproject.toml").write_text("[tool.coverage.run]\nparallel = true\nbranch = true\n"
                                         "omit = ['minilib/*']\n")
    lines = exercised_lines(tree, TESTS_SPEC, env_dir=None, files=["minilib/__init__.py"])
    assert {4, 5, 6} <= lines["minilib/__init__.py"], lines  # clamp's first lines ran


def test_coverage_that_records_nothing_is_a_mining_error_not_zero_candidates(tmp_path: Path) -> None:
    import pytest

    from repogym_gym.errors import MiningError
    from repogym_gym.mine.suiterun import exercised_lines

    tree = make_tree(tmp_path)
    with pytest.raises(MiningError, match="coverage recorded no line of minilib/__init__.py.*no_such_dir"):
        exercised_lines(tree, TESTS_SPEC.model_copy(update={"command": "python -m pytest -q no_such_dir"}),
                        env_dir=None, files=["minilib/__init__.py"])


def test_pass_to_pass_is_the_whole_passing_suite_so_a_regression_elsewhere_costs_reward(tmp_path: Path) -> None:
    """python-slugify: pass_to_pass held only the failing tests' files, so the golden fix plus a change
    breaking 18 tests elsewhere in the package scored 1.000."""
    import shutil

    from repogym_gym.grading import grade_patch
    from tests.helpers import make_patch

    tree = make_tree(tmp_path)
    other = "from minilib import is_palindrome\n\n\ndef test_palindrome_elsewhere():\n    assert is_palindrome('abba')\n"
    (tree / "tests" / "test_other.py").write_text(other)
    tasks, _ = mine(tree, tmp_path / "out", max_tasks=6)
    everything = {f"tests/test_minilib.py::{n}" for n in ("test_clamp_low", "test_clamp_high", "test_clamp_inside",
                  "test_chunks", "test_chunks_empty", "test_palindrome", "test_not_palindrome")}
    everything.add("tests/test_other.py::test_palindrome_elsewhere")
    for task in tasks:
        assert set(task.pass_to_pass) == everything - set(task.fail_to_pass), task.id
    task = next(t for t in tasks if not any("palindrome" in i for i in t.fail_to_pass))
    shutil.copytree(tree, task.root / "repo")
    loaded = load_task(task.root)
    from repogym_gym.workspace import Workspace

    with Workspace.create(loaded) as ws:
        mutant = ws.read("minilib/__init__.py")
    broken = SOURCE.replace("return cleaned == cleaned[::-1]", "return False")
    regression = make_patch("minilib/__init__.py", mutant, broken)  # the golden fix, and palindromes broken
    assert grade_patch(loaded, loaded.golden_patch()).score == 1.0
    result = grade_patch(loaded, regression)
    assert set(result.fail_to_pass.values()) == {"passed"}, result.summary()  # the fault is fixed
    assert result.score < 1.0 and result.pass_to_pass["tests/test_other.py::test_palindrome_elsewhere"] == "failed"


def test_a_fault_removing_more_lines_than_the_cap_is_never_a_candidate(tmp_path: Path) -> None:
    """A deleted block must be written again by the agent: past ``max_removed_lines`` it is a rewrite,
    not a fix (a mined task once asked for 34 lines). chunks' loop body is 1 line: kept at a cap of 1;
    with the cap at 1 a 3-line body (the same loop, spread over lines) is dropped before any run."""
    tree = make_tree(tmp_path)
    _, report = mine(tree, tmp_path / "one", operators=["loop_body_removed"], max_removed_lines=1)
    assert report.per_operator["loop_body_removed"].get("task") == 1
    spread = SOURCE.replace("        out.append(items[start:start + size])\n",
                            "        piece = items[start:start + size]\n        piece = list(piece)\n"
                            "        out.append(piece)\n")
    assert spread != SOURCE
    (tree / "minilib" / "__init__.py").write_text(spread)
    _, capped = mine(tree, tmp_path / "three", operators=["loop_body_removed"], max_removed_lines=2)
    assert capped.candidates == 0 and not capped.tasks
    _, allowed = mine(tree, tmp_path / "three-allowed", operators=["loop_body_removed"], max_removed_lines=3)
    assert allowed.per_operator["loop_body_removed"].get("task") == 1


def test_every_operator_with_a_site_is_among_the_first_candidates() -> None:
    """Candidates are drawn one per operator in turn: the first k are k different operators."""
    from repogym_gym.mine import mutation as mutation_module
    from repogym_gym.mine.operators import find_mutations

    found = find_mutations(SOURCE, "minilib/__init__.py")
    operators = {m.operator for m in found}
    order = mutation_module._draw_order(found, 7)
    assert sorted(m.operator for m in order[: len(operators)]) == sorted(operators)
    assert sorted(order, key=id) == sorted(found, key=id) and len(order) == len(found)
    assert mutation_module._draw_order(found, 7) == order != mutation_module._draw_order(found, 8)
    assert doctest.testmod(mutation_module).failed == 0
