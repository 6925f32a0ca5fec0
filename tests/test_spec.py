"""Tests for repogym_gym.spec: the task.yaml schema, its cross-field rules and their messages.

Every rule is checked through ``parse_spec`` (the path a task.yaml takes), so the tests pin the
message a task author reads: source, dotted field, what is wrong and the offending value.
"""

from __future__ import annotations

import doctest
from typing import Any

import pydantic
import pytest
import yaml

from repogym_gym import spec as spec_module
from repogym_gym.errors import RepoGymError, TaskSpecError
from repogym_gym.spec import TaskSpec, relative_path, spec_json_schema
from repogym_gym.task import parse_spec
from tests.helpers import tiny_spec

PERF = {"command": "python bench.py", "runs": 3, "min_speedup": 2.0, "noise_floor": 1.15}
REFACTOR_CONSTRAINTS = {"max_function_length": 20, "paths": ["calc"]}


def load(**overrides: Any) -> TaskSpec:
    return parse_spec(yaml.safe_dump(tiny_spec(**overrides)), "suite/t/task.yaml")


def error_of(**overrides: Any) -> str:
    with pytest.raises(TaskSpecError) as info:
        load(**overrides)
    return str(info.value)


def with_tests(**changes: Any) -> dict[str, Any]:
    section = dict(tiny_spec()["tests"])
    section.update(changes)
    return section


# --- the valid baseline ------------------------------------------------------------------------


def test_the_tiny_spec_validates_with_documented_defaults() -> None:
    spec = load()
    assert spec.id == "tiny-calc"
    assert spec.grading.pass_threshold == 1.0
    assert spec.tests.runner == "pytest"
    assert spec.tests.hidden == "hidden"
    assert spec.repo.source.path == "repo"
    assert spec.objectives() == ["tests"]


def test_spec_is_frozen() -> None:
    spec = load()
    with pytest.raises(pydantic.ValidationError):
        spec.id = "other"  # type: ignore[misc]


def test_task_spec_error_is_both_a_repogym_error_and_a_value_error() -> None:
    with pytest.raises(RepoGymError):
        load(type="nope")
    with pytest.raises(ValueError):
        load(type="nope")


def test_module_docstring_example_runs() -> None:
    failures, _ = doctest.testmod(spec_module, verbose=False)
    assert failures == 0


def test_json_schema_lists_every_top_level_field() -> None:
    schema = spec_json_schema()
    assert set(schema["properties"]) == set(TaskSpec.model_fields)
    assert set(schema["required"]) == {"id", "type", "problem_statement"}  # tests: every type but answer (a validator)


@pytest.mark.parametrize(
    ("task_type", "extra", "objective"),
    [
        ("bugfix", {}, "tests"),
        ("feature", {}, "tests"),
        ("refactor", {"constraints": REFACTOR_CONSTRAINTS}, "quality"),
        ("perf", {"perf": PERF}, "perf"),
    ],
)
def test_each_task_type_has_its_own_objective(task_type: str, extra: dict[str, Any], objective: str) -> None:
    assert load(type=task_type, **extra).objectives() == [objective]


# --- cross-field rules ---------------------------------------------------------------------------


def test_perf_task_without_perf_section_is_rejected() -> None:
    message = error_of(type="perf")
    assert "suite/t/task.yaml: (top level): a perf task needs a 'perf' section" in message


def test_perf_section_on_a_bugfix_task_is_rejected() -> None:
    message = error_of(perf=PERF)
    assert "a bugfix task must not have a 'perf' section (only perf tasks are timed)" in message


def test_perf_task_with_perf_section_and_no_fail_to_pass_is_accepted() -> None:
    spec = load(type="perf", perf=PERF, tests=with_tests(fail_to_pass=[]))
    assert spec.perf is not None and spec.perf.min_speedup == 2.0


@pytest.mark.parametrize("task_type", ["bugfix", "feature"])
def test_bugfix_and_feature_tasks_need_a_fail_to_pass_id(task_type: str) -> None:
    message = error_of(type=task_type, tests=with_tests(fail_to_pass=[]))
    assert f"a {task_type} task needs at least one tests.fail_to_pass id (its reward signal)" in message


