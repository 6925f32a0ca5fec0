"""The grader's pytest runner: a standalone script (stdlib + pytest) run as ``python -I <this file>``.

It is copied next to the grader's ini for every run, so it works in any interpreter that has
pytest, without repogym_gym installed. Usage::

    python -I pytest_runner.py SELECTION_JSON PYTEST_ARGS...

``SELECTION_JSON`` is ``{"nonce": ..., "files": [...], "ids": [...]}``, read and deleted before
pytest starts. When ``files`` is non-empty only those test files (relative to the rootdir) are
collected, so test modules a submission added never load. A plugin records the outcome of every
test of those files and of every id in ``ids`` from pytest's own reports (worst wins: error >
failed > skipped > passed; a failed collection of a file is an error for its ids).

Code under test runs in this process, so the plugin also watches for tampering with the judge
itself and reports it (the grader then voids the run):

- the class dictionaries of pytest's reports, call info, items and pluggy's hook machinery, and
  the functions of ``_pytest.runner`` / ``_pytest.python``, are snapshotted before any test
  module is imported and must be the same objects at every test and at the end; the hook
  implementations of the run-test hooks are snapshotted after collection and must not change;
- no plugin may be registered after collection starts, except conftest modules of the tree, the
  modules they name in ``pytest_plugins``, and modules outside the tree (installed packages);
- no trace or profile hook may be active while a test runs (they can rewrite frames and code);
- every test function's code must equal the code compiled from the file it names (the grader
  owns the test files), so a test body swapped at import time is caught.

After ``pytest.main`` returns, the record is written to stdout once, framed by ``NONCE``, and the
process ends with ``os._exit`` so no ``atexit`` hook or thread of the code under test runs after
the report was written. The grader checks the record against the JUnit report.
"""

import json
import os
import sys
import threading

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


def _internals():
    """(name, object) pairs of pytest internals that decide and report outcomes.

    Whole class dictionaries are covered, so a property planted on a report class (``passed``,
    ``outcome``...) or any replaced method shows up, not only the handful named here.
    """
    import _pytest.nodes
    import _pytest.python
    import _pytest.reports
    import _pytest.runner
    import pluggy

    pairs = []
    classes = [_pytest.reports.BaseReport, _pytest.reports.TestReport, _pytest.reports.CollectReport,
               _pytest.runner.CallInfo, _pytest.python.Function, _pytest.nodes.Item, _pytest.nodes.Node,
               pluggy.HookCaller, pluggy.HookImpl, pluggy.PluginManager]
    for cls in classes:
        for name, value in vars(cls).items():
            pairs.append((f"{cls.__name__}.{name}", value))
    for module in (_pytest.runner, _pytest.python):
        for name, value in vars(module).items():
            if callable(value) and getattr(value, "__module__", None) == module.__name__:
                pairs.append((f"{module.__name__}.{name}", value))
    pairs += [("sys.settrace", sys.settrace), ("sys.setprofile", sys.setprofile), ("os._exit", os._exit)]
    return pairs


_OWN_MODULES = ("_pytest", "pytest", "pluggy")


def _pytest_own(value):
    """True for plain data and for code that pytest or pluggy themselves define (their lazy
    patches, e.g. legacypath's ``Node.fspath``); False for anything else, code of the tests' run."""
    if value is None or isinstance(value, (bool, int, float, str, bytes, tuple, frozenset)):
        return True
    target = getattr(value, "fget", None) or getattr(value, "__func__", None) or value
    module = getattr(target, "__module__", None) or ""
    return module.split(".", 1)[0] in _OWN_MODULES


_WATCHED_HOOKS = ("pytest_runtest_protocol", "pytest_runtest_makereport", "pytest_runtest_logreport",
                  "pytest_runtest_call", "pytest_pyfunc_call", "pytest_report_teststatus")


