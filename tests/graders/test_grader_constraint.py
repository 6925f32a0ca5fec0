"""ConstraintGrader: each scope/pattern rule on its own, the exact score, and its role as a gate."""

from __future__ import annotations

import os

import pytest

from repogym_gym.graders import CompositeGrader, ConstraintGrader, GradingContext, component
from repogym_gym.graders.constraint import added_lines
from repogym_gym.grading import grade_patch, grade_workspace
from repogym_gym.results import GradeComponent, GradeResult, Role
from repogym_gym.task import Task
from repogym_gym.workspace import Workspace
from tests.helpers import FIXED_SOURCE, GOLDEN_PATCH, MakeTask


class PerfectObjective:
    """An objective that always scores 1, so only the constraints gate decides (and no pytest runs)."""

    name = "objective"
    role: Role = "objective"

    def grade(self, ctx: GradingContext) -> GradeComponent:
        return component(self, score=1.0, passed=True)


#: The real ConstraintGrader behind a perfect objective: the total is 1 unless the gate fails.
GATE_ONLY = CompositeGrader([ConstraintGrader(), PerfectObjective()])


def grade_files(
    task: Task, files: dict[str, str], *, symlinks: dict[str, str] | None = None, grader: CompositeGrader | None = GATE_ONLY
) -> GradeResult:
    """Grade a submission writing ``files`` (path -> text) and ``symlinks`` (path -> target).

    ``grader=None`` runs the task's full default pipeline (real tests included).
    """
    with Workspace.create(task) as ws:
        for rel, text in files.items():
            ws.write(rel, text)
        for rel, target in (symlinks or {}).items():
            os.symlink(target, ws.path / rel)
        return grade_workspace(ws, grader=grader)


def grade_golden(task: Task) -> GradeResult:
    return grade_patch(task, GOLDEN_PATCH, grader=GATE_ONLY)


def constrained(make_task: MakeTask, **constraints: object) -> Task:
    return make_task(constraints=constraints)


def assert_gate_failed(result: GradeResult, check: str, *, checks: int, violated: int = 1) -> list[str]:
    """The constraints gate failed on ``check`` with the exact score; the total is 0."""
    comp = result.component("constraints")
    assert comp.role == "gate"
    assert comp.passed is False
    assert comp.score == 1 - violated / checks
    assert len(comp.details["checks"]) == checks
    assert comp.details["checks"][check], comp.details
    assert result.component("objective").score == 1.0  # the objective is perfect ...
    assert (result.score, result.passed) == (0.0, False)  # ... but the failed gate zeroes it
    return comp.details["checks"][check]


def assert_gate_passed(result: GradeResult, *, checks: int) -> None:
    comp = result.component("constraints")
    assert (comp.score, comp.passed) == (1.0, True)
    assert len(comp.details["checks"]) == checks
    assert (result.score, result.passed) == (1.0, True)


# -- always-on checks ---------------------------------------------------------------------------------------


def test_only_the_two_always_on_checks_run_by_default(tiny_task: Task) -> None:
    result = grade_patch(tiny_task, GOLDEN_PATCH)
    assert result.component("constraints").details["checks"] == {"protected_files": [], "file_types": []}
    assert_gate_passed(result, checks=2)


def test_changing_a_protected_test_file_fails_the_gate(tiny_task: Task) -> None:
    result = grade_files(tiny_task, {"calc/__init__.py": FIXED_SOURCE, "tests/test_calc.py": "def test_add():\n    pass\n"})
    violations = assert_gate_failed(result, "protected_files", checks=2)
    assert any("tests/test_calc.py" in v for v in violations)


def test_adding_a_conftest_fails_the_gate(tiny_task: Task) -> None:
    result = grade_files(tiny_task, {"calc/__init__.py": FIXED_SOURCE, "conftest.py": "x = 1\n"})
    assert any("conftest.py" in v for v in assert_gate_failed(result, "protected_files", checks=2))


def test_submitting_a_symlink_fails_the_file_types_check(tiny_task: Task) -> None:
    result = grade_files(tiny_task, {"calc/__init__.py": FIXED_SOURCE}, symlinks={"calc/link.py": "__init__.py"})
    assert any("calc/link.py" in v for v in assert_gate_failed(result, "file_types", checks=2))


