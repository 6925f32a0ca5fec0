# a04: a01 generalised to unittest cases. A plugin registered at import whose hook implementations are
# bound methods of a TRUSTED function (contextlib.nullcontext.__enter__, `return self.enter_result`)
# bound to objects of the submission:
#  - pytest_pyfunc_call (firstresult): returns True for a plain test that is not a canary/sentinel, so
#    pytest's own pytest_pyfunc_call never calls the test;
#  - pytest_runtest_call (runs before pytest's own, LIFO): for a unittest case, sets item.runtest to
#    another trusted bound method that deletes itself when pytest's runner calls it: the case never runs,
#    and no instance attribute is left when the policy looks (at "call" before, at the report after).
def _a04():
    import contextlib, dis, os
    from _pytest.debugging import pytestPDB
    pm = pytestPDB._pluginmanager
    enter = contextlib.nullcontext.__enter__
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

    def current():
        nodeid = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
        session = pm.get_plugin("session")
        return next((i for i in session.items if i.nodeid == nodeid), None)

    def wanted(item):
        return item is not None and "/" in item.nodeid.split("::", 1)[0]  # the sentinel sits at the top

    class Plain:
        @property
        def enter_result(self):
            item = current()
            if not wanted(item) or type(item).__name__ != "Function" or canary(item.obj):
                return None
            return True

    class Remover:
        def __init__(self, item):
            self.item = item

        @property
        def enter_result(self):
            self.item.__dict__.pop("runtest", None)
            return None

    class Case:
        @property
        def enter_result(self):
            item = current()
            if wanted(item) and type(item).__name__ == "TestCaseFunction":
                item.runtest = enter.__get__(Remover(item))
            return None

    plugin = type("P", (), {})()
    plugin.pytest_pyfunc_call = enter.__get__(Plain())
    plugin.pytest_runtest_call = enter.__get__(Case())
    pm.register(plugin, "a04")
_a04()
