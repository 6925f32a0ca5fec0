"""Parse a JUnit XML report into one status per test id, failing closed.

Every ``<testcase>`` registers up to three keys, most specific first (the first is its
*canonical id*): the pytest node id when pytest's ``junit_family=xunit1`` ``file`` attribute
lets us rebuild it, ``"{classname}::{name}"``, and the bare ``name``. Ids are opaque: a name is
never split on whitespace, ``::`` or ``[``. A test recorded several times is merged worst-wins
(error > failed > skipped > passed); a report that holds no test at all is an error, never
"nothing failed".
"""

from __future__ import annotations

import os
import stat
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Literal, Self, cast
from xml.etree import ElementTree

import pydantic
from junitparser import Attr, Error, Failure, JUnitXml, JUnitXmlError, Skipped, TestCase, TestSuite
from junitparser.xunit2 import FlakyError, FlakyFailure, InterimResult, RerunError, RerunFailure

from repogym_gym.errors import JUnitParseError

__all__ = ["JUnitReport", "TestStatus", "failure_messages", "parse_junit_string", "parse_junit_xml"]

TestStatus = Literal["passed", "failed", "error", "skipped"]

#: Largest report read, bytes (the code under test can write it: its size is refused, not trusted).
MAX_REPORT_BYTES = 8 * 1024 * 1024

_RANK: dict[TestStatus, int] = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


class _Rerun(InterimResult):
    """A ``<rerun>`` child: an earlier attempt of the same test."""

    _tag = "rerun"  # type: ignore[assignment]  # junitparser's base declares None; subclasses name their tag


class _Case(TestCase):
    """A ``<testcase>`` that also reads pytest's xunit1 ``file`` attribute."""

    file = Attr()


class _Suite(TestSuite):
    testcase = _Case  # nested suites are walked by TestSuite.__iter__


class _Xml(JUnitXml):
    testsuite = _Suite


#: (tag of a testcase's direct child, the outcome it means), and the tags of earlier attempts (reruns).
_OUTCOMES: tuple[tuple[str, TestStatus], ...] = ((Error._tag, "error"), (Failure._tag, "failed"), (Skipped._tag, "skipped"))
_RERUN_TAGS = frozenset(kind._tag for kind in (RerunFailure, RerunError, FlakyFailure, FlakyError, _Rerun))


class JUnitReport(pydantic.BaseModel):
    """Per-test statuses read from one JUnit XML report.

    Built by :func:`parse_junit_xml` / :func:`parse_junit_string`; the validator below keeps a
    hand-built report just as strict (at least one test, ``ids`` sorted and all in ``statuses``).
    """

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)
    __test__ = False  # keep pytest from collecting it

    statuses: dict[str, TestStatus] = pydantic.Field(
        description="Every registered key (node id, 'classname::name', bare name) -> its merged "
        "status; a key shared by several tests holds the worst of their statuses."
    )
    ids: tuple[str, ...] = pydantic.Field(
        description="Canonical id of every distinct test, sorted; each one is a key of statuses."
    )
    flaky: tuple[str, ...] = pydantic.Field(
        description="Canonical ids (sorted) recorded several times with differing outcomes, or "
        "carrying rerun/flaky child elements; empty when none."
    )
    tests: int = pydantic.Field(description="Number of distinct tests (len(ids)); always >= 1.")

    @pydantic.model_validator(mode="after")
    def _check_consistent(self) -> Self:
        if self.tests < 1 or self.tests != len(self.ids):
            raise ValueError(f"tests={self.tests} must be >= 1 and equal len(ids)={len(self.ids)}")
        for field, values in (("ids", self.ids), ("flaky", self.flaky)):
            if list(values) != sorted(set(values)):
                raise ValueError(f"{field}={values!r} must be sorted and without duplicates")
        if missing := sorted(set(self.ids) - self.statuses.keys()):
            raise ValueError(f"ids {missing!r} have no entry in statuses; add their status")
        if stray := sorted(set(self.flaky) - set(self.ids)):
            raise ValueError(f"flaky ids {stray!r} are not in ids; add them to ids")
        return self

    def status_of(self, test_id: str) -> TestStatus | Literal["missing"]:
        """Status registered under ``test_id``, or ``"missing"`` (callers count it as failed).

        Args:
            test_id: A node id, ``"classname::name"`` or bare name, compared verbatim.

        Returns:
            ``"passed"``, ``"failed"``, ``"error"``, ``"skipped"`` or ``"missing"``.

        Example:
            >>> report = parse_junit_string('<testsuite><testcase name="t"/></testsuite>')
            >>> report.status_of("t"), report.status_of("T")
            ('passed', 'missing')
        """
        return self.statuses.get(test_id, "missing")

    def failed_ids(self) -> list[str]:
        """Canonical ids whose status is ``"failed"`` or ``"error"``, sorted.

        Example:
            >>> parse_junit_string(
            ...     '<testsuite><testcase classname="m" name="b"><error/></testcase>'
            ...     '<testcase classname="m" name="a"><failure/></testcase></testsuite>'
            ... ).failed_ids()
            ['m::a', 'm::b']
        """
        return [i for i in self.ids if self.statuses[i] in ("failed", "error")]