@pytest.mark.parametrize("rel", ["benchmarks/random.py", "random.py", "tests_support/json/__init__.py", "bench/os.py"])
def test_a_module_named_like_the_standard_library_s_outside_a_package_fails_file_types(tiny_task: Task, rel: str) -> None:
    """Red-team round 15: ``benchmarks/random.py`` shadowed ``random`` for the perf script beside it."""
    result = grade_files(tiny_task, {"calc/__init__.py": FIXED_SOURCE, rel: "x = 1\n"})
    assert any(rel in v and "standard library" in v for v in assert_gate_failed(result, "file_types", checks=2))


def test_a_submodule_named_like_the_standard_library_s_inside_a_package_is_fine(tiny_task: Task) -> None:
    result = grade_files(tiny_task, {"calc/__init__.py": FIXED_SOURCE, "calc/random.py": "x = 1\n"})
    assert_gate_passed(result, checks=2)


# -- allowed_files, max_files_changed, max_lines_changed ---------------------------------------------------


def test_allowed_files_passes_a_change_inside_the_globs(make_task: MakeTask) -> None:
    assert_gate_passed(grade_golden(constrained(make_task, allowed_files=["calc/*.py"])), checks=3)


def test_allowed_files_fails_a_change_outside_the_globs(make_task: MakeTask) -> None:
    task = constrained(make_task, allowed_files=["calc/*.py"])
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE, "notes.txt": "hello\n"})
    assert assert_gate_failed(result, "allowed_files", checks=3) == ["notes.txt is outside allowed_files"]


def test_max_files_changed_passes_at_the_limit(make_task: MakeTask) -> None:
    assert_gate_passed(grade_golden(constrained(make_task, max_files_changed=1)), checks=3)


def test_max_files_changed_fails_over_the_limit(make_task: MakeTask) -> None:
    task = constrained(make_task, max_files_changed=1)
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE, "calc/extra.py": "X = 1\n"})
    assert assert_gate_failed(result, "max_files_changed", checks=3) == ["2 files changed, limit 1"]


def test_max_lines_changed_passes_at_the_limit(make_task: MakeTask) -> None:
    # The golden patch removes one line and adds one: 2 lines changed.
    assert_gate_passed(grade_golden(constrained(make_task, max_lines_changed=2)), checks=3)


def test_max_lines_changed_fails_over_the_limit(make_task: MakeTask) -> None:
    result = grade_golden(constrained(make_task, max_lines_changed=1))
    assert result.lines_changed == 2
    assert assert_gate_failed(result, "max_lines_changed", checks=3) == ["2 lines changed, limit 1"]


# -- forbidden_patterns (added lines only) ---------------------------------------------------------------


def test_a_forbidden_pattern_in_an_added_line_fails(make_task: MakeTask) -> None:
    result = grade_golden(constrained(make_task, forbidden_patterns=[r"a \+ b"]))
    violations = assert_gate_failed(result, r"forbidden:a \+ b", checks=3)
    assert violations == [r"forbidden pattern 'a \\+ b' added in calc/__init__.py"]


def test_a_forbidden_pattern_already_in_the_baseline_is_fine(make_task: MakeTask) -> None:
    # "return a - b" stays in sub() (unchanged context) and leaves add() (a removed line).
    assert_gate_passed(grade_golden(constrained(make_task, forbidden_patterns=["return a - b"])), checks=3)


def test_a_forbidden_pattern_in_a_new_file_fails(make_task: MakeTask) -> None:
    task = constrained(make_task, forbidden_patterns=[r"\beval\("])
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE, "calc/extra.py": "Y = eval('1')\n"})
    assert assert_gate_failed(result, r"forbidden:\beval\(", checks=3) == [r"forbidden pattern '\\beval\\(' added in calc/extra.py"]


def test_a_forbidden_pattern_cannot_hide_behind_an_added_line_starting_with_plus_plus(make_task: MakeTask) -> None:
    task = constrained(make_task, forbidden_patterns=[r"\beval\("])
    sneaky = "++ 0\n\n\ndef add(a, b):\n    return eval('a + b')\n\n\ndef sub(a, b):\n    return a - b\n"
    result = grade_files(task, {"calc/__init__.py": sneaky}, grader=None)
    assert result.component("tests").score == 1.0
    assert result.component("constraints").details["checks"][r"forbidden:\beval\("]
    assert result.score == 0.0


