"""Tests for repogym_gym.task: loading task.yaml from disk, discovery, filters and fingerprints.

Every task here is a real directory on disk (``make_task`` or the bundled starter suite).
"""

from __future__ import annotations

import copy
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repogym_gym.errors import TaskNotFoundError, TaskSpecError
from repogym_gym.task import Task, discover_tasks, load_task, load_tasks
from tests.helpers import CALC_SOURCE, GOLDEN_PATCH, STARTER, MakeTask, tiny_spec

STARTER_IDS = ["dedupe-contacts-perf", "pagination-off-by-one", "parse-duration", "shipping-quote-refactor"]


def write_task_yaml(task_dir: Path, text: str, *, with_repo: bool = True) -> Path:
    task_dir.mkdir(parents=True, exist_ok=True)
    if with_repo:
        (task_dir / "repo").mkdir(exist_ok=True)
    path = task_dir / "task.yaml"
    path.write_text(text)
    return path


def load_error(task_dir: Path) -> str:
    with pytest.raises(TaskSpecError) as info:
        load_task(task_dir)
    return str(info.value)


# --- load_task ---------------------------------------------------------------------------------


def test_load_task_returns_the_spec_and_the_absolute_task_directory(tiny_task: Task) -> None:
    assert tiny_task.id == "tiny-calc"
    assert tiny_task.root.is_absolute()
    assert tiny_task.source_dir == tiny_task.root / "repo"
    assert tiny_task.hidden_dir == tiny_task.root / "hidden"
    assert (tiny_task.source_dir / "calc" / "__init__.py").read_text() == CALC_SOURCE


def test_load_task_accepts_the_task_yaml_path_itself(tiny_task: Task) -> None:
    assert load_task(tiny_task.root / "task.yaml").root == tiny_task.root


def test_load_task_resolves_a_relative_directory(tiny_task: Task, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tiny_task.root.parent)
    assert load_task(tiny_task.root.name).root == tiny_task.root


def test_load_task_without_task_yaml_raises_task_not_found(tmp_path: Path) -> None:
    with pytest.raises(TaskNotFoundError, match=f"no task.yaml at {tmp_path}"):
        load_task(tmp_path)


def test_golden_patch_is_read_from_solution_patch(tiny_task: Task) -> None:
    assert tiny_task.golden_patch() == tiny_task.solution_path.read_text()


def test_task_without_solution_patch_raises_when_asked_for_it(make_task: MakeTask) -> None:
    task = make_task(patch=None)
    with pytest.raises(TaskNotFoundError, match="task 'tiny-calc' has no golden patch at .*solution.patch"):
        task.golden_patch()


def test_the_golden_patch_is_read_byte_exact(make_task: MakeTask) -> None:
    """Issue 13: a CRLF golden patch was read with newline translation (validate applied LF, what git
    rejects), and one holding bytes that are not UTF-8 raised UnicodeDecodeError (exit 3)."""
    task = make_task()
    raw = GOLDEN_PATCH.replace("\n", "\r\n").encode() + b"# caf\xe9\r\n"
    task.solution_path.write_bytes(raw)
    text = task.golden_patch()
    assert "\r\n" in text
    assert text.encode("utf-8", "surrogateescape") == raw


def test_a_golden_patch_that_is_not_utf8_grades_its_own_bytes(make_task: MakeTask) -> None:
    from repogym_gym.grading import grade_patch

    patch = GOLDEN_PATCH.replace(" def add(a, b):\n", " def add(a, b):\n+    # caf\udce9 (latin-1)\n", 1).replace(
        "@@ -1,5 +1,5 @@", "@@ -1,5 +1,6 @@", 1)
    task = make_task()
    task.solution_path.write_bytes(patch.encode("utf-8", "surrogateescape"))
    result = grade_patch(task, task.golden_patch())
    assert (result.score, result.infra_error) == (1.0, None)
    assert "caf\udce9" in result.patch or "caf\ufffd" in result.patch  # the grade's patch text shows the byte


