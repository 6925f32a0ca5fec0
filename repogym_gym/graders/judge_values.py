"""Comparisons as builtin values: a test's ``==``, ``<``, ``in``... on data is not answered by a class of
the code under test (part of the judge, copied beside the runner; standard library only). A ``list``
subclass whose ``__eq__`` is always True passed every ``assert got == want`` of a mined suite (round 14).

A comparison a test makes is decided between the **canonical forms** of both sides: an exact scalar
(``str``, ``bytes``, ``int``, ``float``, ``complex``, ``bool``, ``None``) is itself; an exact container the
same container of its items' forms; a subclass of those its exact builtin copy (made by the builtin types'
own C methods) if a class of its MRO that is not genuine answers a comparison, hash, iteration, length or
item access, or an item's form differs (else itself: namedtuples, ``Counter``, enums); ``UserList``,
``UserDict``, ``UserString``, ``deque``, ``SimpleNamespace``, ``mappingproxy`` the form of what they hold;
any other value itself if its class is genuine and nothing it holds differs, else a **placeholder**
(``weakref.proxy`` too), equal to and ordered against only another placeholder, by the package's own
comparison, never equal to builtin data. A class is *genuine* if it is a C type, or a module of the
installation or the grader names it and each comparison it defines is that file's code under that
class's name (``mock.ANY`` only if the grader uses it); *whole* (bases genuine, every function and
accessor the installation's); and *unchanged* since judged (round 19). The runner rewrites each
comparison of a grader file into a call (:func:`plain_comparisons`) and wraps unittest's assertions.
"""

import functools
import sys