def parse_junit_xml(path: str | os.PathLike[str]) -> JUnitReport:
    """Read the JUnit XML report at ``path`` (``<testsuites>`` or ``<testsuite>`` root).

    Args:
        path: The report file, e.g. the ``--junitxml`` target of a pytest run.

    Returns:
        The report; see :class:`JUnitReport` for its keys and merge rules.

    Raises:
        JUnitParseError: The file is missing or unreadable, not a regular file (a symlink is not
            followed), over :data:`MAX_REPORT_BYTES`, is not (complete) XML, is nested too deeply
            to read, its root is not ``<testsuites>``/``<testsuite>``, it holds no
            ``<testcase>``, or a testcase has no name. The message starts with the path.

    Example:
        >>> import pathlib, tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = pathlib.Path(tmp) / "junit.xml"
        ...     _ = path.write_text('<testsuites><testsuite name="s"><testcase name="t">'
        ...                         '<skipped/></testcase></testsuite></testsuites>')
        ...     parse_junit_xml(path).statuses
        {'t': 'skipped'}
    """
    where = os.fspath(path)
    data = _read_report(where)
    xml = _load(where, lambda: _Xml.fromstring(data), lambda: ElementTree.fromstring(data))
    return _build_bounded(xml, where)


def failure_messages(path: str | os.PathLike[str], ids: Iterable[str]) -> dict[str, str]:
    """The first line of the failure or error text of each of ``ids`` that the report at ``path`` holds.

    A testcase is matched by the same keys as its status (its node id first), so two tests that
    share a bare name in different files or classes keep their own messages. Messages are a
    nicety: an unreadable report gives ``{}``.

    Args:
        path: The JUnit report.
        ids: The ids wanted (e.g. the failing ones of :attr:`JUnitReport.ids`).

    Returns:
        ``{id: first line}``, for the ids whose testcase has a failure or error with a text (for a
        module that failed to import, the exception pytest printed, not "collection failure").
    """
    wanted, out = set(ids), dict[str, str]()
    where = os.fspath(path)
    try:
        data = _read_report(where)
        xml = _load(where, lambda: _Xml.fromstring(data), lambda: ElementTree.fromstring(data))
        cases = [cast(_Case, case) for suite in xml for case in suite]
    except (JUnitParseError, RecursionError, MemoryError):
        return out
    for case in cases:
        try:
            keys = _keys(case, where)
        except JUnitParseError:
            continue
        test_id = next((k for k in keys if k in wanted), None)
        if test_id is None or test_id in out:
            continue
        for result in case.result:
            if isinstance(result, (Failure, Error)):
                text = (result.message or result.text or "").strip().splitlines()
                if result.message == "collection failure" and result.text:
                    # pytest's message for a module that failed to import: the exception is the text's last "E" line
                    raised = [line[1:].strip() for line in result.text.splitlines() if line.startswith("E ")]
                    text = raised[-1:] or text
                if text:
                    out[test_id] = text[0]
                    break
    return out


