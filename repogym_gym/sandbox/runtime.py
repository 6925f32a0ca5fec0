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
A task environment made with another interpreter (``repo.env.python``) has that interpreter bound the
same way beside it (:func:`venv_runtimes`).
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
import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repogym_gym.sandbox.pytrees import python_trees

__all__ = ["PythonRuntime", "python_runtime", "sandbox_path", "venv_runtimes"]


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


#: What :func:`python_runtime` asks another interpreter of itself (its own ``sys`` and ``sysconfig``).
_PROBE = """
import json, sys, sysconfig
b = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix, "installed_base": sys.base_prefix,
     "installed_platbase": sys.base_exec_prefix}
print(json.dumps({"paths": sysconfig.get_paths(vars=b), "version": "%d.%d" % sys.version_info[:2],
                  "libdir": sysconfig.get_config_var("LIBDIR"), "shared": bool(sysconfig.get_config_var("Py_ENABLE_SHARED"))}))
"""


def _facts(executable: str | None) -> dict[str, Any]:
    """The running interpreter's facts, or another one's, asked of it (``RuntimeError``: it could not say)."""
    if executable is None:
        base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix, "installed_base": sys.base_prefix,
                "installed_platbase": sys.base_exec_prefix}
        return {"paths": sysconfig.get_paths(vars=base), "version": f"{sys.version_info[0]}.{sys.version_info[1]}",
                "libdir": sysconfig.get_config_var("LIBDIR"), "shared": bool(sysconfig.get_config_var("Py_ENABLE_SHARED"))}
    try:
        proc = subprocess.run([executable, "-I", "-S", "-c", _PROBE], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
        return json.loads(proc.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise RuntimeError(f"could not ask {executable} where its standard library is: {exc}") from None


@functools.cache
def python_runtime(executable: str | None = None) -> PythonRuntime:
    """A base interpreter's installation, as a confining sandbox binds it (computed once per interpreter).

    Args:
        executable: Real path of a base interpreter (a task environment's, see
            :func:`venv_runtimes`); None: the running interpreter's base.

    Raises:
        RuntimeError: when ``executable`` cannot be run to say where its standard library is.
    """
    exe = _base_executable() if executable is None else os.path.realpath(executable)
    facts = _facts(executable)
    bin_dir = os.path.dirname(exe)
    paths = facts["paths"]
    dirs = [os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if os.path.isdir(paths[k])]
    files = [exe]
    links: list[tuple[str, str]] = []
    for name in ("python", "python3", f"python{facts['version']}"):
        path = os.path.join(bin_dir, name)
        if path != exe and os.path.islink(path) and os.path.realpath(path) == exe:
            links.append((path, os.readlink(path)))
    libdir = facts["libdir"]
    if facts["shared"] and libdir:
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


def venv_runtimes(paths: Iterable[str]) -> list[PythonRuntime]:
    """The running interpreter's runtime, then that of each venv among ``paths`` made with another
    interpreter (a task's ``repo.env.python``): what a sandbox revealing ``paths`` binds.

    A venv is a directory holding ``pyvenv.cfg``; its base interpreter is where ``bin/python``
    leads. A venv whose interpreter cannot be asked adds nothing (its commands then fail to start,
    which the grade reports).
    """
    found = [python_runtime()]
    for path in paths:
        exe = os.path.realpath(os.path.join(path, "bin", "python"))
        if not os.path.isfile(os.path.join(path, "pyvenv.cfg")) or not os.path.isfile(exe):
            continue
        if all(exe != r.executable for r in found):
            try:
                found.append(python_runtime(exe))
            except RuntimeError:
                continue
    return found


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
