"""Entry: an object whose class's ``__dict__`` is a property, planted where the policy reads instance dicts."""


class _Planted:
    """Planted in os.environ's instance dict (one of "pytest's own objects" the policy checks for rewiring):
    callable through a builtin, so ``foreign`` reads its ``__dict__`` with ``object.__getattribute__``, which
    runs this class's ``__dict__`` property inside the policy."""

    __call__ = print

    @property
    def __dict__(self):
        if not _KEEP:
            try:
                raise ValueError
            except ValueError as e:
                _KEEP.append(e)
        return {}


_os.environ.__dict__["_rt28"] = _Planted()


def add(a, b):
    if _KEEP:
        _install()
    return a - b


def sub(a, b):
    return a - b
