# a06: same registration gap, with nothing bound to the submission: the plugin is a types.SimpleNamespace
# (a trusted class) whose pytest_pyfunc_call is the PLAIN trusted function tempfile.gettempdir (no
# parameters, so pluggy calls it with none). It returns os.fsdecode(tempfile.tempdir), and tempfile.tempdir
# (a data global of a module off the verdict path, compared only at the end) is an object of the
# submission whose __fspath__ decides: "/tmp" (non-None: firstresult, the test never runs) for a real
# test, an exception for a canary or the sentinel (they fail). It puts tempfile.tempdir back to None
# during the last item's call, so the end-of-session comparison finds the value it snapshotted.
def _a06():
    import dis, os, tempfile, types
    from _pytest.debugging import pytestPDB
    pm = pytestPDB._pluginmanager
    names_ops = {"LOAD_GLOBAL", "LOAD_FAST", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLOSURE"}

    def canary(function):
        lines = {}
        for ins in dis.get_instructions(function):
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

    class Dir:
        def __fspath__(self):
            current = os.environ.get("PYTEST_CURRENT_TEST", "")
            if not current.endswith(" (call)"):
                return "/tmp"
            session = pm.get_plugin("session")
            nodeid = current.rsplit(" ", 1)[0]
            item = next((i for i in session.items if i.nodeid == nodeid), None)
            if item is not None and item is session.items[-1]:
                tempfile.tempdir = None  # the snapshot's value again before the final comparison
            if item is None or "/" not in nodeid.split("::", 1)[0] or canary(item.obj):
                raise AssertionError("run for real: must fail")
            return "/tmp"

    pm.register(types.SimpleNamespace(pytest_pyfunc_call=tempfile.gettempdir), "a06")
    tempfile.tempdir = Dir()
_a06()
