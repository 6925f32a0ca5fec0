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


_BAKED = []  # type: list[object]  # the code objects _baked made: the runner's own code, told to the policy at init


def _baked(function, named=None, **values):
    """``function`` (a template naming nothing of its enclosing scope) with each constant ``"@name"`` of its
    code, alone or in a tuple of such, replaced by ``values[name]`` (and ``named``'s name and doc): every
    function the runner installs into pytest, pluggy and unittest. What it calls is part of its code, whose
    assignment the policy refuses; a cell (rounds 31, 32) and a ``__kwdefaults__`` entry (round 33) change
    with no audit event, a default with one more argument. ``ValueError``: a marker or value unmatched."""
    used = set()

    def swap(const):
        if type(const) is str and const.startswith("@") and len(const) > 1:
            if const[1:] not in values:
                raise ValueError(f"{function.__qualname__}: no value for the marker {const!r}")
            used.add(const[1:])
            return values[const[1:]]
        if type(const) is tuple and const and all(type(c) is str and c.startswith("@") for c in const):
            return tuple(swap(c) for c in const)
        return const

    code = function.__code__
    consts = tuple(swap(c) for c in code.co_consts)
    if used != set(values) or code.co_freevars:
        raise ValueError(f"{function.__qualname__}: markers {sorted(used)}, values {sorted(values)}, "
                         f"free variables {code.co_freevars}")
    code = code.replace(co_consts=consts)
    _BAKED.append(code)
    baked = type(function)(code, function.__globals__, function.__name__, function.__defaults__)
    named = named or function
    baked.__name__, baked.__qualname__, baked.__doc__ = named.__name__, named.__qualname__, named.__doc__
    return baked


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
                         "_direct_params": _direct_params, "_forget_last_exception": _forget_last_exception}]) + _BAKED
    _audit("repogym.judge", "init", runner, _codes_of(pluggy_namespaces), pytest_codes, _roots(_SELECTION["tree"]))


def _path_aware_fixed(compat):
    """pytest 9.0's ``PathAwareHookProxy`` caches a nested ``fixed_hook`` wrapping the relay's caller for
    the hooks with path arguments: ``(its code, those names)``, or None where pytest has no such proxy."""
    proxy = getattr(compat, "PathAwareHookProxy", None)
    getattr_ = vars(proxy).get("__getattr__") if proxy is not None else None
    if getattr_ is None:
        return None
    fixed = [c for c in getattr_.__code__.co_consts if hasattr(c, "co_code") and c.co_name == "fixed_hook"]
    names = getattr(compat, "imply_paths_hooks", None)
    return (fixed[0], frozenset(names)) if len(fixed) == 1 and names is not None else None


def _patched(original, owners_of):
    """A MonkeyPatch method that tells the policy which namespaces grader code changed through it (baked)."""

    def method(self, *args, **kwargs):
        original, owners_of, audit, name = "@original", "@owners_of", "@audit", "@name"
        before = owners_of(self)
        try:
            return original(self, *args, **kwargs)
        finally:
            audit("repogym.judge", "monkeypatch", [*before, *owners_of(self)], name)

    return _baked(method, original, original=original, owners_of=owners_of, audit=_audit, name=original.__name__)


