"""The grader's pytest runner: a standalone script (stdlib + pytest) run as ``python -I -S <this file>``.

It is copied, with :mod:`repogym_gym.graders.judge_policy` beside it, into the grader's scratch
directory for every run, so it works in any interpreter that has pytest, without repogym_gym
installed. Usage::

    python -I -S pytest_runner.py SELECTION_JSON PYTEST_ARGS...

``SELECTION_JSON`` is ``{"nonce", "tree", "files", "ids", "grader_files"}``: read and deleted
before anything else happens. The order of what follows is the point:

1. the bytes of every grader-owned file (``grader_files``: the scored test files, the planted
   sentinel, every ``conftest.py``) are read, the process is made non-dumpable (no process of
   another uid, nor one without ``CAP_SYS_PTRACE``, may read or write its memory), and the judge's
   audit hook (:func:`judge_policy.install`, with its parts ``judge_code``, ``judge_namespaces``
   and ``judge_ledger`` beside it) is installed: the policy is in force before ``site``
   runs (hence ``-S``), before pytest is imported and before any code of the task exists here;
2. ``site`` adds the interpreter's site-packages; pytest is imported; the runner tells the policy
   which code is pytest's, pluggy's and its own (the ``init`` event);
3. pytest runs, in a thread of its own (no handler of a signal can be installed from it, and
   none runs in it), with the runner's plugin, which collects only the files behind the scored ids (so
   test modules a submission added never load) and reports pytest's own flow to the policy: the
   items of each collected module, the start and end of each test's protocol, each test's call
   and each phase's report. The policy keeps the ledger and decides what counts;
4. the ``finish`` event makes the policy check everything once more, write the record (framed by
   the nonce, which only the policy holds) and end the process with ``os._exit``, so no
   ``atexit`` hook or thread of the code under test runs after the record.

If ``finish`` is refused or never reached, nothing is written and the grader voids the run.
"""

import json
import os
import sys

_audit = sys.audit
#: The policy's files, copied beside this script (``judge_policy.PARTS``).
POLICY_PARTS = ("judge_policy.py", "judge_code.py", "judge_namespaces.py", "judge_objects.py", "judge_ledger.py",
                "judge_statements.py", "judge_values.py")
_HERE = os.path.dirname(os.path.abspath(__file__))


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()


def _non_dumpable():
    """prctl(PR_SET_DUMPABLE, 0): /proc/<pid>/mem and ptrace of this process need CAP_SYS_PTRACE."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass
    for name in [n for n in sys.modules if n == "ctypes" or n.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]


def _arm(selection):
    tree = selection["tree"]
    grader = {}
    for rel in selection["grader_files"]:
        path = os.path.join(tree, rel)
        try:
            grader[path] = _read(path)
        except OSError:
            continue
    selection["wildcards"] = any(b"ANY" in data for data in grader.values())  # before the policy denies reading them
    _non_dumpable()
    sys.path.insert(0, _HERE)
    try:
        import judge_policy
        import judge_values  # noqa: F401 - imported by name by the rewritten grader modules (plain_comparisons)
    finally:
        sys.path.remove(_HERE)
    runner_files = {}
    for path in [os.path.abspath(__file__), *(os.path.join(_HERE, part) for part in POLICY_PARTS)]:
        try:
            runner_files[path] = _read(path)  # code compiled under these names must be these bytes
        except OSError:
            runner_files[path] = None
    judge_policy.install({"nonce": selection["nonce"], "key": selection["key"], "tree": tree, "grader_files": grader,
                          "sources": selection.get("sources", {}),
                          "scored_files": selection["files"], "scored_ids": selection["ids"],
                          "runner_files": runner_files})


def _codes_of(namespaces):
    """Every code object of the functions and classes in ``namespaces`` (nested code included)."""
    found, stack, seen = [], [], set()
    for namespace in namespaces:
        for value in list(namespace.values()):
            for part in (value, getattr(value, "__func__", None), getattr(value, "fget", None)):
                if hasattr(part, "__code__"):
                    stack.append(part.__code__)
            if isinstance(value, type):
                stack.extend(v.__code__ for v in vars(value).values() if hasattr(v, "__code__"))
                stack.extend(v.__func__.__code__ for v in vars(value).values() if hasattr(getattr(v, "__func__", None), "__code__"))
                stack.extend(v.fget.__code__ for v in vars(value).values() if hasattr(getattr(v, "fget", None), "__code__"))
    while stack:
        code = stack.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        found.append(code)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_code"))
    return found


def _roots(tree):
    """The trusted roots: sys.path entries outside the tree and the runner's directory, realpaths too."""
    outside = [os.path.realpath(tree), os.path.realpath(_HERE)]
    roots = []
    for entry in sys.path:
        if not entry or not os.path.isabs(entry):
            continue
        for path in (entry, os.path.realpath(entry)):
            if path.count("/") < 2 or any(o == path or o.startswith(path.rstrip("/") + "/") or path.startswith(o + "/")
                                          for o in outside):
                continue
            roots.append(path)
    return list(dict.fromkeys(roots))


