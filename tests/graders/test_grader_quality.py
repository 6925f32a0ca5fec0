"""QualityGrader: the objective of refactor tasks, a gate elsewhere, and fail-closed on bad source."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from repogym_gym.grading import grade_patch, grade_workspace
from repogym_gym.metrics import function_metrics
from repogym_gym.task import Task
from repogym_gym.workspace import Workspace
from tests.helpers import CALC_SOURCE, FIXED_SOURCE, GOLDEN_PATCH, MakeTask, grade_files, tiny_spec

RATES = "shipping/rates.py"


@pytest.fixture(scope="module")
def refactor_task(starter_tasks: list[Task]) -> Task:
    return next(t for t in starter_tasks if t.id == "shipping-quote-refactor")


def golden_rates(task: Task) -> str:
    with Workspace.create(task) as ws:
        ws.apply_patch(task.golden_patch())
        return ws.read(RATES)


# -- refactor: quality is the objective ---------------------------------------------------------------------


def test_refactor_noop_scores_zero_with_both_limits_violated(refactor_task: Task) -> None:
    result = grade_patch(refactor_task, "")
    quality = result.component("quality")
    assert quality.role == "objective"
    assert quality.score == 0.0
    assert all(quality.details["violations"][rule] for rule in ("max_function_length", "max_cyclomatic_complexity"))
    assert result.component("tests").role == "gate"
    assert result.component("tests").passed is True
    assert (result.score, result.passed) == (0.0, False)


def test_refactor_golden_scores_one(refactor_task: Task) -> None:
    result = grade_patch(refactor_task, refactor_task.golden_patch())
    assert result.component("quality").details["violations"] == {"max_function_length": [], "max_cyclomatic_complexity": []}
    assert (result.score, result.passed) == (1.0, True)
    assert result.summary() == "PASS 1.000 (constraints=1.00✓(gate), quality=1.00✓, tests=1.00✓(gate))"


def _pad_quote(source: str) -> str:
    """The golden source with quote() stretched past 35 lines by comments (complexity unchanged)."""
    anchor = "    _check_parcel(weight_grams, zone, service)\n"
    assert anchor in source
    return source.replace(anchor, "".join(f"    # step {i}\n" for i in range(10)) + anchor, 1)


def _add_complex_helper(source: str) -> str:
    """The golden source plus a 2-line helper of cyclomatic complexity 10 (length unchanged elsewhere)."""
    return source + "\n\ndef _all_set(x):\n    return x and x and x and x and x and x and x and x and x and x\n"


@pytest.mark.parametrize(
    ("edit", "violated"),
    [(_pad_quote, "max_function_length"), (_add_complex_helper, "max_cyclomatic_complexity")],
    ids=["too-long", "too-complex"],
)
def test_refactor_satisfying_one_of_two_limits_scores_one_half(refactor_task: Task, edit, violated: str) -> None:  # noqa: ANN001
    source = edit(golden_rates(refactor_task))
    metrics = {m.qualname: m for m in function_metrics(source)}
    assert (metrics["quote"].length > 35) == (violated == "max_function_length")
    assert (max(m.complexity for m in metrics.values()) > 8) == (violated == "max_cyclomatic_complexity")
    result = grade_files(refactor_task, {RATES: source})
    quality = result.component("quality")
    assert {rule for rule, v in quality.details["violations"].items() if v} == {violated}
    assert result.component("tests").passed is True
    assert quality.score == 0.5
    assert result.score == 0.5
    assert result.passed is False


# -- elsewhere: quality is a gate ------------------------------------------------------------------------------


def test_quality_limits_on_a_bugfix_are_a_gate_that_zeroes_the_golden(make_task: MakeTask) -> None:
    task = make_task(constraints={"paths": ["calc/__init__.py"], "max_function_length": 1})
    result = grade_patch(task, GOLDEN_PATCH)
    quality = result.component("quality")
    assert (quality.role, quality.weight, quality.score, quality.passed) == ("gate", 0.0, 0.0, False)
    assert result.component("tests").score == 1.0
    assert (result.score, result.passed) == (0.0, False)


def test_quality_limits_on_a_bugfix_that_hold_leave_the_score_to_the_tests(make_task: MakeTask) -> None:
    task = make_task(constraints={"paths": ["calc/__init__.py"], "max_function_length": 2, "max_cyclomatic_complexity": 1})
    result = grade_patch(task, GOLDEN_PATCH)
    assert result.component("quality").passed is True
    assert (result.score, result.passed) == (1.0, True)
    assert [c.name for c in result.components] == ["constraints", "quality", "tests"]


# -- fail closed ---------------------------------------------------------------------------------------------


def _tiny_refactor(make_task: MakeTask, **limits: int) -> Task:
    spec = tiny_spec()
    tests = {**spec["tests"], "fail_to_pass": [], "pass_to_pass": spec["tests"]["pass_to_pass"]}
    return make_task(type="refactor", tests=tests, constraints={"paths": ["calc"], **limits})


def test_a_syntax_error_under_paths_violates_every_rule(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=50, max_cyclomatic_complexity=50)
    result = grade_files(task, {"calc/broken.py": "def oops(:\n    pass\n"})
    assert result.component("tests").passed is True  # broken.py is never imported
    quality = result.component("quality")
    assert quality.details["violations"] == {"max_function_length": ["unmeasurable"], "max_cyclomatic_complexity": ["unmeasurable"]}
    assert (quality.score, quality.passed) == (0.0, False)
    assert any("cannot measure" in m for m in quality.messages)
    assert result.score == 0.0


def test_a_clean_tiny_refactor_scores_one_and_one_limit_gives_all_or_nothing(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=2)
    assert grade_files(task, {"calc/__init__.py": CALC_SOURCE + "\n\ndef mul(a, b):\n    return a * b\n"}).score == 1.0
    long_mul = CALC_SOURCE + "\n\ndef mul(a, b):\n    result = a * b\n    return result\n"
    result = grade_files(task, {"calc/__init__.py": long_mul})
    assert result.component("quality").score == 0.0
    assert result.score == 0.0


def test_quality_is_measured_on_the_graded_copy_not_the_baseline(make_task: MakeTask) -> None:
    task = make_task(constraints={"paths": ["calc/__init__.py"], "max_function_length": 2})
    long_add = FIXED_SOURCE.replace("    return a + b\n", "    total = a + b\n    return total\n", 1)
    result = grade_files(task, {"calc/__init__.py": long_add})
    assert result.component("tests").score == 1.0
    assert result.component("quality").details["violations"]["max_function_length"] == ["calc/__init__.py:1 add: 3 lines > 2"]
    assert result.score == 0.0


# -- measured on what runs ------------------------------------------------------------------------------------

LONG = "def long(x):\n" + "".join(f"    x = x + {i}\n" for i in range(5)) + "    return x\n"  # 7 lines


def test_a_changed_file_that_parses_as_python_is_measured_whatever_its_name(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=3)
    result = grade_files(task, {"calc/impl.txt": LONG, "calc/noext": LONG})
    quality = result.component("quality")
    assert quality.details["violations"]["max_function_length"] == ["calc/impl.txt:1 long: 7 lines > 3",
                                                                    "calc/noext:1 long: 7 lines > 3"]
    assert (quality.score, result.score) == (0.0, 0.0)


def test_a_changed_file_that_parses_only_in_a_grammar_a_compile_flag_selects_is_measured(make_task: MakeTask) -> None:
    """Red-team round 34: ``<>`` (``barry_as_FLUFL``) or top-level ``await`` kept a .txt file from the plain parse."""
    task = _tiny_refactor(make_task, max_function_length=3)
    flufl = LONG.replace("    return x\n", "    return x if x <> 0 else 1\n")
    awaited = LONG + "await long(1)\n"
    result = grade_files(task, {"calc/impl.txt": flufl, "calc/other.txt": awaited})
    quality = result.component("quality")
    assert quality.details["violations"]["max_function_length"] == ["calc/impl.txt:1 long: 7 lines > 3",
                                                                    "calc/other.txt:1 long: 7 lines > 3"]
    assert (quality.score, result.score) == (0.0, 0.0)


def test_a_changed_file_that_is_not_python_is_not_measured(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=3)
    with Workspace.create(task) as ws:
        ws.write("docs/notes.md", "# Notes\n\nThis is not Python: def long(x):\n")
        ws.write("calc/logo.png", b"\x89PNG\r\n\x1a\n\0\0" + bytes(range(256)))
        ws.write("data/huge.txt", LONG * 40_000)  # parses, but past the 1 MiB a non-.py file is parsed up to
        result = grade_workspace(ws)
    quality = result.component("quality")
    assert quality.details["violations"]["max_function_length"] == []
    assert "docs/notes.md" not in quality.details["measured"] and "data/huge.txt" not in quality.details["measured"]
    assert (quality.score, result.score) == (1.0, 1.0)


def test_re_compile_and_model_eval_are_everyday_code_not_dynamic_loading(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=5)
    helper = "import re\n\n_WORD = re.compile(r'\\w+')\n\n\ndef words(text, model=None):\n    return _WORD.findall(text)\n"
    result = grade_files(task, {"calc/words.py": helper})
    assert result.component("quality").passed is True and result.score == 1.0


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"calc/run.py": "_run = exec\n"}, "calc/run.py:1: `exec`"),
        ({"calc/run.py": "import importlib.util\n"}, "calc/run.py:1: `importlib.util`"),
        ({"calc/run.py": "from runpy import run_path\n"}, "calc/run.py:1: `runpy`"),
        ({"calc/run.py": "import pickle\n"}, "calc/run.py:1: `pickle`"),
        ({"calc/run.py": "\n\nrun = getattr(__builtins__, 'ex' + 'ec')\n"}, "calc/run.py:3: `__builtins__`"),
        ({"calc/run.txt": "import subprocess\n"}, "calc/run.txt:1: `subprocess`"),
    ],
    ids=["exec-reference", "importlib", "runpy", "pickle", "builtins", "in-a-txt"],
)
def test_a_changed_file_that_can_run_code_held_as_data_fails_naming_file_line_and_reference(
        make_task: MakeTask, files: dict[str, str], message: str) -> None:
    task = _tiny_refactor(make_task, max_function_length=50, max_cyclomatic_complexity=50)
    result = grade_files(task, files)
    quality = result.component("quality")
    assert (quality.score, quality.passed, result.score) == (0.0, False, 0.0)
    assert quality.messages[0].startswith(message + " (") and quality.messages[0].endswith(
        "runs code the quality limits cannot measure"), quality.messages
    assert quality.details["dynamic_code"][0].startswith(message)


def test_dynamic_code_fails_the_gate_too(make_task: MakeTask) -> None:
    task = make_task(constraints={"paths": ["calc/__init__.py"], "max_function_length": 50})
    result = grade_files(task, {"calc/__init__.py": FIXED_SOURCE + "\n_run = eval\n"})
    quality = result.component("quality")
    assert (quality.role, quality.passed) == ("gate", False)
    assert result.component("tests").score == 1.0 and result.score == 0.0


def test_dynamic_code_the_baseline_already_had_is_not_the_submissions(make_task: MakeTask) -> None:
    task = make_task(files={"calc/loader.py": "import importlib\n"},
                     constraints={"paths": ["calc"], "max_function_length": 50})
    assert grade_patch(task, GOLDEN_PATCH).score == 1.0


@pytest.mark.parametrize("name", ["calc/_impl.cpython-311-x86_64-linux-gnu.so", "calc/_impl.abi3.so", "calc/_impl.pyd"])
def test_a_changed_native_extension_module_fails(make_task: MakeTask, name: str) -> None:
    task = _tiny_refactor(make_task, max_function_length=50)
    with Workspace.create(task) as ws:
        ws.write(name, b"\x7fELF\x02\x01\x01\0" + bytes(64))
        result = grade_workspace(ws)
    quality = result.component("quality")
    assert quality.score == 0.0 and quality.messages == [f"{name}:1: a native extension module: runs code the "
                                                         "quality limits cannot measure"]


@pytest.mark.parametrize(("name", "image", "kind"), [("calc/tables.dat", b"\x7fELF\x02\x01\x01\0" + bytes(64), "an ELF image"),
                                                    ("calc/rates", b"\xcf\xfa\xed\xfe" + bytes(64), "a Mach-O image")])
def test_native_code_fails_whatever_the_file_is_named(make_task: MakeTask, name: str, image: bytes, kind: str) -> None:
    """Red-team round 41 kept the refactor task's ladder as C in ``shipping/tables.dat``, loaded by Tcl's
    ``load``: quality knew native code by its suffix only (1.0 under local and bwrap)."""
    task = _tiny_refactor(make_task, max_function_length=50)
    with Workspace.create(task) as ws:
        ws.write(name, image)
        ws.write("calc/notes.txt", b"MZ is not a magic the grader trusts alone\n")
        result = grade_workspace(ws)
    quality = result.component("quality")
    assert quality.score == 0.0 and quality.messages == [f"{name}:1: native code ({kind}), which a loader runs whatever "
                                                         "the file is named: runs code the quality limits cannot measure"]


def test_bytes_the_grader_s_parsers_cannot_judge_are_the_submission_s_zero_not_an_infra_error(make_task: MakeTask) -> None:
    """Red-team round 42: a 42-byte zip64 end record naming two disks makes ``zipfile.is_zipfile`` raise
    ``BadZipFile`` (it catches only ``OSError``): the quality grader crashed and the episode was an
    ``infra_error``, which trainers drop, on a refactor task left undone."""
    import struct  # noqa: PLC0415

    record = struct.pack("<4sLQL", b"PK\x06\x07", 0, 0, 2) + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0, 0, 0, 0, 0)
    task = _tiny_refactor(make_task, max_function_length=50)
    with Workspace.create(task) as ws:
        ws.write("calc/tables.dat", record)
        result = grade_workspace(ws)
    quality = result.component("quality")
    assert result.infra_error is None and quality.score == 0.0 and quality.passed is False
    assert quality.messages[0].startswith("cannot measure the submission: BadZipFile"), quality.messages


def test_a_changed_zip_archive_fails(make_task: MakeTask, tmp_path: Path) -> None:
    task = _tiny_refactor(make_task, max_function_length=50)
    archive = tmp_path / "impl.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("impl.py", LONG)
    with Workspace.create(task) as ws:
        ws.write("calc/impl.dat", archive.read_bytes())
        result = grade_workspace(ws)
    quality = result.component("quality")
    assert quality.score == 0.0 and "calc/impl.dat:1: a zip archive" in quality.messages[0]


@pytest.mark.parametrize(
    ("name", "source"),
    [("calc/deep.py", "x = " + "1+" * 100_000 + "1\n"), ("calc/deep.py", "x = " + "-" * 100_000 + "1\n"),
     ("calc/deep.txt", "x = " + "1+" * 100_000 + "1\n")],
    ids=["recursion-error", "memory-error", "recursion-error-in-a-txt"],
)
def test_a_file_nested_too_deep_for_the_parser_is_unmeasurable(make_task: MakeTask, name: str, source: str) -> None:
    task = _tiny_refactor(make_task, max_function_length=50, max_cyclomatic_complexity=50)
    result = grade_files(task, {name: source})
    quality = result.component("quality")
    assert quality.details["violations"] == {rule: ["unmeasurable"] for rule in ("max_function_length", "max_cyclomatic_complexity")}
    assert quality.messages == [f"cannot measure {name}: nested too deeply for the parser"]
    assert (quality.score, result.score) == (0.0, 0.0)


def test_a_changed_py_with_an_unknown_coding_cookie_is_unmeasurable(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=50)
    result = grade_files(task, {"calc/odd.py": "# coding: no-such-codec\nx = 1\n"})
    quality = result.component("quality")
    assert quality.score == 0.0 and quality.messages[0].startswith("cannot measure calc/odd.py: unknown encoding")


def test_a_module_level_lambda_is_measured_like_a_def(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=3, max_cyclomatic_complexity=2)
    source = "pick = lambda a, b: (\n    a if a > b\n    else b if b > 0\n    else 0\n)\n"
    quality = grade_files(task, {"calc/pick.py": source}).component("quality")
    assert quality.details["violations"] == {"max_function_length": ["calc/pick.py:1 <lambda>: 5 lines > 3"],
                                             "max_cyclomatic_complexity": ["calc/pick.py:1 <lambda>: 3 complexity > 2"]}


def test_statements_joined_by_semicolons_are_measured_not_an_infra_error(make_task: MakeTask) -> None:
    """Red-team round 14: ``a(); b()`` in a changed file gave a module 2 lines of logic on its one
    line, the metrics model refused it, and the grading became infra_error (a masked zero)."""
    task = _tiny_refactor(make_task, max_function_length=50, max_cyclomatic_complexity=50)
    result = grade_files(task, {"notes.txt": "a(); b()\n"})
    assert result.infra_error is None, result.infra_error
    quality = result.component("quality")
    assert quality.details["violations"]["max_function_length"] == []
    assert (quality.score, result.score) == (1.0, 1.0)


RUNNERS_OF_HELD_SOURCE = {  # red-team round 14: refactor 1.0 with the original still running
    "a builtin reached through print.__self__": 'vars(print.__self__).get("exec")(_SOURCE, globals())\n',
    "a module written at run time and imported": (
        "import pathlib, sys, tempfile\n_DIR = tempfile.mkdtemp()\n"
        "pathlib.Path(_DIR, '_calc_impl.py').write_text(_SOURCE)\nsys.path.insert(0, _DIR)\n"
        "from _calc_impl import *  # noqa: F403\n"),
}


@pytest.mark.parametrize("how", list(RUNNERS_OF_HELD_SOURCE))
def test_source_held_in_a_string_is_measured_like_code(make_task: MakeTask, how: str) -> None:
    task = _tiny_refactor(make_task, max_function_length=3)
    held = CALC_SOURCE + "\n\n" + LONG
    result = grade_files(task, {"calc/__init__.py": f"_SOURCE = {held!r}\n" + RUNNERS_OF_HELD_SOURCE[how]})
    assert result.component("tests").details["fail_to_pass"] == {}  # the held code runs and is what the tests call
    assert result.component("tests").details["runtime_code"]["violations"], result.component("tests").details
    quality = result.component("quality")
    assert quality.details["violations"]["max_function_length"] == [
        "calc/__init__.py (source in a string at line 1):9 long: 7 lines > 3"], quality.details
    assert (quality.score, result.score) == (0.0, 0.0)


def test_prose_and_short_strings_are_not_measured_as_source(make_task: MakeTask) -> None:
    task = _tiny_refactor(make_task, max_function_length=3)
    source = CALC_SOURCE + '\nNOTE = """Adds numbers.\\nSee the README for details."""\nSEP = "a; b"\n'
    result = grade_files(task, {"calc/__init__.py": source})
    assert result.component("quality").details["violations"]["max_function_length"] == []
    assert result.score == 1.0


def test_source_compiled_at_run_time_is_measured_like_a_changed_file(make_task: MakeTask) -> None:
    """No literal holds the original here (it is base64) and no listed name runs it: the judge
    records the text compiled below the package's frame, and the host measures it."""
    import base64

    task = _tiny_refactor(make_task, max_function_length=3)
    encoded = base64.b64encode((CALC_SOURCE + "\n\n" + LONG).encode()).decode()
    source = (f"import base64 as _b\n_SRC = {encoded!r}\n"
              "globals()['__buil' + 'tins__']['ex' + 'ec'](_b.b64decode(_SRC).decode(), globals())\n")
    result = grade_files(task, {"calc/__init__.py": source})
    assert result.component("quality").score == 1.0  # nothing static to see (print.__self__ is, since round 36)
    tests = result.component("tests")
    assert tests.passed is False and result.score == 0.0, tests
    assert tests.details["runtime_code"]["violations"] == ["run-time code 1, line 9: a function of 7 lines > 3"], tests.details
    assert "def long" not in str(tests.messages) and "long" not in str(tests.details["runtime_code"])


def test_methods_a_library_writes_from_declarations_are_not_the_submissions_code(make_task: MakeTask) -> None:
    """A dataclass's and a namedtuple's generated methods (written from field names) are not run-time
    code of the submission; a ForwardRef's text is (the submission wrote it) and is measured."""
    task = _tiny_refactor(make_task, max_function_length=3)
    source = CALC_SOURCE + ("\n\nimport collections\nimport typing\nfrom dataclasses import dataclass, field\n\n\n"
                            "@dataclass\nclass Pair:\n    a: int\n    b: list = field(default_factory=list)\n\n\n"
                            "Point = collections.namedtuple('Point', 'x y')\n"
                            "HINT = typing.List['int']\n")
    result = grade_files(task, {"calc/__init__.py": source})
    runtime = result.component("tests").details["runtime_code"]
    assert runtime == {"texts": 1, "violations": []}, runtime  # the ForwardRef's "int"
    assert result.score == 1.0, [(c.name, c.score, c.messages) for c in result.components]
