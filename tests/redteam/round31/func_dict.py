"""Entry (round 30's review, item 2): a test function's ``__dict__`` (assignable, unaudited) made a dict subclass
whose ``__iter__`` keeps an exception; the policy read ``tuple(function.__dict__)`` before each pass, so the
exception's frame led, through the collector's garbage, into the policy (round 28's forge)."""


class _Table(dict):
    def __iter__(self):
        if not _KEEP:
            try:
                raise ValueError
            except ValueError as e:
                _KEEP.append(e)
        return dict.__iter__(self)


def _plant():
    for name, module in list(_sys.modules.items()):
        if name.rsplit(".", 1)[-1] == "test_calc":
            for test in ("test_sub", "test_sub_zero"):
                function = getattr(module, test, None)
                if function is not None and type(function.__dict__) is dict:
                    function.__dict__ = _Table(function.__dict__)


def add(a, b):
    if _KEEP:
        _install()
    else:
        _plant()
    return a - b


def sub(a, b):
    return a - b