def _init(plugin_class):
    import _frozen_importlib_external as bootstrap_external

    import _pytest.assertion.rewrite
    import _pytest.config
    import _pytest.main
    import _pytest.nodes
    import _pytest.reports
    import _pytest.runner
    import _pytest.unittest
    import pluggy
    from _pytest.python import Function

    try:  # pytest 9 reports unittest subTests (and its `subtests` fixture) as reports of their own
        import _pytest.subtests as subtests

        subtest_namespaces, subtest_type = [vars(subtests)], subtests.SubtestReport
    except ImportError:
        subtest_namespaces, subtest_type = [], type("NoSubtestReport", (), {})
    add_subtest = vars(_pytest.unittest.TestCaseFunction).get("addSubTest")
    pluggy_namespaces = [vars(m) for n, m in list(sys.modules.items()) if n == "pluggy" or n.startswith("pluggy.")]
    call_and_report = _pytest.runner.call_and_report.__code__
    lambdas = [c for c in call_and_report.co_consts if hasattr(c, "co_code") and c.co_name == "<lambda>"]
    pytest_codes = {
        "protocol_callers": [_pytest.main.pytest_runtestloop.__code__],
        "call_callers": lambdas,
        "report_callers": [call_and_report],
        "subtest_callers": _codes_of([*subtest_namespaces, {"addSubTest": add_subtest} if add_subtest else {}]),
        "subtest_report_type": subtest_type,
        "main_callers": _codes_of([vars(_pytest.main)]),
        "bytecode_readers": [bootstrap_external._compile_bytecode.__code__, _pytest.assertion.rewrite._read_pyc.__code__],
        "pytest_pyc_readers": [_pytest.assertion.rewrite._read_pyc.__code__],
        "pyc_callers": [_pytest.assertion.rewrite.AssertionRewritingHook.exec_module.__code__],
        "loader_callers": [bootstrap_external.SourceLoader.get_code.__code__],
        "item_types": (Function, _pytest.unittest.TestCaseFunction),
        "report_type": _pytest.reports.TestReport,
        "source_loader": bootstrap_external.SourceFileLoader,
        "hook_caller_type": pluggy.HookCaller,
        "session_type": _pytest.main.Session,
        "node_slot": {name: vars(_pytest.nodes.Node)[name].__get__ for name in ("session", "config", "parent")},
        "config_type": _pytest.config.Config,
        "path_aware_type": getattr(sys.modules.get("_pytest.config.compat"), "PathAwareHookProxy", None),
        "path_aware_fixed": _path_aware_fixed(sys.modules.get("_pytest.config.compat")),
        "plugin_manager_type": _pytest.config.PytestPluginManager,
        "hook_relay_type": pluggy.HookRelay,
        "hook_impl_type": pluggy.HookImpl,
        "hookimpls_of": vars(pluggy.HookCaller)["_hookimpls"].__get__,
        "hookexec_of": vars(pluggy.HookCaller)["_hookexec"].__get__,
        "pm_hookexec": vars(pluggy.PluginManager)["_hookexec"],
        "multicall": getattr(sys.modules.get("pluggy._callers"), "_multicall", None),
        "function_of": vars(pluggy.HookImpl)["function"].__get__,
        "plugin_of": vars(pluggy.HookImpl)["plugin"].__get__,
        "unittest_call_method": vars(sys.modules["unittest.case"].TestCase)["_callTestMethod"],
        "testcase_type": sys.modules["unittest.case"].TestCase,
        # what TestCase.__init__ registers: a name in the table is only ever unittest's own, for its own type
        "type_equality_defaults": dict(sys.modules["unittest.case"].TestCase("__init__")._type_equality_funcs),
        "environ": os.environ,
        "environ_parts": {k: v for k, v in vars(os.environ).items() if k in ("encodekey", "decodekey", "encodevalue",
                                                                              "decodevalue")},
    }
    runner = _codes_of([{"main": main, "_Judge": plugin_class, "_patched": _patched, "_wrap_unittest": _wrap_unittest,
                         "_wrap_test_import": _wrap_test_import,
                         "_registering": _registering, "_wrap_pyfunc_call": _wrap_pyfunc_call,
                         "_direct_params": _direct_params, "_forget_last_exception": _forget_last_exception}])
    _audit("repogym.judge", "init", runner, _codes_of(pluggy_namespaces), pytest_codes, _roots(_SELECTION["tree"]))


