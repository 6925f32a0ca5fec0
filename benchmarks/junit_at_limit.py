"""What the largest JUnit report the grader reads costs: the report is the code under test's to write,
so its size is bounded (``junit.MAX_REPORT_BYTES``, 8 MiB) and this measures the bound's worst case.

The report is filled to the limit with the smallest pytest-shaped ``<testcase>`` elements (the most
cases per byte, so the most objects built), and read by the grader's two readers, interleaved round by
round against the floor: ``xml.etree.ElementTree`` parsing the same bytes.

- ``parse_junit_xml``: every test's status (what each grading run pays);
- ``failure_messages``: the messages of 20 failing tests (what a Test action's observation pays).

Prints medians (seconds) and the ratio to the ElementTree parse. The machine is shared and noisy:
read the ratios.

    python benchmarks/junit_at_limit.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

from repogym_gym.junit import MAX_REPORT_BYTES, failure_messages, parse_junit_xml


def report_at_limit() -> tuple[bytes, int]:
    """A JUnit report of at most MAX_REPORT_BYTES bytes and the number of test cases in it."""
    head, tail = b'<?xml version="1.0"?>\n<testsuites><testsuite name="pytest">\n', b"</testsuite></testsuites>\n"
    rows, size, i = [], len(head) + len(tail), 0
    while True:
        failing = i % 50 == 1  # some failures, so failure_messages has work
        body = '><failure message="assert 1 == 2">E  assert 1 == 2</failure></testcase>' if failing else "/>"
        row = (f'<testcase classname="tests.test_m{i % 50}" name="test_{i}" file="tests/test_m{i % 50}.py" '
               f'time="0.001"{body}\n').encode()
        if size + len(row) > MAX_REPORT_BYTES:
            return head + b"".join(rows) + tail, i
        rows.append(row)
        size += len(row)
        i += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    data, cases = report_at_limit()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.xml"
        path.write_bytes(data)
        wanted = [f"tests/test_m1.py::test_{k}" for k in range(1, 1000, 50)]
        readers: dict[str, Callable[[], object]] = {
            "ElementTree.parse": lambda: ElementTree.parse(path),
            "parse_junit_xml": lambda: parse_junit_xml(path),
            "failure_messages": lambda: failure_messages(path, wanted),
        }
        times: dict[str, list[float]] = {name: [] for name in readers}
        for r in range(args.rounds):
            names = list(readers)
            for name in names[r % len(names):] + names[:r % len(names)]:
                started = time.perf_counter()
                readers[name]()
                times[name].append(time.perf_counter() - started)
        assert len(failure_messages(path, wanted)) == len(wanted)
    floor = statistics.median(times["ElementTree.parse"])
    print(f"JUnit report of {len(data):,} bytes (limit {MAX_REPORT_BYTES:,}), {cases:,} test cases, {args.rounds} rounds")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<18} median {median:7.2f} s   x{median / floor:6.1f} of ElementTree.parse")


if __name__ == "__main__":
    main()
