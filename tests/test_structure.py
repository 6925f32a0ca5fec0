"""The package's structure, as a reviewer would check it: gymnasium only in the gym layer, no
private name imported across modules, no import cycle between its packages and top-level modules."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "repogym_gym"


def _modules() -> dict[str, ast.Module]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        found[name] = ast.parse(path.read_text(encoding="utf-8"))
    return found


def _imports(tree: ast.Module) -> list[tuple[str, list[str]]]:
    """(module, imported names) of every import statement, lazy ones in functions included."""
    rows = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            rows.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            rows += [(alias.name, []) for alias in node.names]
    return rows


def _unit(module: str) -> str:
    """The package or top-level module a module belongs to (``repogym_gym.graders.perf`` -> ``repogym_gym.graders``)."""
    return ".".join(module.split(".")[:2])


def test_gymnasium_is_imported_only_in_the_gym_layer() -> None:
    outside = [name for name, tree in _modules().items() if not name.startswith("repogym_gym.gym")
               and any(module.split(".")[0] == "gymnasium" for module, _ in _imports(tree))]
    assert outside == []


def test_no_private_name_is_imported_across_modules() -> None:
    found = [f"{name}: from {module} import {imported}" for name, tree in _modules().items()
             for module, names in _imports(tree) if module.startswith("repogym_gym") and module != name
             for imported in names if imported.startswith("_") and not imported.startswith("__")]
    assert found == []


def test_no_import_cycle_between_the_packages_and_top_level_modules() -> None:
    edges: dict[str, set[str]] = {}
    for name, tree in _modules().items():
        if name == "repogym_gym":
            continue  # the package's __init__ re-exports the public API from everywhere
        for module, _ in _imports(tree):
            if module.startswith("repogym_gym.") and _unit(module) != _unit(name):
                edges.setdefault(_unit(name), set()).add(_unit(module))

    def reachable(start: str) -> set[str]:
        seen, stack = set(), [start]
        while stack:
            for nxt in edges.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    cycles = sorted({tuple(sorted((a, b))) for a, targets in edges.items() for b in targets if a in reachable(b)})
    assert cycles == []


def test_the_readme_layout_names_every_module_and_package() -> None:
    """A newcomer finds each concept in the module of its name: the README's Layout block lists them all."""
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    words = set(block.replace("/", " ").split())
    names = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    missing = sorted(n for n in names if f"{n}.py" not in words and n not in words)
    assert missing == []


def test_no_test_module_imports_a_conftest() -> None:
    """Shared test code lives in ``helpers.py`` modules; a conftest holds fixtures and hooks only."""
    tests = Path(__file__).resolve().parent
    offenders = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            offenders += [f"{path.relative_to(tests)}: {n}" for n in names if n.split(".")[-1] == "conftest"]
    assert offenders == []
    conftests = sorted(tests.rglob("conftest.py"))
    assert conftests, "the suite has conftests"
    for conftest in conftests:  # and the conftests define only fixtures and pytest hooks
        tree = ast.parse(conftest.read_text())
        plain = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("pytest_")
                 and not any("fixture" in ast.unparse(d) for d in n.decorator_list)]
        assert plain == [], f"{conftest.relative_to(tests)} defines helpers {plain}: move them to helpers.py"


def test_ruff_passes_with_the_project_s_rules() -> None:
    """The tooling gate: ``ruff check .`` with ``[tool.ruff]`` of pyproject.toml (run here, so the test command is the gate)."""
    import shutil
    import subprocess
    import sys

    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is in the dev extra: pip install -e '.[dev]'"
    root = PACKAGE.parent
    done = subprocess.run([ruff, "check", "--no-cache", "."], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-1000:]


def test_mypy_passes_with_the_project_s_config() -> None:
    """The typing gate: ``mypy`` with ``[tool.mypy]`` of pyproject.toml over the package (about a
    minute cold, seconds from its cache)."""
    import shutil
    import subprocess
    import sys

    mypy = shutil.which("mypy", path=str(Path(sys.executable).parent)) or shutil.which("mypy")
    assert mypy, "mypy is in the dev extra: pip install -e '.[dev]'"
    done = subprocess.run([mypy], cwd=PACKAGE.parent, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-1000:]


#: Top-level test modules that test the package as a whole, not one module of it.
_WHOLE_PACKAGE_TESTS = {"test_structure", "test_public_api", "test_wheel", "test_notebooks"}


def test_the_tests_mirror_the_package() -> None:
    """``tests/test_<m>.py`` tests ``repogym_gym/<m>.py`` and ``tests/<p>/`` the package ``repogym_gym/<p>/``
    (``tests/redteam/`` holds the attacks, through the env's actions); a test module elsewhere is misfiled."""
    tests = PACKAGE.parent / "tests"
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    misfiled = [p.name for p in sorted(tests.glob("test_*.py"))
                if p.stem.removeprefix("test_") not in modules and p.stem not in _WHOLE_PACKAGE_TESTS]
    assert misfiled == [], f"top-level test modules without a module of that name: {misfiled}"
    folders = sorted(p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert [f for f in folders if f not in packages and f != "redteam"] == [], folders
    assert all((tests / f / "__init__.py").is_file() for f in folders), "every test folder is a package"


def test_no_module_is_over_600_lines() -> None:
    """Issue 11's bound: a module a reader can hold (split by concept past ~600 lines)."""
    long = {str(p.relative_to(PACKAGE)): n for p in sorted(PACKAGE.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