def make_comparisons(roots, graders=(), wildcards=True):
    """``((plain_key, intact_key, Self), comparisons)``: ``plain_key(left) == plain_key(right)`` is ``(a, b)``, both
    sides as the builtin values they compare as; ``intact_key(None) == intact_key(None)`` whether the pairs
    made are as made (``intact``); both opaque ``functools.cmp_to_key`` objects. ``comparisons``: ``judge_eq``,
    ``_ne``, ``_lt``, ``_le``, ``_gt``, ``_ge``, ``_in``, ``_not_in``, each ``(left, right) -> result``, decided
    on the builtin values when a side answered for one (a placeholder against builtin data: ``==`` False,
    ``<`` a ``TypeError``; ``Self``, the placeholders' class: a container that is one answers ``in`` itself). ``roots``:
    the installation's directories; ``graders``: its files; ``wildcards``: whether those use ``mock.ANY``."""
    _type, _str, _bytes, _tuple, _list, _dict, _set, _frozenset, _slice, _any, _bool, _zip = (
        type, str, bytes, tuple, list, dict, set, frozenset, slice, any, bool, zip)
    # _id: object.__hash__, the address rotated by 4 bits (one-to-one like id(), and no builtins.id audit event)
    _qualname, _id, _type_type, _object = type.__dict__["__qualname__"].__get__, object.__hash__, type, object
    _mappingproxy = type(type.__dict__)
    _mro = type.__dict__["__mro__"].__get__
    _raw_class_dict, _enumerate = type.__dict__["__dict__"].__get__, enumerate

    def _plain(mapping):
        """A namespace with keys exactly of str (itself, or a copy with a placeholder str for each other key): a
        lookup in a dict holding a planted key of another type runs that key's ``__eq__``."""
        if _type(mapping) is not _dict and _type(mapping) is not _mappingproxy:
            return {}
        for key in mapping:
            if _type(key) is not _str:
                return {k if _type(k) is _str else f"<a key of another type #{i}>": v  # still one more key
                        for i, (k, v) in _enumerate(_list(mapping.items()))}
        return mapping

    def _class_dict(cls):
        return _plain(_raw_class_dict(cls))
    _modules, _builtin_names = sys.modules, frozenset(sys.builtin_module_names)
    _Exception, _NotImplemented, _BaseException, _AssertionError = Exception, NotImplemented, BaseException, AssertionError
    _cmp_to_key, _module_dict = functools.cmp_to_key, type(sys).__dict__["__dict__"].__get__
    # sets of types are held as sets of their ids: ``t in {types}`` compares t with == (hash first), and a
    # metaclass's __eq__ or __hash__ would answer (round 28); an id compares as an int
    scalars = frozenset(map(_id, (str, bytes, int, float, complex, bool, type(None))))
    copies = {  # exact builtin copies of a subclass's value, made by the builtin types' own C methods (keyed by id below)
        str: lambda v: _str.__getitem__(v, _slice(None)), bytes: lambda v: _bytes.__getitem__(v, _slice(None)),
        int: int.__pos__, float: float.__pos__, complex: complex.__pos__,
        list: _list.copy, tuple: lambda v: _tuple.__getitem__(v, _slice(None)), dict: lambda v: _dict(_dict.items(v)),
        set: _set.copy, frozenset: _frozenset.copy,
    }
    copies = {_id(t): make for t, make in copies.items()}
    roots, graders = _tuple(r.rstrip("/") + "/" for r in roots), frozenset(graders)

    def installed_path(path):  # under a root, and no "." or ".." in it (round 34 climbed out of a root)
        return not ("//" in path or "/./" in path or "/../" in path or path.endswith(("/", "/.", "/.."))) and _any(
            path.startswith(r) for r in roots)
    _ModuleType, _FunctionType = _type(sys), _type(lambda: None)
    _staticmethod, _classmethod = staticmethod, classmethod
    c_methods = frozenset(map(_id, (_type(object.__eq__), _type(list.copy), _type(len), _type(None))))  # slot wrappers, C methods
    installed = {_id(m): m for m in list(sys.modules.values())}  # before any code of the task ran
    _all, _len, _map, _property = all, len, map, property
    import itertools as _itertools
    import operator as _operator

    _is, _repeat = _operator.is_, _itertools.repeat
    _bases = type.__dict__["__bases__"].__get__
    _fget, _fset, _fdel = property.__dict__["fget"].__get__, property.__dict__["fset"].__get__, property.__dict__["fdel"].__get__
    import collections as _collections

    holders = frozenset(map(_id, (_collections.UserList, _collections.UserDict, _collections.UserString)))
    _deque, _namespace = _collections.deque, _type(sys.implementation)  # types.SimpleNamespace
    import weakref as _weakref

    _mappingproxy_type = _type(type.__dict__)
    _weak_proxies = frozenset(map(_id, (_weakref.ProxyType, _weakref.CallableProxyType)))
    _member_descriptor = _type(_type("Slotted", (), {"__slots__": ("x",)}).__dict__["x"])  # a slot's own descriptor
    _flags = type.__dict__["__flags__"].__get__
    heap_type = 1 << 9  # Py_TPFLAGS_HEAPTYPE: every class made by Python code has it; a C type of the interpreter does not

    _getset = _type(type.__dict__["__dict__"])

    def _instance_dict(value):
        """``value``'s instance dict, read by the interpreter's own descriptor: ``{}`` if it has none, None if
        the first ``__dict__`` of its class's MRO is not a C one (a package's property ran here: round 32)."""
        for c in _mro(_type(value)):
            entry = _class_dict(c).get("__dict__")
            if entry is not None:
                if _type(entry) is not _getset and _type(entry) is not _member_descriptor:
                    return None
                try:
                    found = entry.__get__(value, _type(value))
                except _Exception:  # noqa: BLE001 - another class's descriptor (its layout checked): not read
                    return None
                return _plain(found) if _type(found) is _dict else None
        return {}
    genuine = {}  # id(class) -> (class, whether it is a class of the interpreter's installation)
    snapshots = {}  # id(class) -> (class, MRO, its dict's values, its module's namespace, code_of(that)) when judged
    # the comparisons a test decides on builtin values, and what a subclass can answer for its
    # builtin value in a comparison or a membership test
    orders = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
    answers = (*orders, "__contains__", "__hash__", "__iter__", "__len__", "__getitem__")
    constructors = frozenset(("__new__", "__init__", "__init_subclass__", "__class_getitem__", "__subclasshook__"))
    import builtins as _builtins_module

    builtin_names = frozenset(k for k in _module_dict(_builtins_module) if not k.startswith("__"))
    code_types = frozenset(map(_id, (_FunctionType, _ModuleType, _type(len))))
    _missing = object()

    pending, made = {}, []  # classes being judged (a class's data may be of a class that refers back); verdicts made

    def is_genuine(cls):
        """``cls`` is what a module's namespace names it, that module is one the interpreter had when
        the runner started or one loaded from a file of the installation or of the grader, and each
        comparison method it defines is code of that file, named as that class's (a class of the
        submission that borrows a trusted function, or names a module it planted, is not).

        A class met again while it is judged (``ipaddress``'s networks hold constants of their own
        kind) counts as genuine for that round; when a class is then found not genuine, every
        verdict made since it was begun is forgotten, so none rests on that assumption."""
        found = genuine.get(_id(cls))
        if found is not None and found[0] is cls:
            if found[1] and not unchanged(cls):  # changed since it was judged (round 19: a slot made a property)
                genuine[_id(cls)] = (cls, False)
                return False
            return found[1]
        if pending.get(_id(cls)) is cls:
            return True
        pending[_id(cls)], begun = cls, _len(made)
        try:
            verdict = judge(cls)
        finally:
            del pending[_id(cls)]
        if not verdict:
            for key in made[begun:]:
                if genuine.get(key, (None, False))[1]:
                    del genuine[key]
            del made[begun:]
        genuine[_id(cls)] = (cls, verdict)
        made.append(_id(cls))
        return verdict

    def judge(cls):
        """The checks of :func:`is_genuine` for a class not judged yet."""
        if not _flags(cls) & heap_type:  # a C type (OrderedDict, deque): only the interpreter makes those
            return True
        own = _class_dict(cls)
        name, qualname = own.get("__module__"), _qualname(cls)
        module = _plain(_modules).get(name) if _type(name) is _str else None  # a planted key of sys.modules stands as a placeholder
        if module is None or _type(module) is not _ModuleType or _type(qualname) is not _str:
            return False  # a name of a str subclass would run its own split, ==, hash below
        namespace = _module_dict(module)
        if _plain(namespace) is not namespace:
            return False  # a key of another type planted in the module's namespace
        filename = namespace.get("__file__")
        if filename is not None and _type(filename) is not _str:
            return False
        if installed.get(_id(module)) is not module and not (
                _type(filename) is _str and (filename in graders or installed_path(filename))):
            return False
        resolved = namespace
        for part in qualname.split("."):
            resolved = resolved.get(part) if _type(resolved) is _dict else _class_dict(resolved).get(part) \
                if _any(_map(_is, _mro(_type(resolved)), _repeat(_type_type))) else None
        if resolved is not cls:
            return False
        if not wildcards and name == "unittest.mock" and qualname == "_ANY":
            return False  # mock.ANY equals anything: the package may return it unless the tests use it themselves
        for key in answers:
            method = own.get(key)
            if method is None:
                continue
            t = _type(method)
            if t is _staticmethod or t is _classmethod:
                method, t = method.__func__, _type(method.__func__)
            if t is _FunctionType:
                where = method.__code__.co_filename
                if _type(where) is not _str or _type(method.__qualname__) is not _str:
                    return False
                frozen = installed.get(_id(module)) is module and _type(where) is _str and where.startswith("<frozen ")
                if (where != filename and not frozen) or method.__qualname__ != f"{qualname}.{key}":
                    return False
            elif _id(t) not in c_methods:
                return False  # a bound method, a partial, an object with __call__: not the class's own
        if filename not in graders and not whole(cls, own, filename):
            return False
        snapshots[_id(cls)] = (cls, _mro(cls), _tuple(own.values()), namespace, code_of(namespace))
        return True

    def installation_code(value, filename):
        """Whether ``value`` is a function whose code is of ``filename`` or of another file of the
        installation (``functools.total_ordering``'s, ``enum``'s), or a C function or slot wrapper."""
        if _id(_type(value)) in c_methods:
            return True
        if _type(value) is not _FunctionType:
            return False
        where = value.__code__.co_filename
        return _type(where) is _str and (where == filename or where.startswith("<frozen ")
                                        or installed_path(where))

    getters = frozenset(map(_id, (_operator.attrgetter, _operator.itemgetter)))
    _lru_wrapper = functools._lru_cache_wrapper

    def installation_getter(value):
        """Whether ``value`` is what the installation's own properties are made of besides functions: an
        ``attrgetter`` or ``itemgetter``, or an ``lru_cache`` wrapper of a function of the installation
        (a ``partial`` of the package's function is not: what it calls is not in its ``__dict__``)."""
        if _id(_type(value)) in getters:
            return True
        return _type(value) is _lru_wrapper and installation_code((_instance_dict(value) or {}).get("__wrapped__"), "")

    def whole(cls, own, filename):
        """Whether everything a class of the installation is made of is the installation's: each base is
        genuine, each function it holds (a method, a static or class method's, a property's accessor, a
        descriptor's, such as ``cached_property``'s) is code of the installation, and no other value it
        holds is of a class of the package that serves attributes or compares (:func:`serves`; an enum's
        members are of the class itself). A genuine comparison reads what the class serves (round 19: a
        module's class replaced by one built of its own comparison functions and a property of the
        package's; a class of a grader file may subclass the package's and is not looked into)."""
        for base in _bases(cls):  # a namedtuple's base is not what its module names it, but is made of the same file
            module, mine = _class_dict(base).get("__module__"), own.get("__module__")
            if not is_genuine(base) and not (_type(module) is _str and _type(mine) is _str and module == mine
                                             and whole(base, _class_dict(base), filename)):
                return False
        mro = _mro(cls)
        for key, value in _list(own.items()):
            if key in constructors:
                continue  # makes instances, whose state is judged as data (a namedtuple's __new__ is eval'd)
            t = _type(value)
            if t is _staticmethod or t is _classmethod:
                value, t = value.__func__, _type(value.__func__)
            if t is _FunctionType or _id(t) in c_methods:
                if not installation_code(value, filename):
                    return False
            elif t is _property:  # a subclass may serve its own way (__get__): it is data, below
                for accessor in (_fget(value), _fset(value), _fdel(value)):
                    if accessor is not None and not installation_code(accessor, filename) and not installation_getter(accessor) \
                            and _id(_type(accessor)) not in scalars:  # mock's return_value has its doc string as fdel
                        return False
            elif not _any(_map(_is, mro, _repeat(t))):  # data: nothing in it answers for itself (an enum's members are its own)
                if serves(t):
                    return False
                data = _instance_dict(value)
                if data is None:
                    return False
                for held in _list(data.values()):  # cached_property.func, partialmethod.func
                    if _type(held) is _FunctionType and not installation_code(held, filename):
                        return False
        return True

    def serves(t):
        """Whether a class not of the installation in ``t``'s MRO defines how an attribute is served
        (``__get__``) or how its values compare: what a class-level value of that type could answer for."""
        if is_genuine(t):
            return False
        for c in _mro(t):
            d = _class_dict(c)
            if (d.get("__get__") is not None or _any(d.get(k) is not None for k in orders)) and not is_genuine(c):
                return True
        return False

    def unchanged(cls):
        """Whether a class judged genuine is as it was then: the same MRO, each entry of its dict the
        same object, and its module's functions, classes and modules the same, with no builtin newly
        shadowed there (:func:`code_of`; a genuine method calls its globals). Its bases' dicts are not
        looked at here."""
        snap = snapshots.get(_id(cls))
        if snap is None or snap[0] is not cls:
            return True  # a C type, or a class of a grader file: nothing of the installation to keep
        _, mro, values, namespace, code = snap
        now = _tuple(_class_dict(cls).values())
        if _mro(cls) is not mro or _len(now) != _len(values) or not _all(_map(_is, now, values)):
            return False
        held, shadows = code
        if _plain(namespace) is not namespace:
            return False  # a key of another type planted since: a lookup would run its __eq__, a hash its __hash__
        return _all(namespace.get(k, _missing) is v for k, v in _list(held.items())) and not _any(
            k in builtin_names and k not in shadows for k in _list(namespace))

    def code_of(namespace):
        """What of a module's namespace its code calls: each function, class and module it holds (one
        swapped later is a different callee), and the names it holds that shadow a builtin (one added
        later, ``fractions.isinstance = ...``, would be what its code calls instead)."""
        held = {k: v for k, v in _list(namespace.items()) if _id(_type(v)) in code_types or _any(_map(_is, _mro(_type(v)), _repeat(_type_type)))}
        return held, _frozenset(k for k in _list(namespace) if k in builtin_names)

    def own_equality(t, base):
        """Whether a class of ``t``'s MRO before ``base`` defines its own comparison, and is not the installation's."""
        for c in _mro(t):
            if c is base:
                return False
            own = _class_dict(c)
            if _any(name in own for name in answers) and not is_genuine(c):
                return True
        return False

    def plain(value, depth):
        t = _type(value)
        if _id(t) in scalars or depth > 40:
            return value
        if t is _list or t is _tuple:
            items = [plain(v, depth + 1) for v in value]
            changed = _any(a is not b for a, b in _zip(items, value))
            return (items if t is _list else _tuple(items)) if changed else value
        if t is _set or t is _frozenset:
            items = [plain(v, depth + 1) for v in value]
            if not _any(a is not b for a, b in _zip(items, value)):
                return value
            return t(items) if _all(_map(hash_safe, items)) else placeholder(value)  # rebuilt: each item hashed
        if t is _dict:
            pairs = [(plain(k, depth + 1), plain(v, depth + 1), k, v) for k, v in _list(value.items())]
            if not _any(a is not k or b is not v for a, b, k, v in pairs):
                return value
            # rebuilt, every key is hashed again: a key of the package's (its own __hash__) stands for the whole dict
            return {a: b for a, b, _, _ in pairs} if _all(hash_safe(a) for a, _, _, _ in pairs) else placeholder(value)
        for base in _mro(t):
            make = copies.get(_id(base))  # by id: a metaclass's hash would run
            if make is not None:
                copy = plain(make(value), depth + 1)
                if own_equality(t, base):
                    return copy
                # its comparison is the builtin's (a namedtuple, Counter, a bare subclass): kept, unless
                # what it holds answers for itself (round 16: a dict subclass holding an always-equal object)
                return value if changed_inside(copy, value, base) else copy
            if _id(base) in holders:  # UserList, UserDict, UserString compare as what their .data holds
                own = _instance_dict(value)
                if own is None or "data" not in own or _any("data" in _class_dict(c) for c in _mro(t) if c is not base and not is_genuine(c)):
                    return placeholder(value)  # .data is not the instance's own (a property, a slot of the package's)
                data = own["data"]
                held = plain(data, depth + 1)
                return value if held is data else held
            if base is _deque:  # a deque compares item by item: look into it as into a list
                items = _list(_deque.__iter__(value))
                held = plain(items, depth + 1)
                return value if held is items else _deque(held)
            if base is _namespace:  # SimpleNamespace compares its attributes
                data = _instance_dict(value)
                held = plain(data, depth + 1) if data is not None else placeholder(value)
                return value if held is data else held
        if t is _mappingproxy_type:  # compares as the mapping it wraps: as that mapping's items, plainly
            return plain(_dict(value.items()), depth + 1)
        if _id(t) in _weak_proxies:  # compares as whatever it refers to, which may be anything of the package's
            return placeholder(value)
        if self_answering(t):
            return placeholder(value)
        if compares(t) and holds_a_liar(value, t, depth):
            return placeholder(value)  # a genuine class whose comparison reads what the instance holds (ChainMap, Fraction)
        return value

    def hash_safe(key):  # hashed by the interpreter's code only: a C type's own, a placeholder's, a tuple's of those
        t = _type(key)
        if t is _tuple or t is _frozenset:
            return _all(_map(hash_safe, key))
        return t is Self or not _flags(t) & heap_type

    def compares(t):
        """Whether a class of ``t``'s MRO but ``object`` defines a comparison (equality or order)."""
        return _any(c is not _object and _any(name in _class_dict(c) for name in orders) for c in _mro(t))

    def holds_a_liar(value, t, depth):
        """Whether what ``value`` holds (its instance dict and slots, read past any descriptor of the
        package's: the slots' own member descriptors) answers for itself once made plain."""
        data = _instance_dict(value)
        if data is None:
            return True
        held = _list(data.values())
        for c in _mro(t):
            slots = _class_dict(c).get("__slots__", ())
            for name in ((slots,) if _type(slots) is _str else slots if _type(slots) is _tuple or _type(slots) is _list else ()):
                if _type(name) is not _str:
                    continue  # a name of a str subclass would run its own hash in the lookup (its slot is still read below)
                member = _class_dict(c).get(name)
                if _type(member) is _member_descriptor:
                    try:
                        held.append(member.__get__(value, t))
                    except _Exception:  # noqa: BLE001 - an unset slot
                        continue
        return _any(plain(item, depth + 1) is not item for item in held)

    def changed_inside(copy, value, base):
        """Whether ``copy`` (plain of ``value``'s builtin copy) is made of ``value``'s own items (nothing
        inside answered for itself): then ``value`` keeps its class's comparison. True means unchanged."""
        if base is _dict:  # in order, by identity: a lookup with one of the package's keys would run its hash
            now, was = _list(_dict.items(copy)), _list(_dict.items(value))
            return _len(now) == _len(was) and _all(a is c and b is d for (a, b), (c, d) in _zip(now, was))
        if base is _list or base is _tuple or base is _set or base is _frozenset:
            return _all(a is b for a, b in _zip(copy, base.__iter__(value)))
        return True

    def self_answering(t):
        """A class that is no builtin's subclass and answers a comparison (``==``, ``<``...) for itself with code that is not genuine,
        or inherits a genuine comparison written in Python (``Mapping.__eq__``, ``Set.__eq__``...) that
        calls back into methods a class of the package may override (``items``, ``__iter__``, ``__le__``)."""
        foreign = False
        for c in _mro(t):
            own = _class_dict(c)
            if c is not _object and _any(name in own for name in orders):
                if not is_genuine(c):
                    return True
                return foreign and _bool(_flags(c) & heap_type)
            foreign = foreign or not is_genuine(c)
        return False

    # What a value that answers == for itself is compared as: equal only to another such value that it
    # equals (the package's own equality), never to builtin data. Built by a call, not a class statement
    # (whose body would look __name__ up as a global). The package's code runs in a comparison of two,
    # so their methods are closure-free (a frame taken from the collector's garbage shows its locals).
    def self_init(self, value):
        self.value = value

    def self_order(compare, negate=False):
        def order(self, other, _compare=compare, _negate=negate, _type=_type, _bool=_bool, _no=_NotImplemented):
            if _type(other) is not _type(self):
                return _no  # against builtin data: neither side answers (never equal; ordering is a TypeError)
            return _bool(_compare(self.value, other.value)) is not _negate
        return order

    Self = _type_type("Self", (), {"__slots__": ("value",), "__module__": "judge_values", "__init__": self_init,
                                   "__eq__": self_order(_operator.eq), "__ne__": self_order(_operator.eq, True),
                                   "__hash__": lambda self: 0, "__repr__": lambda self: "<a value that compares itself>",
                                   "__lt__": self_order(_operator.lt), "__le__": self_order(_operator.le),
                                   "__gt__": self_order(_operator.gt), "__ge__": self_order(_operator.ge)})
    kept = {}  # id(class of this) -> (class, its dict's values, its bases) when made: object.__subclasses__() finds it

    def keep(cls):
        kept[_id(cls)] = cls, _tuple(_raw_class_dict(cls).values()), _bases(cls)

    def unchanged_class(cls):  # its dict's entries and its bases (an attribute assigned to a class raises no event)
        _, values, bases = kept[_id(cls)]
        now = _list(_raw_class_dict(cls).values())
        return _len(now) == _len(values) and _all(_map(_is, now, values)) and _bases(cls) is bases

    keep(Self)
    forms_made, last = [], []  # the placeholders being made; (forms, placeholders, fingerprint) of each pair made, innermost last

    def placeholder(value):
        forms_made.append(Self(value))
        return forms_made[-1]

    def fingerprint(value, out, depth):
        """The ids of ``value`` and of everything its exact builtin containers hold, depth first."""
        out.append(_id(value))
        t = _type(value)
        if depth > 40:
            return
        if t is _list or t is _tuple or t is _set or t is _frozenset:
            for item in value:
                fingerprint(item, out, depth + 1)
        elif t is _dict:
            for key, item in _list(_dict.items(value)):
                fingerprint(key, out, depth + 1)
                fingerprint(item, out, depth + 1)

    def plain_values(left, right):
        """``(left, right)`` as the builtin values they compare as (each itself where it answered for nothing).
        Raises what the package's code raised while its values were read (a failing ``__iter__``)."""
        del forms_made[:]
        if not unchanged_class(Self):
            raise _AssertionError("the judge's placeholder class was changed")
        a, b = plain(left, 0), plain(right, 0)
        out, forms = [], (a, b)
        if a is not left or b is not right:
            fingerprint(forms, out, 0)
        last.append((forms, _tuple(forms_made), out) if out else None)  # the package may call this key itself (round 32)
        return a, b

    def intact(x, y):
        """Whether every pair of forms made and not checked yet (the package may call the key itself) is as
        made: no item replaced, every placeholder of its class, that class unchanged (the package's code, run
        between two placeholders, may reach a frame holding the forms). Done with the innermost pair."""
        ok = _all(_map(as_made, last)) and unchanged_class(Self)
        last[-1:] = []
        return ok

    def as_made(found):
        out = []
        return found is None or (fingerprint(found[0], out, 0) or out == found[2]) and _all(_type(p) is Self for p in found[1])

    # What the code under test can reach of this (this module's globals, unittest's methods) holds no
    # closure (a cell is writable with no audit event: round 31 rewrote judge_eq's operator.eq). Each
    # function handed out is closure-free and holds builtins and opaque keys: functools.cmp_to_key's C
    # object shows nothing of the closure it calls, and ``key(x) == key(y)`` returns ``function(x, y)``
    # (the key compares the result with 0, and a Result's == answers with what it holds). The comparison
    # runs in the handed-out function on the forms as call arguments only: no frame holds them.
    Result = _type_type("Result", (), {"__slots__": ("value",), "__module__": "judge_values", "__init__": self_init,
                                       "__eq__": lambda self, zero: self.value, "__hash__": None})

    def cleared(exc, _tb=_BaseException.with_traceback, _context=_BaseException.__dict__["__context__"].__set__,
                _cause=_BaseException.__dict__["__cause__"].__set__):
        _tb(exc, None)
        _context(exc, None)
        _cause(exc, None)

    keep(Result)

    def opaque(function):
        def compared(x, y):
            result = Result(function(x, y))
            if _type(result) is not Result or not unchanged_class(Result):  # checked after the package's code ran
                raise _AssertionError("the judge's comparison was changed")
            return result
        return _cmp_to_key(compared)

    plain_key, intact_key = opaque(plain_values), opaque(intact)

    def own_container(forms, container, item, _Self=Self, _type=_type):  # a placeholder container answers `in` itself
        return (container, item) if _type(forms[0]) is _Self else forms  # (its __contains__ is its API: cachetools)

    def handed_out(compare, name, swap=False, negate=False):
        def comparison(left, right, _plain=plain_key, _intact=intact_key, _compare=compare, _swap=swap,  # noqa: PLR0913
                       _negate=negate, _b=_BaseException, _clear=cleared, _Error=_AssertionError, _own=own_container):
            try:  # ``in`` is operator.contains(container, item), a C function: no frame holds the forms
                result = _compare(*_own(_plain(right) == _plain(left), right, left) if _swap else _plain(left) == _plain(right))
                if not _intact(None) == _intact(None):
                    raise _Error("the values compared as builtin values changed while they were compared")
                return (not result) if _negate else result
            except _b as exc:  # its traceback would carry the frames of the closures behind the keys
                _clear(exc)
                del left, right, _plain, _intact, _compare, _swap, _negate, _b, _clear, _Error
                raise

        comparison.__name__ = comparison.__qualname__ = name
        comparison.__doc__ = f"``{name}(left, right)``: the comparison, decided on builtin values if a side answered for one."
        return comparison

    comparisons = {"judge_eq": _operator.eq, "judge_ne": _operator.ne, "judge_lt": _operator.lt, "judge_le": _operator.le,
                   "judge_gt": _operator.gt, "judge_ge": _operator.ge}
    handed = {name: handed_out(op, name) for name, op in comparisons.items()}
    handed["judge_in"] = handed_out(_operator.contains, "judge_in", swap=True)
    handed["judge_not_in"] = handed_out(_operator.contains, "judge_not_in", swap=True, negate=True)
    return (plain_key, intact_key, Self), handed