@pytest.mark.parametrize(
    "constraints",
    [
        {},
        {"paths": ["calc"]},
        {"max_function_length": 20},
        {"max_cyclomatic_complexity": 5},
    ],
    ids=["nothing", "paths-without-limits", "length-without-paths", "complexity-without-paths"],
)
def test_refactor_task_needs_a_quality_limit_and_paths(constraints: dict[str, Any]) -> None:
    message = error_of(type="refactor", constraints=constraints)
    assert "a refactor task needs constraints.max_function_length or constraints.max_cyclomatic_complexity" in message
    assert "and constraints.paths (its reward signal)" in message


def test_refactor_task_with_complexity_limit_and_paths_is_accepted() -> None:
    spec = load(type="refactor", constraints={"max_cyclomatic_complexity": 5, "paths": ["calc"]})
    assert spec.constraints.has_quality_limits()


def test_weight_on_a_component_that_is_not_an_objective_of_the_task_type_is_rejected() -> None:
    message = error_of(grading={"weights": {"perf": 1.0}})
    assert (
        "grading.weights names 'perf', which is not an objective of a bugfix task (objectives: ['tests'])" in message
    )


def test_weight_on_the_task_types_objective_is_accepted() -> None:
    assert load(grading={"weights": {"tests": 2.0}}).grading.weights == {"tests": 2.0}


def test_unknown_weights_key_is_rejected_naming_the_valid_components() -> None:
    message = error_of(grading={"weights": {"speed": 1.0}})
    assert (
        "suite/t/task.yaml: grading.weights: weights has unknown component 'speed'; "
        "objectives are ['tests', 'quality', 'perf']"
    ) in message


def test_negative_weight_is_rejected() -> None:
    message = error_of(grading={"weights": {"tests": -1}})
    assert "grading.weights.tests: Input should be greater than or equal to 0 (got -1)" in message


@pytest.mark.parametrize("field", ["fail_to_pass", "pass_to_pass"])
def test_test_id_listed_twice_is_rejected(field: str) -> None:
    ids = ["tests/test_calc.py::test_x", "tests/test_calc.py::test_x"]
    other = "pass_to_pass" if field == "fail_to_pass" else "fail_to_pass"
    message = error_of(tests=with_tests(**{field: ids, other: ["tests/test_calc.py::test_other"]}))
    assert f"suite/t/task.yaml: tests.{field}: test id 'tests/test_calc.py::test_x' is listed twice" in message


def test_blank_test_id_is_rejected() -> None:
    message = error_of(tests=with_tests(fail_to_pass=["  "]))
    assert "tests.fail_to_pass: test ids must not be empty" in message


def test_test_id_in_both_fail_to_pass_and_pass_to_pass_is_rejected() -> None:
    message = error_of(tests=with_tests(pass_to_pass=["tests/test_calc.py::test_add"]))
    assert "tests: test ids ['tests/test_calc.py::test_add'] are in both fail_to_pass and pass_to_pass" in message


def test_command_without_junit_placeholder_is_rejected() -> None:
    message = error_of(tests=with_tests(command="python -m pytest -q tests"))
    assert (
        "tests.command: command 'python -m pytest -q tests' must contain the '{junit}' placeholder "
        "for the JUnit report path"
    ) in message


def test_command_that_is_not_valid_shell_syntax_is_rejected() -> None:
    message = error_of(tests=with_tests(command="pytest --junitxml={junit} 'unclosed"))
    assert "is not valid shell syntax: No closing quotation" in message


@pytest.mark.parametrize("command", ["make test JUNIT={junit}", "tox -- --junitxml={junit}", "py.test --junitxml={junit}"])
def test_pytest_runner_with_a_non_pytest_command_is_rejected(command: str) -> None:
    message = error_of(tests=with_tests(command=command))
    assert f"command {command!r} must start with 'pytest' or 'python -m pytest' when runner is 'pytest'" in message
    assert "(set runner: generic for other test commands)" in message


@pytest.mark.parametrize(
    "command",
    ["pytest --junitxml={junit}", "python -m pytest --junitxml={junit} tests", "python3 -m pytest --junitxml={junit}"],
)
def test_pytest_runner_accepts_every_pytest_launcher(command: str) -> None:
    assert load(tests=with_tests(command=command)).tests.command == command


