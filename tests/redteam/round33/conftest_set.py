"""Round 32 (a source review of b4b79fd), finding on judge_objects: the plugin manager's ``_conftest_plugins``
(the conftests a path leaves out of its hooks) was iterated by the policy whatever its type: a ``set`` subclass
planted there ran its own ``__iter__`` inside the policy, where nothing of the submission may run."""

import sys as _sys


class _Conftests(set):
    def __iter__(self):
        return set.__iter__(self)  # the package's own code, called by the policy


for _finder in _sys.meta_path:
    _config = getattr(_finder, "config", None)
    if _config is not None:
        _manager = _config.pluginmanager
        _manager._conftest_plugins = _Conftests(_manager._conftest_plugins)
        break


def add(a, b):
    return a - b


def sub(a, b):
    return a - b