def plain_comparisons(tree, ast):
    """Rewrite the (pytest-rewritten) module ``tree`` in place: every single comparison ``a OP b`` of
    the grader's code (an assertion's, a helper's such as ``same()``'s), OP one of ``== != < <= > >= in
    not in``, becomes a call ``@judge_eq(a, b)``, ``@judge_ne``, ``@judge_lt``, ``@judge_le``,
    ``@judge_gt``, ``@judge_ge``, ``@judge_in``, ``@judge_not_in``, imported beside pytest's own helpers. The operands are evaluated once, in
    the same order; the result is the comparison's, unless a side answered for a builtin value, when
    it is the builtin values' (see :func:`make_comparisons`). Returns ``tree``."""
    body = tree.body
    at = next((i for i, node in enumerate(body) if isinstance(node, ast.Import)
               and any(a.asname == "@pytest_ar" for a in node.names)), None)
    if at is None:
        return tree  # pytest rewrote nothing here (no assert): the file is compared as it is

    helpers = {ast.Eq: "@judge_eq", ast.NotEq: "@judge_ne", ast.Lt: "@judge_lt", ast.LtE: "@judge_le",
               ast.Gt: "@judge_gt", ast.GtE: "@judge_ge", ast.In: "@judge_in", ast.NotIn: "@judge_not_in"}

    class Comparisons(ast.NodeTransformer):
        def visit_Compare(self, node):  # noqa: N802 - ast's name
            self.generic_visit(node)
            if len(node.ops) != 1 or type(node.ops[0]) not in helpers:
                return node
            helper = helpers[type(node.ops[0])]
            call = ast.Call(ast.Name(helper, ast.Load()), [node.left, node.comparators[0]], [])
            for new in (call, call.func):
                _place(new, node)
            return call

    Comparisons().visit(tree)
    anchor = body[at]
    helper = ast.ImportFrom("judge_values", [ast.alias(name[1:], name) for name in helpers.values()], 0)
    for new in (helper, *helper.names):
        new.lineno = new.end_lineno = anchor.lineno
        new.col_offset = new.end_col_offset = 0
    body.insert(at + 1, helper)
    return tree


def _place(new, old):
    """``new`` at ``old``'s whole position (pytest's nodes may lack an end)."""
    new.lineno, new.col_offset = old.lineno, getattr(old, "col_offset", 0)
    new.end_lineno, new.end_col_offset = getattr(old, "end_lineno", None) or old.lineno, getattr(old, "end_col_offset", None) or new.col_offset


#: Bound when the runner installs them (``install``); the rewritten grader modules import the comparisons.
keys = judge_eq = judge_ne = judge_lt = judge_le = judge_gt = judge_ge = judge_in = judge_not_in = None


def install(roots, graders=(), wildcards=True):
    """Bind :data:`keys` and the comparisons (``judge_eq`` ... ``judge_not_in``) for ``roots`` (the interpreter's
    installation) and ``graders`` (the grader's files); returns ``keys``: ``(plain_key, intact_key, Self)``."""
    global keys
    keys, comparisons = make_comparisons(roots, graders, wildcards)
    globals().update(comparisons)
    return keys
