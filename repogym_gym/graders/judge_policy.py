"""The judge's policy: a PEP 578 audit hook the grader's pytest runner installs before anything else.

A standalone module (standard library only), copied next to the runner for every graded run and
installed by :mod:`repogym_gym.graders.pytest_runner` as its first act, before ``site``, pytest or
any code of the task is imported. Code under test runs in the process that judges it, so the
verdict must not depend on anything that code can reach. The policy rests on four properties:

1. **Code says where it comes from.** Every code object is classified by its ``co_filename``:
   *trusted* (the interpreter's standard library and site-packages, the runner), *grader* (test
   files and ``conftest.py`` files of the grading copy, whose bytes were read before any code ran)
   or *submission* (everything else, ``<string>`` included). A filename cannot be forged:
   compiling, unmarshalling or building (``code.replace``) code that carries a trusted filename is
   refused unless it is that file's own code, and every grader module that runs is compared with
   the code compiled from its bytes (a grader frame counts only if its code was so verified).
2. **Capabilities are denied to the submission**, decided from the calling frame and from the
   frame that ends up holding what a *deputy* (``inspect.stack``, ``traceback.walk_tb``,
   ``_pytest._code``...) hands on: no audit hooks, trace or profile hooks, heap walks
   (``gc.get_objects/get_referrers/get_referents``), thread-frame dumps, frames reaching
   submission code (``sys._getframe``, ``tb_frame``, ``gi_frame``...), ``__code__`` /
   ``__defaults__`` / ``__kwdefaults__`` assigned to functions that are not the submission's,
   ``__class__`` / class attributes assigned through audited paths on trusted or grader objects,
   functions built from trusted or grader code, ``ctypes`` and the interpreter's test modules,
   native extensions from outside the trusted roots, ``/proc/*/mem``, symlinks into ``/proc``.
   A denial raises in the caller and is a *violation*: the run is void (score 0, event and file
   named in the grade).
3. **The verdict lives where nothing can reach it.** The ledger of outcomes, the nonce that frames
   the final record and the policy's state are closure variables of the hook, which only the
   interpreter references (heap walks and frames are denied; the hook frame an exception carries
   out holds nothing secret). Each test item is bound, when its module's collection is reported,
   to its node id and to its function, which must be code of its verified test file named as
   the id says. Outcomes arrive as audit events from the runner's plugin and count only when
   they come from pytest's own flow (the runner's code, called by pluggy, called by
   ``_pytest.runner.call_and_report``; main thread; no submission frame on the stack; the bound
   item, each phase once, each item once). The hook writes the record and ends the process.
4. **What the verdict depends on is compared.** Class attributes and module globals are not
   audited, so every namespace of a trusted module and its classes is snapshotted at first
   contact (the first code that is not trusted about to run); the verdict path (pytest, pluggy,
   unittest, builtins, the runner, and each test module with its classes) is compared before
   every recorded outcome, everything at the end, where no trusted module may hold submission
   code. Changes made through pytest's ``monkeypatch`` by grader code are accepted.

Known limits (README, "The judge"): a replacement made and undone within one call of the code
under test is not seen by a comparison before or after it; values that lie (an ``__eq__`` that
always returns True) are the test's to catch (type-strict assertions); a callback made only of
builtins (``functools.partial`` as a weakref callback) runs with the frame it interrupts as its
caller; under LocalSandbox the process runs as root, so another root process can write its memory.

Events of the runner (``sys.audit("repogym.judge", op, *args)``): ``init``, ``collected``,
``collect_error``, ``begin``, ``call``, ``report``, ``end``, ``monkeypatch``, ``finish``.
"""

import sys

__all__ = ["install"]