def test_generic_runner_accepts_any_command() -> None:
    spec = load(tests=with_tests(command="make test JUNIT={junit}", runner="generic"))
    assert spec.tests.runner == "generic"


@pytest.mark.parametrize(("noise_floor", "min_speedup"), [(2.0, 2.0), (3.0, 2.0)])
def test_noise_floor_at_or_above_min_speedup_is_rejected(noise_floor: float, min_speedup: float) -> None:
    perf = {**PERF, "noise_floor": noise_floor, "min_speedup": min_speedup}
    message = error_of(type="perf", perf=perf)
    assert f"perf: noise_floor ({noise_floor}) must be below min_speedup ({min_speedup})" in message


def test_min_speedup_of_one_or_less_is_rejected() -> None:
    message = error_of(type="perf", perf={**PERF, "min_speedup": 1.0, "noise_floor": 1.0})
    assert "perf.min_speedup: Input should be greater than 1 (got 1.0)" in message


def test_invalid_regex_in_forbidden_patterns_is_rejected() -> None:
    message = error_of(constraints={"forbidden_patterns": ["("]})
    assert "constraints.forbidden_patterns: pattern '(' is not a valid regular expression" in message


# --- gym-safe ids ------------------------------------------------------------------------------


@pytest.mark.parametrize("task_id", ["a/b", "a:b", "-abc", "a b", "ä"])
def test_id_with_characters_gymnasium_cannot_register_is_rejected(task_id: str) -> None:
    message = error_of(id=task_id)
    assert f"suite/t/task.yaml: id: id {task_id!r} must be 1-100 characters of letters, digits, '_', '.', '-'" in message
    assert "(no '/' or ':'), starting with a letter or digit" in message


def test_empty_id_is_rejected() -> None:
    assert "id: id '' must be 1-100 characters" in error_of(id="")


def test_id_of_101_characters_is_rejected_and_100_accepted() -> None:
    assert "must be 1-100 characters" in error_of(id="a" * 101)
    assert load(id="a" * 100).id == "a" * 100


@pytest.mark.parametrize(("task_id", "suggestion"), [("sympy-v2", "sympy_v2"), ("a-b-v10", "a-b_v10")])
def test_id_ending_in_a_version_suffix_is_rejected_with_a_suggestion(task_id: str, suggestion: str) -> None:
    message = error_of(id=task_id)
    assert f"id {task_id!r} must not end in '-v<digits>': Gymnasium would read it as a version" in message
    assert f"(try {suggestion!r})" in message


@pytest.mark.parametrize("task_id", ["sympy-2", "a.b_c-d", "x", "A1", "sympy-v2a", "v2"])
def test_gym_safe_ids_are_accepted(task_id: str) -> None:
    assert load(id=task_id).id == task_id


# --- relative paths ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["/etc/passwd", "../x", "a/../../x", "a/.."])
def test_relative_path_refuses_absolute_and_escaping_paths(value: str) -> None:
    with pytest.raises(ValueError, match="must be relative and stay inside the repository"):
        relative_path(value)


@pytest.mark.parametrize("value", ["", "   "])
def test_relative_path_refuses_empty_paths(value: str) -> None:
    with pytest.raises(ValueError, match="path must not be empty"):
        relative_path(value)


def test_relative_path_normalises_dot_segments_and_slashes() -> None:
    assert relative_path("./a//b/./c.py") == "a/b/c.py"


@pytest.mark.parametrize(
    ("overrides", "field", "value"),
    [
        ({"repo": {"source": {"path": "/abs/repo"}}}, "repo.source.path", "/abs/repo"),
        ({"tests": with_tests(restore=["../outside.py"])}, "tests.restore", "../outside.py"),
        ({"tests": with_tests(hidden="../hidden")}, "tests.hidden", "../hidden"),
        ({"tests": with_tests(pythonpath=["/usr/lib"])}, "tests.pythonpath", "/usr/lib"),
        ({"constraints": {"paths": ["src/../../etc"]}}, "constraints.paths", "src/../../etc"),
    ],
)
def test_path_fields_refuse_absolute_and_escaping_paths(overrides: dict[str, Any], field: str, value: str) -> None:
    message = error_of(**overrides)
    assert f"suite/t/task.yaml: {field}: path {value!r} must be relative and stay inside the repository" in message


