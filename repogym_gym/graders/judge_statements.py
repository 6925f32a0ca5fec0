"""The judge's statement ledger: a grader module's namespace changes only by its own statements,
from its first statement on (part of :mod:`judge_policy`, standard library only).

Code of the submission runs while a test module's body runs (the module imports the package, calls
it, subclasses it, decorates with it) and can reach that module (``sys.modules``, a function's
``__globals__``): four red-team rounds rebound its helpers, planted bases and builtin shadows in it
between its first statement and the moment the judge began to watch it. So the judge watches it
from the start: while a verified grader module's body runs, the policy's trace function reports
each of its line events to the hook, which compares the namespace with what it was at the previous
line. A name may change only while a statement that binds it ran (its ``def``, ``class``, import
or assignment, per the file's syntax tree); a class the file defined, a list, dict, set or tuple a
statement bound, only while a statement that names it (or calls a function of the file) ran.
The last state is compared again when pytest's import returns, and names that no function of the
file declares ``global`` are compared by identity from then on.

:func:`tracer_for` is the trace function: it holds nothing but ``sys.audit`` (``sys.gettrace()``
hands it to anyone), and the hook believes an event only from it, called by the interpreter for
the frame it names. :func:`build` adds its closures to ``J``; none looks a global up.
"""


def tracer_for(audit):
    """(global trace function, local trace function): module frames only, each event passed to
    ``audit("repogym.trace", frame, event)``. Both are closure-free (``sys.gettrace()`` hands the global
    one to any code, and a closure's cell is writable with no audit event): they hold ``audit`` and the
    local one as defaults, and the local one goes on as the frame's own ``f_trace``."""

    def local(frame, event, arg, _audit=audit):
        _audit("repogym.trace", frame, event)
        return frame.f_trace

    def tracer(frame, event, arg, _audit=audit, _local=local):
        if frame.f_code.co_name == "<module>":
            _audit("repogym.trace", frame, event)
            return _local
        return None

    return tracer, local


