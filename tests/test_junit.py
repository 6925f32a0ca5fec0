"""Tests for repogym_gym.junit: per-tool report shapes, key rules, merging, failing closed."""

from __future__ import annotations

import doctest
import itertools
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repogym_gym import junit
from repogym_gym.errors import JUnitParseError, RepoGymError
from repogym_gym.junit import JUnitReport, parse_junit_string, parse_junit_xml

# --- Samples in the shape each tool really writes -------------------------------------------

# pytest, default junit_family=xunit2 (no `file` attribute), one line as pytest writes it.
PYTEST_XUNIT2 = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite '
    'name="pytest" errors="1" failures="1" skipped="2" tests="5" time="0.041" '
    'timestamp="2025-03-01T10:00:00.000000+00:00" hostname="ci-runner">'
    '<testcase classname="tests.test_calc" name="test_add" time="0.001" />'
    '<testcase classname="tests.test_calc" name="test_div[1-0]" time="0.001">'
    '<failure message="ZeroDivisionError: division by zero">a = 1, b = 0\n\n'
    "    def test_div(a, b):\n&gt;       assert a / b\nE       ZeroDivisionError</failure>"
    "</testcase>"
    '<testcase classname="tests.test_calc.TestParse" name="test_blank" time="0.000">'
    '<skipped type="pytest.skip" message="not implemented">/repo/tests/test_calc.py:20: '
    "not implemented</skipped></testcase>"
    '<testcase classname="tests.test_calc.TestParse" name="test_db" time="0.000">'
    '<error message="failed on setup with &quot;RuntimeError: no db&quot;">@pytest.fixture\n'
    "E   RuntimeError: no db</error></testcase>"
    '<testcase classname="tests.test_calc" name="test_known_bug" time="0.000">'
    '<skipped type="pytest.xfail" message="known bug" /></testcase>'
    "</testsuite></testsuites>"
)

JEST_JUNIT = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="3" failures="1" errors="0" time="0.383">
  <testsuite name="addition" errors="0" failures="1" skipped="1" timestamp="2025-03-01T10:00:00" time="0.161" tests="3">
    <testcase classname="addition positive numbers" name="addition positive numbers" time="0.004">
    </testcase>
    <testcase classname="addition negative numbers" name="addition negative numbers" time="0.008">
      <failure>Error: expect(received).toBe(expected) // Object.is equality

Expected: -2
Received: -1
    at Object.&lt;anonymous&gt; (/repo/src/add.test.js:12:20)</failure>
    </testcase>
    <testcase classname="addition big numbers" name="addition big numbers" time="0">
      <skipped/>
    </testcase>
  </testsuite>
</testsuites>
"""

# mocha's built-in `xunit` reporter: a single <testsuite> root.
MOCHA_XUNIT = """\
<testsuite name="Mocha Tests" tests="3" failures="1" errors="1" skipped="1" timestamp="Sat, 01 Mar 2025 10:00:00 GMT" time="0.012">
<testcase classname="Array #indexOf()" name="should return -1 when the value is not present" time="0.001"/>
<testcase classname="Array #indexOf()" name="should return the index when present" time="0.002"><failure>expected -1 to equal 0
AssertionError: expected -1 to equal 0
    at Context.&lt;anonymous&gt; (test/array.spec.js:9:14)</failure></testcase>
<testcase classname="Array #push()" name="should append" time="0"><skipped/></testcase>
</testsuite>
"""

GO_JUNIT_REPORT = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="6" failures="2" errors="1" skipped="1">
\t<testsuite name="example.com/calc" tests="5" failures="2" errors="0" id="0" hostname="ci-runner" skipped="1" time="0.004" timestamp="2025-03-01T10:00:00Z">
\t\t<properties>
\t\t\t<property name="go.version" value="go1.22.1 linux/amd64"></property>
\t\t</properties>
\t\t<testcase name="TestAdd" classname="example.com/calc" time="0.000"></testcase>
\t\t<testcase name="TestAdd/small numbers" classname="example.com/calc" time="0.000"></testcase>
\t\t<testcase name="TestDiv" classname="example.com/calc" time="0.000">
\t\t\t<failure message="Failed"><![CDATA[]]></failure>
\t\t</testcase>
\t\t<testcase name="TestDiv/by_zero" classname="example.com/calc" time="0.000">
\t\t\t<failure message="Failed"><![CDATA[    calc_test.go:21: Div(1, 0) = 0, want error]]></failure>
\t\t</testcase>
\t\t<testcase name="TestSlow" classname="example.com/calc" time="0.000">
\t\t\t<skipped message="Skipped"><![CDATA[    calc_test.go:30: slow]]></skipped>
\t\t</testcase>
\t\t<system-out><![CDATA[FAIL]]></system-out>
\t</testsuite>
\t<testsuite name="example.com/broken" tests="1" failures="0" errors="1" id="1" hostname="ci-runner" time="0.000" timestamp="2025-03-01T10:00:00Z">
\t\t<testcase name="[build failed]" classname="example.com/broken" time="0.000">
\t\t\t<error message="Build error"><![CDATA[broken/x.go:3:1: syntax error: non-declaration statement outside function body]]></error>
\t\t</testcase>
\t</testsuite>
</testsuites>
"""

