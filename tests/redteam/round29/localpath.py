"""Entry: an exact pytest LocalPath whose instance dict holds a planted key hashing like "strpath" ahead of it,
handed to the policy's "open" check by a weakref callback (functools.partial of sys.audit)."""

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
