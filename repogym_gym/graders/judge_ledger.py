"""The judge's ledger: test items bound at collection, outcomes accepted only from pytest's own flow,
sealed tests' observations, and the record the hook writes at the end (part of :mod:`judge_policy`).

:func:`build` adds ``on_runner`` (the runner's ``repogym.judge`` events) and ``on_observe`` (a sealed
test's ``observe`` event) to the policy's state ``J``;
no closure here looks a global up.
"""


def build(J):  # noqa: C901, N803, PLR0915 - J is the policy's closure state
    """Add ``on_runner`` to ``J``."""
    _type, _id, _str, _int, _tuple, _list, _map, _any, _len, _sorted, _frozenset, _ValueError = (
        J["type"], J["id"], J["str"], J["int"], J["tuple"], J["list"], J["map"], J["any"], J["len"], J["sorted"],
        J["frozenset"], J["ValueError"])
    _set, _dict = J["set"], J["dict"]
    _instance_dict, _class_mro, _get_ident, _write, _exit = (
        J["instance_dict"], J["class_mro"], J["get_ident"], J["write"], J["exit"])
    state, kinds, keep, items, ledger, violations = J["state"], J["kinds"], J["keep"], J["items"], J["ledger"], J["violations"]
    line_names = J["line_names"]
    # items: id(item) -> [item, node id, function, its state, ran, MRO of its test class,
    #                    its inputs at collection, its arguments at the end of its setup, its direct parameters,
    #                    [its function, ..., the test's own function] (trusted decorators between)]
    nonce, scored_ids, scored_files = J["nonce"], J["scored_ids"], J["scored_files"]
    (mac_inner, mac_outer), _sha256 = J["mac_pads"], J["sha256"]
    verified, module_dicts = J["verified"], J["module_dicts"]
    violate, name_of, key_text, where = J["violate"], J["name_of"], J["key_text"], J["where"]
    kind_of_file, submission_frame, compile_grader_files = J["kind_of_file"], J["submission_frame"], J["compile_grader_files"]
    check_verdict_path, accept_change, check_everything = J["check_verdict_path"], J["accept_change"], J["check_everything"]
    watch_module, hook_impls, plain_function = J["watch_module"], J["hook_impls"], J["plain_function"]
    shadowed, check_instances, check_instance_of = J["shadowed"], J["check_instances"], J["check_instance_of"]
    check_case, needs_method_evidence = J["check_case"], J["needs_method_evidence"]
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    escapes = {i: "\\u%04x" % i for i in (*range(0x20), *range(0xD800, 0xE000))}
    escapes.update({ord('"'): '\\"', ord("\\"): "\\\\"})
    watched_hooks = ("pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
                     "pytest_runtest_makereport", "pytest_runtest_logreport", "pytest_pyfunc_call", "pytest_fixture_setup",
                     "pytest_fixture_post_finalizer", "pytest_report_teststatus", "pytest_runtest_logstart",
                     "pytest_runtest_logfinish", "pytest_exception_interact", "pytest_sessionfinish",
                     "pytest_runtestloop", "pytest_assertion_pass", "pytest_warning_recorded")

    def cell_id(cell):
        try:
            return _id(cell.cell_contents)
        except _ValueError:
            return None

    def function_state(function):
        cells = function.__closure__
        # its __dict__ may be any dict subclass (assignable): read as a plain dict, never iterated itself
        return (function.__code__, _id(function.__defaults__), _id(function.__kwdefaults__),
                _tuple(_map(cell_id, cells)) if cells else None, _tuple(J["plain"](function.__dict__)))

    def scored(node_id):
        return node_id in scored_ids or node_id.split("::", 1)[0] in scored_files

    def bind_item(item, node_id, direct):
        """Bind a collected item to its node id and its function, which must be verified grader code."""
        if _type(node_id) is not _str or _id(item) in items:
            return f"a collected test was reported twice or with a non-string id ({key_text(node_id)})"
        if not _any(_type(item) is t for t in state["codes"]["item_types"]):
            return None if not scored(node_id) else f"{node_id}: a test item of type {name_of(item)}"
        obj = _instance_dict(item, "__dict__").get("_obj")
        function = plain_function(obj)
        if function is None:
            return None if not scored(node_id) else f"{node_id}: its test object is not a function"
        classes = _class_mro(_type(obj.__self__)) if _type(obj) is J["MethodType"] else ()
        chain = wrapped_chain(function)
        code = chain[-1].__code__
        if _id(code) not in verified:
            return None if not scored(node_id) else (
                f"{node_id}: its function ({J['safe'](code.co_filename, 80)}:{J['safe'](code.co_qualname, 60)}) is not "
                "code of a verified test file")
        own = _instance_dict(chain[-1], "__dict__")  # exact-str keys: a planted key's __eq__ never runs here
        for marker in ("place_as", "compat_co_firstlineno", "__wrapped__"):
            if marker in own:
                return f"{node_id}: its function carries {marker!r}"
        named = misnamed(node_id, code, classes)
        if named:
            return named
        if _any(c is state["codes"]["testcase_type"] for c in classes) and _type(item) is not state["codes"]["item_types"][1]:
            return f"{node_id}: a unittest case collected as a {name_of(item)}, not as pytest's unittest item"
        keep.append(item)
        items[_id(item)] = [item, node_id, function, chain_state(chain), False, classes, test_inputs(item), None,
                            _frozenset(d for d in direct if _type(d) is _str), chain]
        if _id(chain[-1].__globals__) in module_dicts:
            watch_module(chain[-1].__globals__)
        return None

    def misnamed(node_id, code, classes):
        """Why the test function is not the one its id names, or None: ``file::A::test_x[p]`` names
        ``A.test_x`` (or ``test_x`` of a class in ``A``'s MRO). A name rebound to another test of the
        file before collection (a module ``__getattr__`` planted in the test module while it ran) ran
        that test's body under this one's id. A function of another name counts only where the
        file defines none of this one's (a test made by a factory)."""
        parts = node_id.split("::")
        name = parts[-1].split("[", 1)[0]
        expected = ".".join([*parts[1:-1], name])
        defined = J["qualnames"].get(code.co_filename, _frozenset())
        if code.co_qualname == expected:
            return None
        owners = _set(J["class_qualname"](c) for c in classes)
        owner, _, own_name = code.co_qualname.rpartition(".")
        if own_name == name and owner in owners:
            return None  # inherited from a test class of the item's class's MRO
        if expected in defined or (not parts[1:-1] and name in defined):
            return f"{node_id}: it would run {code.co_qualname}, another test of its file"
        return None

    def wrapped_chain(function):
        """``[function, ..., the test's own function]``: a test decorated in its file by trusted code
        (``unittest.mock.patch``, ``unittest.skip``, ``functools.wraps``) is that code's wrapper, and
        ``__wrapped__`` leads from each trusted wrapper to what it wraps."""
        chain = [function]
        while _len(chain) < 8 and _id(function.__code__) not in verified and \
                kind_of_file(function.__code__.co_filename) == "trusted":
            inner = plain_function(J["plain"](function.__dict__).get("__wrapped__"))
            if inner is None:
                break
            chain.append(inner)
            function = inner
        return chain

    def chain_state(chain):
        return _tuple(_map(function_state, chain))

    def pytest_caller(caller):
        """The first frame below ``caller`` that is not pluggy's (who called the hook)."""
        frame = caller.f_back
        while frame is not None and _id(frame.f_code) in state["codes"]["pluggy"]:
            frame = frame.f_back
        return frame

    def from_pytest(caller, expected):
        """Why ``caller`` is not the runner's code called by pluggy called by one of ``expected``, or None."""
        frame = pytest_caller(caller)
        if frame is None or not _any(_id(frame.f_code) in state["codes"][key] for key in expected.split("|")):
            return f"the runner's {caller.f_code.co_name} was not called by pytest's own flow ({where(frame)})"
        if _get_ident() != state["judged_ident"]:
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
            if old is None or rank[outcome] > rank[old]:
                ledger[node_id] = outcome

    def path_types():
        """Ids of the path classes an open may be given while tests are judged: pathlib's and pytest's
        ``LocalPath``, exactly, as their trusted modules hold them before any task code runs."""
        found = {}
        for module_name, names in (("pathlib", ("PurePath", "PurePosixPath", "PosixPath", "Path")),
                                   ("_pytest._py.path", ("LocalPath",))):
            module = J["plain_modules"]().get(module_name)
            if _type(module) is not J["ModuleType"]:
                continue
            namespace = _instance_dict(module, "__dict__")
            filename = namespace.get("__file__")
            if _type(filename) is not J["str"] or kind_of_file(filename) != "trusted":
                continue
            for name in names:
                cls = namespace.get(name)
                if _type(cls) is _type:
                    found[_id(cls)] = cls
            if module_name == "pathlib" and _type(namespace.get("PurePath")) is _type:
                slot = J["raw_class_dict"](namespace["PurePath"]).get("_str")  # a member descriptor: C reads it
                state["path_str_slot"] = slot.__get__ if J["class_name"](_type(slot)) == "member_descriptor" else None
        keep.append(found)
        return J["frozenset"](found)

    def on_init(args, caller):
        if state["codes"] is not None or state["armed"] or caller is None or \
                kind_of_file(caller.f_code.co_filename) != "trusted":
            return "the runner's init came twice, late or from elsewhere"
        runner_codes, pluggy_codes, pytest_codes, roots = args
        state["roots"] = _tuple(r.rstrip("/") + "/" for r in roots)
        kinds.clear()
        keep.extend((runner_codes, pluggy_codes, pytest_codes))
        codes = {"runner": {_id(c): c for c in runner_codes}, "pluggy": {_id(c): c for c in pluggy_codes}}
        for key, value in pytest_codes.items():
            codes[key] = {_id(c): c for c in value} if key.endswith(("_callers", "_readers")) else value
        state["codes"] = codes
        state["plugins"] = {}  # id -> every plugin announced as it was registered (by pytest, the runner, the grader)
        state["made"] = {}  # id(HookImpl) -> (impl, hook name) for every implementation pluggy's register made
        state["judged_ident"] = _get_ident()  # the thread pytest runs in: every later runner event comes from it
        state["path_types"] = path_types()
        compile_grader_files()
        return None

    def on_collected(found):
        if _type(found) is not _list:
            return "a collection event without its list of (item, node id) pairs"
        for row in found:
            if _type(row) is not _tuple or _len(row) != 3 or _type(row[2]) is not _tuple:
                return "a collection event without its list of (item, node id, direct parameters) rows"
        for item, node_id, direct in found:
            problem = bind_item(item, node_id, direct)
            if problem:
                violate(problem)
        return None

    def on_hooks(relay, session):
        codes = state["codes"]
        if _type(relay) is not codes["hook_relay_type"]:
            return f"the hook relay is a {name_of(relay)}"
        if _type(session) is not codes["session_type"]:
            return f"the session is a {name_of(session)}"
        state["relay"], state["session"] = relay, session
        config = codes["node_slot"]["config"](session)
        manager = _instance_dict(config, "__dict__").get("pluginmanager") if _type(config) is codes["config_type"] else None
        if _type(manager) is not codes["plugin_manager_type"]:
            return "the session's config or plugin manager is not pytest's"
        callers = [c for c in _list(_instance_dict(relay, "__dict__").values()) if _type(c) is codes["hook_caller_type"]]
        # os.environ too: pytest writes PYTEST_CURRENT_TEST through its encode functions on every phase
        state["instances"] = [session, config, manager, relay, *callers, codes["environ"]]
        keep.extend(state["instances"])
        hook_impls(None)  # every implementation of every hook, once, as collection ends
        state["impls"] = hook_impls(watched_hooks)
        return None

    def test_inputs(item):
        """What a test's call will receive, by identity: its parameters and its collected arguments."""
        local = _instance_dict(item, "__dict__")
        callspec = local.get("callspec")
        params = _instance_dict(callspec, "__dict__").get("params") if callspec is not None else None
        funcargs = local.get("funcargs")
        return (_id(callspec), _tuple((name_key(k), _id(v)) for k, v in _list(params.items())) if _type(params) is _dict else None,
                _tuple((name_key(k), _id(v)) for k, v in _list(funcargs.items())) if _type(funcargs) is _dict else None)

    def name_key(key):  # compared and hashed by the judge: a key of another type is never this dict's key's own
        return key if _type(key) is _str else f"<a key of another type #{_id(key)}>"

    def on_begin(item):
        bound = items.get(_id(item))
        if bound is None or bound[4]:
            state["current"], state["item"], state["phases"] = None, None, None
            return None if bound is None else f"{bound[1]} was run twice"
        bound[4] = True
        state["current"], state["item"], state["phases"] = bound[1], item, []
        return None

    def on_end():
        if state["current"] is not None and "call" not in state["phases"] and "skipped" not in state["phases"]:
            record(state["current"], "error")  # set up and never called: not a pass
        state["current"], state["item"], state["phases"] = None, None, None
        return None

    def on_call(item):
        if state["current"] is None:
            return None
        state["raised"], state["clean"], state["method_ran"], state["part_raised"] = False, False, False, False
        state["func_ran"], state["pyfunc_obj"] = False, None
        bound = items[_id(state["item"])]
        if item is not state["item"] or plain_function(_instance_dict(item, "__dict__").get("_obj")) is not bound[2]:
            violate(f"{bound[1]}: the function called is not the one collected")
        slot = state["codes"]["node_slot"]
        if slot["session"](item) is not state.get("session") or slot["config"](item) is not slot["config"](state["session"]):
            violate(f"{bound[1]}: its item's session or config is not pytest's")
        hidden = shadowed(item)
        if hidden:
            violate(f"{bound[1]}: its item's {', '.join(_map(key_text, hidden))} hidden by an instance attribute")
        check_instance_of(item, bound)
        now = test_inputs(item)
        if now[0] != bound[6][0] or now[1] != bound[6][1]:
            violate(f"{bound[1]}: its parameters changed after collection")
        elif bound[7] is not None and now[2] != bound[7]:
            violate(f"{bound[1]}: its arguments changed between its setup and its call")
        elif bound[8] and now[1] is not None and now[2] is not None:
            params, args = _dict(now[1]), _dict(now[2])
            if _any(args.get(name) != params.get(name) for name in bound[8]):
                violate(f"{bound[1]}: it would be called with other values than it is parametrized with")
        check_instances()
        return None

    def on_returned(item, clean):
        if state["current"] is None:
            return None
        if item is not state["item"] or "returned" in state["phases"]:
            return f"{state['current']}: its call ended twice or for another item"
        state["phases"].append("returned")
        state["clean"] = clean is True and not state.get("raised")
        return None

    def on_pyfunc(args, caller, returned):
        """pytest's ``pytest_pyfunc_call`` (the runner's wrapper of it) is about to call, or has called,
        a plain test's function: the function must be the bound item's own, and its return is the
        evidence a plain test's pass needs."""
        item, function = args
        if state["current"] is None or item is not state["item"]:
            return None
        bound = items[_id(item)]
        if submission_frame(caller) is not None:
            return f"{bound[1]}: pytest's pyfunc call was reached from code of the submission"
        if not returned:
            if plain_function(function) is not bound[2] or function is not _instance_dict(item, "__dict__").get("_obj"):
                return f"{bound[1]}: the function pytest was about to call is not the one collected"
            state["pyfunc_obj"] = function
        elif function is state.get("pyfunc_obj") and function is not None:
            state["func_ran"] = True
        return None

    def on_method(case, method, caller):
        """unittest's ``_callTestMethod`` returned for ``case``: evidence of a pass if the method is the
        bound item's own test method on the item's case, called by unittest with no submission code
        on the stack."""
        if state["current"] is None or submission_frame(caller) is not None:
            return None
        bound = items[_id(state["item"])]
        if _type(method) is J["MethodType"] and method.__self__ is case and plain_function(method) is bound[2]:
            state["method_ran"] = True
        return None

    def on_subtest(report, node_id, when, outcome, caller):
        """A unittest ``subTest`` (or pytest ``subtests``) report, logged by pytest during the call: a
        failing subtest fails its test; a passing one proves nothing about it."""
        if _type(report) is not state["codes"]["subtest_report_type"] or _type(node_id) is not _str \
                or node_id != state["current"] or _type(when) is not _str or when != "call" \
                or "call" in state["phases"]:
            return f"a subtest report for {key_text(node_id)} ({key_text(when)}) arrived out of order"
        if outcome_of(when, outcome) in ("failed", "error"):
            record(node_id, "failed")
        return None

    def on_report(report, node_id, when, outcome, caller):
        if state["current"] is None:
            return None
        if _id(pytest_caller(caller).f_code) in state["codes"]["subtest_callers"]:
            return on_subtest(report, node_id, when, outcome, caller)
        if _type(report) is not state["codes"]["report_type"]:
            return f"a report of type {name_of(report)} was logged"
        if _type(node_id) is not _str or node_id != state["current"] or _type(when) is not _str \
                or when not in ("setup", "call", "teardown") or when in state["phases"]:
            return f"a report for {key_text(node_id)} ({key_text(when)}) arrived out of order"
        state["phases"].append(when)
        outcome = outcome_of(when, outcome)
        if when == "setup":
            items[_id(state["item"])][7] = test_inputs(state["item"])[2]
        if when == "call" and outcome == "passed":  # the one report that can make a pass: check before it counts
            bound = items[_id(state["item"])]
            if "returned" not in state["phases"] or not state.get("clean"):
                violate(f"{bound[1]}: reported passed, but its call raised or never returned")
                outcome = "failed"
            elif _type(state["item"]) is state["codes"]["item_types"][1] and not state.get("method_ran") \
                    and needs_method_evidence(bound):
                violate(f"{bound[1]}: reported passed, but unittest never called its test method")
                outcome = "failed"
            elif _type(state["item"]) is state["codes"]["item_types"][0] and not state.get("func_ran"):
                violate(f"{bound[1]}: reported passed, but pytest never called its test function")
                outcome = "failed"
            if plain_function(_instance_dict(state["item"], "__dict__").get("_obj")) is not bound[2]:
                violate(f"{bound[1]}: its item's function is not the one collected")
            if chain_state(bound[9]) != bound[3]:
                violate(f"{bound[1]}: its function's code, defaults, closure or attributes changed")
            check_verdict_path(bound[9][-1].__globals__, bound[5])
            if hook_impls(watched_hooks) != state.get("impls"):
                violate("the implementations of pytest's run-test hooks changed after collection")
            check_instances()
            check_case(bound)
            hidden = shadowed(state["item"])
            if hidden:
                violate(f"{bound[1]}: its item's {', '.join(_map(key_text, hidden))[:200]} hidden by an instance attribute")
            check_instance_of(state["item"], bound)
        if outcome == "skipped":
            state["phases"].append("skipped")
        if outcome is not None:
            record(node_id, outcome)
        return None

    #: MonkeyPatch's own methods that call another of them, and the method each one calls
    inner_calls = {"setitem": ("setenv",), "delitem": ("delenv",), "undo": ("monkeypatch", "context")}
    #: pytest's own plugins that patch pytest with a MonkeyPatch as it starts
    pytest_patchers = (("/_pytest/tmpdir.py", "/_pytest/legacypath.py"), ("pytest_configure", "pytest_load_initial_conftests"))

    def patched_by_grader(frame, method):
        """Why a change made through pytest's ``MonkeyPatch.<method>`` is not the grader's, or None: the
        method's caller must be verified grader code at a line that names it (or MonkeyPatch itself:
        ``setenv``, the fixture's teardown, ``context``). Red-team round 25 called it from a garbage-collector
        finalizer, with no frame of the submission on the stack, and pytest's modules took what it set."""
        hops = 0
        while frame is not None and hops < 4:
            hops += 1
            code = frame.f_code
            trusted = _id(code) not in verified and kind_of_file(code.co_filename) == "trusted"
            if method == "monkeypatch":  # the monkeypatch fixture's teardown, resumed by pytest
                if trusted and code.co_filename.endswith("/_pytest/fixtures.py"):
                    return None
                break
            if method == "context" and trusted and code.co_filename.endswith("/contextlib.py") and code.co_name == "__exit__":
                frame = frame.f_back  # the end of a `with monkeypatch.context()` block: that line names context
                continue
            if method not in line_names(frame):
                break
            if _id(code) in verified or (trusted and code.co_filename.endswith(pytest_patchers[0]) and
                                         code.co_name in pytest_patchers[1]):
                return None
            if not (trusted and code.co_filename.endswith("/_pytest/monkeypatch.py") and code.co_name in inner_calls.get(method, ())):
                break
            method, frame = code.co_name, frame.f_back
        return f"pytest's monkeypatch was not called by grader code ({method}, {where(frame)})"

    def on_runner(op, args, caller):  # noqa: PLR0911 - one branch per runner event
        """Handle one ``repogym.judge`` event; a string says why it was refused (a violation)."""
        if _type(op) is not _str:
            return f"a runner event named by a {name_of(op)}"
        if op == "init":
            return on_init(args, caller)
        if op == "observe":  # a sealed test file's own function, not the runner's (on_observe checks it)
            return on_observe(args, caller) if state["codes"] is not None else "an observation before the run began"
        codes = state["codes"]
        if codes is None or caller is None or _id(caller.f_code) not in codes["runner"]:
            return f"a runner event ({op}) came from {where(caller)}"
        if op == "finish":
            if submission_frame(caller) is not None or _get_ident() != state["judged_ident"]:
                return "the finish event came from elsewhere"
            if not state.get("checked"):
                violate("the session never finished (no final check ran)")
            return finish(args[0])
        if op == "collect_error":
            if _type(args[0]) is _str:
                for test_id in scored_ids:
                    if test_id.split("::", 1)[0] == args[0]:
                        record(test_id, "error")
            return None
        if op == "imported":  # pytest imported a test module; its collection is about to look at its names
            if submission_frame(caller) is not None:
                return "a test module's import was announced by code of the submission"
            for namespace in J["grader_modules"]:  # it and the support modules it imported (but those that raised)
                if J["import_failed"](namespace):
                    continue
                if "_repogym_observe" in namespace and namespace.get("_repogym_audit") is not J["audit"]:
                    # the sealed prelude binds sys.audit by name: a package imported first set its own there and
                    # every observation was dropped (red-team round 25); from now on the module is watched
                    violate(f"a sealed test file's _repogym_audit is not sys.audit ({module_dicts[_id(namespace)]})")
                watch_module(namespace)
            return None
        if op == "rewriting":  # pytest installed its rewriting import hook: a grader file's plain code is refused
            J["rewriting"] = True
            return None
        if op == "monkeypatch":
            if submission_frame(caller) is not None:
                return "pytest's monkeypatch was used by code of the submission"
            if _len(args) != 2 or _type(args[0]) is not _list or _type(args[1]) is not _str:
                return "a monkeypatch event without its list of owners and its method"
            if state["armed"] and not state.get("checked"):  # (pytest's own undo at unconfigure comes after the verdict)
                why = patched_by_grader(caller.f_back, args[1])
                if why:
                    return why
            for owner in args[0]:
                accept_change(owner)
            return None
        if op == "raised":  # a unittest test part raised: it can only take a pass away
            if state["current"] is not None and args:
                state["part_raised"] = True
                if args[0] is True:
                    record(state["current"], "failed")  # a subtest failed: so did its test
                else:
                    state["raised"] = True
            return None
        if op == "part":  # a unittest test part ended without an exception: its outcome must still say success
            if state["current"] is not None and (not args or args[0] is not True) and not state.get("part_raised"):
                record(state["current"], "failed")
                return (f"{state['current']}: unittest's outcome was marked failed with no exception raised "
                        "(its test method would not run)")
            return None
        if op == "method":  # unittest's _callTestMethod returned: the test method ran
            return on_method(args[0], args[1], caller) if _len(args) == 2 else "a method event without the case and the method"
        if op == "registered":  # what pluggy's register made: the only hook implementations that count
            if _get_ident() != state["judged_ident"] or submission_frame(caller) is not None or _len(args) != 2 \
                    or _type(args[1]) is not _list:
                return "a pytest plugin was registered by code of the submission (or from another thread)"
            for row in args[1]:
                if _type(row) is _tuple and _len(row) == 2 and _type(row[0]) is _str:
                    keep.append(row[1])
                    state["made"][_id(row[1])] = (row[1], row[0])
            return None
        if op == "pyfunc":  # pytest is about to call a plain test's function
            return on_pyfunc(args, caller, False) if _len(args) == 2 else "a pyfunc event without the item and function"
        if op == "pyfunc_returned":
            return on_pyfunc(args, caller, True) if _len(args) == 2 else "a pyfunc event without the item and function"
        if op == "register":  # pluggy's register: a plugin is pytest's, the runner's or the grader's
            if _get_ident() != state["judged_ident"] or submission_frame(caller) is not None:
                return "a pytest plugin was registered by code of the submission (or from another thread)"
            if _len(args) == 1:
                keep.append(args[0])
                state["plugins"][_id(args[0])] = args[0]
            return None
        expected = {"collected": "main_callers", "hooks": "main_callers", "sessionfinish": "main_callers",
                    "begin": "protocol_callers", "end": "protocol_callers", "call": "call_callers",
                    "returned": "call_callers",
                    "report": "report_callers|subtest_callers"}.get(op)
        if expected is None:
            return f"an unknown runner event {op}"
        why = from_pytest(caller, expected)
        if why:
            return why
        if op == "sessionfinish":
            state["checked"] = True
            check_everything()
            hook_impls(None)
            return None
        if op == "report":
            return on_report(*args, caller) if _len(args) == 4 else "a report event without its four values"
        if op == "returned":
            return on_returned(*args) if _len(args) == 2 else "a returned event without its two values"
        if op == "hooks":
            return on_hooks(*args) if _len(args) == 2 else "a hooks event without the relay and the session"
        handler = {"collected": on_collected, "begin": on_begin, "call": on_call}.get(op)
        return on_end() if op == "end" else handler(args[0])

    _bool, _float, _complex, _bytes, _repr, _hex = J["bool"], J["float"], J["complex"], J["bytes"], J["repr"], J["hex"]
    _class_module, _class_qualname, _Exception = J["class_module"], J["class_qualname"], J["Exception"]
    plain, _none = (_bool, _float, _complex, _str, _bytes), _type(None)
    observed = {}  # scored node id -> [observations, chained SHA-256] of its sealed assertions

    def canon(value, depth):
        """An observed value's canonical text (:mod:`seal`): exact builtin types only, read without
        running any code of the value's own (no ``__eq__``, ``__repr__``, ``__iter__`` of a subclass)."""
        kind = _type(value)
        if depth > 64:
            return "deep"
        if kind is _int:
            return "int:" + _hex(value)  # no decimal digit limit
        if kind is _none or _any(kind is k for k in plain):
            return _class_qualname(kind) + ":" + _repr(value)
        if kind is _list or kind is _tuple:
            return _class_qualname(kind) + "[" + ",".join([canon(item, depth + 1) for item in value]) + "]"
        if kind is _set or kind is _frozenset:
            return _class_qualname(kind) + "{" + ",".join(_sorted([canon(item, depth + 1) for item in value])) + "}"
        if kind is _dict:
            return "dict{" + ",".join(_sorted([canon(k, depth + 1) + ":" + canon(v, depth + 1) for k, v in value.items()])) + "}"
        module = _class_module(kind)
        return "object:" + (module if _type(module) is _str else "?") + "." + _class_qualname(kind)

    def on_observe(args, caller):
        """A sealed test's observation, ``sys.audit("repogym.judge", "observe", slot, value)`` from its file's
        ``_repogym_observe``, chained into its test's digest for the record. Only that function of a
        verified test file makes one, with no frame of the submission on the stack (so an assertion in
        a callback the code under test calls voids the run: seal it out, or assert after the call);
        an observation on another thread or outside a scored test is not compared (nor in the golden run)."""
        if _len(args) != 2 or _type(args[0]) is not _int:
            return "an observation without its slot and value"
        if caller is None or _id(caller.f_code) not in verified or caller.f_code.co_name != "_repogym_observe":
            return f"an observation was made outside a sealed test file's own function ({where(caller)})"
        bad = submission_frame(caller)
        if bad is not None:
            return f"an observation was reached through code of the submission ({where(bad)})"
        back = caller.f_back  # the sealed test (or _repogym_raises), at a line that observes
        if back is None or _id(back.f_code) not in verified or back.f_code.co_name == "_repogym_observe" or \
                "_repogym_observe" not in line_names(back):
            # red-team round 25 had a garbage-collector finalizer call it with guessed values
            return f"an observation was not made by its sealed test ({where(back)})"
        current = state["current"]
        if _get_ident() != state["judged_ident"] or current is None or not scored(current):
            return None
        try:
            text = canon(args[1], 0)
        except _Exception as exc:  # noqa: BLE001 - a value too large to write out is one value
            text = "unreadable:" + name_of(exc)
        digest = _sha256((_hex(args[0]) + ":" + text).encode("utf-8", "surrogatepass")).digest()
        entry = observed.get(current)
        if entry is None:
            entry = observed[current] = [0, b""]
        entry[0], entry[1] = entry[0] + 1, _sha256(entry[1] + digest).digest()
        return None

    def finish(exit_code):
        code = exit_code if _type(exit_code) is _int and 0 <= exit_code <= 255 else 3
        J["note_children"]()
        J["check_native"]()
        record_json = ", ".join(f"{jstr(k)}: {jstr(v)}" for k, v in _sorted(ledger.items()))
        seen_json = ", ".join(f"{jstr(k)}: [{v[0]}, {jstr(v[1].hex())}]" for k, v in _sorted(observed.items()))
        payload = (f'{{"exit_code": {code}, "record": {{{record_json}}}, "observed": {{{seen_json}}}, '
                   f'"violations": [{", ".join(_map(jstr, violations))}], '
                   f'"compiled": [{", ".join(_map(jstr, J["compiled"]))}], '
                   f'"unmeasured": [{", ".join(_map(jstr, J["unmeasured"]))}], '
                   f'"generated": [{", ".join(_map(jstr, J["generated"]))}]}}')
        signed = payload.encode("utf-8")
        mac = _sha256(mac_outer + _sha256(mac_inner + signed).digest()).hexdigest()  # HMAC-SHA256 (RFC 2104)
        data = ("\n" + nonce).encode("utf-8") + signed + (nonce + mac + nonce + "\n").encode("utf-8")
        state["finished"] = True  # the record is built: nothing that happens now changes it
        while data:
            data = data[_write(1, data):]
        _exit(code)

    def jstr(text):
        return '"' + text.translate(escapes) + '"'

    J.update(on_runner=on_runner)