def _path_aware_fixed(compat):
    """pytest 9.0's ``PathAwareHookProxy`` caches, for the hooks with path arguments, a nested
    ``fixed_hook`` wrapping the relay's caller: its code object and those hook names ((code, names)),
    or None where this pytest has no such proxy."""
    proxy = getattr(compat, "PathAwareHookProxy", None)
    getattr_ = vars(proxy).get("__getattr__") if proxy is not None else None
    if getattr_ is None:
        return None
    fixed = [c for c in getattr_.__code__.co_consts if hasattr(c, "co_code") and c.co_name == "fixed_hook"]
    names = getattr(compat, "imply_paths_hooks", None)
    return (fixed[0], frozenset(names)) if len(fixed) == 1 and names is not None else None


def _patched(original, owners_of):
    """A MonkeyPatch method that tells the policy which namespaces grader code changed through it."""

    def method(self, *args, **kwargs):
        before = owners_of(self)
        try:
            return original(self, *args, **kwargs)
        finally:
            _audit("repogym.judge", "monkeypatch", [*before, *owners_of(self)], original.__name__)

    method.__name__, method.__qualname__, method.__doc__ = original.__name__, original.__qualname__, original.__doc__
    return method


def _wrap_test_import():
    """Tell the policy as soon as pytest's import of a test module returns, before its collection
    looks at any name of it: pytest's ``__test__`` probes of the module's names ran a module
    ``__getattr__`` of the package under test, which made the test classes' assertions and the
    test support modules' helpers no-ops; from this event on, the test module, the classes it
    defines and every grader module imported so far are watched."""
    import _pytest.python as python

    original = python.importtestmodule

    def importtestmodule(*args, **kwargs):
        module = original(*args, **kwargs)
        _audit("repogym.judge", "imported")
        return module

    importtestmodule.__name__, importtestmodule.__qualname__, importtestmodule.__doc__ = (
        original.__name__, original.__qualname__, original.__doc__)
    python.importtestmodule = importtestmodule


def _wrap_equality(selection):
    """A test's comparisons of data (``== != < <= > >= in not in``) are decided on builtin values where
    a side answered for one (``judge_values``): every comparison of a grader file, after pytest's
    assertion rewriting (support modules are rewritten too), and unittest's comparing assertions."""
    import ast
    from unittest import TestCase

    import _pytest.assertion.rewrite as rewrite
    import judge_values

    graders = {os.path.realpath(os.path.join(selection["tree"], rel)) for rel in selection["grader_files"]}
    wildcards = selection.get("wildcards", True)  # whether a grader file uses mock.ANY itself (read in _arm)
    named = {os.path.join(selection["tree"], rel) for rel in selection["grader_files"]}
    keys = judge_values.install(_roots(selection["tree"]), graders | named, wildcards)
    original = rewrite.rewrite_asserts

    def rewrite_asserts(mod, source, module_path=None, config=None):
        original(mod, source, module_path, config)
        judge_values.plain_comparisons(mod, ast)

    rewrite_asserts.__doc__ = original.__doc__
    rewrite.rewrite_asserts = rewrite_asserts
    stems = {os.path.splitext(os.path.basename(path))[0] for path in graders}
    hook = rewrite.AssertionRewritingHook
    should_rewrite, bailout = hook._should_rewrite, hook._early_rewrite_bailout

    def _should_rewrite(self, name, fn, state):
        return should_rewrite(self, name, fn, state) or os.path.realpath(fn) in graders

    def _early_rewrite_bailout(self, name, state):
        return name.rsplit(".", 1)[-1] not in stems and bailout(self, name, state)

    hook._should_rewrite, hook._early_rewrite_bailout = _should_rewrite, _early_rewrite_bailout
    for name, wrap in _unittest_methods(keys).items():
        setattr(TestCase, name, wrap(vars(TestCase)[name]))