def test_an_unreadable_golden_patch_is_a_task_error_naming_it(make_task: MakeTask) -> None:
    from repogym_gym.errors import TaskError

    task = make_task(patch=None)
    task.solution_path.symlink_to("/proc/self/mem")  # a regular file whose read fails (EIO), even as root
    with pytest.raises(TaskError, match=r"task 'tiny-calc': the golden patch at .*solution.patch cannot be read: "):
        task.golden_patch()


def test_hidden_dir_is_none_when_declared_null_or_absent(make_task: MakeTask) -> None:
    assert make_task(tests={**tiny_spec()["tests"], "hidden": None}).hidden_dir is None
    task = make_task()
    shutil.rmtree(task.root / "hidden")
    assert task.hidden_dir is None


def test_bad_field_message_names_file_dotted_field_and_value(tmp_path: Path) -> None:
    spec = tiny_spec()
    spec["tests"]["fail_to_pass"] = "tests/test_calc.py::test_add"  # a string, not a list
    path = write_task_yaml(tmp_path / "t", yaml.safe_dump(spec))
    message = load_error(tmp_path / "t")
    assert message == (
        f"{path}: tests.fail_to_pass: Input should be a valid list (got 'tests/test_calc.py::test_add')"
    )


def test_cross_field_rule_message_names_the_file(tmp_path: Path) -> None:
    path = write_task_yaml(tmp_path / "t", yaml.safe_dump(tiny_spec(type="perf")))
    assert load_error(tmp_path / "t").startswith(f"{path}: (top level): a perf task needs a 'perf' section")


def test_unknown_field_suggests_the_close_one(tmp_path: Path) -> None:
    spec = tiny_spec()
    spec["tagz"] = spec.pop("tags")
    path = write_task_yaml(tmp_path / "t", yaml.safe_dump(spec))
    assert load_error(tmp_path / "t") == f"{path}: tagz: unknown field (did you mean 'tags'?)"


def test_unknown_nested_field_suggests_the_close_one(tmp_path: Path) -> None:
    path = write_task_yaml(tmp_path / "t", yaml.safe_dump(tiny_spec(limits={"max_step": 5})))
    assert load_error(tmp_path / "t") == f"{path}: limits.max_step: unknown field (did you mean 'max_steps'?)"


def test_unknown_field_with_no_close_match_lists_the_known_fields(tmp_path: Path) -> None:
    path = write_task_yaml(tmp_path / "t", yaml.safe_dump(tiny_spec(grading={"zzzzzz": 1})))
    assert load_error(tmp_path / "t") == (
        f"{path}: grading.zzzzzz: unknown field (known fields: "
        "['diff_weights', 'partial_credit', 'pass_threshold', 'require_all_pass_to_pass', 'rewards', 'weights'])"
    )


def test_invalid_yaml_names_line_and_column(tmp_path: Path) -> None:
    path = write_task_yaml(tmp_path / "t", "id: tiny\ntype: bugfix\n  problem_statement: x\n")
    assert load_error(tmp_path / "t") == f"{path}: line 3, column 20: invalid YAML: mapping values are not allowed here"


@pytest.mark.parametrize(("text", "kind"), [("- a\n- b\n", "list"), ("just a string\n", "str"), ("", "NoneType")])
def test_non_mapping_document_is_rejected(tmp_path: Path, text: str, kind: str) -> None:
    path = write_task_yaml(tmp_path / "t", text)
    assert load_error(tmp_path / "t") == f"{path}: expected a mapping of task fields at the top level, got {kind}"


def test_missing_repo_directory_is_rejected(tmp_path: Path) -> None:
    path = write_task_yaml(tmp_path / "t", yaml.safe_dump(tiny_spec()), with_repo=False)
    assert load_error(tmp_path / "t") == (
        f"{path}: repo.source.path: directory 'repo' does not exist in the task directory"
    )


def test_missing_custom_source_directory_is_named(tmp_path: Path) -> None:
    write_task_yaml(tmp_path / "t", yaml.safe_dump(tiny_spec(repo={"source": {"path": "src"}})))
    assert "repo.source.path: directory 'src' does not exist in the task directory" in load_error(tmp_path / "t")