def _read_report(where: str) -> bytes:
    """The report's bytes; the code under test may have replaced it, so a symlink, a fifo or a
    file past :data:`MAX_REPORT_BYTES` is refused (never followed, waited on or read whole)."""
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise JUnitParseError(f"{where}: cannot read the JUnit report ({exc.strerror or exc}); check that the "
                              "test command ran and wrote it there") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise JUnitParseError(f"{where}: cannot read the JUnit report (it is not a regular file); refusing to read it")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_REPORT_BYTES + 1)
    if len(data) > MAX_REPORT_BYTES:
        raise JUnitParseError(f"{where}: the JUnit report is over {MAX_REPORT_BYTES} bytes; refusing to parse it")
    return data


def _build_bounded(xml: JUnitXml, where: str) -> JUnitReport:
    try:
        return _build(xml, where)
    except (RecursionError, MemoryError) as exc:  # junitparser walks nested suites recursively
        raise JUnitParseError(f"{where}: the JUnit report is nested too deeply to read ({type(exc).__name__}); "
                              "refusing a partial reading") from None


def parse_junit_string(text: str) -> JUnitReport:
    """Parse a JUnit XML report held in ``text``; errors name the source ``"<string>"``.

    Args:
        text: The whole XML document.

    Returns:
        The report; see :class:`JUnitReport` for its keys and merge rules.

    Raises:
        JUnitParseError: As :func:`parse_junit_xml`, minus the file errors.

    Example:
        >>> report = parse_junit_string(
        ...     '<testsuite name="s"><testcase classname="t.m" name="a"/>'
        ...     '<testcase classname="t.m" name="b"><failure/></testcase></testsuite>')
        >>> report.status_of("t.m::a"), report.status_of("b"), report.failed_ids()
        ('passed', 'failed', ['t.m::b'])
        >>> parse_junit_string("<testsuites/>")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        repogym_gym.errors.JUnitParseError: <string>: the JUnit report holds no <testcase> ...
    """
    xml = _load("<string>", lambda: _Xml.fromstring(text), lambda: ElementTree.fromstring(text))
    return _build_bounded(xml, "<string>")


def _load(where: str, read: Callable[[], JUnitXml], root: Callable[[], ElementTree.Element]) -> JUnitXml:
    """Run junitparser's ``read``; turn every parser or I/O failure into a JUnitParseError."""
    try:
        return read()
    except OSError as exc:
        raise JUnitParseError(f"{where}: cannot read the JUnit report ({exc}); check that the "
                              "test command ran and wrote it there") from exc
    except (RecursionError, MemoryError) as exc:
        raise JUnitParseError(f"{where}: the JUnit report is nested too deeply to read ({type(exc).__name__})") from None
    except (SyntaxError, ValueError) as exc:  # ElementTree's and lxml's ParseError are both
        raise JUnitParseError(f"{where}: the JUnit report is not well-formed XML ({exc}); it "
                              "may be truncated or not a report at all") from exc
    except JUnitXmlError as exc:  # its message omits the tag; re-read it (parsing succeeded)
        try:
            tag = root().tag
        except Exception:  # noqa: BLE001 - only for the message: any failure reads as an unknown tag
            tag = "?"
        raise JUnitParseError(f"{where}: root element is <{_quoted(tag)}>, expected <testsuites> or "
                              "<testsuite>") from exc
    except Exception as exc:  # noqa: BLE001 - any other parser failure (an unknown encoding name is a LookupError)
        raise JUnitParseError(f"{where}: the JUnit report cannot be parsed ({type(exc).__name__}); it is not a "
                              "report this grader can read") from None


def _quoted(value: object) -> str:
    """A value of the report for a message: at most 20 printable characters. The code under test can
    write the report itself, so what a message quotes of it is a channel, kept narrow."""
    text = "".join(c if " " <= c <= "~" else "?" for c in str(value))
    return text if len(text) <= 20 else text[:17] + "..."