def _unittest_methods(keys):
    """{name: wrapper factory} for unittest's assertions that compare two values (the ``assertEqual``
    family, ``assertNotEqual``, ``assertAlmostEqual``, ``assertNotAlmostEqual``, ``assertCountEqual``,
    ``assertIn``, ``assertNotIn``, ``assertLess``, ``assertLessEqual``, ``assertGreater``,
    ``assertGreaterEqual``): the assertion runs as written, then, where a side answered for a builtin
    value, once more on the builtin values (``plain_key(first) == plain_key(second)`` of ``keys``, see
    ``judge_values.make_comparisons``), which must be as they were made when it returns; any error of
    that second run but the case's ``failureException`` is one too ("not comparable as builtin
    values"). Each wrapper is closure-free: what it holds are defaults (the original method, the opaque
    keys, builtins), and an exception it raises carries no frame of the comparison."""
    tb_set, context_set = BaseException.with_traceback, BaseException.__dict__["__context__"].__set__

    def checked(original):
        def method(self, first, second, *args, _original=original, _keys=keys, _short=_short,  # noqa: PLR0913
                   _tb=tb_set, _context=context_set, _is_a=isinstance, _Exception=Exception, _b=BaseException,
                   **kwargs):
            _original(self, first, second, *args, **kwargs)
            try:
                forms = _keys[0](first) == _keys[0](second)
                if forms[0] is first and forms[1] is second:
                    return  # nothing answered for a builtin value: the assertion as written stands
                _original(self, *forms, *args, **kwargs)
                intact = _keys[1](None) == _keys[1](None)
            except _b as error:  # its traceback would carry the frames of the closures behind the keys
                _tb(error, None)
                _context(error, None)
                if _is_a(error, self.failureException):
                    raise self.failureException(f"{error} (compared as builtin values)") from None
                if _is_a(error, _Exception):  # e.g. a placeholder ordered against builtin data
                    raise self.failureException(
                        f"{_short(first)} and {_short(second)} are not comparable as builtin values") from None
                raise
            if not intact:
                raise self.failureException("the values compared as builtin values changed while they were compared")

        for attribute in ("__name__", "__qualname__", "__doc__"):
            setattr(method, attribute, getattr(original, attribute))
        return method

    names = ("assertEqual", "assertListEqual", "assertTupleEqual", "assertDictEqual", "assertSetEqual",
             "assertSequenceEqual", "assertMultiLineEqual", "assertNotEqual", "assertAlmostEqual",
             "assertNotAlmostEqual", "assertCountEqual", "assertIn", "assertNotIn", "assertLess",
             "assertLessEqual", "assertGreater", "assertGreaterEqual")
    return {name: checked for name in names}


def _short(value, _repr=object.__repr__, _Exception=Exception):
    try:
        text = _repr(value)
    except _Exception:  # noqa: BLE001
        text = "<value>"
    return text[:80]


def _wrap_monkeypatch():
    from _pytest.monkeypatch import MonkeyPatch

    def owners(mp):
        return [entry[0] for entry in mp._setattr] + [entry[0] for entry in mp._setitem]

    for name in ("setattr", "delattr", "setitem", "delitem", "undo"):
        setattr(MonkeyPatch, name, _patched(getattr(MonkeyPatch, name), owners))