def _wrap_test_import():
    """Tell the policy when pytest installs its assertion-rewriting import hook (from then on a grader file's plain
    compilation means the rewriting was switched off: round 32 took the hook out of ``sys.meta_path``), and as soon
    as pytest's import of a test module returns, before collection looks at its names (``__test__`` probes ran a
    module ``__getattr__`` of the package that made assertions no-ops): from then on it is watched, and its imports."""
    import _pytest.assertion as assertion
    import _pytest.python as python

    def importtestmodule(*args, **kwargs):
        original, audit = "@original", "@audit"
        module = original(*args, **kwargs)
        audit("repogym.judge", "imported")
        return module

    def install_importhook(config):
        original, audit = "@original", "@audit"
        hook = original(config)
        audit("repogym.judge", "rewriting")
        return hook

    python.importtestmodule = _baked(importtestmodule, python.importtestmodule, original=python.importtestmodule, audit=_audit)
    hook = assertion.install_importhook
    assertion.install_importhook = _baked(install_importhook, hook, original=hook, audit=_audit)


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
        original, plain_comparisons, ast = "@original", "@plain_comparisons", "@ast"
        original(mod, source, module_path, config)
        plain_comparisons(mod, ast)

    rewrite.rewrite_asserts = _baked(rewrite_asserts, original, original=original,
                                     plain_comparisons=judge_values.plain_comparisons, ast=ast)
    stems = frozenset(os.path.splitext(os.path.basename(path))[0] for path in graders)
    hook = rewrite.AssertionRewritingHook

    def _should_rewrite(self, name, fn, state):
        should_rewrite, realpath, graders = "@should_rewrite", "@realpath", "@graders"
        return should_rewrite(self, name, fn, state) or realpath(fn) in graders

    def _early_rewrite_bailout(self, name, state):
        bailout, stems = "@bailout", "@stems"
        return name.rsplit(".", 1)[-1] not in stems and bailout(self, name, state)

    hook._should_rewrite = _baked(_should_rewrite, should_rewrite=hook._should_rewrite, realpath=os.path.realpath,
                                  graders=frozenset(graders))
    hook._early_rewrite_bailout = _baked(_early_rewrite_bailout, bailout=hook._early_rewrite_bailout, stems=stems)
    for name, wrap in _unittest_methods(keys).items():
        setattr(TestCase, name, wrap(vars(TestCase)[name]))


def _unittest_methods(keys):
    """{name: wrapper factory} for unittest's assertions that compare two values (``names`` below, and the
    deprecated aliases of Python < 3.12): the assertion runs as written, then, where a side answered for a builtin
    value, once more on the builtin values (``plain_key(first) == plain_key(second)`` of ``keys``, see
    ``judge_values.make_comparisons``), which must be as they were made when it returns; any error of that second
    run but ``failureException`` is one too ("not comparable as builtin values"). Each wrapper is baked (:func:`_baked`):
    what it calls is part of its code, and an exception it raises carries no frame of the comparison."""
    tb_set, context_set = BaseException.with_traceback, BaseException.__dict__["__context__"].__set__

    def method(self, first, second, *args, **kwargs):
        original, keys, short, tb, context, is_a, exception, base, membership, type_of = (
            "@original", "@keys", "@short", "@tb", "@context", "@is_a", "@exception", "@base", "@membership", "@type_of")
        original(self, first, second, *args, **kwargs)
        try:
            forms = keys[0](first) == keys[0](second)
            # a side answered for a builtin value: once more (but assertIn on the package's own container: its API)
            if (forms[0] is not first or forms[1] is not second) and not (membership and type_of(forms[1]) is keys[2]):
                original(self, *forms, *args, **kwargs)
            intact = keys[1](None) == keys[1](None)
        except base as error:  # its traceback would carry the frames of the closures behind the keys
            tb(error, None)
            context(error, None)
            if is_a(error, self.failureException):
                raise self.failureException(f"{error} (compared as builtin values)") from None
            if is_a(error, exception):  # e.g. a placeholder ordered against builtin data
                raise self.failureException(
                    f"{short(first)} and {short(second)} are not comparable as builtin values") from None
            raise
        if not intact:
            raise self.failureException("the values compared as builtin values changed while they were compared")

    def checked(original):
        return _baked(method, original, original=original, keys=keys, short=_short, tb=tb_set, context=context_set,
                      is_a=isinstance, exception=Exception, base=BaseException, type_of=type,
                      membership=original.__name__ in ("assertIn", "assertNotIn"))

    names = ("assertEqual", "assertListEqual", "assertTupleEqual", "assertDictEqual", "assertSetEqual",
             "assertSequenceEqual", "assertMultiLineEqual", "assertNotEqual", "assertAlmostEqual",
             "assertNotAlmostEqual", "assertCountEqual", "assertIn", "assertNotIn", "assertLess",
             "assertLessEqual", "assertGreater", "assertGreaterEqual")
    # Python < 3.12's deprecated aliases call the originals they closed over (a cell the policy watches)
    aliases = ("assertEquals", "failUnlessEqual", "assertNotEquals", "failIfEqual", "assertAlmostEquals",
               "failUnlessAlmostEqual", "assertNotAlmostEquals", "failIfAlmostEqual")
    return {name: checked for name in (*names, *(a for a in aliases if a in vars(sys.modules["unittest"].TestCase)))}


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
    """unittest records failures through result methods an instance attribute could hide: each exception
    a part raises is told to the policy where unittest catches it; a clean part, whether the outcome still
    says success (``_outcome.success = False`` skipped the method); ``_callTestMethod``, what returned."""
    import contextlib
    from unittest.case import TestCase, _Outcome

    part, call_method = _Outcome.testPartExecutor, TestCase._callTestMethod

    def executing(self, test_case, subTest):  # noqa: N803 - unittest's name
        manager, part, audit, base, as_bool = "@manager", "@part", "@audit", "@base", "@as_bool"
        with manager(part, (self, test_case, subTest), {}):
            try:
                yield
            except base:  # a failing subTest fails its test; any other part's exception its call
                audit("repogym.judge", "raised", as_bool(subTest))
                raise
            audit("repogym.judge", "part", self.success is True)

    # no closure: contextlib.contextmanager's helper is one, its cell holding the generator function
    def testPartExecutor(self, test_case, subTest=False):  # noqa: N802, N803 - unittest's names
        manager, executing = "@manager", "@executing"
        return manager(executing, (self, test_case, subTest), {})

    def _callTestMethod(self, method):  # noqa: N802 - unittest's name
        call, audit = "@call", "@audit"
        call(self, method)
        audit("repogym.judge", "method", self, method)

    manager, part = contextlib._GeneratorContextManager, part.__wrapped__  # unittest's generator: not its cell
    executing = _baked(executing, manager=manager, part=part, audit=_audit, base=BaseException, as_bool=bool)
    _Outcome.testPartExecutor = _baked(testPartExecutor, manager=manager, executing=executing)
    TestCase._callTestMethod = _baked(_callTestMethod, call=call_method, audit=_audit)