def install(config):  # noqa: C901, PLR0915 - one closure holds the whole policy, on purpose
    """Install the policy hook (once per process, before anything else is imported).

    Args:
        config: ``{"nonce": str, "tree": abs path, "grader_files": {abs path: bytes},
            "scored_files": [rel path], "scored_ids": [node id], "runner_files": [abs path]}``.

    Returns:
        None: nothing that could reach the hook's state leaves this function.
    """
    import _thread
    import functools
    import os
    import types

    # Everything the hook uses is bound here, once: names the code under test could rebind later
    # (builtins, module attributes) are never looked up again.
    _type, _id, _len, _str, _bytes, _int, _dict, _set, _tuple, _list, _zip = (
        type, id, len, str, bytes, int, dict, set, tuple, list, zip)
    _map, _sorted, _frozenset, _callable, _any, _enumerate = map, sorted, frozenset, callable, any, enumerate
    _getframe, _get_ident, _write, _exit = sys._getframe, _thread.get_ident, os.write, os._exit
    _os_open, _os_read, _os_close, _O_RDONLY = os.open, os.read, os.close, os.O_RDONLY
    _FunctionType, _MethodType, _ModuleType, _CodeType = types.FunctionType, types.MethodType, types.ModuleType, types.CodeType
    _partial, _property, _classmethod, _staticmethod = functools.partial, property, classmethod, staticmethod
    _ValueError, _AttributeError, _ImportError = ValueError, AttributeError, ImportError
    _PermissionError, _RuntimeError, _BaseException, _Exception, _OSError = (
        PermissionError, RuntimeError, BaseException, Exception, OSError)
    _compile, _modules = compile, sys.modules
    _instance_dict = object.__getattribute__  # (o, "__dict__") for objects of trusted classes only
    _class_dict = type.__dict__["__dict__"].__get__  # a class's namespace, without its metaclass
    _class_name = type.__dict__["__name__"].__get__
    _class_qualname = type.__dict__["__qualname__"].__get__
    _class_mro = type.__dict__["__mro__"].__get__
    _main_ident = _get_ident()

    nonce = config["nonce"]
    tree = os.path.realpath(config["tree"]).rstrip("/") + "/"
    grader_bytes = _dict(config["grader_files"])  # abs path -> bytes read before any test code ran
    for path in _list(grader_bytes):
        grader_bytes.setdefault(os.path.realpath(path), grader_bytes[path])
    scored_files = _frozenset(config["scored_files"])
    scored_ids = _frozenset(config["scored_ids"])
    runner_files = _frozenset(config["runner_files"])

    state = {"roots": (), "codes": None, "armed": False, "finished": False, "current": None, "item": None,
             "phases": None, "modules": {}}
    kinds = {}  # co_filename -> "trusted" | "grader" | "submission"
    keep = []  # objects whose ids the policy relies on stay alive
    verified = {}  # id(code) -> code: grader code that is the compiled bytes of its file
    module_codes = {}  # abs path -> codes its bytes compile to (plain, assertion-rewritten)
    module_dicts = {}  # id(globals) -> abs path, for verified grader modules
    violations = []
    ledger = {}  # node id -> worst outcome
    busy = _set()  # idents of threads inside the hook (the hook's own events pass through)
    watched = []  # snapshot rows compared before every recorded outcome
    everything = []  # snapshot rows compared at the end
    protected_classes = {}  # id -> class (trusted and grader classes)
    protected_modules = {}  # id -> module
    items = {}  # id(item) -> [item, node id, function, function state, ran]
    watched_modules = _set()
    _RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    _DENY_ALWAYS = _frozenset(("sys.addaudithook", "sys.setprofile", "sys.settrace", "gc.get_objects",
                               "gc.get_referrers", "gc.get_referents", "sys._current_frames",
                               "sys._current_exceptions", "builtins.breakpoint", "pdb.Pdb"))
    _FRAME_ATTRS = _frozenset(("tb_frame", "gi_frame", "cr_frame", "ag_frame"))
    _FORBIDDEN_IMPORTS = _frozenset(("ctypes", "_ctypes", "_testcapi", "_testinternalcapi", "_testbuffer",
                                     "_testmultiphase", "_testimportmultiple", "_xxtestfuzz", "_ctypes_test",
                                     "_xxsubinterpreters", "_testsinglephase", "cffi", "_cffi_backend"))
    # Deputies: trusted functions that hand the frames they obtain on to their caller.
    _DEPUTIES = (("/inspect.py", _frozenset(("currentframe", "stack", "trace", "getouterframes", "getinnerframes",
                                             "getgeneratorlocals", "getcoroutinelocals"))),
                 ("/traceback.py", _frozenset(("walk_stack", "walk_tb"))),
                 ("/logging/__init__.py", _frozenset(("<lambda>",))),
                 ("/asyncio/base_tasks.py", _frozenset(("_task_get_stack",))))
    _DEPUTY_PARTS = ("/_pytest/_code/", "/pdb.py", "/bdb.py")
    _VERDICT_PATH = _frozenset(("_pytest", "pytest", "pluggy", "unittest", "builtins", "__main__", "judge_policy"))
    _JSON_ESCAPES = {i: "\\u%04x" % i for i in (*range(0x20), *range(0xD800, 0xE000))}
    _JSON_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\"})

    # -- classification ---------------------------------------------------------------------

    def kind_of_file(filename):
        found = kinds.get(filename) if _type(filename) is _str else "submission"
        if found is not None:
            return found
        if filename in runner_files or filename.startswith("<frozen "):
            found = "trusted"
        elif filename in grader_bytes:
            found = "grader"
        elif filename.startswith(tree) or not filename.startswith("/"):
            found = "submission"  # the tree, "<string>" and other made-up names
        else:
            found = "trusted" if _any(filename.startswith(root) for root in state["roots"]) else "submission"
        if state["roots"]:
            kinds[filename] = found
        return found

    def is_submission(code):
        kind = kind_of_file(code.co_filename)
        return kind == "submission" or (kind == "grader" and _id(code) not in verified)

    def submission_frame(frame):
        while frame is not None:
            if is_submission(frame.f_code):
                return frame
            frame = frame.f_back
        return None

    def where(frame):
        if frame is None:
            return "(no Python caller)"
        return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"

    def is_deputy(code):
        filename = code.co_filename
        if kind_of_file(filename) != "trusted":
            return False
        if _any(part in filename for part in _DEPUTY_PARTS):
            return True
        return _any(filename.endswith(tail) and code.co_name in names for tail, names in _DEPUTIES)

    def holder_of_frames(caller):
        """Who ends up holding what ``caller`` obtains: the first frame outward that is not a deputy."""
        frame = caller
        while frame is not None and is_deputy(frame.f_code):
            frame = frame.f_back
        return frame

    def violate(message):
        if _len(violations) < 50 and message not in violations:
            violations.append(message)

    def name_of(value):
        return _class_name(_type(value))

    def key_text(key):
        return key if _type(key) is _str else f"<a {name_of(key)} key>"

    # -- snapshots of what the verdict depends on -------------------------------------------

    def row(label, owner, mapping):
        keys = _tuple(mapping)
        values = _tuple(_map(mapping.get, keys))
        return [label, owner, mapping, keys, _tuple(_map(_id, values)), _len(keys), _tuple(_map(is_code_like, values))]

    def module_namespace_of(module):
        if _type(module) is not _ModuleType:
            return None
        namespace = _instance_dict(module, "__dict__")
        filename = namespace.get("__file__")
        if filename is not None and (_type(filename) is not _str or kind_of_file(filename) != "trusted"):
            return None
        return namespace

    def take_snapshot():
        """Every trusted module and the classes it defines, as they are before task code runs."""
        for name, module in _list(_modules.items()):
            namespace = module_namespace_of(module)
            if namespace is None or _type(name) is not _str:
                continue
            protected_modules[_id(module)] = module
            on_path = name.split(".", 1)[0] in _VERDICT_PATH
            snap = row(f"module {name}", module, namespace)
            everything.append(snap)
            if on_path:
                watched.append(snap)
            for value in _list(namespace.values()):
                if _type(value) is _type and _class_dict(value).get("__module__") == name:
                    protected_classes[_id(value)] = value
                    snap = row(f"class {name}.{_class_qualname(value)}", value, _class_dict(value))
                    everything.append(snap)
                    if on_path:
                        watched.append(snap)
        state["modules"] = {name: _id(m) for name, m in _list(_modules.items()) if _id(m) in protected_modules}

    def is_code_like(value):
        """Replacing ``value`` changes what runs (decided without running any of its code)."""
        t = _type(value)
        return _callable(value) or t is _ModuleType or _class_dict(t).get("__get__") is not None

    def from_submission(value, depth=0):
        """Whether ``value`` is, or wraps, code of the submission."""
        t = _type(value)
        if depth > 8:
            return True
        if t is _FunctionType:
            return is_submission(value.__code__)
        if t is _MethodType or t is _classmethod or t is _staticmethod:
            return from_submission(value.__func__, depth + 1)
        if t is _property:
            return _any(p is not None and from_submission(p, depth + 1) for p in (value.fget, value.fset, value.fdel))
        if t is _partial:
            return from_submission(value.func, depth + 1)
        if t is _type:
            return _id(value) not in protected_classes and _any(
                _type(v) is _FunctionType and is_submission(v.__code__) for v in _list(_class_dict(value).values()))
        if t is _ModuleType:
            return False
        if _id(t) in protected_classes or not is_code_like(value):
            return False
        return _any(_type(v) is _FunctionType and is_submission(v.__code__) for v in _list(_class_dict(t).values()))

    def compare(rows, identity):
        """Report what changed in ``rows``: code replaced by anything (``identity``), or code of the submission
        anywhere (data the snapshot held, like a hook slot that was None, may become trusted code)."""
        for snap in rows:
            label, owner, mapping, keys, ids, size, code_like = snap
            if _tuple(_map(_id, _map(mapping.get, keys))) != ids:
                for key, before, was_code in _zip(keys, ids, code_like):
                    value = mapping.get(key)
                    if _id(value) != before and ((identity and was_code) or from_submission(value)):
                        violate(f"{label}: {key_text(key)} was replaced (now a {name_of(value)})")
            if _len(mapping) != size:
                for key in _list(mapping):
                    if _type(key) is not _str:
                        violate(f"{label}: a key of type {name_of(key)} was added")
                        continue
                    if key not in keys:
                        value = mapping.get(key)
                        if (identity and _type(owner) is _type and is_code_like(value)) or from_submission(value):
                            violate(f"{label}: {key_text(key)} was added (a {name_of(value)})")

    def accept_change(owner):
        """Take ``owner``'s namespace as it is now (a monkeypatch made by grader code)."""
        for rows in (watched, everything):
            for i, snap in _enumerate(rows):
                if snap[1] is owner or snap[2] is owner:
                    rows[i] = row(snap[0], owner, snap[2])

    def check_everything():
        """At the end: the snapshot, and no trusted module (one loaded late included) holds submission code."""
        compare(watched, identity=True)
        compare([snap for snap in everything if not _any(snap is w for w in watched)], identity=False)
        for name, module in _list(_modules.items()):
            namespace = module_namespace_of(module)
            if namespace is None or _id(module) in protected_modules:
                continue
            for key, value in _list(namespace.items()):
                if _type(value) is not _type and _type(value) is not _ModuleType and from_submission(value):
                    violate(f"module {key_text(name)}: {key_text(key)} holds code of the submission")
        for name, ident in state["modules"].items():
            if _id(_modules.get(name)) != ident:
                violate(f"sys.modules[{name!r}] was replaced")

    # -- grader modules and test identity ---------------------------------------------------

    def compile_grader_files():
        """At init, before any code of the task can run: what every grader file compiles to, plainly and
        with pytest's assertion rewriting (pytest's Python code: later it could have been patched)."""
        import ast

        from _pytest.assertion.rewrite import rewrite_asserts

        for filename, source in grader_bytes.items():
            codes = []
            try:
                codes.append(_compile(source, filename, "exec", dont_inherit=True))
                parsed = ast.parse(source, filename=filename)
                rewrite_asserts(parsed, source, filename, None)
                codes.append(_compile(parsed, filename, "exec", dont_inherit=True))
            except _Exception:  # noqa: BLE001 - an unparseable file verifies nothing
                pass
            module_codes[filename] = codes

    def exec_globals(caller):
        """The globals a module's code runs in, from importlib's or pytest's exec call."""
        try:
            local = caller.f_locals
        except _Exception:  # noqa: BLE001
            return None
        module = local.get("module")
        if _type(module) is _ModuleType:
            return _instance_dict(module, "__dict__")
        args = local.get("args")
        if _type(args) is _tuple and _len(args) >= 2 and _type(args[1]) is _dict:
            return args[1]
        return None

    def verify_module(code, caller):
        for original in module_codes.get(code.co_filename, ()):
            if original == code:  # code equality: bytecode, constants, names, lines (not the filename)
                stack = [code]
                while stack:
                    c = stack.pop()
                    verified[_id(c)] = c
                    stack.extend(k for k in c.co_consts if _type(k) is _CodeType)
                namespace = exec_globals(caller)
                if namespace is not None:
                    keep.append(namespace)
                    module_dicts[_id(namespace)] = code.co_filename
                return True
        return False

    def cell_id(cell):
        try:
            return _id(cell.cell_contents)
        except _ValueError:
            return None

    def function_state(function):
        cells = function.__closure__
        return (function.__code__, _id(function.__defaults__), _id(function.__kwdefaults__),
                _tuple(_map(cell_id, cells)) if cells else None, _tuple(function.__dict__))

    method_names = {}  # id(class) -> names its MRO binds to code (what an instance attribute could shadow)

    def shadowed(obj):
        """Instance attributes of ``obj`` (of a trusted class) that hide a method of its class."""
        t = _type(obj)
        names = method_names.get(_id(t))
        if names is None:
            names = _frozenset(k for c in _class_mro(t) for k, v in _list(_class_dict(c).items())
                               if _type(v) is _FunctionType or _type(v) is _classmethod or _type(v) is _staticmethod)
            method_names[_id(t)] = names
        return [k for k in _list(_instance_dict(obj, "__dict__")) if k in names]

    def plain_function(obj):
        if _type(obj) is _MethodType:
            obj = obj.__func__
        return obj if _type(obj) is _FunctionType else None

    def bind_item(item, node_id):
        """An item of a verified test file: its function must be code of that file, named as its id says."""
        if _type(node_id) is not _str or _id(item) in items:
            return f"a collected test was reported twice or with a non-string id ({key_text(node_id)})"
        if not _any(_type(item) is t for t in state["codes"]["item_types"]):
            return None if not scored(node_id) else f"{node_id}: a test item of type {name_of(item)}"
        function = plain_function(_instance_dict(item, "__dict__").get("_obj"))
        if function is None:
            return None if not scored(node_id) else f"{node_id}: its test object is not a function"
        code = function.__code__
        if _id(code) not in verified:
            return None if not scored(node_id) else (
                f"{node_id}: its function ({code.co_filename}:{code.co_qualname}) is not code of a verified test file")
        for marker in ("place_as", "compat_co_firstlineno", "__wrapped__"):
            if marker in function.__dict__:
                return f"{node_id}: its function carries {marker!r}"
        keep.append(item)
        items[_id(item)] = [item, node_id, function, function_state(function), False]
        namespace = function.__globals__
        if _id(namespace) in module_dicts and _id(namespace) not in watched_modules:
            watch_module(namespace)
        return None

    def watch_module(namespace):
        """Snapshot a verified test module's namespace and the classes its own code defines."""
        watched_modules.add(_id(namespace))
        label = module_dicts[_id(namespace)]
        watched.append(row(f"test module {label}", namespace, namespace))
        for value in _list(namespace.values()):
            if _type(value) is _type and _id(value) not in protected_classes:
                functions = [v for v in _list(_class_dict(value).values()) if _type(v) is _FunctionType]
                if functions and _any(_id(f.__code__) in verified for f in functions):
                    protected_classes[_id(value)] = value
                    watched.append(row(f"test class {_class_qualname(value)}", value, _class_dict(value)))

    _WATCHED_HOOKS = ("pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
                      "pytest_runtest_makereport", "pytest_runtest_logreport", "pytest_pyfunc_call", "pytest_fixture_setup",
                      "pytest_fixture_post_finalizer", "pytest_report_teststatus", "pytest_runtest_logstart",
                      "pytest_runtest_logfinish", "pytest_exception_interact", "pytest_sessionfinish",
                      "pytest_runtestloop", "pytest_assertion_pass", "pytest_warning_recorded")

    def hook_impls(names):
        """(name, ids of the implementations, ids of their functions) of pluggy's hooks, checked as they are read."""
        codes, relay = state["codes"], state.get("relay")
        if relay is None:
            return ()
        callers = _instance_dict(relay, "__dict__")
        rows = []
        for name in (names if names is not None else _list(callers)):
            caller = callers.get(name)
            if caller is None:
                continue
            if _type(caller) is not codes["hook_caller_type"]:
                violate(f"pluggy's hook {key_text(name)} was replaced by a {name_of(caller)}")
                continue
            impls = codes["hookimpls_of"](caller)
            if _type(impls) is not _list:
                violate(f"pluggy's hook {key_text(name)} has a {name_of(impls)} of implementations")
                continue
            functions = []
            for impl in impls:
                function = codes["function_of"](impl) if _type(impl) is codes["hook_impl_type"] else None
                plain = plain_function(function)
                if plain is None or is_submission(plain.__code__):
                    where_ = f"{plain.__code__.co_filename}" if plain is not None else f"a {name_of(function)}"
                    violate(f"an implementation of {key_text(name)} is not pytest's, a plugin's or a verified conftest's ({where_})")
                functions.append(_id(function))
            rows.append((name, _tuple(_map(_id, impls)), _tuple(functions)))
        return _tuple(rows)

    def all_pairs(found):
        for pair in found:
            if _type(pair) is not _tuple or _len(pair) != 2:
                return False
        return True

    def scored(node_id):
        return node_id in scored_ids or node_id.split("::", 1)[0] in scored_files

    # -- pytest's own flow ------------------------------------------------------------------

    def from_pytest(caller, expected):
        """Why ``caller`` is not the runner's code called by pluggy called by one of ``expected``, or None."""
        codes = state["codes"]
        if codes is None or caller is None or _id(caller.f_code) not in codes["runner"]:
            return f"an event claiming to be the runner's came from {where(caller)}"
        frame = caller.f_back
        while frame is not None and _id(frame.f_code) in codes["pluggy"]:
            frame = frame.f_back
        if frame is None or _id(frame.f_code) not in codes[expected]:
            return f"the runner's {caller.f_code.co_name} was not called by pytest's own flow ({where(frame)})"
        if _get_ident() != _main_ident:
            return "an event of the runner came from another thread"
        bad = submission_frame(caller)
        if bad is not None:
            return f"an event of the runner was raised while submission code ran ({where(bad)})"
        return None

    def outcome_of(when, outcome):
        if _type(outcome) is not _str:
            return "error"
        if when == "call":
            return outcome if outcome in ("passed", "failed", "skipped") else "error"
        if outcome == "passed":
            return None
        return "skipped" if outcome == "skipped" else "error"

    def record(node_id, outcome):
        if scored(node_id):
            old = ledger.get(node_id)
            if old is None or _RANK[outcome] > _RANK[old]:
                ledger[node_id] = outcome

    def on_init(args, caller):
        if state["codes"] is not None or state["armed"] or kind_of_file(caller.f_code.co_filename) != "trusted":
            return "the runner's init came twice, late or from elsewhere"
        runner_codes, pluggy_codes, pytest_codes, roots = args
        state["roots"] = _tuple(r.rstrip("/") + "/" for r in roots)
        kinds.clear()
        keep.extend((runner_codes, pluggy_codes, pytest_codes))
        codes = {"runner": {_id(c): c for c in runner_codes}, "pluggy": {_id(c): c for c in pluggy_codes}}
        for key, value in pytest_codes.items():
            codes[key] = {_id(c): c for c in value} if key.endswith(("_callers", "_readers")) else value
        state["codes"] = codes
        compile_grader_files()
        return None

    def on_runner(op, args, caller):  # noqa: C901, PLR0911, PLR0912 - one branch per runner event
        if _type(op) is not _str:
            return f"a runner event named by a {name_of(op)}"
        if op == "init":
            return on_init(args, caller)
        codes = state["codes"]
        if codes is None or caller is None or _id(caller.f_code) not in codes["runner"]:
            return f"a runner event ({op}) came from {where(caller)}"
        if op == "finish":
            if submission_frame(caller) is not None or _get_ident() != _main_ident:
                return "the finish event came from elsewhere"
            if not state.get("checked"):
                violate("the session never finished (no final check ran)")
            finish(args[0])
            return None
        if op == "sessionfinish":
            why = from_pytest(caller, "main_callers")
            if why:
                return why
            state["checked"] = True
            check_everything()
            hook_impls(None)
            return None
        if op == "collect_error":
            path = args[0]
            if _type(path) is _str:
                for test_id in scored_ids:
                    if test_id.split("::", 1)[0] == path:
                        record(test_id, "error")
            return None
        if op == "monkeypatch":
            if submission_frame(caller) is not None:
                return "pytest's monkeypatch was used by code of the submission"
            if _type(args[0]) is not _list:
                return "a monkeypatch event without its list of owners"
            for owner in args[0]:
                accept_change(owner)
            return None
        if op == "collected":
            why = from_pytest(caller, "main_callers")
            if why:
                return why
            found = args[0]
            if _type(found) is not _list or not all_pairs(found):
                return "a collection event without its list of (item, node id) pairs"
            for item, node_id in found:
                problem = bind_item(item, node_id)
                if problem:
                    violate(problem)
            return None
        if op == "hooks":
            why = from_pytest(caller, "main_callers")
            if why:
                return why
            if _type(args[0]) is not codes["hook_relay_type"]:
                return f"the hook relay is a {name_of(args[0])}"
            state["relay"] = args[0]
            keep.append(args[0])
            hook_impls(None)  # every implementation of every hook, once, as collection ends
            state["impls"] = hook_impls(_WATCHED_HOOKS)
            return None
        if op == "begin":
            why = from_pytest(caller, "protocol_callers")
            if why:
                return why
            bound = items.get(_id(args[0]))
            if bound is None or bound[4]:
                state["current"], state["item"], state["phases"] = None, None, None
                return None if bound is None else f"{bound[1]} was run twice"
            bound[4] = True
            state["current"], state["item"], state["phases"] = bound[1], args[0], []
            return None
        if op == "end":
            why = from_pytest(caller, "protocol_callers")
            if why:
                return why
            if state["current"] is not None and "call" not in state["phases"] and "skipped" not in state["phases"]:
                record(state["current"], "error")  # set up and never called: not a pass
            state["current"], state["item"], state["phases"] = None, None, None
            return None
        if op == "call":
            why = from_pytest(caller, "call_callers")
            if why or state["current"] is None:
                return why
            bound = items[_id(state["item"])]
            if args[0] is not state["item"] or plain_function(_instance_dict(args[0], "__dict__").get("_obj")) is not bound[2]:
                violate(f"{bound[1]}: the function called is not the one collected")
            hidden = shadowed(args[0])
            if hidden:
                violate(f"{bound[1]}: its item's {', '.join(_map(key_text, hidden))} hidden by an instance attribute")
            compare(watched, identity=True)
            return None
        if op == "report":
            why = from_pytest(caller, "report_callers")
            if why or state["current"] is None:
                return why
            report, node_id, when, outcome = args
            if _type(report) is not codes["report_type"]:
                return f"a report of type {name_of(report)} was logged"
            if _type(node_id) is not _str or node_id != state["current"] or _type(when) is not _str \
                    or when not in ("setup", "call", "teardown") or when in state["phases"]:
                return f"a report for {key_text(node_id)} ({key_text(when)}) arrived out of order"
            state["phases"].append(when)
            bound = items[_id(state["item"])]
            if function_state(bound[2]) != bound[3]:
                violate(f"{bound[1]}: its function's code, defaults, closure or attributes changed")
            compare(watched, identity=True)
            if hook_impls(_WATCHED_HOOKS) != state.get("impls"):
                violate("the implementations of pytest's run-test hooks changed after collection")
            outcome = outcome_of(when, outcome)
            if outcome == "skipped":
                state["phases"].append("skipped")
            if outcome is not None:
                record(node_id, outcome)
            return None
        return f"an unknown runner event {key_text(op)}"

    def finish(exit_code):
        state["finished"] = True
        code = exit_code if _type(exit_code) is _int else 3
        record_json = ", ".join(f"{jstr(k)}: {jstr(v)}" for k, v in _sorted(ledger.items()))
        payload = (f'{{"exit_code": {code}, "record": {{{record_json}}}, '
                   f'"violations": [{", ".join(_map(jstr, violations))}]}}')
        data = ("\n" + nonce + payload + nonce + "\n").encode("utf-8")
        while data:
            data = data[_write(1, data):]
        _exit(code)

    def jstr(text):
        return '"' + text.translate(_JSON_ESCAPES) + '"'

    def file_bytes(path):
        fd = _os_open(path, _O_RDONLY)
        try:
            chunks = []
            while chunk := _os_read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            _os_close(fd)

    # -- the audited operations -------------------------------------------------------------

    def on_exec(code, caller):
        filename = code.co_filename
        kind = kind_of_file(filename)
        if kind == "trusted":
            return None
        if not state["armed"] and (kind == "grader" or (_type(filename) is _str and filename.startswith("/"))):
            state["armed"] = True  # first contact: the first code that is not trusted is about to run
            take_snapshot()
        if kind == "grader" and code.co_name == "<module>" and _id(code) not in verified:
            if not verify_module(code, caller):
                return _ImportError, f"the code run as {code.co_filename} is not the code of that file"
        return None

    def on_compile(source, filename):
        if _type(filename) is _bytes:
            filename = filename.decode("utf-8", "surrogateescape")
        if state["codes"] is None or kind_of_file(filename) != "trusted":
            return None  # submission names are harmless; grader modules are compared with their bytes at exec
        if _type(source) is _str:
            source = source.encode("utf-8", "surrogateescape")
        try:
            if _type(source) is _bytes and file_bytes(filename) == source:
                return None
        except _OSError:
            pass
        return _RuntimeError, f"code compiled as {filename} is not that file's code"

    def on_unmarshal(event, caller):
        codes = state["codes"]
        if codes is None:
            return None
        if caller is not None and _id(caller.f_code) in codes["bytecode_readers"]:
            loader = caller.f_back
            if _id(caller.f_code) in codes["pytest_pyc_readers"]:
                return None  # pytest's cache of a rewritten test module: compared with its bytes at exec
            if loader is not None and loader.f_code.co_name == "get_code" and \
                    _type(loader.f_locals.get("self")) is codes["source_loader"]:
                return None  # importlib's own bytecode cache of a source file (its filename is fixed to the source)
        return _RuntimeError, f"{event} is not allowed while tests are judged ({where(caller)})"

    def on_setattr(target, name, caller):
        t = _type(target)
        if t is _FunctionType:
            if name in ("__code__", "__defaults__", "__kwdefaults__") and state["armed"] and \
                    not is_submission(target.__code__) and not deliberate(caller, (name,)):
                return _PermissionError, f"{name} of {target.__code__.co_filename}:{target.__code__.co_name} assigned ({where(caller)})"
            return None
        if name == "__class__" and (_id(t) in protected_classes or _id(target) in protected_modules):
            return _PermissionError, f"__class__ of a {_class_name(t)} assigned ({where(caller)})"
        if t is not _FunctionType and _id(target) in protected_classes and state["armed"]:
            return _PermissionError, f"{key_text(name)} of class {_class_qualname(target)} assigned ({where(caller)})"
        return None

    def deliberate(caller, names):
        """Trusted code doing this itself: it names the operation (a callback of builtins does not)."""
        return caller is not None and kind_of_file(caller.f_code.co_filename) == "trusted" and \
            _any(n in caller.f_code.co_names for n in names)

    def last_part(path):
        if _type(path) is _bytes:
            path = path.decode("latin-1")
        return path.rstrip("/").rsplit("/", 1)[-1] if _type(path) is _str else None

    def dispatch(event, args):  # noqa: C901, PLR0911 - one branch per audited operation
        """None to allow ``event``, or (exception type, message) to refuse it as a violation."""
        if event == "open":
            if last_part(args[0]) == "mem":
                return _PermissionError, f"opening {args[0]!r} is not allowed while tests are judged"
            return None
        caller = _getframe(3)  # dispatch <- guarded <- hook <- the code that raised the event
        if event in _DENY_ALWAYS:
            return _RuntimeError, f"{event} is not allowed while tests are judged ({where(caller)})"
        if state["codes"] is None:  # before init only the runner's own trusted start-up runs
            return on_runner(args[0], args[1:], caller) if event == "repogym.judge" and args else None
        if event == "object.__getattr__" or event == "sys._getframe":
            name = args[1] if event == "object.__getattr__" else "_getframe"
            error = _AttributeError if event == "object.__getattr__" else _ValueError
            if caller is None or name not in caller.f_code.co_names:
                return error, f"{name} obtained by code that does not name it ({where(caller)})"
            holder = holder_of_frames(caller)
            if holder is not None and is_submission(holder.f_code):
                return error, f"a frame ({name}) reached code of the submission ({where(holder)})"
            return None
        if event == "exec":
            return on_exec(args[0], caller) if _type(args[0]) is _CodeType else None
        if event == "import":
            name, filename = args[0], args[1]
            if state["codes"] is not None and _type(name) is _str and name.split(".", 1)[0] in _FORBIDDEN_IMPORTS:
                return _ImportError, f"importing {name} is not allowed while tests are judged"
            if filename is not None and state["codes"] is not None and kind_of_file(filename) != "trusted":
                return _ImportError, f"the native extension {filename} is outside the interpreter's installation"
            return None
        if event.startswith("ctypes."):
            return _PermissionError, f"{event} is not allowed while tests are judged"
        if event == "compile":
            return on_compile(args[0], args[1])
        if event == "marshal.loads" or event == "marshal.load":
            return on_unmarshal(event, caller)
        if event == "code.__new__":
            if kind_of_file(args[1]) != "submission" and not deliberate(caller, ("replace", "CodeType")):
                return _RuntimeError, f"code built to claim {args[1]!s} ({where(caller)})"
            return None
        if event == "function.__new__":
            code = args[0]
            if state["armed"] and _type(code) is _CodeType and not is_submission(code):
                return _RuntimeError, f"a function built from code of {code.co_filename} ({where(caller)})"
            return None
        if event == "object.__setattr__":
            return on_setattr(args[0], args[1], caller)
        if event == "os.symlink":
            target = args[0].decode("latin-1") if _type(args[0]) is _bytes else args[0]
            if _type(target) is _str and ("proc" in target.split("/") or last_part(target) == "mem"):
                return _PermissionError, f"a symlink to {target!r} is not allowed while tests are judged"
            return None
        if event == "repogym.judge":
            why = on_runner(args[0], args[1:], caller) if args else "an empty runner event"
            return None if why is None else (_RuntimeError, why)
        return None

    def guarded(event, args):
        ident = _get_ident()
        if ident in busy or (state["finished"] and event != "repogym.judge"):
            return None
        busy.add(ident)
        try:
            verdict = dispatch(event, args)
        except _BaseException as exc:  # noqa: BLE001 - a fault of the policy itself fails closed
            verdict = _RuntimeError, f"the judge's policy failed on {event}: {name_of(exc)}"
        finally:
            busy.discard(ident)
        if verdict is not None:
            violate(verdict[1])
        return verdict

    def hook(event, args, _guarded=guarded, _frame_attrs=_FRAME_ATTRS, _getattr_event="object.__getattr__"):
        # The one frame of the policy an exception carries out: nothing secret in its locals.
        if event == _getattr_event and args[1] not in _frame_attrs:
            return  # __code__ reads and the like: frequent and harmless
        denied = _guarded(event, args)
        if denied is not None:
            raise denied[0](denied[1])

    sys.addaudithook(hook)
