"""Seventh round, around the judge: channels out of grading, masked zeros and gates that read
another text than Python runs.

A red-team round with the source in hand (at 7d353d3), through the env's actions only, on starter
tasks and tiny variants, under bwrap and docker:

- the perf benchmark's copy held the hidden tests and no judge runs there: a candidate that printed
  them (as the line ``output_check`` matches, or before failing) found them quoted in the grade;
- the code under test pre-wrote the JUnit report (its path is on the judged process's own command
  line) read-only: an unknown encoding name was a ``LookupError`` (``infra_error``, a masked 0), and
  the parser's messages quoted its attributes whole, so a hidden file read by a child process came
  back in the grade (and through the summary, the observation);
- a ``pyproject.toml`` holding a 5,000-digit integer: tomllib's ``ValueError`` escaped the snapshot
  (``infra_error`` in ``step()``, an exception out of ``grade_patch``);
- ``forbidden_patterns`` split the patch with ``str.splitlines`` (a form feed hid the rest of a line),
  a ``raw_unicode_escape`` cookie spelled ``import`` as ``\\u0069mport``, and ``max_lines_changed``
  counted git's lines where Python also ends one at a lone CR; a KOI8-U cookie whose codec the
  package replaced at import kept the original code running behind a stub the quality grader read.

The properties now: benchmark copies hold no hidden tests; whatever a graded process could have
written is quoted cut short and printable (``short_text``); every failure of the JUnit parser is a
``JUnitParseError``; any ``ValueError`` reading a carried ``pyproject.toml`` makes it unreadable; a
changed Python file must be UTF-8 with ``\\n`` or CRLF line ends, and patterns are matched per
``\\n``-line.
"""

from __future__ import annotations

import pytest

from repogym_gym.task import Task, load_task
from tests.helpers import CALC_SOURCE, STARTER
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, messages, submit, write

G = "grading around the judge"


def _hidden_lines(task: Task) -> list[str]:
    return [line.strip() for path in (task.root / "hidden").rglob("*.py")
            for line in path.read_text().splitlines() if len(line.strip()) > 20]


def _carried_out(task: Task, text: str) -> list[str]:
    return [line for line in _hidden_lines(task) if line in text or line.encode().hex() in text]


PERF_LEAK = '''
import os as _os, sys as _sys
if _os.environ.get("REPOGYM_PERF_SEED"):
    _path = "tests/test_dedupe_hidden.py"
    _text = open(_path).read() if _os.path.exists(_path) else "absent"
    _sys.stdout.write("result 0123456789abcdef: " + repr(_text) + "\\n")
    _sys.stdout.write(_text)
    _sys.stdout.flush()
    _os._exit(0 if len(_sys.argv) else 1)
'''


@attack(G, "the hidden tests printed by the candidate's benchmark", local="no leak", confining="no leak")
def test_a_benchmark_cannot_print_the_hidden_tests(start: Start) -> None:
    task = load_task(STARTER / "dedupe-contacts-perf")
    env = start(task)
    source = (task.root / "repo" / "contacts" / "dedupe.py").read_text()
    write(env, "contacts/dedupe.py", source + PERF_LEAK)
    result = submit(env)
    text = str(result.info["grade"]) + result.observation.text
    assert _carried_out(task, text) == []
    assert result.info.get("infra_error") is None


JUNIT_PREWRITTEN = '''
def _prewrite_report():
    import os as _o, subprocess as _sp
    hidden = "tests/test_paginator_hidden.py"
    data = _sp.run(["cat", hidden], capture_output=True).stdout if _o.path.exists(hidden) else b"none"
    for arg in open("/proc/self/cmdline", "rb").read().split(b"\\0"):
        if arg.startswith(b"--junitxml="):
            path = arg.split(b"=", 1)[1].decode()
            with open(path, "w") as report:
                report.write(BODY % data.hex())
            _o.chmod(path, 0o444)
_prewrite_report()
'''
REPORTS = {
    "an unknown encoding named by the hidden file":
        '\'<?xml version="1.0" encoding="x%s"?><testsuites><testsuite><testcase name="t"/></testsuite></testsuites>\'',
    "a nameless testcase whose classname is the hidden file":
        '\'<testsuites><testsuite><testcase classname="x%s"/></testsuite></testsuites>\'',
}