def build(J):  # noqa: C901, N803, PLR0915 - J is the policy's closure state
    """Add ``line_table``, ``begin_statements``, ``on_trace``, ``settle_statements``,
    ``rebindable_names`` and ``import_failed`` to ``J``."""
    _type, _id, _len, _str, _tuple, _list, _dict, _set, _frozenset = (
        J["type"], J["id"], J["len"], J["str"], J["tuple"], J["list"], J["dict"], J["set"], J["frozenset"])
    _map, _zip, _min, _range, _getattr = J["map"], J["zip"], J["min"], J["range"], J["getattr"]
    _all, _is, _dict_values = J["all"], J["is_"], J["dict"].values
    _FrameType, _settrace, _get_ident, token = J["FrameType"], J["settrace"], J["get_ident"], J["token"]
    _class_dict, _class_mro, _class_qualname = J["class_dict"], J["class_mro"], J["class_qualname"]
    violate, key_text, name_of = J["violate"], J["key_text"], J["name_of"]
    module_dicts, check_group, plain_modules, _ModuleType = J["module_dicts"], J["check_group"], J["plain_modules"], J["ModuleType"]
    tracer, local = tracer_for(J["audit"])
    trace_codes = _frozenset((_id(tracer.__code__), _id(local.__code__)))
    J["keep"].extend((tracer, local))
    running = {}  # id(module code) -> its ledger while its body runs
    finished = {}  # id(namespace) -> its ledger's last state, until pytest's import returns
    raised = {}  # id(namespace) -> namespace of a grader module whose body ended by raising
    active = [0]  # module bodies being traced
    # what the import system or the warnings module add to a module's globals by themselves
    free_keys = _frozenset(("__warningregistry__", "__annotations__"))
    dynamic = _frozenset(("globals", "vars", "locals", "setattr", "delattr", "exec", "eval", "__import__",
                          "__dict__", "modules"))
    budget = 4000  # ids per container fingerprint (a larger table is compared in its first 4,000)

    # -- the file's syntax: what each line's statements bind -------------------------------------

    def line_table(ast, parsed):
        """``{"lines": {line: [bound names or None (any), inert, named, calls the file's functions]},
        "global": names a function of the file declares global}`` for a parsed (rewritten) module."""
        # statements made of these run no code but the interpreter's (a plain def: no decorator, no
        # default, no annotation that calls or looks an attribute up)
        inert_types = _frozenset((ast.Assign, ast.AnnAssign, ast.Expr, ast.Pass, ast.Constant, ast.Name, ast.Load,
                                  ast.Store, ast.List, ast.Tuple, ast.Global, ast.FunctionDef, ast.AsyncFunctionDef,
                                  ast.arguments, ast.arg))
        own_defs, declared, reaches = _set(), _set(), False
        for node in ast.walk(parsed):
            t = _type(node)
            if t is ast.Global:
                declared.update(node.names)
            elif (t is ast.Name and node.id in dynamic) or (t is ast.Attribute and node.attr in dynamic
                                                             and not pytest_helper(ast, node)):
                reaches = True  # the file reaches its own globals other than by name (anywhere in it)
        for node in parsed.body:
            if _type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
                own_defs.add(node.name)
        lines = {}
        compound = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith,
                    *((ast.TryStar,) if "TryStar" in ast.__dict__ else ()), *((ast.Match,) if "Match" in ast.__dict__ else ()))
        body_fields = ("body", "orelse", "finalbody", "handlers", "cases")

        def own_parts(node):
            """The parts of a statement that run in the module's frame: not its nested statements'
            bodies, not a def's or a class's body (a class body runs in a frame of its own)."""
            t = _type(node)
            if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                return [*node.decorator_list, *(node.bases if t is ast.ClassDef else ()),
                        *(node.keywords if t is ast.ClassDef else ()),
                        *(() if t is ast.ClassDef else (node.args,))]
            if t in compound:
                return [_getattr(node, f) for f in ("test", "target", "iter", "subject")
                        if _getattr(node, f, None) is not None] + _list(_getattr(node, "items", ()))
            return [node]

        def visit(node):
            t = _type(node)
            first = _min([node.lineno, *(d.lineno for d in _getattr(node, "decorator_list", ()))])
            last = node.end_lineno or node.lineno
            bound, inert, named, calls = _set(), t in inert_types, _set(), False
            wildcard = False
            if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                bound.add(node.name)
                inert = t is not ast.ClassDef  # a class statement calls its metaclass; a def is judged by its parts
            elif t is ast.Import or t is ast.ImportFrom:
                inert = False
                for alias in node.names:
                    if alias.name == "*":
                        wildcard = True
                    bound.add(alias.asname or alias.name.split(".", 1)[0])
            elif t is ast.Expr and _type(node.value) is ast.Constant and _type(node.value.value) is _str:
                bound.add("__doc__")
            for part in own_parts(node):
                for sub in ast.walk(part):
                    s = _type(sub)
                    if s not in inert_types:
                        inert = False
                    if s is ast.Name:
                        if _type(sub.ctx) is ast.Load:
                            named.add(sub.id)
                            if sub.id in dynamic:
                                wildcard = True
                        else:
                            bound.add(sub.id)
                    elif s is ast.Attribute and sub.attr in dynamic and not pytest_helper(ast, sub):
                        wildcard = True
                    elif s is ast.Call and _type(sub.func) is ast.Name and sub.func.id in own_defs:
                        calls = True
                    elif s is ast.ExceptHandler and sub.name:
                        bound.add(sub.name)
                    elif s is ast.alias:
                        bound.add(sub.asname or sub.name.split(".", 1)[0])
                    elif _type(_getattr(sub, "name", None)) is _str and s.__name__.startswith("Match"):
                        bound.add(sub.name)
                    elif s.__name__ == "MatchMapping" and sub.rest:
                        bound.add(sub.rest)
            if t.__name__ in ("Try", "TryStar"):
                for handler in node.handlers:
                    if handler.name:
                        bound.add(handler.name)
            for line in _range(first, last + 1):
                entry = lines.get(line)
                if entry is None:
                    entry = lines[line] = [_set(), True, _set(), False]
                if wildcard or entry[0] is None:
                    entry[0] = None
                else:
                    entry[0].update(bound)
                entry[1] = entry[1] and inert
                entry[2].update(named)
                entry[3] = entry[3] or calls
            if t in compound:
                for field in body_fields:
                    for child in _getattr(node, field, ()) or ():
                        if _type(child) is ast.ExceptHandler or _type(child).__name__ == "match_case":
                            for inner in child.body:
                                visit(inner)
                        else:
                            visit(child)

        for statement in parsed.body:
            visit(statement)
        frozen = {line: (None if e[0] is None else _frozenset(e[0]), e[1], _frozenset(e[2]), e[3])
                  for line, e in lines.items()}
        return {"lines": frozen, "global": _frozenset(declared), "dynamic": reaches}

    def pytest_helper(ast, node):
        """``@py_builtins.locals()`` and the like: pytest's rewritten asserts, which build messages."""
        value = node.value
        return _type(value) is ast.Name and value.id.startswith("@")

    # -- fingerprints of what a statement bound ---------------------------------------------------

    containers = _frozenset(_map(_id, (_list, _tuple, _dict, _set, _frozenset)))  # ids: a metaclass's == never runs

    def fingerprint(value):
        """The ids of a plain container and of everything in it (exact builtin types only: walking
        them runs no code of anyone's), at most ``budget`` of them."""
        out, stack = [], [value]
        while stack and _len(out) < budget:
            v = stack.pop()
            t = _type(v)
            out.append(_id(v))
            if t is _list or t is _tuple or t is _set or t is _frozenset:
                out.append(_len(v))
                stack.extend(v)
            elif t is _dict:
                out.append(_len(v))
                for key, item in _list(v.items()):
                    stack.append(key)
                    stack.append(item)
        return _tuple(out)

    def class_print(cls):
        mapping = _class_dict(cls)
        items = _list(mapping.items())
        data = _tuple(fingerprint(v) for _, v in items if _id(_type(v)) in containers)
        return _tuple(k for k, _ in items), _tuple(_id(v) for _, v in items), _tuple(_map(_id, _class_mro(cls))), data

    def tracked_print(kind, value):
        return class_print(value) if kind == "class" else fingerprint(value)

    def track(ledger, key, value):
        """Remember what a statement bound under ``key``, if it is a class of this module or a container."""
        t = _type(value)
        kind = None
        if _id(t) in containers:
            kind = "data"
        elif _id(J["type"]) in _map(_id, _class_mro(t)) and _type(_class_dict(value).get("__module__")) is _str \
                and _class_dict(value).get("__module__") == ledger["module_name"]:
            kind = "class"
        if kind is None:
            ledger["tracked"].pop(key, None)
        else:
            ledger["tracked"][key] = (kind, value, tracked_print(kind, value))

    # -- the ledger ---------------------------------------------------------------------------------

    def begin_statements(code, namespace):
        """A verified grader module's code is about to run in ``namespace``: trace its body."""
        label = module_dicts.get(_id(namespace))
        if label is None or _type(namespace) is not _dict:
            return
        table = J["lines"].get(label)
        if table is None:
            return
        module_name = namespace.get("__name__") if _all(_type(k) is _str for k in namespace) else None
        module_name = module_name if _type(module_name) is _str else "<not a str>"
        running[_id(code)] = {"label": label, "namespace": namespace, "table": table, "frame": None, "prev": None,
                              "keys": (), "ids": (), "tracked": {}, "module_name": module_name,
                              "code": code}
        active[0] += 1
        if active[0] == 1:
            set_trace(tracer)

    def set_trace(function):
        ident = _get_ident()
        token[ident] = "sys.settrace"
        try:
            _settrace(function)
        finally:
            token.pop(ident, None)

    def on_trace(args, caller):
        """An event of the policy's trace function (the hook's caller), for the frame it names."""
        if _len(args) != 2 or caller is None or _id(caller.f_code) not in trace_codes:
            return None
        frame, event = args
        if _type(frame) is not _FrameType or caller.f_back is not frame:
            return None
        ledger = running.get(_id(frame.f_code))
        if ledger is None:
            return None
        if ledger["frame"] is None:
            if event != "call" or frame.f_globals is not ledger["namespace"]:
                return None
            ledger["frame"] = frame
            remember(ledger, ledger["namespace"])
            return None
        if ledger["frame"] is not frame:
            return None
        if event == "line":
            ledger["raised"] = False
            boundary(ledger, frame.f_lineno)
        elif event == "exception":  # a return straight after one: the body raised (an import of it failed)
            ledger["raised"] = True
        elif event == "return":
            boundary(ledger, None)
            del running[_id(frame.f_code)]
            ledger["frame"] = None
            finished[_id(ledger["namespace"])] = ledger
            if ledger.get("raised"):
                raised[_id(ledger["namespace"])] = ledger["namespace"]
            active[0] -= 1
            if active[0] <= 0:
                active[0] = 0
                set_trace(None)
        return None

    def remember(ledger, namespace):
        keys = _tuple(namespace)  # read in order, never by lookup (a planted key of another type runs its __eq__ in one)
        ledger["keys"], ledger["ids"] = keys, _tuple(_map(_id, _dict_values(namespace)))

    def boundary(ledger, line):
        """The previous line's statements ran: only what they bind may have changed."""
        prev, ledger["prev"] = ledger["prev"], line
        entry = ledger["table"]["lines"].get(prev) if prev is not None else None
        bound, inert, named, calls = entry if entry is not None else (_frozenset(), False, _frozenset(), False)
        compare(ledger, bound, named, calls, f"while line {prev} ran" if prev is not None else "before its first line")
        if not inert or line is None:
            check_group("core")  # the verdict path (builtins, unittest, pytest...): a replacement made and undone
            compare_tracked(ledger, named, calls, bound is None,
                            f"while line {prev} ran" if prev is not None else "before its first line")

    def compare(ledger, bound, named, calls, when):
        namespace, label = ledger["namespace"], ledger["label"]
        keys, ids = ledger["keys"], ledger["ids"]
        declared = ledger["table"]["global"]
        if _len(namespace) == _len(keys) and _all(_map(_is, _tuple(namespace), keys)) \
                and _tuple(_map(_id, _dict_values(namespace))) == ids:
            return
        old = {k: i for k, i in _zip(keys, ids) if _type(k) is _str}
        for key, value in _list(namespace.items()):
            if _type(key) is not _str:
                violate(f"grader module {label}: a key of type {name_of(key)} was added {when}")
                continue
            if old.get(key) == _id(value):
                continue
            if bound is None or key in bound or key in free_keys or (calls and key in declared):
                track(ledger, key, value)
                continue
            if _type(value) is _ModuleType and plain_modules().get(f"{ledger['module_name']}.{key}") is value:
                continue  # the import system binds a package's submodule in it (tests/__init__.py gains test_more)
            verb = "rebound" if key in old else "added"
            violate(f"grader module {label}: {key_text(key)} was {verb} {when}, which does not bind it "
                    f"(now a {name_of(value)})")
        for key in keys:
            if key not in namespace and not (bound is None or key in bound or key in free_keys or (calls and key in declared)):
                violate(f"grader module {label}: {key_text(key)} was removed {when}")
        remember(ledger, namespace)

    def compare_tracked(ledger, named, calls, anything, when):
        label = ledger["label"]
        for key, (kind, value, before) in _list(ledger["tracked"].items()):
            now = tracked_print(kind, value)
            if now == before:
                continue
            ledger["tracked"][key] = (kind, value, now)
            if anything or calls or key in named:
                continue
            what = f"class {_class_qualname(value)}" if kind == "class" else f"the {name_of(value)} {key_text(key)}"
            violate(f"grader module {label}: {what} was changed {when}, which does not name it")

    def settle_statements(namespace):
        """Pytest's import of a test module returned: each grader module whose body ended is as it
        was at its last line (code of the submission that ran since, through pytest's probes of the
        module, changed nothing), and is then watched by :mod:`judge_namespaces`."""
        ledger = finished.pop(_id(namespace), None)
        if ledger is None:
            return
        when = "after its body ran"
        compare(ledger, _frozenset(), _frozenset(), False, when)
        compare_tracked(ledger, _frozenset(), False, False, when)

    def rebindable_names(label):
        """The names of a grader module that code of its file may rebind after its body ran: those a
        function of it declares ``global``; None (any) when the file reaches its globals otherwise
        (``globals()``, ``setattr``, ``sys.modules``...) or its syntax is unknown."""
        table = J["lines"].get(label)
        if table is None or table["dynamic"]:
            return None
        return table["global"]

    def import_failed(namespace):
        """Whether a grader module's body raised and the import system dropped it (``sys.modules`` holds
        no module of that name with this namespace): a hidden test module that imports what the
        submission has not written yet. Its names are whatever statements ran; it is not watched
        (nothing collects its tests), and its tests count as not collected."""
        if _id(namespace) not in raised:
            return False
        name = J["plain"](namespace).get("__name__")
        module = plain_modules().get(name) if _type(name) is _str else None
        return _type(module) is not _ModuleType or J["instance_dict"](module, "__dict__") is not namespace

    J.update(line_table=line_table, begin_statements=begin_statements, on_trace=on_trace,
             settle_statements=settle_statements, rebindable_names=rebindable_names, import_failed=import_failed)