def _code_signature(code):
    consts = tuple(_code_signature(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames)


def _find_code(module_code, name, firstlineno):
    stack = [module_code]
    while stack:
        code = stack.pop()
        if code.co_name == name and code.co_firstlineno == firstlineno:
            return code
        stack.extend(c for c in code.co_consts if hasattr(c, "co_code"))
    return None


class RecordingPlugin:
    """Restricts collection, records outcomes of scored ids, and watches for tampering."""

    def __init__(self, files, ids):
        self.files = set(files)
        self.ids = set(ids)
        self.record = {}
        self.tampering = []
        self._internals = _internals()
        self._collecting = False
        self._rootpath = None
        self._compiled = {}
        self._conftest_plugins = set()
        self._config = None
        self._hookimpls = None

    # -- tampering checks ------------------------------------------------------------------------

    def _tampered(self, why):
        if why not in self.tampering:
            self.tampering.append(why)

    def _check_internals(self):
        now = dict(_internals())
        before = dict(self._internals)
        for name in sorted(before.keys() | now.keys()):
            value = now.get(name)
            if before.get(name) is not value and not _pytest_own(value):
                self._tampered(f"pytest internal {name} was replaced or added")
        if self._hookimpls is not None:
            now = self._hook_snapshot()
            for name in sorted(self._hookimpls):
                added = sorted({p for _, p in set(now.get(name, ())) - set(self._hookimpls[name])})
                if added:
                    self._tampered(f"an implementation of {name} was added during the run ({', '.join(added)})")

    def _hook_snapshot(self):
        hook = self._config.hook if self._config is not None else None
        if hook is None:
            return None
        return {name: tuple((id(h.function), h.plugin_name) for h in getattr(hook, name).get_hookimpls())
                for name in _WATCHED_HOOKS if hasattr(hook, name)}

    def _check_tracing(self):
        if sys.gettrace() is not None or sys.getprofile() is not None:
            self._tampered("a trace or profile hook was active during a test")
        if getattr(threading, "_trace_hook", None) is not None or getattr(threading, "_profile_hook", None) is not None:
            self._tampered("a thread trace or profile hook was installed")

    def _source_codes(self, path):
        """The file compiled plainly and with pytest's assertion rewriting (either may match)."""
        if path not in self._compiled:
            codes = []
            try:
                with open(path, "rb") as fh:
                    source = fh.read()
                codes.append(compile(source, path, "exec", dont_inherit=True))
                import ast

                from _pytest.assertion.rewrite import rewrite_asserts

                tree = ast.parse(source, filename=path)
                rewrite_asserts(tree, source, path, self._config)
                codes.append(compile(tree, path, "exec", dont_inherit=True))
            except (OSError, SyntaxError, ValueError, TypeError):
                pass
            self._compiled[path] = codes
        return self._compiled[path]

    def _check_code(self, item):
        """The test function's code must be the code compiled from the file it claims to come from."""
        code = getattr(getattr(item, "function", None), "__code__", None)
        if code is None or not code.co_filename.endswith(".py") or not os.path.isfile(code.co_filename):
            return  # generated code (exec, builtins): nothing on disk to compare with
        codes = self._source_codes(code.co_filename)
        if not codes:
            return
        signature = _code_signature(code)
        originals = [_find_code(c, code.co_name, code.co_firstlineno) for c in codes]
        if not any(o is not None and _code_signature(o) == signature for o in originals):
            self._tampered(f"{item.nodeid}: its code is not the code in {os.path.basename(code.co_filename)}")

    # -- hooks -----------------------------------------------------------------------------------

    def pytest_configure(self, config):
        self._config = config

    def pytest_collection(self, session):
        self._collecting = True
        self._rootpath = session.config.rootpath

    def pytest_plugin_registered(self, plugin, manager):
        module_file = getattr(plugin, "__file__", None)
        if module_file and os.path.basename(module_file) == "conftest.py":
            names = getattr(plugin, "pytest_plugins", ())
            self._conftest_plugins.update([names] if isinstance(names, str) else names)
        if not self._collecting or getattr(plugin, "__name__", None) in self._conftest_plugins:
            return
        if module_file is None:
            self._tampered(f"a plugin object {type(plugin).__name__} was registered during the run")
            return
        root = str(self._rootpath) + os.sep
        if os.path.abspath(module_file).startswith(root) and os.path.basename(module_file) != "conftest.py":
            self._tampered(f"a module of the tree was registered as a plugin: {module_file}")
            return
        # a module can claim any __file__; its hook functions say where they were compiled
        try:
            hooks = [getattr(plugin, name) for name in dir(plugin) if name.startswith("pytest_")]
        except Exception:  # noqa: BLE001 - a plugin that cannot be inspected is not to be trusted
            self._tampered(f"a plugin that cannot be inspected was registered: {module_file}")
            return
        for function in hooks:
            code = getattr(getattr(function, "__func__", function), "__code__", None)
            where = os.path.abspath(code.co_filename) if code is not None else ""
            if where.startswith(root) and os.path.basename(where) != "conftest.py":
                self._tampered(f"a plugin with hooks from the tree was registered: {where} (as {module_file})")
                return

    def pytest_ignore_collect(self, collection_path, config):
        if not self.files or collection_path.suffix != ".py" or not collection_path.is_file():
            return None
        try:
            rel = collection_path.relative_to(config.rootpath).as_posix()
        except ValueError:
            return True
        return None if rel in self.files else True

    def pytest_collection_finish(self, session):
        # conftests are loaded by now; from here on the hook implementations must not change
        self._hookimpls = self._hook_snapshot()

    def pytest_runtest_call(self, item):
        self._check_internals()
        self._check_tracing()
        self._check_code(item)

    def pytest_runtest_logreport(self, report):
        self._check_internals()
        if report.nodeid in self.ids or report.nodeid.split("::", 1)[0] in self.files:
            outcome = _outcome(report)
            old = self.record.get(report.nodeid)
            if outcome is not None and (old is None or _RANK[outcome] > _RANK[old]):
                self.record[report.nodeid] = outcome

    def pytest_collectreport(self, report):
        if report.failed:
            for test_id in self.ids:
                if test_id.split("::", 1)[0] == report.nodeid:
                    self.record[test_id] = "error"

    def pytest_sessionfinish(self, session):
        self._check_internals()


def main():
    selection_path, args = sys.argv[1], sys.argv[2:]
    with open(selection_path, encoding="utf-8") as fh:
        selection = json.load(fh)
    os.unlink(selection_path)  # the nonce and the scored ids leave no trace the tests could read
    nonce = selection.pop("nonce")
    import pytest

    plugin = RecordingPlugin(selection.get("files", []), selection.get("ids", []))
    code = pytest.main(args, plugins=[plugin])
    plugin._check_internals()
    sys.stdout.flush()
    sys.stderr.flush()
    payload = json.dumps({"exit_code": int(code), "record": plugin.record, "tampering": plugin.tampering},
                         sort_keys=True)
    os.write(1, ("\n" + nonce + payload + nonce + "\n").encode("utf-8"))
    os._exit(int(code))


if __name__ == "__main__":
    main()
