"""The minimal Python a confining sandbox shows: the base interpreter's standard library, no site-packages.

A confining sandbox (bubblewrap, Docker) binds an allowlist instead of the host, so the
interpreter its commands run must be bound on purpose. It is the *base* installation of the
running interpreter (a venv's ``home``; a pyenv build under ``/root``, say), since every task
environment and the grader's own test environment (:func:`repogym_gym.venvs.grader_venv`) is
a venv of it, and what is bound of it is only:

- its standard library (``lib-dynload`` included), read-only;
- its executable and the ``python``/``python3``/``pythonX.Y`` names beside it that lead to it;
- its shared library (``libpythonX.Y.so*``), when it was built shared;

while its ``site-packages`` (where another release of a package under test may sit: boto3
pulls in jmespath, say) and the Python archives in its standard library (``ensurepip``'s
setuptools wheel, which vendors more_itertools) are covered (:data:`PythonRuntime.hidden`,
found by :func:`~repogym_gym.sandbox.pytrees.python_trees`). What else the system directories
hold of Python is the business of the sandbox that binds them.
Inside the sandbox, the running interpreter's directory on ``PATH`` (a venv holding
repogym_gym's own dependencies, not bound) is replaced by the base interpreter's.

Example:
    >>> runtime = python_runtime()
    >>> runtime.executable in runtime.files and runtime.bin_dir == os.path.dirname(runtime.executable)
    True
"""

from __future__ import annotations

import functools
import glob
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from repogym_gym.sandbox.pytrees import python_trees

__all__ = ["PythonRuntime", "python_runtime", "sandbox_path"]


@dataclass(frozen=True)
class PythonRuntime:
    """What a confining sandbox binds of the base interpreter (all real absolute paths).

    Attributes:
        executable: The base interpreter's executable.
        bin_dir: The directory put on ``PATH`` in place of the running interpreter's.
        dirs: Directories bound read-only (the standard library).
        files: Files bound read-only (the executable, the shared library).
        links: ``(path, target)`` symlinks made in the sandbox (``bin/python -> python3.11``).
        hidden: What is covered of it (only where a bound directory would show it): its site
            directories, and the Python archives and site directories inside its standard
            library.
    """

    executable: str
    bin_dir: str
    dirs: tuple[str, ...]
    files: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...]


def _base_executable() -> str:
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


@functools.cache
def python_runtime() -> PythonRuntime:
    """The running interpreter's base installation, as a confining sandbox binds it (computed once)."""
    exe = _base_executable()
    bin_dir = os.path.dirname(exe)
    base_vars = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix, "installed_base": sys.base_prefix,
                 "installed_platbase": sys.base_exec_prefix}
    paths = sysconfig.get_paths(vars=base_vars)
    dirs = [os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if os.path.isdir(paths[k])]
    files = [exe]
    links: list[tuple[str, str]] = []
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for name in ("python", "python3", f"python{version}"):
        path = os.path.join(bin_dir, name)
        if path != exe and os.path.islink(path) and os.path.realpath(path) == exe:
            links.append((path, os.readlink(path)))
    libdir = sysconfig.get_config_var("LIBDIR")
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and libdir:
        for path in sorted(glob.glob(os.path.join(glob.escape(libdir), "libpython*.so*"))):
            if os.path.islink(path):
                links.append((path, os.readlink(path)))
                files.append(os.path.realpath(path))
            elif os.path.isfile(path):
                files.append(path)
    hidden = [os.path.realpath(paths[k]) for k in ("purelib", "platlib")]
    stdlib = tuple(dict.fromkeys(dirs))
    hidden += python_trees(stdlib, keep=stdlib)
    return PythonRuntime(executable=exe, bin_dir=bin_dir, dirs=tuple(dict.fromkeys(dirs)),
                         files=tuple(dict.fromkeys(files)), links=tuple(dict.fromkeys(links)),
                         hidden=tuple(dict.fromkeys(os.path.realpath(p) for p in hidden)))


def sandbox_path(path: str) -> str:
    """``path`` (a ``PATH`` value) as a confining sandbox uses it: the running interpreter's
    directory, which the sandbox does not bind, replaced by the base interpreter's.

    Example:
        >>> sandbox_path(str(Path(sys.executable).parent) + ":/usr/bin").endswith(":/usr/bin")
        True
    """
    running = str(Path(sys.executable).parent)
    base = python_runtime().bin_dir
    entries = [base if entry == running else entry for entry in path.split(os.pathsep)]
    return os.pathsep.join(dict.fromkeys(entries))