NEXTEST = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="4" failures="1" errors="0" uuid="45c50d6b-6be6-4e4a-bd6b-fcbd2ad7f0d0" timestamp="2025-03-01T10:00:00.000+00:00" time="0.215">
    <testsuite name="calc" tests="3" disabled="0" errors="0" failures="1">
        <testcase name="tests::adds" classname="calc" timestamp="2025-03-01T10:00:00.010+00:00" time="0.003">
        </testcase>
        <testcase name="tests::divides_by_zero" classname="calc" timestamp="2025-03-01T10:00:00.011+00:00" time="0.004">
            <failure type="test failure">thread &apos;tests::divides_by_zero&apos; panicked at src/lib.rs:20:9:
attempt to divide by zero</failure>
            <rerunFailure timestamp="2025-03-01T10:00:00.020+00:00" time="0.004" type="test failure">
                <system-out>running 1 test</system-out>
                <system-err>thread &apos;tests::divides_by_zero&apos; panicked at src/lib.rs:20:9</system-err>
            </rerunFailure>
            <system-out>running 1 test</system-out>
            <system-err>thread &apos;tests::divides_by_zero&apos; panicked at src/lib.rs:20:9</system-err>
        </testcase>
        <testcase name="tests::reads_socket" classname="calc" timestamp="2025-03-01T10:00:00.030+00:00" time="0.120">
            <flakyFailure timestamp="2025-03-01T10:00:00.030+00:00" time="0.100" type="test failure">
                <system-out>running 1 test</system-out>
                <system-err>thread &apos;tests::reads_socket&apos; panicked at src/lib.rs:40:5: timed out</system-err>
            </flakyFailure>
        </testcase>
    </testsuite>
    <testsuite name="calc::integration" tests="1" disabled="0" errors="0" failures="0">
        <testcase name="end_to_end" classname="calc::integration" timestamp="2025-03-01T10:00:00.100+00:00" time="0.050">
        </testcase>
    </testsuite>
</testsuites>
"""

SUREFIRE = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuite xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="https://maven.apache.org/surefire/maven-surefire-plugin/xsd/surefire-test-report-3.0.xsd" version="3.0" name="com.example.CalculatorTest" time="0.352" tests="5" errors="1" skipped="1" failures="1">
  <properties>
    <property name="java.version" value="17.0.10"/>
    <property name="os.name" value="Linux"/>
  </properties>
  <testcase name="adds" classname="com.example.CalculatorTest" time="0.004"/>
  <testcase name="sums(int, int)[2]" classname="com.example.CalculatorTest" time="0.001">
    <failure message="expected: &lt;5&gt; but was: &lt;4&gt;" type="org.opentest4j.AssertionFailedError"><![CDATA[org.opentest4j.AssertionFailedError: expected: <5> but was: <4>
\tat com.example.CalculatorTest.sums(CalculatorTest.java:31)]]></failure>
    <system-out><![CDATA[summing 2 + 2]]></system-out>
  </testcase>
  <testcase name="readsConfig" classname="com.example.CalculatorTest" time="0.002">
    <error message="config.properties (No such file or directory)" type="java.io.FileNotFoundException"><![CDATA[java.io.FileNotFoundException: config.properties (No such file or directory)]]></error>
  </testcase>
  <testcase name="divides" classname="com.example.CalculatorTest" time="0">
    <skipped message="not implemented yet"/>
  </testcase>
  <testcase name="fetchesRate" classname="com.example.CalculatorTest" time="0.310">
    <flakyError message="Connection refused" type="java.net.ConnectException">
      <stackTrace><![CDATA[java.net.ConnectException: Connection refused]]></stackTrace>
      <system-out><![CDATA[connecting]]></system-out>
    </flakyError>
  </testcase>
</testsuite>
"""

