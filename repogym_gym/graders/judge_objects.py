"""The judge's rules on pytest's own objects: what their instance attributes may hold (part of
:mod:`judge_policy`).

Instance attributes are not audited, so pytest's session, config, plugin manager, hook relay and
callers, ``os.environ``, a test item and a unittest case are checked whenever an outcome is about
to count: no attribute may hide a method of its class, run code of the submission, or sit under a
key that is not exactly a ``str``. :func:`build` adds ``shadowed``, ``foreign``, ``check_instances``,
``check_instance_of``, ``check_case`` and ``needs_method_evidence`` to the policy's state ``J``; no
closure here looks a global up.
"""


def build(J):  # noqa: C901, N803, PLR0915 - J is the policy's closure state
    """Add the object rules to ``J`` (after :mod:`judge_namespaces`, before :mod:`judge_ledger`)."""
    _type, _id, _str, _list, _map, _any, _len, _sorted, _set, _dict, _frozenset = (
        J["type"], J["id"], J["str"], J["list"], J["map"], J["any"], J["len"], J["sorted"], J["set"], J["dict"],
        J["frozenset"])
    _FunctionType, _classmethod, _staticmethod = J["FunctionType"], J["classmethod"], J["staticmethod"]
    _callable, _AttributeError = J["callable"], J["AttributeError"]
    _instance_dict, _class_dict, _class_mro = J["instance_dict"], J["class_dict"], J["class_mro"]
    state, violate, name_of, key_text = J["state"], J["violate"], J["name_of"], J["key_text"]
    kind_of_file, is_submission = J["kind_of_file"], J["is_submission"]
    plain_function, submission_class = J["plain_function"], J["submission_class"]
    method_names = {}  # id(class) -> names its MRO binds to functions (what an instance attribute could hide)

    def shadowed(obj):
        """Instance attributes of ``obj`` (of a trusted class) that hide a method of its class."""
        t = _type(obj)
        names = method_names.get(_id(t))
        if names is None:
            names = _frozenset(k for c in _class_mro(t) for k, v in _list(_class_dict(c).items())
                               if _type(v) is _FunctionType or _type(v) is _classmethod or _type(v) is _staticmethod)
            method_names[_id(t)] = names
        # a key that is not exactly a str (a subclass whose __eq__ runs on every lookup) hides anything
        return [k for k in _list(_instance_dict(obj, "__dict__")) if _type(k) is not _str or k in names]

    def foreign(value, depth=0):
        """Whether calling ``value`` runs code of the submission: a function or method of its code (or
        a trusted method bound to an object of a class with submission code), a ``functools.partial``
        or wrapper (``__wrapped__``) of one, an object whose class defines ``__call__`` or
        ``__getattr__`` in its code."""
        t = _type(value)
        if t is _FunctionType:
            return is_submission(value.__code__)
        if depth > 3:
            return True
        if t is J["MethodType"]:  # a trusted function bound to an object of the submission acts for it
            owner = value.__self__
            owner_type = _type(owner)
            cls = owner if _any(c is _type for c in _class_mro(owner_type)) else owner_type
            return foreign(value.__func__, depth + 1) or submission_class(cls)
        if t is J["partial"]:
            return foreign(value.func, depth + 1)
        for cls in _class_mro(t):
            namespace = _class_dict(cls)
            for name in ("__call__", "__getattr__", "__getattribute__"):
                member = namespace.get(name)
                if _type(member) is _FunctionType and is_submission(member.__code__):
                    return True
        try:
            wrapped = _instance_dict(value, "__dict__").get("__wrapped__")
        except (_AttributeError, J["TypeError"]):
            return False
        return wrapped is not None and foreign(wrapped, depth + 1)

    def rewired(objects):
        """What reroutes pytest's own flow through code of the submission, whenever it was done (at
        import, during collection, during a test): an instance attribute of pytest's session, config,
        plugin manager, relay or hook callers that hides a method of its class
        (``session.gethookproxy``), or holds a callable that runs submission code (a hook caller's
        ``_hookexec``). Instance attributes are not audited, so the rule is checked, not a snapshot."""
        codes = state["codes"]
        rows, hook_caller_type, hookexec_of = [], codes["hook_caller_type"], codes["hookexec_of"]
        manager = objects[2] if _len(objects) > 2 else None
        for obj in objects:
            if _type(obj) is hook_caller_type:  # slots only: its one callable is how it runs its implementations
                run = hookexec_of(obj)  # by identity: the plugin manager's own _hookexec, nothing in between
                if _type(run) is not J["MethodType"] or run.__self__ is not manager or run.__func__ is not codes["pm_hookexec"]:
                    rows.append("_hookexec")
                continue
            if obj is manager and codes["multicall"] is not None and \
                    _instance_dict(obj, "__dict__").get("_inner_hookexec") is not codes["multicall"]:
                rows.append("_inner_hookexec")
            if obj is manager and _instance_dict(obj, "__dict__").get("hook") is not state["relay"]:
                rows.append("hook")  # the relay every hook call goes through (Session.gethookproxy)
            if _type(obj) is codes["config_type"] and not relay_or_proxy(_instance_dict(obj, "__dict__").get("hook")):
                rows.append("hook")
            if obj is manager:  # the conftests a path leaves out of its hooks: only conftests, in pytest's own set
                plugins = _instance_dict(obj, "__dict__").get("_conftest_plugins", J["set"]())
                if _type(plugins) is not J["set"]:  # a subclass's __iter__ would run inside the policy (round 32)
                    rows.append("_conftest_plugins")
                    plugins = ()
                for plugin in _list(plugins):
                    filename = _instance_dict(plugin, "__dict__").get("__file__") if _type(plugin) is J["ModuleType"] else None
                    if _type(filename) is not _str or kind_of_file(filename) != "grader":
                        rows.append("_conftest_plugins")
                        break
            for key, value in _list(_instance_dict(obj, "__dict__").items()):
                if _type(key) is not _str or (_callable(value) and foreign(value)):
                    rows.append(key_text(key))
            if obj is codes["environ"]:  # pytest writes PYTEST_CURRENT_TEST through these on every phase
                local = _instance_dict(obj, "__dict__")
                if _type(local.get("_data")) is not _dict:
                    rows.append("_data")
                for name, original in _list(codes["environ_parts"].items()):
                    if local.get(name) is not original:
                        rows.append(name)
            rows.extend(_map(key_text, shadowed(obj)))
        return rows

    def relay_or_proxy(value):
        """The config's hook: the relay itself, or pytest's ``PathAwareHookProxy`` of it (pytest 9.0),
        whose cached attributes are the relay's own hook callers or pytest's wrappers of them."""
        relay, proxy_type = state["relay"], state["codes"].get("path_aware_type")
        if value is relay:
            return True
        if proxy_type is None or _type(value) is not proxy_type:
            return False
        local = _instance_dict(value, "__dict__")
        callers = _instance_dict(relay, "__dict__")
        for key, member in _list(local.items()):
            if key == "_hook_relay":
                if member is not relay:
                    return False
            elif member is not callers.get(key) and not fixed_hook_of(member, key, callers.get(key)):
                return False
        return "_hook_relay" in local

    def fixed_hook_of(member, key, caller):
        """True if ``member`` is the proxy's own ``fixed_hook`` for a path hook ``key``: that nested
        function's code, wrapping (closure and ``__wrapped__``) the relay's caller of that name."""
        fixed = state["codes"].get("path_aware_fixed")
        if fixed is None or caller is None or _type(member) is not _FunctionType or member.__code__ is not fixed[0]:
            return False
        if key not in fixed[1] or _instance_dict(member, "__dict__").get("__wrapped__") is not caller:
            return False
        names, cells = fixed[0].co_freevars, member.__closure__ or ()
        return _len(names) == _len(cells) and "hook" in names and cells[names.index("hook")].cell_contents is caller

    def check_instances():
        found = rewired(state.get("instances", ()))
        if found:
            violate(f"pytest's own objects were rewired (callable attributes: {', '.join(_sorted(_set(found)))[:200]})")

    def check_instance_of(item, bound):
        """What pytest calls for a test method is the item's instance (a unittest case is called as
        ``item.instance(result=item)``): it must be the object the bound method belongs to."""
        local = _instance_dict(item, "__dict__")
        obj = local.get("_obj")
        if "_instance" in local and _type(obj) is J["MethodType"] and local["_instance"] is not obj.__self__:
            violate(f"{bound[1]}: its item's instance is not the one its test method belongs to")

    def check_case(bound):
        """The instance a test method runs on (a unittest case, a pytest test class's object): no
        instance attribute hides a method of its class (``self.assertEqual`` made a no-op), and a
        case's type-equality functions are its class's names or code that is not the submission's."""
        obj = _instance_dict(bound[0], "__dict__").get("_obj")
        if _type(obj) is not J["MethodType"]:
            return
        instance = obj.__self__
        try:
            hidden = shadowed(instance)
            local = _instance_dict(instance, "__dict__")
        except _AttributeError:
            return  # an instance without a __dict__ (slots): nothing to hide a method with
        if hidden:
            violate(f"{bound[1]}: its test case's {', '.join(_map(key_text, hidden))[:200]} hidden by an instance attribute")
        funcs = local.get("_type_equality_funcs")
        if funcs is not None:
            if _type(funcs) is not _dict:
                violate(f"{bound[1]}: its test case's type-equality functions are a {name_of(funcs)}")
                return
            defaults = state["codes"]["type_equality_defaults"]
            for key, value in _list(funcs.items()):
                if _type(value) is _str:  # a name is a method of the case: only unittest's own, for its own type
                    expected = None
                    for default_key, default_value in _list(defaults.items()):  # by identity: no key's __eq__ runs
                        if default_key is key:
                            expected = default_value
                    if expected is None or expected != value:
                        kind = J["class_name"](key) if _any(c is _type for c in _class_mro(_type(key))) else name_of(key)
                        violate(f"{bound[1]}: its test case compares {key_text(kind)} values with {key_text(value)}")
                        return
                    continue
                plain = plain_function(value)
                bound_to_case = _type(value) is not J["MethodType"] or value.__self__ is instance
                if plain is None or not bound_to_case or foreign(value) or J["is_submission"](plain.__code__):
                    violate(f"{bound[1]}: a type-equality function of its test case is code of the submission")
                    return

    def needs_method_evidence(bound):
        """A unittest case proves its method ran through unittest's own ``_callTestMethod`` (the
        runner's wrapper of it); a class that overrides it with trusted code (``IsolatedAsyncioTestCase``)
        cannot, and one that overrides it with the submission's is a violation."""
        obj = _instance_dict(bound[0], "__dict__").get("_obj")
        if _type(obj) is not J["MethodType"]:
            return True
        for cls in J["class_mro"](_type(obj.__self__)):
            member = _class_dict(cls).get("_callTestMethod")
            if member is None:
                continue
            if member is state["codes"]["unittest_call_method"]:
                return True
            plain = plain_function(member)
            if plain is None or is_submission(plain.__code__):
                violate(f"{bound[1]}: its test case calls its method through code of the submission")
            return False
        return True


    J.update(shadowed=shadowed, foreign=foreign, check_instances=check_instances, check_instance_of=check_instance_of,
             check_case=check_case, needs_method_evidence=needs_method_evidence)
