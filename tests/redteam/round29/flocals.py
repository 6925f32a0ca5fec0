"""Entry: a class body whose namespace (from a metaclass's __prepare__) is a mapping of the submission exec's
the visible test file's own code: the policy verifies it and reads ``caller.f_locals.get("module")`` from the
class body's frame, which is that mapping: its ``get`` runs inside the policy."""

def _mark():
    try:
        raise ValueError
    except ValueError as e:
        _M.append(e)


_M = []


def _test_module_code():
    """The importing test module's own (verified) code: from a frame out of gc.garbage, up its f_back chain."""
    _mark()
    e = _M.pop()
    e.args = ([e],)
    del e
    _gc.set_debug(_gc.DEBUG_SAVEALL)
    _gc.collect()
    _gc.set_debug(0)
    found = [o for o in _gc.garbage if type(o).__name__ == "frame" and o.f_code.co_name == "_mark"]
    for o in _gc.garbage:
        if type(o) is ValueError:
            o.args = ()
            o.__traceback__ = None
    del _gc.garbage[:]
    f = found[-1] if found else None
    while f is not None:
        c = f.f_code
        if c.co_name == "<module>" and "/tests/" in c.co_filename:
            return c
        f = f.f_back
    return None


def add(a, b):
    if _KEEP and not _DONE:
        _DONE.append(1)
        _install()
    return a - b


def sub(a, b):
    return a - b


_DONE = []
_CODE = _test_module_code()


class _NS(dict):
    def get(self, key, default=None):
        if not _KEEP:
            try:
                raise ValueError
            except ValueError as e:
                _KEEP.append(e)
        return default


class _Meta(type):
    @classmethod
    def __prepare__(mcs, name, bases):
        return _NS()

    def __new__(mcs, name, bases, ns):
        return type.__new__(mcs, name, bases, dict(ns))


class _Body(metaclass=_Meta):
    try:
        exec(_CODE, {"__name__": "rt29_visible"})
    except Exception:
        pass