def _wrap_unittest():
    """A unittest case records its failures instead of raising them, through result methods an
    instance attribute could hide (the item's addFailure made a no-op was a pass): every exception
    a test part raises is told to the policy where unittest catches it, before any result hears
    of it, so the call cannot count as clean whatever the item says later. A clean call is not yet
    a pass: unittest calls the test method only while its outcome says so, and a flag cleared
    without an exception (``_outcome.success = False`` from code setUp calls) skipped the method
    with nothing raised. So a part that ends clean tells the policy whether the outcome still says
    success, and ``_callTestMethod`` tells it which method returned: the evidence a pass needs."""
    import contextlib
    from unittest.case import TestCase, _Outcome

    part = _Outcome.testPartExecutor
    call_method = TestCase._callTestMethod

    @contextlib.contextmanager
    def testPartExecutor(self, test_case, subTest=False):  # noqa: N802 - unittest's name
        with part(self, test_case, subTest):
            try:
                yield
            except BaseException:  # a failing subTest fails its test; any other part's exception its call
                _audit("repogym.judge", "raised", bool(subTest))
                raise
            _audit("repogym.judge", "part", self.success is True)

    def _callTestMethod(self, method):  # noqa: N802 - unittest's name
        call_method(self, method)
        _audit("repogym.judge", "method", self, method)

    _Outcome.testPartExecutor = testPartExecutor
    TestCase._callTestMethod = _callTestMethod


def _registering(original):
    """pluggy's ``PluginManager.register`` that first tells the policy which plugin is registered
    (and, through the stack, by whom): a plugin is pytest's, the runner's or the grader's."""

    def register(self, plugin, name=None):
        _audit("repogym.judge", "register", plugin)
        result = original(self, plugin, name)
        # the implementations pluggy itself made for this plugin, each with its hook's name: no other counts
        made = [(caller.name, impl) for caller in (self.get_hookcallers(plugin) or ())
                for impl in caller.get_hookimpls() if impl.plugin is plugin]
        _audit("repogym.judge", "registered", plugin, made)
        return result

    register.__name__, register.__qualname__, register.__doc__ = original.__name__, original.__qualname__, original.__doc__
    return register


def _wrap_register():
    import pluggy

    pluggy.PluginManager.register = _registering(pluggy.PluginManager.register)


def _wrap_pyfunc_call():
    """pytest's ``pytest_pyfunc_call`` (the one that calls a plain test function), telling the policy
    which function it is about to call and that it returned: the evidence a plain test's pass needs
    (an implementation of the hook that answers first, or an ``item._obj`` swapped after the call
    began, leaves none). Installed before pytest registers its own plugins, so pluggy holds this."""
    import warnings

    import _pytest.python
    from _pytest.compat import is_async_function
    from _pytest.warning_types import PytestReturnNotNoneWarning

    original = _pytest.python.pytest_pyfunc_call

    def pytest_pyfunc_call(pyfuncitem):
        # pytest's own steps, but the function announced is the function called: the original
        # read ``pyfuncitem.obj`` again, and a lookup can run code (a str-subclass key's __eq__)
        testfunction = pyfuncitem.obj
        if is_async_function(testfunction):
            return original(pyfuncitem)  # pytest fails it (no async plugin here)
        funcargs = pyfuncitem.funcargs
        testargs = {arg: funcargs[arg] for arg in pyfuncitem._fixtureinfo.argnames}
        _audit("repogym.judge", "pyfunc", pyfuncitem, testfunction)
        result = testfunction(**testargs)
        _audit("repogym.judge", "pyfunc_returned", pyfuncitem, testfunction)
        if hasattr(result, "__await__") or hasattr(result, "__aiter__"):
            _pytest.python.async_fail(pyfuncitem.nodeid)
        elif result is not None:
            warnings.warn(PytestReturnNotNoneWarning(  # noqa: B028 - pytest's own call, repeated as it is
                f"Test functions should return None, but {pyfuncitem.nodeid} returned {type(result)!r}."))
        return True

    pytest_pyfunc_call.__dict__.update(original.__dict__)  # pytest's hookimpl marker (trylast)
    pytest_pyfunc_call.__module__, pytest_pyfunc_call.__doc__ = original.__module__, original.__doc__
    _pytest.python.pytest_pyfunc_call = pytest_pyfunc_call