GRADLE = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.example.ParserTest" tests="3" skipped="1" failures="1" errors="0" timestamp="2025-03-01T10:00:00" hostname="ci-runner" time="0.021">
  <properties/>
  <testcase name="parsesEmpty()" classname="com.example.ParserTest" time="0.003"/>
  <testcase name="counts(String, int)[1]" classname="com.example.ParserTest" time="0.002">
    <failure message="org.opentest4j.AssertionFailedError: expected: &lt;2&gt; but was: &lt;1&gt;" type="org.opentest4j.AssertionFailedError">org.opentest4j.AssertionFailedError: expected: &lt;2&gt; but was: &lt;1&gt;
\tat app//com.example.ParserTest.counts(ParserTest.java:22)
</failure>
  </testcase>
  <testcase name="parsesUnicode\u03a9()" classname="com.example.ParserTest" time="0.0">
    <skipped/>
  </testcase>
  <system-out><![CDATA[]]></system-out>
  <system-err><![CDATA[]]></system-err>
</testsuite>
"""

TOOL_REPORTS = {
    "pytest": (
        PYTEST_XUNIT2,
        {
            "tests.test_calc::test_add": "passed",
            "tests.test_calc::test_div[1-0]": "failed",
            "tests.test_calc.TestParse::test_blank": "skipped",
            "tests.test_calc.TestParse::test_db": "error",
            "tests.test_calc::test_known_bug": "skipped",
        },
        (),
    ),
    "jest-junit": (
        JEST_JUNIT,
        {
            "addition positive numbers::addition positive numbers": "passed",
            "addition negative numbers::addition negative numbers": "failed",
            "addition big numbers::addition big numbers": "skipped",
        },
        (),
    ),
    "mocha-xunit": (
        MOCHA_XUNIT,
        {
            "Array #indexOf()::should return -1 when the value is not present": "passed",
            "Array #indexOf()::should return the index when present": "failed",
            "Array #push()::should append": "skipped",
        },
        (),
    ),
    "go-junit-report": (
        GO_JUNIT_REPORT,
        {
            "example.com/calc::TestAdd": "passed",
            "example.com/calc::TestAdd/small numbers": "passed",
            "example.com/calc::TestDiv": "failed",
            "example.com/calc::TestDiv/by_zero": "failed",
            "example.com/calc::TestSlow": "skipped",
            "example.com/broken::[build failed]": "error",
        },
        (),
    ),
    "cargo-nextest": (
        NEXTEST,
        {
            "calc::tests::adds": "passed",
            "calc::tests::divides_by_zero": "failed",
            "calc::tests::reads_socket": "passed",
            "calc::integration::end_to_end": "passed",
        },
        ("calc::tests::divides_by_zero", "calc::tests::reads_socket"),
    ),
    "maven-surefire": (
        SUREFIRE,
        {
            "com.example.CalculatorTest::adds": "passed",
            "com.example.CalculatorTest::sums(int, int)[2]": "failed",
            "com.example.CalculatorTest::readsConfig": "error",
            "com.example.CalculatorTest::divides": "skipped",
            "com.example.CalculatorTest::fetchesRate": "passed",
        },
        ("com.example.CalculatorTest::fetchesRate",),
    ),
    "gradle": (
        GRADLE,
        {
            "com.example.ParserTest::parsesEmpty()": "passed",
            "com.example.ParserTest::counts(String, int)[1]": "failed",
            "com.example.ParserTest::parsesUnicode\u03a9()": "skipped",
        },
        (),
    ),
}


def _at(source: object) -> str:
    """Regex for a message that starts with ``source`` (a path) as the parser names it."""
    return f"^{re.escape(str(source))}: "


def _suite(*cases: str) -> str:
    return f'<testsuites><testsuite name="s">{"".join(cases)}</testsuite></testsuites>'


# --- Running real pytest ----------------------------------------------------------------------


def _run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run pytest in ``root`` (its own rootdir and ini) with no inherited PYTEST_* settings."""
    (root / "pytest.ini").write_text("[pytest]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(root)]
    return subprocess.run(
        [*argv, *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def _pytest_junit(root: Path, target: str, family: str = "xunit1") -> Path:
    out = root / "junit.xml"
    _run_pytest(root, "-o", f"junit_family={family}", f"--junitxml={out}", "-q", target)
    assert out.is_file(), f"pytest did not write {out}"
    return out


def _collected_node_ids(root: Path, target: str) -> list[str]:
    done = _run_pytest(root, "--collect-only", "-q", target)
    assert done.returncode == 0, done.stdout + done.stderr
    return list(itertools.takewhile(bool, done.stdout.splitlines()))


IDS_MODULE = """\
import pytest

@pytest.mark.parametrize("value", ["a b", "x::y", "[br]", "\u00e9", "ok"],
                         ids=["a b", "x::y", "[br]", "\u00e9", None])
def test_param(value):
    if value == "[br]":
        pytest.skip("skipped on purpose")
    assert value != "x::y"

class TestShapes:
    def test_method(self):
        pass

    class TestInner:
        def test_nested(self):
            assert False

    @pytest.fixture
    def broken(self):
        raise RuntimeError("setup fails")

    def test_setup_error(self, broken):
        pass
"""

# What pytest 9 reports for IDS_MODULE: it escapes the non-ASCII id to the literal text \xe9.
IDS_EXPECTED = {
    "suite/test_ids.py::test_param[a b]": "passed",
    "suite/test_ids.py::test_param[x::y]": "failed",
    "suite/test_ids.py::test_param[[br]]": "skipped",
    "suite/test_ids.py::test_param[\\xe9]": "passed",
    "suite/test_ids.py::test_param[ok]": "passed",
    "suite/test_ids.py::TestShapes::test_method": "passed",
    "suite/test_ids.py::TestShapes::TestInner::test_nested": "failed",
    "suite/test_ids.py::TestShapes::test_setup_error": "error",
}


# --- Rule 1: every tool's report shape ----------------------------------------------------------


@pytest.mark.parametrize(("xml", "expected", "flaky"), TOOL_REPORTS.values(), ids=TOOL_REPORTS)
def test_each_tools_report_reads_the_status_of_every_test(xml, expected, flaky):
    report = parse_junit_string(xml)

    assert {key: report.status_of(key) for key in expected} == expected
    assert report.ids == tuple(sorted(expected))
    assert report.tests == len(expected)
    assert report.flaky == flaky
    assert report.failed_ids() == sorted(k for k, s in expected.items() if s in ("failed", "error"))


def test_single_testsuite_root_and_file_reading_agree_with_string_parsing(tmp_path):
    path = tmp_path / "TEST-com.example.CalculatorTest.xml"
    path.write_text(SUREFIRE, encoding="utf-8")

    assert parse_junit_xml(path) == parse_junit_string(SUREFIRE)
    assert parse_junit_xml(str(path)) == parse_junit_string(SUREFIRE)


def test_nested_testsuites_are_walked_to_every_depth():
    report = parse_junit_string(
        '<testsuites><testsuite name="all">'
        '<testsuite name="unit"><testcase classname="u" name="a"/>'
        '<testsuite name="deep"><testcase classname="d" name="b"><failure/></testcase>'
        "</testsuite></testsuite>"
        '<testcase classname="top" name="c"/></testsuite></testsuites>'
    )

    assert report.ids == ("d::b", "top::c", "u::a")
    assert report.failed_ids() == ["d::b"]


# --- Rule 2: one testcase's status --------------------------------------------------------------


@pytest.mark.parametrize(
    ("children", "status"),
    [
        ("", "passed"),
        ("<system-out>hello</system-out>", "passed"),
        ('<failure message="boom"/>', "failed"),
        ('<error message="boom"/>', "error"),
        ('<skipped message="later"/>', "skipped"),
        ("<failure/><error/>", "error"),
    ],
)
def test_testcase_children_decide_its_status(children, status):
    report = parse_junit_string(_suite(f'<testcase classname="c" name="t">{children}</testcase>'))

    assert report.status_of("c::t") == status
    assert report.flaky == ()


@pytest.mark.parametrize(
    "tag", ["rerunFailure", "rerunError", "flakyFailure", "flakyError", "rerun"]
)
@pytest.mark.parametrize(("final", "status"), [("", "passed"), ("<failure/>", "failed")])
def test_rerun_and_flaky_children_mark_flaky_without_changing_the_outcome(tag, final, status):
    case = f'<testcase classname="c" name="t">{final}<{tag} message="x"><stackTrace>st'
    report = parse_junit_string(_suite(f"{case}</stackTrace></{tag}></testcase>"))

    assert report.status_of("c::t") == status
    assert report.flaky == ("c::t",)


# --- Rule 3: keys ---------------------------------------------------------------------------


def test_xunit1_file_attribute_rebuilds_the_pytest_node_id_as_canonical_id():
    report = parse_junit_string(
        _suite(
            '<testcase file="tests/test_x.py" classname="tests.test_x.TestC" name="test_a[1]"/>',
            '<testcase file="tests/test_x.py" classname="tests.test_x" name="test_b"><failure/>'
            "</testcase>",
        )
    )

    assert report.statuses == {
        "tests/test_x.py::TestC::test_a[1]": "passed",
        "tests.test_x.TestC::test_a[1]": "passed",
        "test_a[1]": "passed",
        "tests/test_x.py::test_b": "failed",
        "tests.test_x::test_b": "failed",
        "test_b": "failed",
    }
    assert report.ids == ("tests/test_x.py::TestC::test_a[1]", "tests/test_x.py::test_b")
    assert report.failed_ids() == ["tests/test_x.py::test_b"]


@pytest.mark.parametrize(
    ("attrs", "keys"),
    [
        # defined in tests/test_x.py, collected elsewhere: every module/class split of classname,
        # test-file-named modules first (an imported test function, an inherited method)
        ('file="tests/test_x.py" classname="other.mod" name="t"', ["other/mod.py::t", "other.py::mod::t", "other.mod::t", "t"]),
        ('file="tests/test_x.py" classname="tests.test_xy" name="t"', ["tests/test_xy.py::t", "tests.py::test_xy::t",
                                                                        "tests.test_xy::t", "t"]),
        ('file="tests/mixins.py" classname="tests.test_a.TestA" name="t"',
         ["tests/test_a.py::TestA::t", "tests/test_a/TestA.py::t", "tests.py::test_a::TestA::t", "tests.test_a.TestA::t", "t"]),
        ('classname="pkg.mod" name="t"', ["pkg.mod::t", "t"]),
        ('classname="" name="t"', ["t"]),
        ('name="t"', ["t"]),
    ],
)
def test_canonical_id_falls_back_to_the_node_ids_classname_allows_then_classname_then_bare_name(attrs, keys):
    report = parse_junit_string(_suite(f"<testcase {attrs}/>"))

    assert list(report.statuses) == keys
    assert report.ids == (keys[0],)


@pytest.mark.parametrize(
    "name",
    [
        "test_a[a b]",
        "test_a[x::y]",
        "test_a[[br]]",
        "test_a[\\u00e9]",
        "test_a[\\xe9]",
        "t\u00e9st_\u00fcn\u00ef[\u65e5\u672c]",
        "  test spaced  ",
    ],
)
def test_names_survive_verbatim_as_keys(name):
    xml = _suite(
        f'<testcase file="tests/test_x.py" classname="tests.test_x" name="{name}"><failure/>'
        "</testcase>"
    )
    report = parse_junit_string(xml)

    assert report.statuses == {
        f"tests/test_x.py::{name}": "failed",
        f"tests.test_x::{name}": "failed",
        name: "failed",
    }


def test_real_pytest_node_ids_are_keys_with_pytests_own_status(tmp_path):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_ids.py").write_text(IDS_MODULE, encoding="utf-8")

    collected = _collected_node_ids(tmp_path, "suite/test_ids.py")
    report = parse_junit_xml(_pytest_junit(tmp_path, "suite/test_ids.py"))

    assert sorted(collected) == sorted(IDS_EXPECTED)
    assert {node_id: report.status_of(node_id) for node_id in collected} == IDS_EXPECTED
    assert report.ids == tuple(sorted(collected))
    assert report.status_of("suite.test_ids::test_param[x::y]") == "failed"
    assert report.flaky == ()


def test_real_pytest_default_xunit2_report_is_keyed_by_classname_and_name(tmp_path):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_ids.py").write_text(IDS_MODULE, encoding="utf-8")

    report = parse_junit_xml(_pytest_junit(tmp_path, "suite/test_ids.py", family="xunit2"))

    assert report.status_of("suite.test_ids::test_param[a b]") == "passed"
    assert report.status_of("suite.test_ids.TestShapes.TestInner::test_nested") == "failed"
    assert report.status_of("suite/test_ids.py::test_param[a b]") == "missing"
    assert report.tests == len(IDS_EXPECTED)


def test_real_pytest_collection_error_leaves_the_node_ids_missing(tmp_path):
    (tmp_path / "test_broken.py").write_text("def test_a(:\n    pass\n", encoding="utf-8")

    report = parse_junit_xml(_pytest_junit(tmp_path, "test_broken.py"))

    assert report.status_of("test_broken.py::test_a") == "missing"
    assert report.failed_ids() == ["test_broken"]
    assert report.status_of("test_broken") == "error"


# --- Rule 4: merging ---------------------------------------------------------------------------


def test_real_pytest_teardown_error_merges_worst_wins(tmp_path):
    (tmp_path / "test_td.py").write_text(
        textwrap.dedent(
            """\
            import pytest

            @pytest.fixture
            def broken_teardown():
                yield
                raise RuntimeError("teardown fails")

            def test_passes_then_teardown_fails(broken_teardown):
                pass

            def test_fails_then_teardown_fails(broken_teardown):
                assert False
            """
        ),
        encoding="utf-8",
    )

    path = _pytest_junit(tmp_path, "test_td.py")
    report = parse_junit_xml(path)

    assert path.read_text(encoding="utf-8").count('name="test_fails_then_teardown_fails"') == 2
    assert report.status_of("test_td.py::test_passes_then_teardown_fails") == "error"
    assert report.status_of("test_td.py::test_fails_then_teardown_fails") == "error"
    assert report.tests == 2
    assert report.flaky == ("test_td.py::test_fails_then_teardown_fails",)


@pytest.mark.parametrize("order", list(itertools.permutations(["", "<skipped/>", "<failure/>"])))
def test_repeated_testcase_takes_the_worst_outcome_and_is_flaky(order):
    report = parse_junit_string(
        _suite(*(f'<testcase classname="c" name="t">{child}</testcase>' for child in order))
    )

    assert report.statuses == {"c::t": "failed", "t": "failed"}
    assert report.tests == 1
    assert report.flaky == ("c::t",)


def test_repeats_with_the_same_outcome_are_not_flaky():
    case = '<testcase classname="c" name="t"><failure/></testcase>'
    report = parse_junit_string(_suite(case, case))

    assert report.status_of("c::t") == "failed"
    assert report.flaky == ()


def test_distinct_tests_sharing_a_bare_name_fail_closed_but_are_not_flaky():
    report = parse_junit_string(
        _suite(
            '<testcase file="tests/a.py" classname="tests.a" name="test_a"/>',
            '<testcase file="tests/b.py" classname="tests.b" name="test_a"><failure/></testcase>',
        )
    )

    assert report.status_of("tests/a.py::test_a") == "passed"
    assert report.status_of("tests/b.py::test_a") == "failed"
    assert report.status_of("test_a") == "failed"
    assert report.tests == 2
    assert report.flaky == ()
    assert report.failed_ids() == ["tests/b.py::test_a"]


# --- Rule 5: failing closed --------------------------------------------------------------------


@pytest.mark.parametrize(
    "xml",
    [
        "<testsuites/>",
        '<testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0" time="0.01"/>',
        '<testsuites><testsuite name="a"><testsuite name="b"/></testsuite></testsuites>',
    ],
)
def test_report_without_testcases_raises(xml, tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(xml, encoding="utf-8")

    with pytest.raises(JUnitParseError, match=r"^<string>: .*no <testcase>"):
        parse_junit_string(xml)
    with pytest.raises(JUnitParseError, match=_at(path) + ".*no <testcase>"):
        parse_junit_xml(path)


def test_real_pytest_run_that_collects_nothing_raises(tmp_path):
    (tmp_path / "test_empty.py").write_text("X = 1\n", encoding="utf-8")

    with pytest.raises(JUnitParseError, match="no <testcase>"):
        parse_junit_xml(_pytest_junit(tmp_path, "test_empty.py"))


def test_missing_file_raises_naming_the_path(tmp_path):
    path = tmp_path / "nowhere" / "junit.xml"

    with pytest.raises(JUnitParseError, match=_at(path) + "cannot read .*No such file"):
        parse_junit_xml(path)


def test_directory_instead_of_file_raises_naming_the_path(tmp_path):
    with pytest.raises(JUnitParseError, match=_at(tmp_path) + "cannot read"):
        parse_junit_xml(tmp_path)


@pytest.mark.parametrize(
    "content",
    [
        "",
        "   \n",
        "===== 3 passed in 0.01s =====\n",
        PYTEST_XUNIT2[: len(PYTEST_XUNIT2) // 2],
        SUREFIRE[: SUREFIRE.index("</testsuite>")],
        '{"tests": 3, "failures": 0}',
    ],
    ids=["empty", "blank", "pytest-stdout", "truncated-pytest", "unclosed-root", "json"],
)
def test_non_xml_or_truncated_report_raises_naming_the_source(content, tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(content, encoding="utf-8")

    with pytest.raises(JUnitParseError, match=_at(path) + ".*not well-formed XML"):
        parse_junit_xml(path)
    with pytest.raises(JUnitParseError, match="^<string>: .*not well-formed XML"):
        parse_junit_string(content)


def test_undecodable_bytes_raise_naming_the_path(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_bytes(b'<testsuite><testcase name="\xff\xfe"/></testsuite>')

    with pytest.raises(JUnitParseError, match=_at(path) + ".*not well-formed XML"):
        parse_junit_xml(path)


@pytest.mark.parametrize(
    ("xml", "tag"),
    [
        ("<html><body>502 Bad Gateway</body></html>", "html"),
        ('<testcase classname="c" name="t"/>', "testcase"),
        ('<assemblies><assembly name="x.dll"/></assemblies>', "assemblies"),
    ],
)
def test_unexpected_root_element_raises_naming_it(xml, tag, tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(xml, encoding="utf-8")

    with pytest.raises(JUnitParseError, match=f"^<string>: root element is <{tag}>"):
        parse_junit_string(xml)
    with pytest.raises(JUnitParseError, match=_at(path) + f"root element is <{tag}>, expected"):
        parse_junit_xml(path)


def test_testcase_outside_any_testsuite_refuses_a_partial_reading():
    xml = (
        '<testsuites><testcase classname="c" name="stray"><failure/></testcase>'
        '<testsuite name="s"><testcase classname="c" name="ok"/></testsuite></testsuites>'
    )

    with pytest.raises(JUnitParseError, match=r"^<string>: 1 of 2 <testcase> elements"):
        parse_junit_string(xml)


@pytest.mark.parametrize("attrs", ['classname="c"', 'classname="c" name=""'])
def test_testcase_without_a_name_raises(attrs):
    with pytest.raises(JUnitParseError, match="^<string>: a <testcase> .*'c'.* no name"):
        parse_junit_string(_suite(f"<testcase {attrs}><failure/></testcase>"))


def test_parse_error_is_a_repogym_error_and_a_value_error():
    with pytest.raises(JUnitParseError) as caught:
        parse_junit_string("<oops")

    assert isinstance(caught.value, RepoGymError)
    assert isinstance(caught.value, ValueError)


# --- The report model ----------------------------------------------------------------------------


def test_unknown_id_is_missing():
    report = parse_junit_string(_suite('<testcase classname="c" name="t"/>'))

    assert report.status_of("c::t") == "passed"
    assert report.status_of("c::u") == "missing"
    assert report.status_of("C::T") == "missing"
    assert report.status_of("c::t ") == "missing"


def test_failed_ids_lists_canonical_ids_only_sorted():
    report = parse_junit_string(
        _suite(
            '<testcase classname="m" name="z"><error/></testcase>',
            '<testcase classname="m" name="a"><failure/></testcase>',
            '<testcase classname="m" name="s"><skipped/></testcase>',
            '<testcase classname="m" name="p"/>',
        )
    )

    assert report.failed_ids() == ["m::a", "m::z"]


def test_report_is_frozen_and_forbids_extra_fields():
    report = parse_junit_string(_suite('<testcase name="t"/>'))

    with pytest.raises(pydantic.ValidationError, match="frozen"):
        report.tests = 5
    with pytest.raises(pydantic.ValidationError, match="extra"):
        JUnitReport(**report.model_dump(), passed=1)


def test_report_round_trips_through_json_with_the_same_failures():
    report = parse_junit_string(NEXTEST)

    again = JUnitReport.model_validate_json(report.model_dump_json())

    assert again == report
    assert again.failed_ids() == report.failed_ids() == ["calc::tests::divides_by_zero"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"statuses": {}, "ids": (), "flaky": (), "tests": 0}, "tests=0 must be >= 1"),
        ({"statuses": {"a": "passed"}, "ids": ("a",), "flaky": (), "tests": 2}, "len\\(ids\\)"),
        ({"statuses": {"a": "passed", "b": "failed"}, "ids": ("b", "a"), "flaky": (), "tests": 2},
         "ids=.* must be sorted"),
        ({"statuses": {"a": "passed"}, "ids": ("b",), "flaky": (), "tests": 1},
         "ids \\['b'\\] have no entry in statuses"),
        ({"statuses": {"a": "passed"}, "ids": ("a",), "flaky": ("b",), "tests": 1},
         "flaky ids \\['b'\\] are not in ids"),
        ({"statuses": {"a": "bogus"}, "ids": ("a",), "flaky": (), "tests": 1}, "literal_error"),
    ],
)
def test_hand_built_report_must_be_consistent(fields, message):
    with pytest.raises(pydantic.ValidationError, match=message):
        JUnitReport(**fields)


# --- Module hygiene ---------------------------------------------------------------------------


def test_public_names_are_exactly_the_sorted_all():
    assert junit.__all__ == sorted(junit.__all__)
    assert junit.__all__ == ["JUnitReport", "TestStatus", "failure_messages", "parse_junit_string", "parse_junit_xml"]


def test_docstring_examples_run():
    results = doctest.testmod(junit, optionflags=doctest.ELLIPSIS)

    assert results.failed == 0
    assert results.attempted >= 8


# --- a report the code under test may have replaced ---------------------------------------------------


def test_a_report_nested_too_deeply_is_a_parse_error_not_a_recursion_error(tmp_path: Path) -> None:
    """junitparser walks nested suites recursively: 100,000 of them raised RecursionError, which
    the grading pipeline took for a crash of its own (infra_error) instead of a bad report."""
    path = tmp_path / "junit.xml"
    n = 100_000
    path.write_text("<testsuites>" + '<testsuite name="s">' * n + '<testcase name="t"/>' + "</testsuite>" * n + "</testsuites>")
    with pytest.raises(JUnitParseError, match="nested too deeply"):
        parse_junit_xml(path)


@pytest.mark.parametrize("kind", ["fifo", "symlink", "oversized"])
def test_a_report_replaced_by_a_fifo_a_symlink_or_a_huge_file_is_refused_unread(tmp_path: Path, kind: str,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "junit.xml"
    if kind == "fifo":
        os.mkfifo(path)  # opened for reading without O_NONBLOCK, this waits forever for a writer
    elif kind == "symlink":
        (tmp_path / "real.xml").write_text('<testsuite><testcase name="t"/></testsuite>')
        os.symlink(tmp_path / "real.xml", path)
    else:
        monkeypatch.setattr(junit, "MAX_REPORT_BYTES", 1000)
        path.write_text('<testsuite>' + '<testcase name="t"/>' * 100 + '</testsuite>')
    with pytest.raises(JUnitParseError, match="cannot read|not a regular file|over 1000 bytes"):
        parse_junit_xml(path)


def test_failure_messages_keep_same_named_tests_apart(tmp_path: Path) -> None:
    """Two files with a failing ``test_x`` each: every message stays with its own node id (the
    miner keyed messages by the bare name, so same-named tests swapped their statements' text)."""
    (tmp_path / "tests").mkdir()
    for name, value in (("a", 1), ("b", 2)):
        (tmp_path / "tests" / f"test_{name}.py").write_text(f"def test_x():\n    assert {value} == 0, 'from {name}'\n")
    report = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
                    f"--junitxml={report}", "tests"], cwd=tmp_path, capture_output=True, timeout=120, check=False)
    ids = parse_junit_xml(report).failed_ids()
    assert ids == ["tests/test_a.py::test_x", "tests/test_b.py::test_x"]
    messages = junit.failure_messages(report, ids)
    assert messages["tests/test_a.py::test_x"].startswith("AssertionError: from a")
    assert messages["tests/test_b.py::test_x"].startswith("AssertionError: from b")
    assert junit.failure_messages(tmp_path / "missing.xml", ids) == {}


# -- fuzzing (issue 13) ----------------------------------------------------------------------
# 1,000 generated JUnit reports, fixed seed: each parses or is refused with a JUnitParseError.

#: Generated reports (the issue's figure).
FILES = 1_000

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


@st.composite
def _report(draw: st.DrawFn) -> str:
    """A report shaped like pytest's (suites, suite, cases) with fuzzed attributes and children: the
    generic trees above seldom make one that parses, and this run must also exercise the parser's reading."""
    attrs = st.builds(lambda d: "".join(f" {k}={quoteattr(v)}" for k, v in d.items()), _attrs)
    names = st.builds(lambda n, c: f" name={quoteattr(n or 't')} classname={quoteattr(c or 'tests.test_x')}", _names, _names)
    inner = st.lists(st.sampled_from(["<failure message='x'>boom</failure>", "<error/>", "<skipped/>",
                                      "<system-out>out</system-out>", ""]), max_size=2).map("".join)
    cases = draw(st.lists(st.builds(lambda n, a, i: f"<testcase{n}{a}>{i}</testcase>", names, attrs, inner),
                          min_size=1, max_size=4))
    return f"<testsuites><testsuite{draw(attrs)}>{''.join(cases)}</testsuite></testsuites>"


@pytest.mark.timeout(300)  # the run's budget: a hang fails it instead of CI's whole timeout
def test_a_thousand_generated_junit_reports_parse_or_are_refused(tmp_path: Path) -> None:
    seen = {"parsed": 0, "refused": 0}
    path = tmp_path / "junit.xml"

    @settings(max_examples=FILES, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(_report(), _element(), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))), st.booleans())
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
    assert seen["parsed"] + seen["refused"] >= FILES and seen["parsed"] >= FILES // 20, seen  # both paths, often


def test_a_module_that_failed_to_import_is_explained_by_its_error_not_collection_failure(tmp_path: Path) -> None:
    """Issue 12: 13 of 28 history statements listed their tests as "not collected" with the ImportError
    that names the missing function dropped: pytest's message for it is only "collection failure"."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("def a():\n    return 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("from pkg import a, newfunc\n\n\ndef test_new():\n    assert newfunc()\n")
    report = tmp_path / "junit.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", "tests"],
                   cwd=tmp_path, capture_output=True, timeout=120, check=False)
    ids = parse_junit_xml(report).failed_ids()
    messages = junit.failure_messages(report, ids)
    assert list(messages.values()) == [f"ImportError: cannot import name 'newfunc' from 'pkg' ({tmp_path}/pkg/__init__.py)"]
