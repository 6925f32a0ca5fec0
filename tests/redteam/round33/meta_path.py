"""Round 32 (a source review of b4b79fd), finding 3: pytest's assertion rewriting switched off without a cell.
The package, imported by the first test module, takes pytest's rewriting import hook out of ``sys.meta_path``:
every later test module is compiled plainly (which the policy accepted as the file's own code), so its ``==`` is
the value's own again, and a result that equals anything passes every assertion."""

import sys as _sys

for _finder in list(_sys.meta_path):
    if type(_finder).__name__ == "AssertionRewritingHook":
        _sys.meta_path.remove(_finder)


class _Anything(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def add(a, b):
    return _Anything(a - b)


def sub(a, b):
    return a - b
