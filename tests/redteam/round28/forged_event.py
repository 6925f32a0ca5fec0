"""Entry: a forged attribute event (``_EVENT``: ``object.__setattr__`` or ``object.__getattr__``) whose
attribute name is an object with ``__eq__``."""


class _Evil:
    """Compared by the policy's ``name in ("__code__", ...)``: its __eq__ runs inside the policy."""

    def __eq__(self, other):
        try:
            raise ValueError
        except ValueError as e:
            _KEEP.append(e)  # its traceback keeps this frame, whose f_back chain is the policy's frames
        return False

    __hash__ = object.__hash__


def _target():
    pass


def _forged_event():
    try:
        _sys.audit(_EVENT, _target, _Evil(), *_MORE)  # _EVENT, _MORE: set by the test before this text
    except AttributeError:
        pass


_install(_forged_event)


def add(a, b):
    return a - b


def sub(a, b):
    return a - b
