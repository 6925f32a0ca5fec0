"""The package's public surface: one sorted, importable __all__, and a cheap import."""

from __future__ import annotations

import re
import subprocess
import sys

import repogym_gym


def test_all_is_sorted_and_every_name_resolves() -> None:
    names = repogym_gym.__all__
    assert names == sorted(names)
    assert len(names) == len(set(names))
    missing = [n for n in names if not hasattr(repogym_gym, n)]
    assert missing == []


def test_parse_junit_xml_is_exported_from_the_package() -> None:
    from repogym_gym.junit import parse_junit_xml

    assert repogym_gym.parse_junit_xml is parse_junit_xml


def test_import_creates_no_directories_and_prints_nothing(tmp_path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    proc = subprocess.run([sys.executable, "-c", "import repogym_gym"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    assert list(tmp_path.iterdir()) == []


def _exception_classes(module: object) -> dict[str, type]:
    return {name: value for name, value in vars(module).items()
            if isinstance(value, type) and issubclass(value, (BaseException, Warning))
            and value.__module__ == module.__name__ and not name.startswith("_")}


def test_every_error_of_the_package_is_defined_in_errors_and_exported() -> None:
    """One exception tree (httpx's test_exported_members is the model): every public exception or
    warning class of any module is defined in ``repogym_gym.errors``, listed in its ``__all__`` and
    exported from the package."""
    import importlib
    import pkgutil

    from repogym_gym import errors

    outside = []
    for info in pkgutil.walk_packages(repogym_gym.__path__, "repogym_gym."):
        if info.name.endswith(".__main__") or info.name.startswith(
                ("repogym_gym.graders.judge_", "repogym_gym.graders.pytest_runner", "repogym_gym.testing")):
            continue  # entry points, the judged process's own scripts (run apart) and test helpers
        module = importlib.import_module(info.name)
        if module is not errors:
            outside += [f"{info.name}.{name}" for name, cls in _exception_classes(module).items()
                        if issubclass(cls, errors.RepoGymError)]
    assert outside == []
    defined = set(_exception_classes(errors))
    assert defined == set(errors.__all__) - {"validation_problems", "validation_summary"}
    assert defined <= set(repogym_gym.__all__)
    assert all(getattr(repogym_gym, name) is getattr(errors, name) for name in defined)


def test_the_exception_tree_drawn_in_errors_lists_every_class() -> None:
    from repogym_gym import errors

    drawn = set(re.findall(r"([A-Z][A-Za-z]+(?:Error|Warning))\b", errors.__doc__ or ""))
    assert set(_exception_classes(errors)) <= drawn


def test_every_module_lists_its_public_classes_and_functions_in_all() -> None:
    """httpx's test_exported_members, per module: a class or function a module defines without a
    leading underscore is in its ``__all__`` (and every module has one), so a reader can tell the
    public surface from the helpers."""
    import importlib
    import inspect
    import pkgutil

    unlisted, without_all = [], []
    for info in pkgutil.walk_packages(repogym_gym.__path__, "repogym_gym."):
        if info.name.endswith(".__main__") or info.name.startswith(
                ("repogym_gym.graders.judge_", "repogym_gym.graders.pytest_runner")):
            continue  # entry points, and the judged process's own scripts (run apart, by file)
        module = importlib.import_module(info.name)
        listed = getattr(module, "__all__", None)
        if listed is None:
            without_all.append(info.name)
            continue
        unlisted += [f"{info.name}.{name}" for name, value in vars(module).items()
                     if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
                     and value.__module__ == info.name and name not in listed]
    assert without_all == []
    assert unlisted == []
