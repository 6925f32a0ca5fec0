"""Property-based fuzzing of the files the host reads (issue 13): task.yaml and JUnit reports.

1,000 generated task files and 1,000 generated JUnit reports, fixed seed. A task file either loads
or is refused with a ``TaskSpecError`` naming the file; a JUnit file either parses or is refused
with a ``JUnitParseError``. Nothing else escapes, nothing hangs, and what loads is what was written.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repogym_gym.errors import JUnitParseError, TaskSpecError
from repogym_gym.junit import parse_junit_xml
from repogym_gym.task import load_task
from tests.helpers import CALC_SOURCE, tiny_spec

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


def test_a_thousand_generated_task_files_load_or_are_refused_naming_the_file(task_dir: Path) -> None:
    seen = {"loaded": 0, "refused": 0}

    @settings(max_examples=FILES, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_edits, st.booleans())
    def load(edits: list[tuple[list[str], Any]], raw: bool) -> None:
        spec = copy.deepcopy(tiny_spec())
        for path, value in edits:
            _apply(spec, path, value)
        try:
            text = yaml.safe_dump(spec, allow_unicode=True, sort_keys=False)
        except yaml.YAMLError:
            return
        if raw:  # a byte-level cut of the file, as a truncated download would leave it
            text = text[: len(text) * 2 // 3]
        (task_dir / "task.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            task = load_task(task_dir)
        except TaskSpecError as exc:
            assert "task.yaml" in str(exc), exc
            seen["refused"] += 1
            return
        seen["loaded"] += 1
        assert task.id == spec["id"] and task.spec.type == spec["type"]  # loaded as written, never coerced
        assert task.spec.limits.max_steps >= 1 and task.spec.tests.command == spec["tests"]["command"]

    load()
    assert seen["loaded"] + seen["refused"] >= FILES * 0.9 and seen["refused"] > 0 and seen["loaded"] > 0, seen


_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=20)
_attrs = st.dictionaries(st.sampled_from(["name", "classname", "file", "time", "tests", "failures", "errors", "line"]),
                         st.one_of(_names, st.sampled_from(["nan", "-1", "1e999", "0", "tests/test_calc.py"])), max_size=5)


@st.composite
def _element(draw: st.DrawFn, depth: int = 0) -> str:
    tag = draw(st.sampled_from(["testsuites", "testsuite", "testcase", "failure", "error", "skipped", "system-out",
                                "properties", "x"]))
    attrs = "".join(f" {k}={quoteattr(v)}" for k, v in draw(_attrs).items())
    children = draw(st.lists(_element(depth + 1), max_size=3)) if depth < 4 else []
    return f"<{tag}{attrs}>{''.join(children)}</{tag}>"


def test_a_thousand_generated_junit_reports_parse_or_are_refused(tmp_path: Path) -> None:
    seen = {"parsed": 0, "refused": 0}
    path = tmp_path / "junit.xml"

    @settings(max_examples=FILES, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(_element(), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))), st.booleans())
    def parse(body: str, declared: bool) -> None:
        head = '<?xml version="1.0" encoding="utf-8"?>' if declared else ""
        path.write_bytes((head + body).encode("utf-8", "surrogatepass"))
        try:
            report = parse_junit_xml(path)
        except JUnitParseError as exc:
            assert str(exc), "a refusal says why"
            seen["refused"] += 1
            return
        seen["parsed"] += 1
        assert all(report.status_of(i) in ("passed", "failed", "error", "skipped") for i in report.ids)

    parse()
    assert seen["parsed"] + seen["refused"] >= FILES and seen["parsed"] > 0, seen