def test_several_errors_come_in_one_message_one_line_each(tmp_path: Path) -> None:
    path = write_task_yaml(tmp_path / "t", yaml.safe_dump(tiny_spec(id="a/b", type="hotfix", limits={"max_steps": 0})))
    lines = load_error(tmp_path / "t").splitlines()
    assert len(lines) == 3
    assert all(line.startswith(f"{path}: ") for line in lines)
    assert [line.split(": ")[1] for line in lines] == ["id", "type", "limits.max_steps"]
    assert "(got 'hotfix')" in lines[1]
    assert "Input should be greater than or equal to 1 (got 0)" in lines[2]


def test_long_values_are_shortened_in_messages(tmp_path: Path) -> None:
    write_task_yaml(tmp_path / "t", yaml.safe_dump(tiny_spec(type="x" * 500)))
    message = load_error(tmp_path / "t")
    assert "(got 'xxxx" in message and "...)" in message
    assert len(message) < 400


# --- discover_tasks ------------------------------------------------------------------------------


def test_discover_tasks_finds_the_starter_suite_sorted() -> None:
    assert [p.name for p in discover_tasks(STARTER)] == STARTER_IDS


def test_discover_tasks_does_not_look_inside_a_task_directory(make_task: MakeTask) -> None:
    task = make_task()
    (task.source_dir / "vendored").mkdir()
    shutil.copy(task.root / "task.yaml", task.source_dir / "vendored" / "task.yaml")
    assert discover_tasks(task.root.parent) == [task.root]


def test_discover_tasks_skips_hidden_directories(tmp_path: Path) -> None:
    write_task_yaml(tmp_path / ".trash" / "t", yaml.safe_dump(tiny_spec()))
    write_task_yaml(tmp_path / "suite" / "t", yaml.safe_dump(tiny_spec()))
    assert discover_tasks(tmp_path) == [tmp_path / "suite" / "t"]


def test_discover_tasks_of_a_missing_directory_raises(tmp_path: Path) -> None:
    with pytest.raises(TaskNotFoundError, match="no such task or suite directory: .*nowhere"):
        discover_tasks(tmp_path / "nowhere")


# --- load_tasks ----------------------------------------------------------------------------------


def test_load_tasks_loads_the_whole_starter_suite(starter_tasks: list[Task]) -> None:
    assert [t.id for t in starter_tasks] == STARTER_IDS


def test_load_tasks_filters_by_id() -> None:
    assert [t.id for t in load_tasks(STARTER, ids=["parse-duration"])] == ["parse-duration"]


def test_unknown_id_suggests_a_close_one() -> None:
    with pytest.raises(TaskNotFoundError) as info:
        load_tasks(STARTER, ids=["parse-duraton"])
    assert str(info.value) == "no task with id 'parse-duraton' (did you mean 'parse-duration'?)"


def test_unknown_id_with_nothing_close_names_only_the_id() -> None:
    with pytest.raises(TaskNotFoundError) as info:
        load_tasks(STARTER, ids=["parse-duration", "qqqqqq"])
    assert str(info.value) == "no task with id 'qqqqqq'"


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        (["perf"], ["dedupe-contacts-perf"]),
        (["bugfix", "feature"], ["pagination-off-by-one", "parse-duration"]),
        ([], []),
    ],
)
def test_load_tasks_filters_by_type(types: list[str], expected: list[str]) -> None:
    assert [t.id for t in load_tasks(STARTER, types=types)] == expected  # type: ignore[arg-type]


def test_load_tasks_keeps_tasks_with_any_of_the_tags() -> None:
    assert [t.id for t in load_tasks(STARTER, tags=["refactor", "perf"])] == [
        "dedupe-contacts-perf",
        "shipping-quote-refactor",
    ]
    assert [t.id for t in load_tasks(STARTER, tags=["starter"])] == STARTER_IDS
    assert load_tasks(STARTER, tags=["no-such-tag"]) == []


def test_load_tasks_filters_combine_with_and() -> None:
    ids = ["parse-duration", "dedupe-contacts-perf"]
    assert [t.id for t in load_tasks(STARTER, ids=ids, types=["perf"])] == ["dedupe-contacts-perf"]


def test_duplicate_ids_across_two_suites_raise(make_task: MakeTask) -> None:
    first, second = make_task(), make_task()
    with pytest.raises(TaskSpecError) as info:
        load_tasks([first.root, second.root])
    assert str(info.value) == f"task id 'tiny-calc' is used twice: {first.root} and {second.root}"