def test_a_forbidden_pattern_in_a_file_with_a_non_ascii_name_fails(make_task: MakeTask) -> None:
    task = constrained(make_task, forbidden_patterns=[r"\beval\("])
    fixed_via_module = "from calc.caf\u00e9 import add\n\n\ndef sub(a, b):\n    return a - b\n"
    result = grade_files(task, {"calc/__init__.py": fixed_via_module, "calc/caf\u00e9.py": "def add(a, b):\n    return eval('a + b')\n"},
                         grader=None)
    assert result.component("tests").score == 1.0
    assert result.component("constraints").details["checks"][r"forbidden:\beval\("]
    assert result.score == 0.0


# -- required_patterns (on paths) --------------------------------------------------------------------------


def test_a_required_pattern_found_in_paths_passes(make_task: MakeTask) -> None:
    task = constrained(make_task, required_patterns=[r"return a \+ b"], paths=["calc/__init__.py"])
    assert_gate_passed(grade_golden(task), checks=3)


def test_a_required_pattern_missing_from_paths_fails(make_task: MakeTask) -> None:
    task = constrained(make_task, required_patterns=[r"def mul\("], paths=["calc/__init__.py"])
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE, "calc/mul.py": "def mul(a, b):\n    return a * b\n"})
    violations = assert_gate_failed(result, r"required:def mul\(", checks=3)
    assert violations == [r"required pattern 'def mul\\(' not found in ['calc/__init__.py']"]


def test_a_required_pattern_searches_a_directory_in_paths(make_task: MakeTask) -> None:
    task = constrained(make_task, required_patterns=[r"def mul\("], paths=["calc"])
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE, "calc/mul.py": "def mul(a, b):\n    return a * b\n"})
    assert_gate_passed(result, checks=3)


def test_a_required_pattern_without_paths_searches_the_changed_files(make_task: MakeTask) -> None:
    task = constrained(make_task, required_patterns=[r"def mul\("])
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE, "calc/mul.py": "def mul(a, b):\n    return a * b\n"})
    assert_gate_passed(result, checks=3)
    assert "def mul" not in FIXED_SOURCE
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE})
    assert_gate_failed(result, r"required:def mul\(", checks=3)


# -- the exact score ------------------------------------------------------------------------------------------


def test_the_score_is_one_minus_violated_over_checks(make_task: MakeTask) -> None:
    task = constrained(make_task, allowed_files=["calc/__init__.py"], max_files_changed=1, max_lines_changed=100,
                       forbidden_patterns=["TODO"])
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE, "README.md": "hi\n"})
    comp = result.component("constraints")
    assert sorted(name for name, v in comp.details["checks"].items() if v) == ["allowed_files", "max_files_changed"]
    assert comp.score == 1 - 2 / 6
    assert comp.messages == ["README.md is outside allowed_files", "2 files changed, limit 1"]
    assert result.score == 0.0


def test_each_pattern_is_its_own_check(make_task: MakeTask) -> None:
    task = constrained(make_task, forbidden_patterns=["a", "zzz_never"], required_patterns=["zzz_absent"])
    result = grade_golden(task)
    checks = result.component("constraints").details["checks"]
    assert set(checks) == {"protected_files", "file_types", "forbidden:a", "forbidden:zzz_never", "required:zzz_absent"}
    assert result.component("constraints").score == 1 - 2 / 5


# -- added_lines ----------------------------------------------------------------------------------------------

PATCH = """\
diff --git a/pkg/a.py b/pkg/a.py
index 1111111..2222222 100644
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -1,2 +1,3 @@
 keep = 1
-old = 2
+new = 2
+more = 3
diff --git a/pkg/gone.py b/pkg/gone.py
deleted file mode 100644
--- a/pkg/gone.py
+++ /dev/null
@@ -1 +0,0 @@
-bye = 1
diff --git a/pkg/b.py b/pkg/b.py
new file mode 100644
--- /dev/null
+++ b/pkg/b.py
@@ -0,0 +1 @@
+hello = 1
"""


def test_added_lines_collects_added_lines_per_path_without_headers() -> None:
    assert added_lines(PATCH) == {"pkg/a.py": ["new = 2", "more = 3"], "pkg/b.py": ["hello = 1"]}


def test_added_lines_of_an_empty_patch_is_empty() -> None:
    assert added_lines("") == {}


def test_added_lines_keeps_an_added_line_that_starts_with_plus_plus() -> None:
    patch = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1,3 @@\n keep\n+++ 0\n+evil()\n"
    assert added_lines(patch) == {"m.py": ["++ 0", "evil()"]}
