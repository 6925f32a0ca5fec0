"""Tests for repogym_gym.sandbox.pytrees: which Python trees of the bound directories a sandbox covers."""

from __future__ import annotations

import doctest
import os
from pathlib import Path

from repogym_gym.sandbox import pytrees as pytrees_module
from repogym_gym.sandbox.pytrees import clear_cache, python_trees, python_trees_in

#: Relative path -> file mode (0o755: a program); each a file with a line of Python.
HOST = {
    # a cloud SDK: its lib is an import root (a package in it), its bin a tool directory
    "usr/lib/sdk/lib/googlecloudsdk/__init__.py": 0o644,
    "usr/lib/sdk/lib/third_party/jmespath/__init__.py": 0o644,
    "usr/lib/sdk/bin/gcloud": 0o755,
    "usr/lib/sdk/bin/bq": 0o755,
    "usr/lib/sdk/bin/dev_appserver.py": 0o755,
    "usr/lib/sdk/platform/python/lib/python3.12/os.py": 0o644,
    "usr/lib/sdk/platform/python/lib/python3.12/site-packages/setuptools/_vendor/more_itertools/more.py": 0o644,
    "usr/lib/sdk/platform/python/bin/python3.12": 0o755,
    # a library directory with a gdb script: only the script
    "usr/lib/x86_64-linux-gnu/libfoo.so.1": 0o644,
    "usr/lib/x86_64-linux-gnu/libfoo.so.1-gdb.py": 0o644,
    "usr/lib/python3/dist-packages/more_itertools/more.py": 0o644,
    # a tool directory with a stray module: only the module
    "usr/bin/git": 0o755,
    "usr/bin/stray.py": 0o644,
    "usr/share/doc/yaml/examples/demo.py": 0o644,
    "usr/lib/ns/pkg/sub/__init__.py": 0o644,  # a namespace package: pkg holds a package
    "usr/lib/ext/_speed.cpython-311-x86_64-linux-gnu.so": 0o644,  # an extension module is a module
    "usr/share/wheels/setuptools-66.1.1-py3-none-any.whl": 0o644,
    "usr/share/data/readme.txt": 0o644,
    "usr/local/lib/stray.py": 0o644,  # beside the kept standard library below: not covered whole
    "usr/local/lib/python3.11/os.py": 0o644,
    "usr/local/lib/python3.11/ensurepip/_bundled/setuptools-65.5.0-py3-none-any.whl": 0o644,
    "usr/local/lib/python3.11/site-packages/jmespath/__init__.py": 0o644,
    "etc/python3.11/sitecustomize.py": 0o644,
}
EXPECTED = {
    "usr/lib/sdk/lib", "usr/lib/sdk/bin/dev_appserver.py", "usr/lib/sdk/platform/python/lib/python3.12",
    "usr/lib/x86_64-linux-gnu/libfoo.so.1-gdb.py", "usr/lib/python3/dist-packages", "usr/bin/stray.py",
    "usr/share/doc/yaml/examples", "usr/lib/ns/pkg", "usr/lib/ext", "usr/share/wheels", "usr/local/lib/stray.py",
    "usr/local/lib/python3.11/ensurepip/_bundled/setuptools-65.5.0-py3-none-any.whl",
    "usr/local/lib/python3.11/site-packages", "etc/python3.11",
}


def make_host(root: Path) -> None:
    for rel, mode in HOST.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
        path.chmod(mode)
    link = root / "usr/lib/links/mod.py"
    link.parent.mkdir(parents=True)
    link.symlink_to("../sdk/bin/dev_appserver.py")  # a link is not followed: its target is covered where it lives


def test_every_kind_of_python_tree_is_covered_and_tools_stay(tmp_path: Path) -> None:
    make_host(tmp_path)
    keep = str(tmp_path / "usr/local/lib/python3.11")
    found = python_trees([str(tmp_path / "usr"), str(tmp_path / "etc")], keep=[keep])
    assert {os.path.relpath(p, tmp_path) for p in found} == EXPECTED
    assert len(found) == len(set(found))
    assert not [(a, b) for a in found for b in found if a != b and a.startswith(b + "/")], "a cover inside another"
    shown = [p for p in HOST if not any((tmp_path / p).as_posix().startswith(f) for f in found)]
    assert set(shown) == {"usr/lib/sdk/bin/gcloud", "usr/lib/sdk/bin/bq", "usr/lib/sdk/platform/python/bin/python3.12",
                          "usr/lib/x86_64-linux-gnu/libfoo.so.1", "usr/bin/git", "usr/share/data/readme.txt",
                          "usr/local/lib/python3.11/os.py"}


def test_the_walk_is_done_once_per_process_until_the_cache_is_cleared(tmp_path: Path) -> None:
    make_host(tmp_path)
    roots = [str(tmp_path / "usr")]
    first = python_trees(roots)
    (tmp_path / "usr/lib/late/jmespath").mkdir(parents=True)
    (tmp_path / "usr/lib/late/jmespath/__init__.py").write_text("")
    assert python_trees(roots) is first
    clear_cache()
    assert str(tmp_path / "usr/lib/late") in python_trees(roots)


def test_a_listing_gives_what_the_filesystem_walk_gives(tmp_path: Path) -> None:
    make_host(tmp_path)
    listing: dict[str, tuple[list[str], list[tuple[str, int]]]] = {}
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        rel = "/" + os.path.relpath(dirpath, tmp_path).lstrip(".").lstrip("/")
        files = [(f, (Path(dirpath) / f).lstat().st_mode & 0o777) for f in filenames if not (Path(dirpath) / f).is_symlink()]
        listing[rel.rstrip("/") or "/"] = (list(dirnames), files)
    walked = {os.path.relpath(p, tmp_path) for p in python_trees([str(tmp_path / "usr"), str(tmp_path / "etc")])}
    listed = {p.lstrip("/") for p in python_trees_in(listing)}
    assert listed == walked  # nothing kept in either
    assert "usr/local/lib" in listed  # the standard library beside stray.py, with it


def test_pytrees_docstring_examples_run() -> None:
    assert doctest.testmod(pytrees_module).failed == 0