_SELECTION = {}  # type: dict[str, object]  # (a comment: this module keeps no __annotations__)


def _direct_params(item):
    """The names a test is parametrized with directly (``@pytest.mark.parametrize`` without
    ``indirect``): its call must receive exactly those values."""
    from _pytest.python import get_direct_param_fixture_func

    callspec = getattr(item, "callspec", None)
    info = getattr(item, "_fixtureinfo", None)
    if callspec is None or info is None:
        return ()
    defs = info.name2fixturedefs
    return tuple(name for name in callspec.params
                 if defs.get(name) and defs[name][-1].func is get_direct_param_fixture_func)


def _forget_last_exception():
    """pytest keeps a failed call's exception in ``sys.last_*`` for post-mortem debugging: the next
    test's code could read its explanation (expected values included)."""
    for name in ("last_type", "last_value", "last_traceback"):
        sys.__dict__.pop(name, None)


def main():
    selection_path, args = sys.argv[1], sys.argv[2:]
    selection = json.loads(_read(selection_path))
    os.unlink(selection_path)  # the nonce and the scored ids leave no trace the tests could read
    _SELECTION["tree"] = selection["tree"]
    _arm(selection)
    del selection["nonce"], selection["key"]
    import site

    site.main()
    import pytest

    class _Judge:
        """Restricts collection to the scored files and reports pytest's own flow to the policy."""

        def __init__(self, files):
            self.files = set(files)

        def pytest_ignore_collect(self, collection_path, config):
            if not self.files or collection_path.suffix != ".py" or not collection_path.is_file():
                return None
            try:
                rel = collection_path.relative_to(config.rootpath).as_posix()
            except ValueError:
                return True
            return None if rel in self.files else True

        def pytest_collectreport(self, report):
            if report.failed:
                _audit("repogym.judge", "collect_error", report.nodeid.split("::", 1)[0])
                return
            found = [(node, node.nodeid, _direct_params(node)) for node in report.result if isinstance(node, pytest.Item)]
            _audit("repogym.judge", "collected", found)

        def pytest_collection_finish(self, session):
            _audit("repogym.judge", "hooks", session.config.pluginmanager.hook, session)

        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session):
            _audit("repogym.judge", "sessionfinish")

        @pytest.hookimpl(wrapper=True, tryfirst=True)
        def pytest_runtest_protocol(self, item, nextitem):
            _audit("repogym.judge", "begin", item)
            try:
                return (yield)
            finally:
                _audit("repogym.judge", "end", item)

        @pytest.hookimpl(wrapper=True, tryfirst=True)
        def pytest_runtest_call(self, item):
            # What the call did, seen from outside it: a call report counts as a pass only if the
            # call returned here without an exception (and, for a unittest case, with none recorded).
            _audit("repogym.judge", "call", item)
            try:
                result = yield
            except BaseException:
                _forget_last_exception()
                _audit("repogym.judge", "returned", item, False)
                raise
            _forget_last_exception()
            _audit("repogym.judge", "returned", item, not item.__dict__.get("_excinfo"))
            return result

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_logreport(self, report):
            _audit("repogym.judge", "report", report, report.nodeid, report.when, report.outcome)

    _wrap_equality(selection)
    _wrap_test_import()
    _wrap_monkeypatch()
    _wrap_unittest()
    _wrap_register()
    _wrap_pyfunc_call()

    def judged():
        _init(_Judge)
        code = pytest.main(args, plugins=[_Judge(selection.get("files", []))])
        sys.stdout.flush()
        sys.stderr.flush()
        _audit("repogym.judge", "finish", int(code))

    # pytest (and so all code under test) runs in a thread of its own: Python runs signal handlers
    # in the main thread only and refuses to install one from any other, so no code of the task can
    # have a handler called, with whatever frame it interrupts, in the middle of the policy.
    import threading

    worker = threading.Thread(target=judged, name="repogym-judged")
    try:
        worker.start()
        worker.join()
    finally:
        os._exit(3)  # finish ends the process itself; reaching here means it was refused or never came


if __name__ == "__main__":
    main()