def test_hidden_may_be_null() -> None:
    assert load(tests=with_tests(hidden=None)).tests.hidden is None


# --- test_files ----------------------------------------------------------------------------------


def test_test_files_are_the_path_parts_of_node_ids() -> None:
    spec = load(
        tests=with_tests(
            fail_to_pass=["tests/test_calc.py::test_add", "test_top.py::TestX::test_y", "bare_name"],
            pass_to_pass=["tests/test_calc.py::test_sub", "pkg.module::test_z"],
        )
    )
    assert spec.tests.test_files() == ["test_top.py", "tests/test_calc.py"]


# --- values a sandbox cannot enforce, coercions, paths outside the repository (issue 13) ------------


@pytest.mark.parametrize(("overrides", "expected"), [
    ({"limits": {"max_steps": True}}, "limits.max_steps: Input should be a valid integer (got True)"),
    ({"limits": {"max_steps": "7"}}, "limits.max_steps: Input should be a valid integer (got '7')"),
    ({"grading": {"weights": {"tests": float("inf")}}}, "grading.weights.tests: Input should be a finite number (got inf)"),
    ({"grading": {"weights": {"tests": 0}}}, "grading.weights gives the objectives ['tests'] a total weight of 0"),
    ({"limits": {"test_timeout_s": float("inf")}}, "limits.test_timeout_s: Input should be a finite number (got inf)"),
    ({"limits": {"command_timeout_s": float("nan")}}, "limits.command_timeout_s: Input should be a finite number"),
    ({"limits": {"setup_timeout_s": 10**9}}, "limits.setup_timeout_s: Input should be less than or equal to 604800"),
    ({"limits": {"memory_mb": 10**15}}, "limits.memory_mb: Input should be less than or equal to 1048576"),
    ({"limits": {"memory_mb": 1e15}}, "limits.memory_mb: Input should be a valid integer"),
    ({"limits": {"max_processes": 2**63}}, "limits.max_processes: Input should be less than or equal to 4194304"),
    ({"limits": {"disk_mb": 2**40}}, "limits.disk_mb: Input should be less than or equal to 1048576"),
    ({"constraints": {"allowed_files": ["/etc/passwd"]}},
     "constraints.allowed_files: glob '/etc/passwd' must be relative to the repository root"),
    ({"constraints": {"protected_files": ["src/../../x"]}},
     "constraints.protected_files: glob 'src/../../x' must stay inside the repository (no '..' part)"),
])
def test_a_limit_no_sandbox_enforces_or_a_coerced_value_is_refused(overrides: dict[str, Any], expected: str) -> None:
    """Each was accepted: max_steps: yes became 1; inf weights made every score NaN; inf timeouts
    set no deadline; memory_mb 1e15 made bwrap's prlimit fail, so every golden scored 0."""
    assert expected in error_of(**overrides)


def test_the_largest_enforceable_limits_are_accepted() -> None:
    spec = load(limits={"max_steps": 10_000, "memory_mb": 1024 * 1024, "max_processes": 4_194_304,
                        "test_timeout_s": 604_800, "cpu_s": 604_800}, constraints={"allowed_files": ["src/**", "*.py"]})
    assert spec.limits.memory_mb == 1024 * 1024 and spec.constraints.allowed_files == ["src/**", "*.py"]


@pytest.mark.parametrize(("text", "expected"), [
    ("id: a\nid: b\n", "line 2, column 1: duplicate key 'id' (first at line 1)"),
    ("a: &x [1, 2]\nb: *x\n", "line 2, column 4: an alias (*x) is not allowed here"),
    ("a: " + "[" * 100 + "]" * 100 + "\n", "nested deeper than 64 levels"),
])
def test_a_task_file_past_the_yaml_limits_is_one_error(text: str, expected: str) -> None:
    with pytest.raises(TaskSpecError, match="^suite/t/task.yaml: ") as info:
        parse_spec(text, "suite/t/task.yaml")
    assert expected in str(info.value)
