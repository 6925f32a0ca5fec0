"""Python virtual environments (venvs) of tasks and of the grader, outside the work tree, cached by
their requirements. (The other "environments" live elsewhere: the gym env in :mod:`repogym_gym.gym`,
the episode in :mod:`repogym_gym.episode`, a task's sandbox image in ``task.yaml``'s ``environment``,
and the process environment of a command in :mod:`repogym_gym.sandbox`.)

Real packages need their own test dependencies (a pinned pytest, hypothesis, ...). Installing
them inside the work tree would not survive copying (a venv holds absolute paths) and an
editable install would import the *baseline* copy instead of the agent's, so the environment
lives at ``<cache>/envs/<key>/`` and the code under test is imported from the tree through the
test runner's ``pythonpath``. Commands of such a task run with ``<env>/bin`` first on PATH, so
``python`` in a test or setup command means the environment's interpreter.

A task without ``repo.env`` runs in the grader's own test environment (:func:`grader_venv`):
a venv holding pytest and the packages pytest requires, nothing else, so its commands never
import a package of the host (another release of the package under test, say) and a confining
sandbox can show it whole.

Example:
    >>> env = ensure_venv(["pytest==8.3.3"], cache_dir=default_cache_dir())   # doctest: +SKIP
    >>> grader_venv(default_cache_dir()).name.startswith("grader-")           # doctest: +SKIP
    True
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from repogym_gym.errors import SetupError
from repogym_gym.interpreters import JUDGE_PYTEST, find_python, running_version, supported_version
from repogym_gym.sandbox.base import scrubbed_env

__all__ = ["VENV_READY_MARKER", "GRADER_VENV_PACKAGES", "venv_environ", "ensure_venv", "venv_dir", "venv_key", "grader_python",
           "grader_venv", "grader_venv_dir"]

VENV_READY_MARKER = ".repogym-ready"
_INSTALL_TIMEOUT_S = 900
#: What the grader's own test environment holds (with what these require, and nothing else).
GRADER_VENV_PACKAGES = ("pytest",)
#: Bumped whenever :func:`grader_venv` changes how it builds the environment.
_GRADER_VENV_VERSION = 1
#: Bumped whenever :func:`ensure_venv` changes how it builds an environment (2: no pip, no setuptools).
_VENV_VERSION = 2


def venv_key(requirements: Sequence[str], python: str | None = None) -> str:
    """16 hex characters identifying an environment (interpreter + requirements in order + how
    :func:`ensure_venv` builds it); ``python`` is a major.minor version, None the running one.

    Raises:
        SetupError: when ``python`` names a version that is not installed or not judged.
    """
    exe = _interpreter(python)
    version = ".".join(map(str, sys.version_info[:3])) if exe == sys.executable else exe
    return hashlib.sha256(json.dumps([version, list(requirements), _VENV_VERSION]).encode()).hexdigest()[:16]


def _interpreter(python: str | None) -> str:
    """The executable making a venv of version ``python`` (None or the running version: this one)."""
    return sys.executable if python is None or python == running_version() else find_python(python)


def ensure_venv(requirements: Sequence[str], *, cache_dir: Path, python: str | None = None) -> Path:
    """The environment for ``requirements``, created (once, under a file lock) if missing.

    Args:
        requirements: pip requirement specifiers, pinned (``pytest==9.0.3``).
        cache_dir: Cache root; environments live in ``cache_dir/envs``.
        python: CPython version (major.minor, one of
            :data:`~repogym_gym.interpreters.JUDGE_PYTHONS`) the environment is made with; None:
            the interpreter running repogym_gym.

    Returns:
        The environment directory (its interpreter is ``<dir>/bin/python``).

    Raises:
        SetupError: naming the requirements and quoting pip when the install fails; when
            ``python`` is not installed or not judged; when the requirements install a pytest
            outside :data:`~repogym_gym.interpreters.JUDGE_PYTEST` (the judge's runner could
            not drive it: every grade would be void).

    The venv is made without pip (so without setuptools, ``pkg_resources`` and
    ``_distutils_hack``, which vendor copies of other packages: setuptools 65.5.0 carries
    more_itertools 8.8.0, whose ``more.py`` holds golden hunks of the real-code suite), and
    the requirements are installed into it by this interpreter's pip (``pip --python``): the
    environment holds the requirements and what they require, nothing else, and a confining
    sandbox shows it whole. A task whose commands need pip or setuptools names them.
    """
    target = venv_dir(requirements, cache_dir=cache_dir, python=python)
    with _building(target) as build:
        if build:
            _run([_interpreter(python), "-m", "venv", "--without-pip", str(target)], "create the virtualenv")
            if requirements:
                _run([sys.executable, "-m", "pip", "--python", str(target / "bin" / "python"), "install", "--no-input",
                      "-q", *requirements], f"install {list(requirements)}")
            _check_pytest(target, requirements)
            (target / VENV_READY_MARKER).write_text(json.dumps(list(requirements)))
    return target


def _check_pytest(target: Path, requirements: Sequence[str]) -> None:
    """Refuse an environment whose pytest the judge's runner cannot drive (a task pinning
    ``pytest==8.3.3`` got "no usable test report" from every grade, golden patch included)."""
    sites = [str(p) for p in target.glob("lib/python*/site-packages")]
    for dist in importlib.metadata.distributions(path=sites):
        if (dist.metadata["Name"] or "").lower() == "pytest":
            series = ".".join(dist.version.split(".")[:2])
            if series not in JUDGE_PYTEST:
                raise SetupError(f"requirements {list(requirements)} install pytest {dist.version}; the grader's test runner "
                                 f"drives pytest {', '.join(JUDGE_PYTEST)} only (it replaces pytest's own functions): pin "
                                 f"one of those, e.g. 'pytest==9.0.3'")


def venv_dir(requirements: Sequence[str], *, cache_dir: Path, python: str | None = None) -> Path:
    """Where :func:`ensure_venv` keeps the environment for ``requirements`` (nothing is built).

    Raises:
        SetupError: when ``python`` names a version that is not installed or not judged.
    """
    return cache_dir / "envs" / venv_key(requirements, python)


@contextmanager
def _building(target: Path) -> Iterator[bool]:
    """Hold ``target``'s lock; yield True when it must be built (it is then empty), False when it is
    ready. A build that raises leaves nothing behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / VENV_READY_MARKER).is_file():
            yield False
            return
        shutil.rmtree(target, ignore_errors=True)
        try:
            yield True
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise


def _closure(names: Sequence[str]) -> list[importlib.metadata.Distribution]:
    """The installed distributions ``names`` need on this interpreter (their requirements, markers
    evaluated, extras left out), in a stable order.

    Raises:
        SetupError: naming a required distribution that is not installed.
    """
    from packaging.requirements import Requirement  # pytest's own dependency
    from packaging.utils import canonicalize_name

    found: dict[str, importlib.metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = canonicalize_name(todo.pop(0))
        if name in found:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            raise SetupError(f"the grader's test environment needs {name!r}, which is not installed for "
                             f"{sys.executable}; install repogym_gym's dependencies (pip install repogym_gym)") from None
        found[name] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return [found[n] for n in sorted(found)]


def grader_venv_dir(cache_dir: Path) -> Path:
    """Where :func:`grader_venv` keeps the grader's test environment (nothing is built).

    Raises:
        SetupError: when a distribution it needs is not installed.
    """
    pins = [(d.metadata["Name"], d.version) for d in _closure(GRADER_VENV_PACKAGES)]
    python = grader_python()
    version = ".".join(map(str, sys.version_info[:3])) if python is None else _interpreter(python)
    key = hashlib.sha256(json.dumps([version, pins, _GRADER_VENV_VERSION]).encode()).hexdigest()[:16]
    return cache_dir / "envs" / f"grader-{key}"


def grader_python() -> str | None:
    """The CPython version (major.minor) of the grader's test environment: ``$REPOGYM_GRADER_PYTHON``
    (one of :data:`~repogym_gym.interpreters.JUDGE_PYTHONS`; how the judge's tests run on each), else
    None, the interpreter running repogym_gym.

    Raises:
        SetupError: naming the variable when its value is not a version the judge runs on.
    """
    value = os.environ.get("REPOGYM_GRADER_PYTHON") or None
    if value is None or value == running_version():
        return None
    try:
        return supported_version(value)
    except ValueError as exc:
        raise SetupError(f"REPOGYM_GRADER_PYTHON: {exc}") from None


def grader_venv(cache_dir: Path) -> Path:
    """The grader's own test environment, for tasks without ``repo.env`` (built once, under a lock).

    A venv of the base interpreter (no pip, no setuptools; of CPython :func:`grader_python` when
    that is set) holding :data:`GRADER_VENV_PACKAGES` and what they require, copied file by file
    (from each distribution's ``RECORD``, bytecode and scripts left out) from the distributions
    the grader itself runs (pure Python): the same versions, and no network.

    Args:
        cache_dir: Cache root; the environment lives in ``cache_dir/envs/grader-<key>``, the key
            naming the interpreter version and every copied distribution's version.

    Returns:
        The environment directory (its interpreter is ``<dir>/bin/python``).

    Raises:
        SetupError: when a needed distribution is missing or lists no files, or the venv
            cannot be made.
    """
    target = grader_venv_dir(cache_dir)
    python = grader_python()
    with _building(target) as build:
        if build:
            _run([_interpreter(python), "-m", "venv", "--without-pip", str(target)], "create the grader's test environment")
            site = Path(sysconfig.get_path("purelib", vars={"base": str(target), "platbase": str(target),
                                                            "py_version_short": python or running_version()}))
            copied = []
            for dist in _closure(GRADER_VENV_PACKAGES):
                _copy_distribution(dist, site)
                copied.append(f"{dist.metadata['Name']}=={dist.version}")
            (target / VENV_READY_MARKER).write_text(json.dumps(copied))
    return target


def _copy_distribution(dist: importlib.metadata.Distribution, site: Path) -> None:
    if dist.files is None:
        raise SetupError(f"cannot copy {dist.metadata['Name']} into the grader's test environment: its RECORD "
                         "lists no files; reinstall it with pip")
    for record in dist.files:
        rel = PurePosixPath(str(record))
        if ".." in rel.parts or "__pycache__" in rel.parts or rel.is_absolute():
            continue  # scripts live outside site-packages; bytecode is the grader's cache's business
        source = Path(str(dist.locate_file(record)))
        if not source.is_file():
            continue
        dest = site / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)


def _run(argv: list[str], what: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")}
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise SetupError(f"could not {what}: timed out after {_INSTALL_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip()[-2000:]
        raise SetupError(f"could not {what} (exit {proc.returncode}):\n{tail}")


def venv_environ(venv: Path | None) -> dict[str, str]:
    """Process environment variables that make commands use the venv ``venv`` ({} when there is none)."""
    if venv is None:
        return {}
    path = scrubbed_env()["PATH"]
    return {"PATH": f"{venv / 'bin'}{os.pathsep}{path}", "VIRTUAL_ENV": str(venv)}