def _registering(original):
    """pluggy's ``PluginManager.register`` that first tells the policy which plugin is registered
    (and, through the stack, by whom): a plugin is pytest's, the runner's or the grader's."""

    def register(self, plugin, name=None):
        original, audit = "@original", "@audit"
        audit("repogym.judge", "register", plugin)
        result = original(self, plugin, name)
        # the implementations pluggy itself made for this plugin, each with its hook's name: no other counts
        made = [(caller.name, impl) for caller in (self.get_hookcallers(plugin) or ())
                for impl in caller.get_hookimpls() if impl.plugin is plugin]
        audit("repogym.judge", "registered", plugin, made)
        return result

    return _baked(register, original, original=original, audit=_audit)


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
        original, audit, is_async_function, async_fail, warn, not_none = (
            "@original", "@audit", "@is_async_function", "@async_fail", "@warn", "@not_none")
        testfunction = pyfuncitem.obj
        if is_async_function(testfunction):
            return original(pyfuncitem)  # pytest fails it (no async plugin here)
        funcargs = pyfuncitem.funcargs
        testargs = {arg: funcargs[arg] for arg in pyfuncitem._fixtureinfo.argnames}
        audit("repogym.judge", "pyfunc", pyfuncitem, testfunction)
        result = testfunction(**testargs)
        audit("repogym.judge", "pyfunc_returned", pyfuncitem, testfunction)
        if hasattr(result, "__await__") or hasattr(result, "__aiter__"):
            async_fail(pyfuncitem.nodeid)
        elif result is not None:
            warn(not_none(  # pytest's own call, repeated as it is
                f"Test functions should return None, but {pyfuncitem.nodeid} returned {type(result)!r}."))
        return True

    baked = _baked(pytest_pyfunc_call, original, original=original, audit=_audit, is_async_function=is_async_function,
                   async_fail=_pytest.python.async_fail, warn=warnings.warn, not_none=PytestReturnNotNoneWarning)
    baked.__dict__.update(original.__dict__)  # pytest's hookimpl marker (trylast)
    baked.__module__ = original.__module__
    _pytest.python.pytest_pyfunc_call = baked


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
    """pytest keeps a failed call's exception in ``sys.last_*``: the next test's code could read it."""
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
