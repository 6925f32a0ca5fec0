"""CPython interpreters of task environments: the versions the judge runs on, and where one is installed.

A task may ask for an interpreter of its own (``repo.env.python: "3.12"`` in task.yaml, ``--python``
of ``repogym mine``): its environment (:mod:`repogym_gym.venvs`) is then a venv of that
interpreter, and a confining sandbox binds that interpreter's standard library beside the
grader's (:func:`repogym_gym.sandbox.runtime.python_runtime`).

The judged process runs in the task's interpreter, and the judge's policy is written against
what CPython audits and how pytest runs (``../shared/JUDGE_NOTES.md``): :data:`JUDGE_PYTHONS` are
the versions its tests run on, and :data:`JUDGE_PYTEST` the pytest release it drives. Any other
version is refused with that reason (3.13 changed the frames and code objects the judge checks;
3.10 lacks ``-P`` and audit events the policy relies on), never graded with a judge that may not hold.

Example:
    >>> supported_version("3.11")
    '3.11'
    >>> find_python("3.11").endswith("3.11")                    # doctest: +SKIP
    True
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
import sys

from repogym_gym.errors import SetupError

__all__ = ["JUDGE_PYTEST", "JUDGE_PYTHONS", "find_python", "running_version", "supported_version"]

#: CPython versions (major.minor) the judge's policy and runner are tested on.
JUDGE_PYTHONS = ("3.11", "3.12")
#: The pytest release series (major.minor) the judge's runner drives (the real-code suite pins 9.0.3,
#: the grader's own environment carries repogym_gym's, 9.2 here): it replaces pytest's own functions by
#: version-specific ones, so a task environment holding another pytest (8.3 has no ``async_fail``) cannot be judged.
JUDGE_PYTEST = ("9.0", "9.1", "9.2")
_VERSION = re.compile(r"3\.\d{1,2}")
_PROBE_TIMEOUT_S = 20


def running_version() -> str:
    """The major.minor version of the interpreter running repogym_gym (``"3.11"``)."""
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def supported_version(version: str) -> str:
    """``version`` when the judge runs on it.

    Raises:
        ValueError: naming the version and the supported ones, when it is not ``3.N`` or not one of
            :data:`JUDGE_PYTHONS`.
    """
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise ValueError(f"python {version!r} must be a CPython version written major.minor, e.g. '3.12'")
    if version not in JUDGE_PYTHONS:
        raise ValueError(f"python {version!r}: the judge runs on CPython {' and '.join(JUDGE_PYTHONS)} only (its audit "
                         "policy and pytest hooks are tested there); mine or run this task with one of those")
    return version


@functools.cache
def find_python(version: str) -> str:
    """The real path of an installed CPython ``version`` (major.minor).

    Looked for, in order: the interpreter running repogym_gym; pyenv's builds
    (``$PYENV_ROOT/versions/3.12.*``, else ``~/.pyenv``), newest patch release first;
    ``/usr/local/bin`` and ``/usr/bin``; ``python3.12`` on ``PATH``. A candidate counts only if
    running it reports that version.

    Raises:
        SetupError: when the version is not one the judge runs on, or none is installed (the
            message lists where it looked and how to install one).
    """
    try:
        supported_version(version)
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    looked: list[str] = []
    for candidate in _candidates(version):
        looked.append(candidate)
        if _reports(candidate, version):
            return os.path.realpath(candidate)
    where = ", ".join(dict.fromkeys(looked)) or "nowhere"
    raise SetupError(f"no CPython {version} is installed (looked at: {where}); install one, e.g. "
                     f"'pyenv install {version}' or Debian's python{version}")


def _candidates(version: str) -> list[str]:
    found: list[str] = []
    if running_version() == version:
        found.append(os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable))
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    builds = glob.glob(os.path.join(glob.escape(root), "versions", f"{version}.*", "bin", f"python{version}"))
    found += sorted(builds, key=_patch_level, reverse=True)
    found += [os.path.join(d, f"python{version}") for d in ("/usr/local/bin", "/usr/bin")]
    on_path = shutil.which(f"python{version}")
    found += [on_path] if on_path else []
    return [c for c in dict.fromkeys(found) if os.path.isfile(c) and os.access(c, os.X_OK)]


def _patch_level(exe: str) -> tuple[int, ...]:
    release = os.path.basename(os.path.dirname(os.path.dirname(exe)))
    return tuple(int(p) if p.isdigit() else -1 for p in release.split("."))


def _reports(exe: str, version: str) -> bool:
    probe = "import sys; print(sys.implementation.name, '%d.%d' % sys.version_info[:2])"
    try:
        proc = subprocess.run([exe, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and proc.stdout.split() == ["cpython", version]