@pytest.mark.parametrize("case", list(REPORTS))
@attack(G, "a JUnit report pre-written read-only by the code under test", local="score 0", confining="score 0")
def test_a_report_the_code_under_test_wrote_is_a_zero_that_quotes_nothing(start: Start, case: str) -> None:
    task = load_task(STARTER / "pagination-off-by-one")
    env = start(task)
    init = (task.root / "repo" / "pagekit" / "__init__.py").read_text()
    write(env, "pagekit/__init__.py", init + JUNIT_PREWRITTEN.replace("BODY", REPORTS[case]))
    result = submit(env)
    assert_unearned_zero(result)
    text = str(result.info["grade"]) + result.observation.text
    assert _carried_out(task, text) == []
    assert len(str(component(result, "tests")["details"].get("invalid") or "")) < 700


@attack(G, "a pyproject.toml with a 5,000-digit integer", local="score 0", confining="score 0")
def test_a_pyproject_past_the_digit_limit_is_a_zero(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    write(env, "calc/__init__.py", CALC_SOURCE.replace("return a - b", "return a + b", 1))
    write(env, "sub/pyproject.toml", "[tool.pytest.ini_options]\nx = " + "1" * 5000 + "\n")
    result = submit(env)
    assert_unearned_zero(result)


def _forbidden_task(make_task, **constraints: object) -> Task:
    return make_task(constraints={"forbidden_patterns": ["import operator", r"operator\.add"], **constraints})


GATED = {
    "a form feed before the forbidden text": ("def add(a, b):\n    x = 0;\x0cimport operator;\x0creturn operator.add(a, b)\n",
                                              "forbidden pattern"),
    "a raw_unicode_escape cookie spelling it": ("# coding: raw_unicode_escape\ndef add(a, b):\n"
                                                "    \\u0069mport operator; return operator\\u002eadd(a, b)\n",
                                                "only UTF-8 source is graded"),
}


@pytest.mark.parametrize("case", list(GATED))
@attack(G, "a forbidden pattern hidden from the check but not from Python", local="score 0", confining="score 0")
def test_a_forbidden_pattern_is_seen_as_python_reads_the_file(start: Start, make_task, case: str) -> None:
    source, named = GATED[case]
    task = _forbidden_task(make_task)
    env = start(task)
    write(env, "calc/__init__.py", source + CALC_SOURCE.split("\n\n\n", 1)[1])
    result = submit(env)
    assert_unearned_zero(result)
    assert any(named in m for m in messages(result)), messages(result)


@attack(G, "lines joined by lone carriage returns under max_lines_changed", local="score 0", confining="score 0")
def test_lines_python_ends_at_a_carriage_return_are_lines(start: Start, make_task) -> None:
    task = make_task(constraints={"max_lines_changed": 2})
    env = start(task)
    body = "\r".join(["    total = a", "    total += b", "    assert total == a + b", "    return total"])
    write(env, "calc/__init__.py", "def add(a, b):\n" + body + "\n" + CALC_SOURCE.split("\n\n\n", 1)[0].join(["", ""])
          + "\n\n\n" + CALC_SOURCE.split("\n\n\n", 1)[1])
    result = submit(env)
    assert_unearned_zero(result)
    assert any("carriage return" in m for m in messages(result)), messages(result)


@attack(G, "a refactor stub whose coding cookie's codec the package replaced", local="score 0", confining="score 0")
def test_a_codec_replaced_at_import_cannot_fake_a_refactor(start: Start) -> None:
    task = load_task(STARTER / "shipping-quote-refactor")
    original = (task.root / "repo" / "shipping" / "rates.py").read_text()
    encoder = ('"""Text codec helpers."""\nimport codecs\nimport encodings\n\n_BODY = ' + repr(original) + "\n\n\n"
               "def _decode(data, errors='strict'):\n    return _BODY, len(data)\n\n\n"
               "def _encode(text, errors='strict'):\n    return text.encode('utf-8'), len(text)\n\n\n"
               "_INFO = codecs.CodecInfo(_encode, _decode, name='koi8_u')\nencodings._cache['koi8_u'] = _INFO\n")
    init = (task.root / "repo" / "shipping" / "__init__.py").read_text()
    stub = ('# coding: koi8_u\n"""Parcel price quotes."""\n\n\ndef quote(weight_g, zone, service="standard", '
            'declared_value=0, member=False):\n    return 0\n\n\ndef format_price(cents):\n    return ""\n')
    env = start(task)
    write(env, "shipping/_enc.py", encoder)
    write(env, "shipping/__init__.py", "from shipping import _enc  # noqa: F401\n" + init)
    write(env, "shipping/rates.py", stub)
    result = submit(env)
    assert_unearned_zero(result)
    assert any("only UTF-8 source is graded" in m for m in messages(result)), messages(result)
