# b01: a HookImpl added with HookCaller._add_hookimpl (no register call: no "register" event) whose plugin
# is a module pytest itself registered (_pytest.tmpdir) and whose function is a value of that module's
# namespace (get_user: zero arguments, returns os.environ LOGNAME): "its registered plugin's own".
# pytest_pyfunc_call is firstresult, so a non-None return means the test function never runs and the call
# returns clean: a pass (plain Function items need no evidence that the function ran).
# Selectivity (sentinel, canaries must still fail): os.environ.encodekey (an instance attribute of a
# trusted object: not audited, not snapshotted) becomes a submission function; get_user's read of LOGNAME
# goes through it, and it raises for the sentinel and for canaries (told by bytecode, a known limit).
def _b01():
    import dis, os
    import pluggy
    import _pytest.tmpdir as plugin_module
    from _pytest.debugging import pytestPDB
    pm = pytestPDB._pluginmanager
    names_ops = {"LOAD_GLOBAL", "LOAD_FAST", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE"}

    def canary(code):
        lines = {}
        for ins in dis.get_instructions(code):
            if ins.opname == "LOAD_CONST" and isinstance(ins.argval, str) and "sentinel" in ins.argval:
                return True
            ln = ins.positions.lineno if ins.positions else None
            if ln is None:
                continue
            row = lines.setdefault(ln, [set(), False, False])
            if ins.opname in names_ops and isinstance(ins.argval, str) and not ins.argval.startswith("@") \
                    and ins.argval not in ("str", "AssertionError"):
                row[0].add(ins.argval)
            if ins.opname == "LOAD_CONST" and type(ins.argval) is int:
                row[1] = True
            if ins.opname in names_ops and isinstance(ins.argval, str) and ins.argval.startswith("@"):
                row[2] = True
        return any(not names and has_int and ar for names, has_int, ar in lines.values())

    env = os.environ
    orig = env.encodekey
    current_key = orig("PYTEST_CURRENT_TEST")

    def encodekey(key):
        if key == "LOGNAME":
            raw = env._data.get(current_key, b"").decode("utf-8", "replace")
            if raw.endswith(" (call)"):
                nodeid = raw.rsplit(" ", 1)[0]
                session = pm.get_plugin("session")
                item = next((i for i in session.items if i.nodeid == nodeid), None)
                if item is None or canary(item.obj.__code__):
                    raise AssertionError("must fail")
        return orig(key)

    env["LOGNAME"] = "repogym"
    env.encodekey = encodekey
    impl = pluggy.HookImpl(plugin_module, "tmpdir", plugin_module.get_user,
                           {"wrapper": False, "hookwrapper": False, "optionalhook": False,
                            "tryfirst": True, "trylast": False, "specname": None})
    pm.hook.pytest_pyfunc_call._add_hookimpl(impl)
_b01()
