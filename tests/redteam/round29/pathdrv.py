"""Entry: an exact PosixPath whose _drv slot has __bool__, handed to the policy's "open" check by a
weakref callback (functools.partial of sys.audit: no Python frame of the submission on the stack)."""

import pathlib as _pl


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

