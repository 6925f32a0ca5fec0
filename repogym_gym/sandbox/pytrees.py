"""Python code a confining sandbox must cover: every package tree under the directories it binds.

A confining sandbox binds whole system directories (``/usr``, ``/etc``) read-only, and the
running interpreter's standard library. Python code sits in many places in them besides an
interpreter's ``site-packages``: a cloud SDK's ``lib/third_party`` (jmespath 0.10.0 under
``/usr/lib/google-cloud-sdk``), a bundled interpreter's whole ``lib/python3.12``, vendored
copies in ``setuptools/_vendor`` and ``pkg_resources/_vendor``, wheels in
``ensurepip/_bundled``. Any of them may be another release of the package under test, and
``diff`` against it shows the fix. So instead of a list of known places,
:func:`python_trees` walks the bound directories once per process and returns what to cover,
found by what the files are, not where they are:

- every directory named ``site-packages`` or ``dist-packages``, whole;
- every *import root*: a directory that is not itself a package and directly holds a Python
  module (``*.py``, ``*.pyc``, ``*.pyi``...), a Python archive (``*.whl``, ``*.egg``,
  ``*.pyz``) or a package (a subdirectory with an ``__init__.py``), whole; a vendored
  ``third_party``, an SDK's ``lib``, another interpreter's standard library are import roots.
  A tool or library directory is not covered whole: one that directly holds shared libraries,
  or at least as many programs (executable files that are not modules) as modules and packages
  (``/usr/bin`` with a stray ``.py``, an SDK's ``bin`` holding ``gcloud`` and a dozen other
  tools), or that holds a kept path; its modules, archives and packages are covered one by one
  and its other subdirectories walked;
- inside a *kept* directory (the running interpreter's own standard library), only its
  ``site-packages``/``dist-packages`` and its Python archives (the setuptools wheel of
  ``ensurepip``, which vendors more_itertools).

Symbolic links are not followed (a link to covered code resolves to the cover). Python
scripts without a ``.py`` suffix (``/usr/bin/lsb_release``) are not recognised, nor is code
inside other archives (a ``.zip``, a ``.tar.gz``); ``repogym validate``'s answer check is the
backstop for those (:mod:`repogym_gym.answers`).

Measured here (Debian 12 with a Google Cloud SDK, CUDA and LLVM under ``/usr``: 14,900
directories, 119,000 files under ``/usr`` and ``/etc``): the walk takes 0.8 s with a warm
page cache, once per process, and yields about 100 covers.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "sdk" / "lib" / "jmespath").mkdir(parents=True)
    >>> (root / "sdk" / "lib" / "jmespath" / "__init__.py").write_text("")
    0
    >>> [str(Path(p).relative_to(root)) for p in python_trees([str(root)])]
    ['sdk/lib']
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping

__all__ = ["ARCHIVE_SUFFIXES", "MODULE_SUFFIXES", "SITE_DIR_NAMES", "Listing", "clear_cache", "python_trees", "python_trees_in"]

#: Names of the directories interpreters install third-party packages into.
SITE_DIR_NAMES = ("site-packages", "dist-packages")
#: Suffixes of Python modules (source, bytecode, stubs).
MODULE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyi", ".pyw")
#: Suffixes of archives that hold Python packages.
ARCHIVE_SUFFIXES = (".whl", ".egg", ".pyz")

#: A directory's entries: (subdirectory names, [(regular file name, its permission bits)]); symlinks and
#: special files left out.
Listing = tuple[list[str], list[tuple[str, int]]]

_cache: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]] = {}
_lock = threading.Lock()


def python_trees(roots: Iterable[str], *, keep: Iterable[str] = ()) -> tuple[str, ...]:
    """The directories and files under ``roots`` to cover so that no Python code but ``keep``'s
    shows (see the module docstring); computed once per process for each ``roots`` and ``keep``
    (:func:`clear_cache` forgets them, e.g. after software was installed).

    Args:
        roots: Real absolute directories a sandbox binds (missing ones are skipped).
        keep: Real absolute directories whose own code stays visible (the running interpreter's
            standard library): only their site directories and Python archives are returned.

    Returns:
        Real absolute paths, none inside another, in walk order; ``roots`` themselves are never
        among them (a root holding a module has its modules returned one by one).
    """
    key = (tuple(roots), tuple(keep))
    with _lock:
        if key not in _cache:
            found: list[str] = []
            seen: dict[str, Listing | None] = {}  # listed by the parent's package check, not yet visited

            def list_once(path: str) -> Listing | None:
                return seen.pop(path) if path in seen else seen.setdefault(path, _list_dir(path))

            for root in key[0]:
                if os.path.isdir(root) and not os.path.islink(root):
                    _visit(root, list_once, key[1], found, is_root=True)
            _cache[key] = tuple(found)
        return _cache[key]


def clear_cache() -> None:
    """Forget every walk :func:`python_trees` remembers (the next call walks again)."""
    with _lock:
        _cache.clear()


def python_trees_in(listing: Mapping[str, Listing], root: str = "/") -> list[str]:
    """What :func:`python_trees` returns for ``root``, from a listing of a tree instead of the
    filesystem (a root filesystem tarball's members, say: see
    :mod:`repogym_gym.sandbox.images`), with nothing kept.

    Args:
        listing: Directory path -> its entries, for every directory of the tree.
        root: The tree's root directory in ``listing``.

    Example:
        >>> python_trees_in({"/": (["usr"], []), "/usr": (["bin", "lib"], []),
        ...                  "/usr/bin": ([], [("git", 0o755)]), "/usr/lib": (["pkg"], []),
        ...                  "/usr/lib/pkg": ([], [("__init__.py", 0o644)])})
        ['/usr/lib']
    """
    found: list[str] = []
    _visit(root, lambda path: listing.get(path), (), found, is_root=True)
    return found


def _list_dir(path: str) -> Listing | None:
    try:
        with os.scandir(path) as it:
            entries = list(it)
    except OSError:
        return None
    dirs, files = [], []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                dirs.append(entry.name)
            elif entry.is_file(follow_symlinks=False):
                files.append((entry.name, entry.stat(follow_symlinks=False).st_mode))
        except OSError:
            continue
    return dirs, files


_EXTENSION = re.compile(r"\.(cpython-|abi3|pypy)[^/]*\.so$")
_SHARED_LIBRARY = re.compile(r"\.so(\.[0-9]+)*$")


def _is_module(name: str) -> bool:
    """A Python module or archive (an extension module ``x.cpython-311-x86_64-linux-gnu.so`` too)."""
    return name.endswith(MODULE_SUFFIXES) or name.endswith(ARCHIVE_SUFFIXES) or bool(_EXTENSION.search(name))


def _is_library(name: str) -> bool:
    return not _is_module(name) and bool(_SHARED_LIBRARY.search(name))


def _is_program(name: str, mode: int) -> bool:
    return bool(mode & 0o111) and not _is_module(name)


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _join(path: str, name: str) -> str:
    return path.rstrip("/") + "/" + name


def _visit(path: str, list_dir: Callable[[str], Listing | None], keep: tuple[str, ...], found: list[str], *,
           is_root: bool = False) -> None:
    """Append to ``found`` what to cover under directory ``path`` (see the module docstring)."""
    listed = list_dir(path)
    if listed is None:
        return
    dirs, files = listed
    if any(_under(path, k) for k in keep):
        found += [_join(path, name) for name, _ in files if name.endswith(ARCHIVE_SUFFIXES)]
        for name in dirs:
            if name in SITE_DIR_NAMES:
                found.append(_join(path, name))
            else:
                _visit(_join(path, name), list_dir, keep, found)
        return
    if os.path.basename(path) in SITE_DIR_NAMES and not is_root:
        found.append(path)
        return
    modules = [_join(path, name) for name, _ in files if _is_module(name)]
    packages = set()
    for name in dirs:
        inner = list_dir(_join(path, name)) if name not in SITE_DIR_NAMES else None
        if inner is not None and any(f == "__init__.py" for f, _ in inner[1]):
            packages.add(name)
    if not modules and not packages:
        for name in dirs:
            _visit(_join(path, name), list_dir, keep, found)
        return
    # a tool or library directory (/usr/bin, /usr/lib/<triplet>) stays: only its Python is covered
    programs = sum(_is_program(name, mode) for name, mode in files)
    whole = not is_root and not any(_under(k, path) for k in keep)
    if whole and programs < len(modules) + len(packages) and not any(_is_library(name) for name, _ in files):
        found.append(path)
        return
    found += modules
    for name in dirs:
        sub = _join(path, name)
        if name in packages and not any(_under(k, sub) for k in keep):
            found.append(sub)
        else:
            _visit(sub, list_dir, keep, found)


def _main() -> None:  # pragma: no cover - a measuring aid: python -m repogym_gym.sandbox.pytrees /usr /etc
    import sys
    import time

    start = time.perf_counter()
    found = python_trees([os.path.realpath(p) for p in sys.argv[1:] or ["/usr", "/etc"]])
    elapsed = time.perf_counter() - start
    for path in found:
        print(path)
    print(f"{len(found)} covers in {elapsed:.2f} s", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    _main()