def _build(xml: JUnitXml, where: str) -> JUnitReport:
    """Merge every testcase of ``xml`` into a JUnitReport (worst status wins)."""
    outcomes: dict[str, list[TestStatus]] = defaultdict(list)  # canonical id -> each record
    owners: dict[str, set[str]] = defaultdict(set)  # key -> canonical ids registering it
    flaky: set[str] = set()
    for case in (cast(_Case, case) for suite in xml for case in suite):  # _Xml's suites hold _Case
        keys = _keys(case, where)
        tags = {child.tag for child in case._elem}  # its direct children, read once (junitparser's iterchildren
        outcomes[keys[0]].append(_status(tags))  # per kind made an 8 MiB report take 14x ElementTree's parse)
        if not _RERUN_TAGS.isdisjoint(tags):
            flaky.add(keys[0])
        for key in keys:
            owners[key].add(keys[0])
    reported = sum(len(records) for records in outcomes.values())
    present = sum(1 for _ in xml._elem.iter("testcase"))  # junitparser only walks suites
    if present != reported:
        raise JUnitParseError(f"{where}: {present - reported} of {present} <testcase> elements are "
                              "not directly inside a <testsuite>; refusing a partial reading")
    if not outcomes:
        raise JUnitParseError(f"{where}: the JUnit report holds no <testcase> element; the test "
                              "run crashed or collected nothing, so nothing can count as passed")
    merged = {canonical: _worst(records) for canonical, records in outcomes.items()}
    flaky.update(c for c, records in outcomes.items() if len(set(records)) > 1)
    return JUnitReport(
        statuses={key: merged[next(iter(owned))] if len(owned) == 1 else _worst(merged[c] for c in owned)
                  for key, owned in owners.items()},
        ids=tuple(sorted(outcomes)),
        flaky=tuple(sorted(flaky)),
        tests=len(outcomes),
    )


def _keys(case: _Case, where: str) -> list[str]:
    """Keys of one testcase, canonical first, without duplicates."""
    name, classname = case.name, case.classname or ""
    if not name:
        raise JUnitParseError(f"{where}: a <testcase> (classname={_quoted(classname)!r}) has no name "
                              "attribute, so its result cannot be attributed to a test")
    keys: list[str | None] = [_pytest_node_id(case.file, classname, name)]
    if keys[0] is None and case.file and classname:
        keys = _inherited_node_ids(classname, name)
    keys += [f"{classname}::{name}" if classname else None, name]
    return list(dict.fromkeys(key for key in keys if key))


def _pytest_node_id(file: str | None, classname: str, name: str) -> str | None:
    """Rebuild pytest's node id from its xunit1 attributes, or None when they do not fit."""
    if not file or not classname:
        return None
    module = file.replace("/", ".").removesuffix(".py")
    if classname == module:
        return f"{file}::{name}"
    if classname.startswith(module + "."):
        return f"{file}::{classname[len(module) + 1 :].replace('.', '::')}::{name}"
    return None


def _inherited_node_ids(classname: str, name: str) -> list[str | None]:
    """The node ids a test defined in another file may have, likeliest first.

    pytest writes ``file`` from where the function is defined (a mixin's file, or the module a
    test function was imported from) but ``classname`` from the node id
    (``tests/test_a.py::TestA::test_x`` gives ``tests.test_a.TestA``), so ``file`` cannot tell the
    module part of ``classname`` from its class part. Every split is a candidate key; those whose
    module is named like a test file (``test_*.py``, ``*_test.py``) come first, then the longer
    module paths. The runner's record (real node ids) settles which one ran, and a key shared
    with another test keeps the worse status of the two. Known gap: a directory whose name holds
    a dot cannot be told apart from a package boundary.
    """
    parts = classname.split(".")
    splits = sorted(range(len(parts), 0, -1),
                    key=lambda k: not (parts[k - 1].startswith("test_") or parts[k - 1].endswith("_test")))
    return [f"{'/'.join(parts[:k])}.py::{'::'.join([*parts[k:], name])}" for k in splits]


def _status(tags: set[str]) -> TestStatus:
    """Outcome of one testcase from the tags of its direct children (rerun/flaky children do not count)."""
    return _worst(status for tag, status in _OUTCOMES if tag in tags)


def _worst(statuses: Iterable[TestStatus]) -> TestStatus:
    return max(statuses, key=_RANK.__getitem__, default="passed")
