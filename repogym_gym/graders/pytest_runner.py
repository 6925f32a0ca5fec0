"""The grader's pytest runner: a standalone script (stdlib + pytest) run as ``python -I <this file>``.

It is copied next to the grader's ini for every run, so it works in any interpreter that has
pytest, without repogym_gym installed. Usage::

    python -I pytest_runner.py NONCE SELECTION_JSON PYTEST_ARGS...

``SELECTION_JSON`` is a file ``{"files": [...], "ids": [...]}``: when ``files`` is non-empty,
only those test files (relative to the rootdir) are collected, so test modules the submission
added (and whatever they import or register, e.g. ``pytest_plugins``) never load. A plugin
records the outcome of every id in ``ids`` from pytest's own reports (worst wins: error >
failed > skipped > passed; a failed collection of a file is an error for its ids). After
``pytest.main`` returns, the record is written to stdout once, framed by ``NONCE``, and the
process ends with ``os._exit`` so that no ``atexit`` hook or leftover thread of the code under
test runs after the report was written. The grader checks the record against the JUnit report.
"""

import json
import os
import sys

_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def _outcome(report):
    if report.when == "call":
        if report.passed:
            return "passed"
        return "skipped" if report.skipped else "failed"
    if report.failed:
        return "error"
    if report.skipped:
        return "skipped"
    return None


class RecordingPlugin:
    """Restricts collection and records outcomes of the ids the grader scores."""

    def __init__(self, files, ids):
        self.files = set(files)
        self.ids = set(ids)
        self.record = {}

    def _note(self, nodeid, outcome):
        if nodeid in self.ids and outcome is not None:
            old = self.record.get(nodeid)
            if old is None or _RANK[outcome] > _RANK[old]:
                self.record[nodeid] = outcome

    def pytest_ignore_collect(self, collection_path, config):
        if not self.files or collection_path.suffix != ".py" or not collection_path.is_file():
            return None
        try:
            rel = collection_path.relative_to(config.rootpath).as_posix()
        except ValueError:
            return True
        return None if rel in self.files else True

    def pytest_runtest_logreport(self, report):
        self._note(report.nodeid, _outcome(report))

    def pytest_collectreport(self, report):
        if report.failed:
            for test_id in self.ids:
                if test_id.split("::", 1)[0] == report.nodeid:
                    self._note(test_id, "error")


def main():
    nonce, selection_path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(selection_path, encoding="utf-8") as fh:
        selection = json.load(fh)
    plugin = RecordingPlugin(selection.get("files", []), selection.get("ids", []))
    import pytest

    code = pytest.main(args, plugins=[plugin])
    sys.stdout.flush()
    sys.stderr.flush()
    payload = json.dumps({"exit_code": int(code), "record": plugin.record}, sort_keys=True)
    os.write(1, ("\n" + nonce + payload + nonce + "\n").encode("utf-8"))
    os._exit(int(code))


if __name__ == "__main__":
    main()
