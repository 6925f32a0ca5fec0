"""The judge's snapshots: what the verdict depends on that no audit event guards (class attributes,
module globals, pluggy's hook implementations), compared (part of :mod:`judge_policy`).

:func:`build` adds its closures to the policy's state ``J``; none looks a global up.
"""


def build(J):  # noqa: C901, N803, PLR0915 - J is the policy's closure state
    """Add ``take_snapshot``, ``check_verdict_path``, ``accept_change``, ``check_everything``,
    ``watch_module``, ``hook_impls`` and ``from_submission`` to ``J``.

    The verdict path is compared before every pass, so the comparison is flat: per group (the
    trusted verdict path; each test module with its classes) one ``map`` over every code-like
    entry, identity by ``operator.is_``, and the sizes of the namespaces; only a group that
    differs is compared entry by entry to name what changed (data entries may change freely there,
    except into code of the submission, which the end's check of everything names).
    """
    _type, _id, _len, _str, _tuple, _list, _zip, _map, _any, _enumerate, _callable = (
        J["type"], J["id"], J["len"], J["str"], J["tuple"], J["list"], J["zip"], J["map"], J["any"], J["enumerate"],
        J["callable"])
    _FunctionType, _MethodType, _ModuleType = J["FunctionType"], J["MethodType"], J["ModuleType"]
    _partial, _property, _classmethod, _staticmethod = J["partial"], J["property"], J["classmethod"], J["staticmethod"]
    _instance_dict, _class_dict, _class_qualname, _modules = J["instance_dict"], J["class_dict"], J["class_qualname"], J["modules"]
    state, watched, everything = J["state"], J["watched"], J["everything"]
    protected_classes, protected_modules, module_dicts = J["protected_classes"], J["protected_modules"], J["module_dicts"]
    verified, violate, name_of, key_text, violations = J["verified"], J["violate"], J["name_of"], J["key_text"], J["violations"]
    kind_of_file, is_submission = J["kind_of_file"], J["is_submission"]
    _is, _all, _dict_get, _referents = J["is_"], J["all"], J["dict_get"], J["get_referents"]
    _chain, _repeat = J["chain"], J["repeat"]
    builtin_names = J["builtin_names"]
    groups = {}  # group key -> {"rows": [row], "fast": flat tuple or None}
    verdict_path = frozenset(("_pytest", "pytest", "pluggy", "unittest", "builtins", "__main__", "judge_policy",
                              "judge_code", "judge_namespaces", "judge_objects", "judge_ledger", "judge_statements",
                              "judge_values"))
    watched_modules = set()
    _ValueError, _cell_type = J["ValueError"], _type((lambda: verdict_path).__closure__[0])
    cell_get = _class_dict(_cell_type)["cell_contents"].__get__
    cells = [(), (), ()]  # the verdict path's closure cells that hold code, what each held, whose (co_qualname) each is

    _dict, _dict_values, _dict_items = J["dict"], J["dict"].values, J["dict"].items

    def real_dict(mapping):
        """A class's own dict behind its mappingproxy (so the flat check can use ``dict``'s own methods)."""
        if _type(mapping) is _dict:
            return mapping
        token, ident = J["token"], J["get_ident"]()
        token[ident] = "gc.get_referents"
        try:
            found = _referents(mapping)
        finally:
            token.pop(ident, None)
        return found[0] if _len(found) == 1 and _type(found[0]) is _dict else None

    def str_items(mapping):
        """``(entries whose key is exactly a str, as a dict; the other keys)`` of a namespace, read
        without a lookup: a lookup in a dict holding a planted key of another type with the same hash
        runs that key's ``__eq__``."""
        items = _list(_dict_items(mapping)) if _type(mapping) is _dict else _list(mapping.items())
        return {k: v for k, v in items if _type(k) is _str}, [k for k, _ in items if _type(k) is not _str]

    def add_row(key, snap):
        group = groups.setdefault(key, {"rows": [], "fast": None})
        group["rows"].append(snap)
        group["fast"] = None

    def flat(group):
        """(dicts, sizes, every key in order, positions of the code-like values, those values) of the
        group's rows, as the rows' snapshots took them."""
        owners, sizes, keys, positions, values = [], [], [], [], []
        for snap in group["rows"]:
            mapping = real_dict(snap[2])
            if mapping is None:
                continue
            owners.append(mapping)
            sizes.append(snap[5])
            for key, was_code, value in _zip(snap[3], snap[6], snap[7]):
                if was_code:
                    positions.append(_len(keys))
                    values.append(value)
                keys.append(key)
        return _tuple(owners), _tuple(sizes), _tuple(keys), _tuple(positions), _tuple(values)

    def check_group(key):
        """Compare one group before a pass: flat first, entry by entry only when it differs."""
        group = groups.get(key)
        if group is None:
            return
        if group["fast"] is None:
            group["fast"] = flat(group)
        owners, sizes, keys, positions, values = group["fast"]
        # every namespace the same size with the very same keys in the same order (no lookup: a planted key
        # of another type runs its own __eq__ in one), every code-like value the same object as it was
        if _tuple(_map(_len, owners)) == sizes:
            now = _tuple(_chain(owners))
            if _all(_map(_is, now, keys)):
                found = _tuple(_chain(_map(_dict_values, owners)))
                if _all(_map(_is, _map(found.__getitem__, positions), values)):
                    return
        before = _len(violations)
        compare(group["rows"], identity=True)
        if _len(violations) == before:  # data came and went (unittest's class cleanups...): take it as it is now
            group["rows"] = [rebase(snap) for snap in group["rows"]]
            group["fast"] = None

    def rebase(snap):
        """``snap`` as its namespace is now, each key keeping what it was (code stays code-checked)."""
        label, owner, mapping, keys, ids, size, code_like, values = snap
        was = {k: flag for k, flag in _zip(keys, code_like) if _type(k) is _str}
        now = row(label, owner, mapping)
        now[6] = _tuple(was.get(k, flag) if _type(k) is _str else True for k, flag in _zip(now[3], now[6]))
        now[7] = _tuple(v if flag else None for v, flag in _zip(_values_of(mapping), now[6]))
        return now

    def _values_of(mapping):
        return _list(_dict_values(mapping)) if _type(mapping) is _dict else _list(mapping.values())

    def check_verdict_path(namespace, classes):
        """Before a pass: the trusted verdict path (its closure cells too), the test's module and the test
        classes of its MRO."""
        check_group("core")
        check_cells()
        check_group(_id(namespace))
        for cls in classes:
            check_group(_id(cls))

    fixed = {}  # id(grader module globals) -> the names its file's functions may rebind (judge_statements)

    def row(label, owner, mapping, flags=True):
        """[label, owner, mapping, keys, ids, size, which values are compared by identity (code-like
        ones, if ``flags``, and a grader module's names that only its module-level statements bind;
        a key not exactly a str always), those values (held, so an id is never reused)], read from
        the namespace's items, never by lookup."""
        items = _list(_dict_items(mapping)) if _type(mapping) is _dict else _list(mapping.items())
        keys = _tuple(k for k, _ in items)
        values = _tuple(v for _, v in items)
        code_like = _tuple(_map(is_code_like, values)) if flags else (False,) * _len(keys)
        code_like = _tuple(c or _type(k) is not _str for k, c in _zip(keys, code_like))
        if flags and _id(mapping) in fixed:
            rebindable = fixed[_id(mapping)]
            code_like = _tuple(c or (k not in rebindable and k != "__warningregistry__") for k, c in _zip(keys, code_like))
        held = _tuple(v if c else None for v, c in _zip(values, code_like))
        return [label, owner, mapping, keys, _tuple(_map(_id, values)), _len(keys), code_like, held]

    def module_namespace_of(module):
        if _type(module) is not _ModuleType:
            return None
        namespace = _instance_dict(module, "__dict__")
        filename = namespace.get("__file__")
        if filename is not None and (_type(filename) is not _str or kind_of_file(filename) != "trusted"):
            return None
        return namespace

    def take_cells(values):
        """The closure cells of the functions among ``values`` (methods, accessors, the functions a cell or a
        code object's constants hold) that hold code: a cell is rewritten with no audit event (round 32's review rewrote contextlib's helper
        cell holding unittest's part executor, and the runner's own)."""
        found, stack, seen = [], _list(values), J["set"]()
        while stack:
            value = stack.pop()
            t = _type(value)
            if t is _classmethod or t is _staticmethod:
                stack.append(value.__func__)
            elif t is _property:
                stack.extend(p for p in (value.fget, value.fset, value.fdel) if p is not None)
            elif t is _FunctionType and _id(value) not in seen:
                seen.add(_id(value))
                consts = value.__code__.co_consts  # a function the runner baked holds what it calls there
                stack.extend(consts)
                stack.extend(_chain(c for c in consts if _type(c) is _tuple))
                for cell in value.__closure__ or ():
                    try:
                        held = cell_get(cell)
                    except _ValueError:  # empty yet
                        continue
                    if is_code_like(held):
                        found.append((cell, held, value.__code__.co_qualname))
                        stack.append(held)
        cells[:] = [_tuple(c for c, _, _ in found), _tuple(h for _, h, _ in found), _tuple(q for _, _, q in found)]

    def check_cells():
        """Every cell :func:`take_cells` found holds what it held (flat; named one by one when not)."""
        try:
            if _all(_map(_is, _map(cell_get, cells[0]), cells[1])):
                return
        except _ValueError:
            pass
        for cell, held, qualname in _zip(*cells):
            try:
                now = cell_get(cell)
            except _ValueError:
                now = None
            if now is not held:
                violate(f"a closure cell of {qualname} (the verdict path's) was rewritten (now a {name_of(now)})")

    def take_snapshot():
        """Every trusted module and the classes it defines, as they are before task code runs."""
        on_path_values = []
        for name, module in _list(_modules.items()):
            namespace = module_namespace_of(module)
            if namespace is None or _type(name) is not _str:
                continue
            protected_modules[_id(module)] = module
            on_path = name.split(".", 1)[0] in verdict_path
            snap = row(f"module {name}", module, namespace, on_path)
            everything.append(snap)
            if on_path:
                watched.append(snap)
                add_row("core", snap)
                on_path_values.extend(_list(namespace.values()))
            for value in _list(namespace.values()):
                if _type(value) is _type and _class_dict(value).get("__module__") == name:
                    protected_classes[_id(value)] = value
                    snap = row(f"class {name}.{_class_qualname(value)}", value, J["raw_class_dict"](value), on_path)
                    everything.append(snap)
                    if on_path:
                        watched.append(snap)
                        add_row("core", snap)
                        on_path_values.extend(_list(_class_dict(value).values()))
        take_cells(on_path_values)
        state["modules"] = {name: _id(m) for name, m in _list(_modules.items()) if _id(m) in protected_modules}

    def is_code_like(value):
        """Replacing ``value`` changes what runs (decided without running any of its code)."""
        t = _type(value)
        return _callable(value) or t is _ModuleType or _class_dict(t).get("__get__") is not None

    def own_code(cls):
        """Whether a member of any class of ``cls``'s MRO (a function, a property's accessor, a static or
        class method) is code of the submission: an instance of an empty subclass of a submission class
        calls the base's ``__call__`` (a ``getattr`` planted in unittest.case was one). Not cached: a
        class can gain members."""
        for c in J["class_mro"](cls):
            for member in _list(_class_dict(c).values()):
                t = _type(member)
                parts = (member.fget, member.fset, member.fdel) if t is _property else \
                    (member.__func__,) if t is _classmethod or t is _staticmethod else (member,)
                if _any(_type(f) is _FunctionType and is_submission(f.__code__) for f in parts):
                    return True
        return False

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
            return _id(value) not in protected_classes and own_code(value)
        if t is _ModuleType or _id(t) in protected_classes or not is_code_like(value):
            return False
        return own_code(t)

    def compare(rows, identity):
        """Report what changed in ``rows``: code replaced by anything (``identity``), or code of the
        submission anywhere (data the snapshot held, a hook slot that was None, may become trusted code)."""
        for snap in rows:
            label, owner, mapping, keys, ids, size, code_like, _held = snap
            current, foreign = str_items(mapping)
            for key in foreign:
                if not _any(_map(_is, keys, _repeat(key))):
                    violate(f"{label}: a key of type {name_of(key)} was added")
            for key, before, was_code in _zip(keys, ids, code_like):
                if _type(key) is not _str:  # one the snapshot met: compared by identity with its value
                    continue
                now = current.get(key)
                if _id(now) != before and ((identity and was_code) or from_submission(now)):
                    violate(f"{label}: {key_text(key)} was replaced (now a {name_of(now)})")
            known = J["set"](k for k in keys if _type(k) is _str)
            for key, value in _list(current.items()):
                if key not in known:  # a key deleted and another added keeps the size: every new key is looked at
                    shadows = (_type(owner) is _ModuleType or _id(mapping) in module_dicts) and key in builtin_names
                    if (identity and (_type(owner) is _type or shadows) and is_code_like(value)) or from_submission(value):
                        violate(f"{label}: {key_text(key)} was added (a {name_of(value)})")

    def accept_change(owner):
        """Take ``owner``'s namespace as it is now (a monkeypatch made by grader code)."""
        mapping = _instance_dict(owner, "__dict__") if _type(owner) is _ModuleType else None
        for rows in (watched, everything, *(g["rows"] for g in groups.values())):
            for i, snap in _enumerate(rows):
                if snap[1] is owner or snap[2] is owner or snap[2] is mapping:
                    rows[i] = row(snap[0], snap[1], snap[2])
        for group in groups.values():
            group["fast"] = None

    def check_everything():
        """At the end: the snapshot, and no trusted module (one loaded late included) holds submission code."""
        compare(watched, identity=True)
        check_cells()
        on_path = J["set"](_map(_id, watched))
        compare([snap for snap in everything if _id(snap) not in on_path], identity=False)
        for name, module in _list(_modules.items()):
            namespace = module_namespace_of(module)
            if namespace is None or _id(module) in protected_modules:
                continue
            for key, value in _list(namespace.items()):
                if _type(value) is not _type and _type(value) is not _ModuleType and from_submission(value):
                    violate(f"module {key_text(name)}: {key_text(key)} holds code of the submission")
        now = J["plain_modules"]()
        for name, ident in state["modules"].items():
            if _id(now.get(name)) != ident:
                violate(f"sys.modules[{name!r}] was replaced")

    def watch_module(namespace):
        """A verified test module, at its first collected test: its top-level imports must bind what
        its source says (a submission rebinding ``pytest`` or ``raises`` in it is caught), then its
        namespace and the classes its own code defines are watched like the verdict path."""
        J["settle_statements"](namespace)
        if _id(namespace) in watched_modules:
            return
        watched_modules.add(_id(namespace))
        label = module_dicts[_id(namespace)]
        rebindable = J["rebindable_names"](label)
        if rebindable is not None:  # from now on its other names keep what its statements bound
            fixed[_id(namespace)] = rebindable
        now, view = J["plain_modules"](), J["plain"](namespace)  # looked up in: a planted key's __eq__ never runs
        for name, (module_name, attribute) in J["imports"].get(label, {}).items():
            module = now.get(module_name)
            if _type(module) is not _ModuleType or _type(name) is not _str:
                continue
            expected = module if attribute is None else _instance_dict(module, "__dict__").get(attribute, namespace)
            if view.get(name, namespace) is not expected and expected is not namespace:
                violate(f"test module {label}: {name} is not the {module_name}{'.' + attribute if attribute else ''} "
                        "its import statement bound")
            known = state["modules"].get(module_name)
            if known is not None and known != _id(module):
                violate(f"test module {label}: sys.modules[{module_name!r}] was replaced before it was imported")
        check_definitions(label, view)
        snap = row(f"test module {label}", namespace, namespace)
        watched.append(snap)
        add_row(_id(namespace), snap)
        for value in _list(namespace.values()):
            if _type(value) is _type and _id(value) not in protected_classes:
                functions = [v for v in _list(_class_dict(value).values()) if _type(v) is _FunctionType]
                if functions and _any(_id(f.__code__) in verified for f in functions):
                    check_case_methods(value)
                    protected_classes[_id(value)] = value
                    snap = row(f"test class {_class_qualname(value)}", value, J["raw_class_dict"](value))
                    watched.append(snap)
                    add_row(_id(value), snap)

    def check_definitions(label, namespace):
        """A grader module, as its import returned: each top-level ``def`` of its file still binds that
        function (or a wrapper of it), no module ``__getattr__`` its file does not define was planted,
        its ``__file__`` is exactly a str. Code of the submission ran in that module's last moments
        (pytest's ``module_file.endswith`` on a str-subclass ``__file__``, ``getattr(mod,
        "pytest_plugins")`` through a planted ``__getattr__``) and rebound its helpers to no-ops."""
        defined = J["qualnames"].get(label, ())
        for name in _list(defined):
            if _type(name) is not _str or "." in name or name.startswith("<") or name not in namespace:
                continue
            value = namespace[name]
            if J["class_name"](_type(value)) == "FixtureFunctionDefinition":
                value = _instance_dict(value, "__dict__").get("_fixture_function", value)
            for _ in _repeat(None, 8):  # trusted wrappers (functools.wraps, mock.patch) lead to what they wrap
                if _type(value) is not _FunctionType or _id(value.__code__) in verified or \
                        kind_of_file(value.__code__.co_filename) != "trusted":
                    break
                value = _instance_dict(value, "__dict__").get("__wrapped__", value)
            t = _type(value)
            if t is _FunctionType and _id(value.__code__) in verified and value.__code__.co_name == name:
                continue
            if t is _FunctionType and decorated_by_file(label, name, value.__code__):
                continue
            if t is _FunctionType or t is _partial or t is _MethodType or J["class_name"](t) == "builtin_function_or_method":
                violate(f"test module {label}: {key_text(name)} is not the function its file defines (a {name_of(value)})")
        if "__getattr__" in namespace and "__getattr__" not in defined:
            violate(f"test module {label}: a __getattr__ its file does not define was planted in it")
        bound = J["bound"].get(label)
        if bound is not None:  # a global named like a builtin shadows it for the file's code (a list whose == is always True)
            for key in _list(namespace):
                if _type(key) is _str and key in builtin_names and not key.startswith("__") and key not in bound:
                    violate(f"test module {label}: {key_text(key)} shadows the builtin, and its file does not bind it")
        for key in ("__file__", "__cached__"):
            if key in namespace and namespace[key] is not None and _type(namespace[key]) is not _str:
                violate(f"test module {label}: its {key} is a {name_of(namespace[key])}, not a str")
        spec = namespace.get("__spec__")
        origin = _instance_dict(spec, "__dict__").get("origin") if spec is not None else None
        if origin is not None and _type(origin) is not _str:
            violate(f"test module {label}: its __spec__.origin is a {name_of(origin)}, not a str")
        sys_module = J["plain_modules"]().get("sys")
        sys_dict = _instance_dict(sys_module, "__dict__") if _type(sys_module) is _ModuleType else {}
        for key in ("meta_path", "path_hooks"):
            if sys_dict.get(key) is not J[key]:
                violate(f"sys.{key} was replaced (now a {name_of(sys_dict.get(key))})")
        for hooks in (J["meta_path"], J["path_hooks"]):
            for entry in _list(hooks):
                if from_submission(entry) or submission_class(_type(entry)):
                    violate(f"an import hook of the submission ({name_of(entry)}) was installed")

    def decorated_by_file(label, name, code):
        """Whether ``code`` is what the file's own decorators on ``def name`` may have bound: a wrapper
        of the file's own code (a decorator the test file defines), or code under test where a
        decorator is imported from it (cachetools' tests decorate a helper with ``@cached(...)``:
        the package's wrapper is the behaviour under test). A test's own body is checked by the
        ledger, whatever binds its name."""
        roots = J["decorated"].get(label, {}).get(name)
        if roots is None:
            return False
        if _id(code) in verified:  # a wrapper one of this def's own decorators made (``logged.<locals>.inner``), not another function of the file
            return "<locals>" in code.co_qualname and code.co_qualname.split(".", 1)[0] in roots
        if kind_of_file(code.co_filename) != "submission":
            return False
        now, imports = J["plain_modules"](), J["imports"].get(label, {})
        for root in _list(roots):
            module_name = imports.get(root, (None, None))[0]
            module = now.get(module_name) if _type(module_name) is _str else None
            where = _instance_dict(module, "__dict__").get("__file__") if _type(module) is _ModuleType else None
            if _type(where) is _str and kind_of_file(where) == "submission":
                return True
        return False

    def check_case_methods(cls):
        """The attributes named like unittest's methods (``assertEqual``, ``fail``...) of a test class and
        of every class of its MRO before ``TestCase`` are functions of a verified file or of the
        interpreter's installation: code that ran before the watch began could otherwise have made
        them no-ops, on the class or on a base it planted through ``__bases__``."""
        testcase = state["codes"]["testcase_type"] if state["codes"] else None
        if testcase is None or not _any(c is testcase for c in J["class_mro"](cls)):
            return
        names = _class_dict(testcase)
        for c in J["class_mro"](cls):  # every class between it and TestCase: a base planted through __bases__ too
            if c is testcase:
                break
            for key, value in _list(_class_dict(c).items()):
                if _type(key) is not _str or key not in names or key.startswith("__"):
                    continue
                if _type(value) is not _FunctionType or (_id(value.__code__) not in verified
                                                          and kind_of_file(value.__code__.co_filename) != "trusted"):
                    violate(f"test class {_class_qualname(cls)}: {key_text(key)} of {_class_qualname(c)} is not a method "
                            f"of a test file (a {name_of(value)})")

    def plain_function(obj):
        if _type(obj) is _MethodType:
            obj = obj.__func__
        return obj if _type(obj) is _FunctionType else None

    owned = {}  # id(impl) -> (impl, function) found to be its registered plugin's own
    submission_classes = {}  # id(class) -> (class, whether any member of its MRO is submission code)

    def submission_class(cls):
        """Whether a member of ``cls``'s MRO (a function, a property's accessor, a static or class
        method) is code of the submission: a trusted function in its namespace acts for it."""
        seen = submission_classes.get(_id(cls))
        if seen is not None and seen[0] is cls:
            return seen[1]
        found = own_code(cls)
        submission_classes[_id(cls)] = (cls, found)
        return found

    def owns(plugin, function):
        """Whether ``function`` is ``plugin``'s own hook implementation as pluggy reads it: a value of
        the plugin module's namespace (a trusted or grader file), or a method (plain, static or class)
        of the plugin's class bound to the plugin, its class not the submission's. A trusted function
        set on an instance (a ``SimpleNamespace`` plugin) or bound to another object is not."""
        t = _type(plugin)
        if t is _ModuleType:
            filename = _instance_dict(plugin, "__dict__").get("__file__")
            if _type(filename) is not _str or kind_of_file(filename) == "submission":
                return False
            return _any(_map(_is, _list(_instance_dict(plugin, "__dict__").values()), _repeat(function)))
        is_class = _any(_map(_is, J["class_mro"](t), _repeat(_type)))
        cls = plugin if is_class else t
        owner, func = (function.__self__, function.__func__) if _type(function) is _MethodType else (None, function)
        if owner is not None and owner is not plugin and owner is not cls:
            return False
        if submission_class(cls):
            return False
        for c in J["class_mro"](cls):
            for member in _list(_class_dict(c).values()):
                t = _type(member)
                if member is func or ((t is _classmethod or t is _staticmethod) and member.__func__ is func):
                    return True
        return False

    def own_impl(impl, function, name):
        """Whether ``impl`` is one pluggy's ``register`` made for hook ``name`` (announced to the
        policy as it returned, for a plugin pytest, the runner or grader code registered:
        :func:`judge_ledger` refuses the submission's) and its function is the plugin's own."""
        seen = owned.get(_id(impl))
        if seen is not None and seen[0] is impl and seen[1] is function and seen[2] == name:
            return True
        made = (state.get("made") or {}).get(_id(impl))
        if made is None or made[0] is not impl or made[1] != name:
            return False
        plugin = state["codes"]["plugin_of"](impl)
        plugins = state.get("plugins")
        if plugins is None or plugins.get(_id(plugin)) is not plugin or not owns(plugin, function):
            return False
        owned[_id(impl)] = (impl, function, name)
        return True

    def hook_impls(names):
        """(name, ids of the implementations, ids of their functions) of pluggy's hooks, each
        implementation checked to be pytest's, a plugin's or a verified conftest's as it is read,
        and its registered plugin's own."""
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
            if _type(impls) is not J["list"]:
                violate(f"pluggy's hook {key_text(name)} has a {name_of(impls)} of implementations")
                continue
            functions = []
            for impl in impls:
                function = codes["function_of"](impl) if _type(impl) is codes["hook_impl_type"] else None
                plain = plain_function(function)
                if plain is None or is_submission(plain.__code__):
                    found = plain.__code__.co_filename if plain is not None else f"a {name_of(function)}"
                    violate(f"an implementation of {key_text(name)} is not pytest's, a plugin's or a verified "
                            f"conftest's ({found})")
                elif not own_impl(impl, function, name):
                    violate(f"an implementation of {key_text(name)} is not the own of a plugin that pytest, the runner "
                            "or the grader registered")
                functions.append(_id(function))
            rows.append((name, _tuple(_map(_id, impls)), _tuple(functions)))
        return _tuple(rows)

    J.update(take_snapshot=take_snapshot, check_verdict_path=check_verdict_path, compare=compare, accept_change=accept_change, check_everything=check_everything,
             watch_module=watch_module, hook_impls=hook_impls, from_submission=from_submission, check_group=check_group,
             plain_function=plain_function, submission_class=submission_class, snapshot_row=row, add_row=add_row)