def test_the_same_suite_given_twice_is_not_a_duplicate(tiny_task: Task) -> None:
    assert [t.root for t in load_tasks([tiny_task.root, tiny_task.root])] == [tiny_task.root]


def test_load_tasks_merges_several_suites_sorted_by_id(make_task: MakeTask) -> None:
    extra = make_task(id="aaa-first")
    assert [t.id for t in load_tasks([STARTER, extra.root])] == ["aaa-first", *STARTER_IDS]


def test_load_tasks_of_a_suite_with_a_bad_task_raises(tmp_path: Path) -> None:
    write_task_yaml(tmp_path / "good", yaml.safe_dump(tiny_spec()))
    bad = write_task_yaml(tmp_path / "bad", yaml.safe_dump(tiny_spec(id="x:y")))
    with pytest.raises(TaskSpecError, match=f"^{bad}: id: "):
        load_tasks(tmp_path)


# --- fingerprint ---------------------------------------------------------------------------------


def test_fingerprint_is_stable_across_loads_and_copies(tiny_task: Task, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(tiny_task.root, copy)
    assert load_task(tiny_task.root).fingerprint == tiny_task.fingerprint
    assert load_task(copy).fingerprint == tiny_task.fingerprint
    assert len(tiny_task.fingerprint) == 64


def test_fingerprint_changes_when_a_source_file_changes(tiny_task: Task) -> None:
    before = tiny_task.fingerprint
    (tiny_task.source_dir / "calc" / "__init__.py").write_text(CALC_SOURCE + "# edit\n")
    assert load_task(tiny_task.root).fingerprint != before


def test_fingerprint_changes_when_a_source_file_is_added_or_renamed(tiny_task: Task) -> None:
    before = tiny_task.fingerprint
    (tiny_task.source_dir / "calc" / "__init__.py").rename(tiny_task.source_dir / "calc" / "core.py")
    renamed = load_task(tiny_task.root).fingerprint
    (tiny_task.source_dir / "extra.txt").write_text("")
    added = load_task(tiny_task.root).fingerprint
    assert len({before, renamed, added}) == 3


def test_fingerprint_changes_when_task_yaml_changes(make_task: MakeTask) -> None:
    assert make_task().fingerprint != make_task(repo={"setup": ["true"]}).fingerprint


def test_fingerprint_ignores_hidden_tests_and_the_golden_patch(tiny_task: Task) -> None:
    before = tiny_task.fingerprint
    (tiny_task.root / "hidden" / "tests" / "test_calc_hidden.py").write_text("def test_other():\n    pass\n")
    (tiny_task.root / "hidden" / "tests" / "test_more.py").write_text("")
    tiny_task.solution_path.write_text("diff --git a/x b/x\n")
    assert load_task(tiny_task.root).fingerprint == before


def test_fingerprint_changes_when_a_source_file_becomes_executable(tiny_task: Task) -> None:
    before = tiny_task.fingerprint
    os.chmod(tiny_task.source_dir / "calc" / "__init__.py", 0o755)
    assert load_task(tiny_task.root).fingerprint != before


def test_fingerprint_changes_when_a_directory_symlink_is_repointed(tiny_task: Task) -> None:
    (tiny_task.source_dir / "other").mkdir()
    os.symlink("calc", tiny_task.source_dir / "alias")
    before = load_task(tiny_task.root).fingerprint
    os.unlink(tiny_task.source_dir / "alias")
    os.symlink("other", tiny_task.source_dir / "alias")
    assert load_task(tiny_task.root).fingerprint != before


# -- fuzzing (issue 13) ----------------------------------------------------------------------
# 1,000 generated task files, fixed seed (whole, cut short, or with raw bytes spliced in): each loads as written
# or is refused with a TaskSpecError naming task.yaml.

#: Generated files of each kind (the issue's figure: at least 1,000 task files in CI).
FILES = 1_000

_keys = st.sampled_from(["id", "type", "problem_statement", "tests", "limits", "constraints", "grading", "repo", "perf",
                         "tags", "environment", "command", "fail_to_pass", "pass_to_pass", "hidden", "max_steps",
                         "test_timeout_s", "memory_mb", "weights", "pass_threshold", "allowed_files", "sealed", "x"])
_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
                     st.sampled_from(["../x", "/abs", "tests/test_calc.py::test_add", "python -m pytest --junitxml={junit}",
                                      "bugfix", "perf", "*", "**/..", "1e400", "yes", "\x00"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(_keys, inner, max_size=3)), max_leaves=6)
_edits = st.lists(st.tuples(st.lists(_keys, min_size=1, max_size=3), _values), min_size=1, max_size=4)


def _apply(spec: dict[str, Any], path: list[str], value: Any) -> None:
    node: Any = spec
    for key in path[:-1]:
        if not isinstance(node, dict):
            return
        node = node.setdefault(key, {})
    if isinstance(node, dict):
        node[path[-1]] = value


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-spec")
    (root / "repo" / "calc").mkdir(parents=True)
    (root / "repo" / "calc" / "__init__.py").write_text(CALC_SOURCE)
    return root


@pytest.mark.timeout(300)  # the run's budget: a hang fails it instead of CI's whole timeout
def test_a_thousand_generated_task_files_load_or_are_refused_naming_the_file(task_dir: Path) -> None:
    seen = {"loaded": 0, "refused": 0}

    @settings(max_examples=FILES, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_edits, st.sampled_from(("whole", "cut", "bytes")), st.binary(min_size=1, max_size=8), st.floats(0, 1))
    def load(edits: list[tuple[list[str], Any]], mode: str, junk: bytes, where: float) -> None:
        spec = copy.deepcopy(tiny_spec())
        for path, value in edits:
            _apply(spec, path, value)
        try:
            text = yaml.safe_dump(spec, allow_unicode=True, sort_keys=False)
        except yaml.YAMLError:
            return
        data = text.encode("utf-8", "surrogatepass")
        if mode == "cut":  # a byte-level cut of the file, as a truncated download would leave it
            data = data[: len(data) * 2 // 3]
        elif mode == "bytes":  # raw bytes spliced in anywhere: control characters, broken UTF-8, NUL (issue 13)
            at = int(len(data) * where)
            data = data[:at] + junk + data[at:]
        (task_dir / "task.yaml").write_bytes(data)
        try:
            task = load_task(task_dir)
        except TaskSpecError as exc:
            assert "task.yaml" in str(exc), exc
            seen["refused"] += 1
            return
        seen["loaded"] += 1
        if mode == "bytes":  # the bytes may have landed inside a value: it loads as what the file now says
            assert isinstance(task.id, str) and task.spec.limits.max_steps >= 1
            return
        assert task.id == spec["id"] and task.spec.type == spec["type"]  # loaded as written, never coerced
        assert task.spec.limits.max_steps >= 1 and task.spec.tests.command == spec["tests"]["command"]

    load()
    assert seen["loaded"] + seen["refused"] >= FILES * 0.9 and seen["refused"] > 0 and seen["loaded"] > 0, seen


@pytest.mark.parametrize(("name", "suggested"), [("pagination-of-by-one", "pagination-off-by-one"),
                                                  ("startr", "starter"),
                                                  ("starter/parse-durations", "starter/parse-duration")])
def test_a_mistyped_bundled_name_is_answered_with_the_closest_one(name: str, suggested: str) -> None:
    """New-user finding (stop 34): ``repogym tasks show <typo>`` listed the suites but no task near the typo."""
    from repogym_gym.task import resolve_location

    with pytest.raises(TaskNotFoundError, match=f"did you mean {suggested!r}"):
        resolve_location(name)


def test_a_bundled_task_is_found_by_its_id_and_by_suite_slash_id() -> None:
    from repogym_gym.task import resolve_location, resolve_task

    assert resolve_location("parse-duration") == resolve_location("starter/parse-duration")
    assert resolve_task("starter/parse-duration").id == "parse-duration"
    with pytest.raises(TaskNotFoundError, match="did you mean 'parse-duration'"):
        resolve_task("parse-durations")
    with pytest.raises(TaskNotFoundError) as info:
        resolve_location("zzzzzz")
    assert "did you mean" not in str(info.value)
