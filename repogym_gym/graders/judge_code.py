"""The judge's rules about code: where a code object comes from, who holds a frame, which grader
modules are the code of their files (part of :mod:`judge_policy`, standard library only).

:func:`build` adds its closures to the policy's state ``J``; they look no global up (every name
they use was bound from ``J`` when they were built), so nothing the code under test rebinds later
reaches them.
"""


#: The one trusted code that builds code objects: types.coroutine sets a flag on a generator's code.
CODE_BUILDERS = ("/types.py",)


def build(J):  # noqa: C901, N803 - J is the policy's closure state, as in judge_policy
    """Add ``kind_of_file``, ``is_submission``, ``submission_frame``, ``where``, ``holder_of_frames``,
    ``compile_grader_files`` and ``verify_module`` to ``J`` (after :func:`_core`'s ``violate``,
    ``name_of``, ``key_text`` and ``safe``, and :func:`_writes`'s ``trust_written``)."""
    _core(J)
    _writes(J)
    _type, _id, _str, _any, _tuple, _len, _dict = J["type"], J["id"], J["str"], J["any"], J["tuple"], J["len"], J["dict"]
    _list, _frozenset = J["list"], J["frozenset"]
    _CodeType, _ModuleType, _Exception = J["CodeType"], J["ModuleType"], J["Exception"]
    _compile, _instance_dict, _get_ident, own_calls = J["compile"], J["instance_dict"], J["get_ident"], J["own_calls"]
    state, kinds, verified, keep = J["state"], J["kinds"], J["verified"], J["keep"]
    module_codes, module_dicts, grader_bytes = J["module_codes"], J["module_dicts"], J["grader_bytes"]
    tree, runner_files = J["tree"], J["runner_files"]
    # Deputies: trusted functions that hand the frames they obtain on to their caller.
    # A deputy is judged as whoever it hands its frames to. Modules whose business is frames are
    # deputies whole (inspect, pdb, pytest's _code); of traceback.py, every function that yields,
    # returns or walks frames is (the stack walkers also hand on what they read: source lines, an
    # oracle of the calling test); what keeps frames to itself (TracebackException, extract_tb's
    # summary of a caught exception's own traceback) is not, so formatting an exception stays allowed.
    deputies = (("/traceback.py", frozenset(("walk_stack", "walk_tb", "_walk_tb_with_full_positions", "extract_stack",
                                             "format_stack", "print_stack", "extract", "_extract_from_extended_frame_gen"))),
                ("/logging/__init__.py", frozenset(("<lambda>",))),
                ("/asyncio/base_tasks.py", frozenset(("_task_get_stack",))))
    deputy_parts = ("/_pytest/_code/", "/pdb.py", "/bdb.py", "/inspect.py")

    def canonical(filename):
        """Whether a path has no ``.`` or ``..`` component and no empty one: only such a name is in the
        directory its prefix names (``os.path.normpath`` of it is itself)."""
        return not ("//" in filename or "/./" in filename or "/../" in filename or filename.endswith("/")
                    or filename.endswith("/.") or filename.endswith("/.."))

    def kind_of_file(filename):
        """"trusted" (the interpreter's installation, the runner), "grader" (a file whose bytes were
        read first) or "submission" (everything else, made-up names like ``<string>`` included)."""
        found = kinds.get(filename) if _type(filename) is _str else "submission"
        if found is not None:
            return found
        if filename in runner_files or filename.startswith("<frozen "):
            found = "trusted"
        elif filename in grader_bytes:
            found = "grader"
        elif filename.startswith(tree) or not filename.startswith("/") or not canonical(filename):
            found = "submission"  # a name through ".." (round 34: a root + "/.." * 40 + a file of the tree) is no root's
        else:
            found = "trusted" if _any(filename.startswith(root) for root in state["roots"]) else "submission"
        if state["roots"]:
            kinds[filename] = found
        return found

    J["canonical"] = canonical

    def is_submission(code):
        kind = kind_of_file(code.co_filename)
        return kind == "submission" or (kind == "grader" and _id(code) not in verified)

    def submission_frame(frame):
        """The innermost frame from ``frame`` outward that runs submission code, or None."""
        while frame is not None:
            if is_submission(frame.f_code):
                return frame
            frame = frame.f_back
        return None

    path_chars = _frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-")

    def where(frame):
        """Where ``frame`` runs, for a violation's message. The names of submission code (its file's
        name, its function's name) are the judged process's to choose and the grade reaches the
        agent: they are never quoted whole (a child process can read the hidden tests and the judged
        process spell them out in function names), only a path of the tree in 60 safe characters."""
        if frame is None:
            return "(no Python caller)"
        code = frame.f_code
        if not is_submission(code):
            return f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"
        filename = code.co_filename
        if _type(filename) is _str and filename.startswith(tree):
            rel = "".join(c if c in path_chars else "?" for c in filename[_len(tree):][:60])
            return f"{rel}:{frame.f_lineno} (code of the submission)"
        return f"code of the submission without a file of the tree, line {frame.f_lineno}"

    opmap, wide = J["opmap"], J["version"] >= (3, 12)
    name_ops = _frozenset(opmap[n] for n in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD") if n in opmap)
    halved = _frozenset(opmap[n] for n in (("LOAD_GLOBAL", "LOAD_ATTR") if wide else ("LOAD_GLOBAL",)))
    extended, line_cache = opmap["EXTENDED_ARG"], {}

    def line_names(frame):
        """The names the instructions of ``frame``'s current line load (globals, attributes, methods):
        what that line of code can be calling. A callback the garbage collector runs interrupts any
        frame at any line; a frame counts as calling ``f`` only on a line that names ``f``."""
        code, line = frame.f_code, frame.f_lineno
        key = (_id(code), line)
        found = line_cache.get(key)
        if found is None:
            keep.append(code)
            raw, names, found, ext = code.co_code, code.co_names, J["set"](), 0
            for start, end, number in code.co_lines():
                if number != line:
                    continue
                for i in J["range"](start, end, 2):
                    op, arg = raw[i], raw[i + 1] | ext
                    ext = arg << 8 if op == extended else 0
                    if op in name_ops:
                        index = arg >> 1 if op in halved else arg
                        if index < _len(names):
                            found.add(names[index])
            found = line_cache[key] = _frozenset(found)
        return found

    def is_deputy(code):
        filename = code.co_filename
        if kind_of_file(filename) != "trusted":
            return False
        if _any(part in filename for part in deputy_parts):
            return True
        return _any(filename.endswith(tail) and code.co_name in names for tail, names in deputies)

    def hands_on(frame):
        """A deputy's frame, or ``TracebackException.__init__`` asked to capture the frames' locals: it keeps the
        frames to itself but hands their locals' reprs on (round 46 read a test frame's values through it)."""
        code = frame.f_code
        if is_deputy(code):
            return True
        if not code.co_filename.endswith("/traceback.py") or kind_of_file(code.co_filename) != "trusted":
            return False
        # any traceback.py frame asked for locals, by name or through **kwargs (round 47: from_exception)
        local = frame.f_locals
        wanted = local.get("capture_locals")
        more = local.get("kwargs")
        if _type(more) is _dict and "capture_locals" in more:
            wanted = more["capture_locals"]
        return not (wanted is None or wanted is False)  # identity tests only: never the object's own __bool__

    def holder_of_frames(caller):
        """Who ends up holding what ``caller`` obtains: the first frame outward that is not a deputy."""
        frame = caller
        while frame is not None and hands_on(frame):
            frame = frame.f_back
        return frame

    def compile_grader_files():
        """At init, before any code of the task can run: what every grader file compiles to, plainly
        and with pytest's assertion rewriting (pytest's Python code could be patched later), and the
        names its top-level imports bind (``{name: (module, attribute or None)}``)."""
        own_call(compile_all)

    def compile_all():
        import ast

        from _pytest.assertion.rewrite import rewrite_asserts

        for filename, source in grader_bytes.items():
            compile_grader_file(ast, rewrite_asserts, filename, source)

    def compile_grader_file(ast, rewrite_asserts, filename, source):
        codes = []
        try:
            parsed = ast.parse(source, filename=filename)
            J["imports"][filename] = _imports(ast, parsed)
            J["decorated"][filename] = _decorated(ast, parsed)
            J["bound"][filename] = _bound_names(ast, parsed)
            J["lines"][filename] = J["line_table"](ast, parsed)
            rewrite_asserts(parsed, source, filename, None)
            J["lines"][filename] = J["line_table"](ast, parsed)  # what pytest's rewriting binds too
            codes.append(_compile(parsed, filename, "exec", dont_inherit=True))
        except _Exception:  # noqa: BLE001 - an unparseable file verifies nothing
            pass
        module_codes[filename] = codes
        names, stack = J["set"](), _list(codes[:1])
        while stack:  # the qualified name of every function the file defines
            code = stack.pop()
            names.add(code.co_qualname)
            stack.extend(k for k in code.co_consts if _type(k) is _CodeType)
        J["qualnames"][filename] = _frozenset(names)

    def _imports(ast, parsed):
        bound, counts = {}, {}
        for node in ast.walk(parsed):  # a name bound anywhere else in the file is not checked
            for target in _targets(ast, node):
                counts[target] = counts.get(target, 0) + 1
        for node in parsed.body:
            if _type(node) is ast.Import:
                for alias in node.names:
                    name = alias.asname or alias.name.split(".", 1)[0]
                    bound[name] = (alias.name if alias.asname else name, None)
            elif _type(node) is ast.ImportFrom and node.level == 0 and node.module:
                for alias in node.names:
                    if alias.name != "*":
                        bound[alias.asname or alias.name] = (node.module, alias.name)
        return {k: v for k, v in bound.items() if counts.get(k, 0) == 1}

    def _decorated(ast, parsed):
        """``{name: root names of its decorators}`` for each top-level ``def`` the file decorates
        (``@cached(cache=LRUCache(1))`` -> ``("cached",)``)."""
        found = {}
        for node in parsed.body:
            if (_type(node) is ast.FunctionDef or _type(node) is ast.AsyncFunctionDef) and node.decorator_list:
                roots = []
                for expr in node.decorator_list:
                    while _type(expr) is ast.Call or _type(expr) is ast.Attribute:
                        expr = expr.func if _type(expr) is ast.Call else expr.value
                    roots.append(expr.id if _type(expr) is ast.Name else "")
                found[node.name] = _tuple(roots)
        return found

    def _bound_names(ast, parsed):
        """Every name the file binds anywhere (None after a star import: it may bind any)."""
        names = J["set"]()
        for node in ast.walk(parsed):
            if _type(node) is ast.ImportFrom and _any(a.name == "*" for a in node.names):
                return None
            names.update(_targets(ast, node))
        return _frozenset(names)

    def _targets(ast, node):
        t = _type(node)
        if t is ast.Import or t is ast.ImportFrom:
            return [a.asname or a.name.split(".", 1)[0] for a in node.names]
        if t is ast.Name and _type(node.ctx) is ast.Store:
            return [node.id]
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            return [node.name]
        if t is ast.Global or t is ast.Nonlocal:
            return [*node.names, *node.names]  # rebound from a function: never checked
        return []

    def any_equal(candidates, code):
        for original in candidates:  # noqa: SIM110 - a loop, not the builtin any (the policy uses its own captured builtins)
            if original == code:
                return True
        return False

    def exec_globals(caller):
        """The globals a module's code runs in, from importlib's or pytest's exec call."""
        try:
            local = J["plain"](caller.f_locals)  # a class body's: its __prepare__ mapping (round 29)
        except _Exception:  # noqa: BLE001
            return None
        module = local.get("module")
        if _type(module) is _ModuleType:
            return _instance_dict(module, "__dict__")
        args = local.get("args")
        if _type(args) is _tuple and _len(args) >= 2 and _type(args[1]) is _dict:
            return args[1]
        return None

    def plain_code(filename):
        """The file's bytes compiled without assertion rewriting (the C compiler: safe to do late)."""
        try:
            return own_call(_compile, grader_bytes[filename], filename, "exec", 0, True)
        except _Exception:  # noqa: BLE001
            return None

    def own_call(run, *args):
        """``run(*args)``: the policy itself calling library code on data of its own (the grader files'
        bytes); the events that code raises are the policy's (any other event inside the policy is a
        violation)."""
        ident = _get_ident()
        own_calls[ident] = own_calls.get(ident, 0) + 1
        try:
            return run(*args)
        finally:
            own_calls[ident] -= 1
            if not own_calls[ident]:
                del own_calls[ident]

    def verify_module(code, caller):
        """Whether a grader module's code equals what its bytes compile to (its nested code is then verified)."""
        candidates = module_codes.get(code.co_filename, ())
        if not any_equal(candidates, code):
            if candidates and J["rewriting"]:
                return False  # pytest rewrites every grader file (the runner asks it to): its rewriting was switched off
            candidates = (plain_code(code.co_filename),)
        for original in candidates:
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
                    J["grader_modules"].append(namespace)
                return True
        return False

    J.update(line_names=line_names, exec_globals=exec_globals, kind_of_file=kind_of_file, is_submission=is_submission, submission_frame=submission_frame, where=where,
             holder_of_frames=holder_of_frames, compile_grader_files=compile_grader_files, verify_module=verify_module)


def _core(J):  # noqa: N803
    """Add ``violate``, ``name_of``, ``key_text`` and ``safe`` to ``J``: how a violation is noted and quoted;
    and make ``J["class_dict"]``, ``J["instance_dict"]`` and ``J["class_qualname"]`` read only plain data.

    A namespace is read through keys that are exactly a str: a dict lookup compares the key it looks
    for with every stored key of the same hash, so a planted key of another type (a str subclass,
    any object with ``__hash__`` and ``__eq__``) would run its ``__eq__`` inside the policy, and a
    dict subclass set as an object's ``__dict__`` its own ``get``. A namespace holding such a key is
    read as a copy in which each such key is a placeholder str (the snapshots' comparison names the
    key itself), a dict subclass through ``dict``'s own methods. A class's name or qualified name that
    is not exactly a str (``__name__`` accepts a str subclass, whose ``__format__`` an f-string calls)
    reads as a placeholder."""
    _len, _type, _str, violations = J["len"], J["type"], J["str"], J["violations"]
    _all, _map, _is, _repeat, _list, _dict, _any = J["all"], J["map"], J["is_"], J["repeat"], J["list"], J["dict"], J["any"]
    _enumerate, _tuple, _id = J["enumerate"], J["tuple"], J["id"]
    raw_class_dict, raw_attribute, raw_name, raw_qualname, class_mro = (
        J["class_dict"], J["instance_dict"], J["class_name"], J["class_qualname"], J["class_mro"])
    _mappingproxy, _dict_items = _type(raw_class_dict(_type)), _dict.items

    def plain(mapping, proxy=False):
        """``mapping`` with keys exactly of str, or ``{}`` for what is not a dict; a mappingproxy only with
        ``proxy`` (a class's own, whose dict is exact: any other proxy runs its mapping's code)."""
        t = _type(mapping)
        if t is _dict or (proxy and t is _mappingproxy):
            if _all(_map(_is, _map(_type, mapping), _repeat(_str))):
                return mapping
            items = _dict_items(mapping) if t is _dict else mapping.items()  # a proxy's items are its class dict's
        elif _any(_map(_is, class_mro(t), _repeat(_dict))):
            items = _dict_items(mapping)
        else:
            return {}
        # each key of another type stands as a placeholder str: a check that a namespace holds only
        # certain keys still sees one more (round 26's planted loader key made its loader no genuine one)
        return {key if _type(key) is _str else f"<a key of another type #{i}>": value
                for i, (key, value) in _enumerate(_list(items))}

    def class_dict(cls):
        return plain(raw_class_dict(cls), True)

    modules = J["modules"]

    def plain_modules():
        """``sys.modules`` to look a name up in: a lookup in the dict itself runs the ``__eq__`` of a planted
        key of another type with the name's hash (a key deleted and re-added lands after it)."""
        return plain(modules)

    _getset, _member = _type(raw_class_dict(_type)["__dict__"]), _type(raw_class_dict(J["ModuleType"])["__dict__"])
    plain_keys = {}  # id(class) -> (class, its MRO when judged, whether every class dict of it has str keys only)

    def own_dict_slot(t):
        """Whether reading ``__dict__`` from an instance of ``t`` runs only the interpreter: every class
        of its MRO has keys that are exactly str (a lookup meets no planted key; cached per class and
        MRO, as class dicts gain str keys only) and the first ``__dict__`` among them is a C descriptor
        (a class's own ``__dict__`` property ran inside the policy in round 28). That entry is read on
        every call: a metaclass with a ``__dict__`` of its own lets ``C.__dict__ = property(...)`` be
        set on a class later (round 30 rebound it after a cached verdict)."""
        mro = class_mro(t)
        seen = plain_keys.get(_id(t))
        if seen is None or seen[0] is not t or seen[1] is not mro:
            seen = plain_keys[_id(t)] = (t, mro, _all(_all(_map(_is, _map(_type, raw_class_dict(c)), _repeat(_str)))
                                                      for c in mro))
        if not seen[2]:
            return False
        for c in mro:
            entry = raw_class_dict(c).get("__dict__")
            if entry is not None:
                return _type(entry) is _getset or _type(entry) is _member
        return True

    def instance_dict(obj, name):
        if name != "__dict__":
            return raw_attribute(obj, name)
        # a C descriptor's __dict__: an object's own dict, or a class's proxy of its exact dict
        return plain(raw_attribute(obj, name), True) if own_dict_slot(_type(obj)) else {}

    exact_types = _tuple(_map(_type, ("", b"", 0, 0.0, True, None)))
    copies = ((_str, _str.__str__), (J["bytes"], J["bytes"].__bytes__), (J["int"], J["int"].__index__),
              (J["float"], J["float"].__float__))  # each returns an exact copy of a subclass's value, by C alone
    name_slots = {"object.__getattr__": 1, "object.__setattr__": 1, "object.__delattr__": 1}

    def plain_args(event, args):
        """An audit event's arguments as the policy reads them, or None for a forged event: ``sys.audit``
        lets any code raise any event with any arguments, so a str, bytes, int or float subclass becomes
        an exact copy (its ``__eq__``, ``__hash__`` would run inside the policy: round 28), and an event
        that names an attribute must name it with a str. A sealed test's observed value stays as it is
        (the policy only hashes its canonical form, which takes exact builtin types only)."""
        if _type(args) is not _tuple:
            return None
        # a sealed test's observation is the value itself: its exact type is what the host compares
        observed = 2 if event == "repogym.judge" and _len(args) > 2 and _type(args[0]) is _str and args[0] == "observe" \
            else -1
        out = []
        for i, value in _enumerate(args):
            t = _type(value)
            if i != observed and not _any(_map(_is, exact_types, _repeat(t))):
                mro = class_mro(t)
                for base, copy in copies:
                    if _any(_map(_is, mro, _repeat(base))):
                        value = copy(value)
                        break
            out.append(value)
        slot = name_slots.get(event) if _type(event) is _str else None
        if slot is not None and (_len(out) <= slot or _type(out[slot]) is not _str):
            return None
        return _tuple(out)

    def class_name(cls):
        name = raw_name(cls)
        return name if _type(name) is _str else "<class with a name of another type>"

    def class_qualname(cls):
        name = raw_qualname(cls)
        return name if _type(name) is _str else "<class with a name of another type>"

    J.update(class_dict=class_dict, instance_dict=instance_dict, class_name=class_name, class_qualname=class_qualname,
             raw_class_dict=raw_class_dict, plain=plain, plain_args=plain_args, plain_modules=plain_modules)

    def violate(message):
        message = message if _len(message) <= 300 else message[:297] + "..."  # the grade names it; no channel out
        if _len(violations) < 50 and message not in violations:
            violations.append(message)

    def name_of(value):
        return class_name(_type(value))

    safe_chars = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-")

    def safe(text, limit=40):
        """A name the judged process chose (an attribute, a module, a path), as a violation quotes it:
        at most ``limit`` characters of a path's alphabet, so the grade is no channel for what the
        process read (the hidden tests, through a child process)."""
        if _type(text) is not _str:
            return f"<a {name_of(text)}>"
        return "".join(c if c in safe_chars else "?" for c in text[:limit]) + ("..." if _len(text) > limit else "")

    def key_text(key):
        return safe(key) if _type(key) is _str else f"<a {name_of(key)} key>"

    J.update(violate=violate, name_of=name_of, key_text=key_text, safe=safe)


def _writes(J):  # noqa: N803
    """Add ``trust_written(path, directory=False)`` to ``J``: whether writing ``path`` (creating, renaming, linking,
    changing it; with ``directory``, opening it as a directory, whose descriptor later calls write relative to)
    writes where the judge decides trust by location: under a trusted root, the interpreter's prefixes, the
    bytecode cache (``-X pycache_prefix``) or the runner's directory. Red-team round 35 wrote an unchecked
    ``.pyc`` of a standard-library module into the cache and imported it: its code took the library file's name
    and was trusted (its frame access and a test helper's ``__code__`` rewritten); a ``.pyc`` of the policy
    itself, planted by a local run, was loaded by later runs under every sandbox. The path is resolved as the
    kernel will (symlinks followed with the interpreter's ``lstat``/``readlink``, which raise no event)."""
    import os
    import stat

    _type, _str, _bytes, _len, _any = J["type"], J["str"], J["bytes"], J["len"], J["any"]
    lstat, readlink, getcwd, is_link, is_dir = os.lstat, os.readlink, os.getcwd, stat.S_ISLNK, stat.S_ISDIR
    _OSError, _ValueError, _stat = J["OSError"], J["ValueError"], J["stat"]
    runner_dirs = J["tuple"](frozenset(f.rsplit("/", 1)[0] + "/" for f in J["runner_files"]))

    def resolved(text):
        """``text`` made absolute with every symlink of its existing part followed (None past 40 links)."""
        pending = (text if text.startswith("/") else getcwd() + "/" + text).split("/")[::-1]
        done, hops, exists = [], 0, True
        while pending:
            part = pending.pop()
            if part == "" or part == ".":
                continue
            if part == "..":
                done[-1:] = []
                continue
            done.append(part)
            if not exists:
                continue
            try:
                mode = lstat("/" + "/".join(done)).st_mode
            except (_OSError, _ValueError):
                exists = False  # created by this call, or unreadable: the rest is taken as written
                continue
            if is_link(mode):
                hops += 1
                if hops > 40:
                    return None
                target = readlink("/" + "/".join(done))
                done.pop()
                if target.startswith("/"):
                    done = []
                pending.extend(target.split("/")[::-1])
        return "/" + "/".join(done)

    def trust_written(path, directory=False):
        if _type(path) is _bytes:
            path = path.decode("utf-8", "surrogateescape")
        if _type(path) is not _str:
            return False  # a descriptor: one opened for writing, or a directory's, was judged when it was opened
        real = resolved(path)
        if real is None:
            return True
        if directory:
            try:
                if not is_dir(_stat(real).st_mode):
                    return False
            except (_OSError, _ValueError):
                return False
        protected = J["state"]["roots"] + J["open_skip_prefixes"] + runner_dirs
        return _any(real.startswith(p) or real + "/" == p for p in protected)

    # the events that change a file or a directory, and which of their arguments name what they change
    file_changes = {"os.rename": (0, 1), "os.link": (1,), "os.symlink": (1,), "os.mkdir": (0,), "os.remove": (0,),
                    "os.rmdir": (0,), "os.chmod": (0,), "os.chown": (0,), "os.utime": (0,), "os.truncate": (0,),
                    "os.chdir": (0,), "os.mkfifo": (0,), "os.mknod": (0,), "os.setxattr": (0,), "os.removexattr": (0,)}
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def on_change(event, args):
        """Why ``open`` (for writing, or os.open's of a directory: its descriptor is what later calls write
        relative to) or a change event is refused, or None."""
        writes = event != "open" or (_len(args) == 3 and _type(args[2]) is J["int"] and args[2] & write_flags != 0)
        if event == "open":
            changed = (args[0],) if _len(args) == 3 and (writes or args[1] is None) else ()
        else:
            changed = J["tuple"](args[i] for i in file_changes[event] if i < _len(args))
        for path in changed:
            if trust_written(path, directory=not writes):
                return f"{event} of {J['safe'](path if _type(path) is _str else '', 60)}: where the judge decides " \
                    "trust by location (the interpreter, its bytecode cache, the runner) is not changed"
        return None

    J.update(trust_written=trust_written, file_changes=J["frozenset"](file_changes), on_change=on_change)
