"""Task suites built from a recipe: real packages, pinned, mined deterministically, cached.

No third-party source lives in this repository: a recipe (``task_suites/<name>/recipe.yaml``)
names pinned sdists by version and sha256, what to mutate and how many tasks to keep. The first
:func:`build_suite` downloads each sdist (cached), creates each package's test environment
(cached), mines the tasks with :func:`~repogym_gym.mine.mutation.mine_mutations` and writes
them under ``<cache>/suites/<name>-<key>/``; later calls return that directory at once. The key
hashes the recipe and the miner's version, so a changed recipe builds a new suite.

Example recipe entry::

    packages:
      - package: toolz
        version: 1.0.0
        sha256: 2c86e3d9a04798ac556793bced838816296a2f085017664e4995cb40a1047a02
        requirements: [pytest==8.3.3]
        tests: [toolz/tests]
        files: [toolz/itertoolz.py, toolz/dicttoolz.py]
        tasks: 6
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from repogym_gym.errors import MiningError, TaskSpecError
from repogym_gym.interpreters import supported_version
from repogym_gym.mine.mutation import MutationOptions, MutationReport, mine_mutations
from repogym_gym.paths import default_cache_dir
from repogym_gym.sources import materialize_source
from repogym_gym.spec import PypiSource, PythonEnvSpec, TestSpec, check_sha256
from repogym_gym.task import format_validation_error
from repogym_gym.venvs import ensure_venv
from repogym_gym.yamlfile import load_yaml_file

__all__ = ["DEFAULT_PYTEST", "MINER_VERSION", "PackageRecipe", "SuiteRecipe", "build_suite", "built_suite",
           "check_recipe_paths", "load_recipe", "mine_package", "suite_key", "with_pytest"]

#: Bumped when mining would produce different tasks from the same recipe.
MINER_VERSION = "3"  # 3: natural negate_condition, PYTHONHASHSEED=0; 2: whole-suite pass_to_pass
_COVERAGE = "coverage==7.6.10"
#: The pytest a mined package's test environment gets unless its requirements pin their own.
DEFAULT_PYTEST = "pytest==9.0.3"


def with_pytest(requirements: list[str]) -> list[str]:
    """``requirements`` plus :data:`DEFAULT_PYTEST` unless one of them already names pytest.

    >>> with_pytest(["attrs>=23"])
    ['pytest==9.0.3', 'attrs>=23']
    >>> with_pytest(["pytest==9.1.1", "attrs"])
    ['pytest==9.1.1', 'attrs']
    """
    names_pytest = any(re.match(r"\s*pytest\s*(?:$|[=<>!~\[;@ ])", r, flags=re.IGNORECASE) for r in requirements)
    return list(requirements) if names_pytest else [DEFAULT_PYTEST, *requirements]


class PackageRecipe(BaseModel):
    """One pinned package and how to mine it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str
    version: str
    sha256: str
    requirements: list[str] = Field(description="The test environment (pin pytest).")
    tests: list[str] = Field(description="Test paths inside the sdist, passed to pytest.")
    pythonpath: list[str] = Field(default_factory=lambda: ["."], description="Import roots inside the sdist.")
    python: str | None = Field(None, description="CPython version (major.minor) of the test environment, one the "
                               "judge runs on; null: the interpreter running repogym_gym.")
    files: list[str] = Field(description="Source files to mutate (relative to the sdist root).")
    tasks: int = Field(6, ge=1, description="Tasks to keep.")
    max_candidates: int = Field(60, ge=1)
    max_failure_ratio: float = Field(0.3, gt=0, le=1)
    seed: int = 0
    max_steps: int = 30
    test_timeout_s: float = 300.0

    @field_validator("sha256")
    @classmethod
    def _sha256(cls, v: str) -> str:
        return check_sha256(v)  # `mine mutate --sha256 zz` reached the download as an internal error

    @field_validator("python")
    @classmethod
    def _judged_version(cls, v: str | None) -> str | None:
        return None if v is None else supported_version(v)

    def env(self) -> PythonEnvSpec:
        """The test environment the package's tasks record (``repo.env``)."""
        return PythonEnvSpec(requirements=self.requirements, python=self.python)

    def source(self) -> PypiSource:
        return PypiSource(type="pypi", package=self.package, version=self.version, sha256=self.sha256)

    def test_spec(self) -> TestSpec:
        return TestSpec(command="python -m pytest -q --junitxml={junit} " + " ".join(self.tests),
                        fail_to_pass=[], pass_to_pass=[], hidden=None, pythonpath=self.pythonpath)


class SuiteRecipe(BaseModel):
    """A suite to mine from real packages."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    packages: list[PackageRecipe]


def load_recipe(path: Path) -> SuiteRecipe:
    """Parse a recipe file.

    Raises:
        TaskSpecError: naming the file, field and value.
    """
    data = load_yaml_file(path)
    try:
        return SuiteRecipe.model_validate(data)
    except ValidationError as exc:
        raise TaskSpecError(format_validation_error(exc, str(path))) from None


def suite_key(recipe_path: Path) -> str:
    """12 hex characters over the recipe file and the miner version."""
    return hashlib.sha256(MINER_VERSION.encode() + b"\0" + recipe_path.read_bytes()).hexdigest()[:12]


def built_suite(recipe_path: Path, *, cache_dir: Path | None = None) -> Path | None:
    """The built suite's directory, or None when it has not been built yet (nothing is built)."""
    cache_dir = cache_dir or default_cache_dir()
    recipe = load_recipe(recipe_path)
    suite = cache_dir / "suites" / f"{recipe.name}-{suite_key(recipe_path)}"
    return suite if (suite / "suite.json").is_file() else None


def build_suite(recipe_path: Path, *, cache_dir: Path | None = None,
                progress: Callable[[str], None] | None = None, jobs: int = 1) -> Path:
    """Build the suite of ``recipe_path`` (or return the cached build).

    Args:
        recipe_path: The recipe (``task_suites/<name>/recipe.yaml``).
        cache_dir: The cache (default: :func:`~repogym_gym.paths.default_cache_dir`).
        progress: Called with mining progress lines (from several threads when ``jobs`` > 1).
        jobs: Packages mined at once, each in a thread driving its own test subprocesses (the
            work is in those processes, so one per core suits). Each package is mined alone and
            deterministically from its own seed, so the suite is the same for any ``jobs``.

    Returns:
        The suite directory: one task directory per task, and ``suite.json`` with the mining
        reports (yield per operator, flaky tests excluded, seconds).

    Raises:
        TaskSpecError: for a malformed recipe; SourceError / SetupError when a package cannot be
            fetched or its environment installed; RuntimeError when a package's tests do not run.
        ValueError: when ``jobs`` < 1.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    cache_dir = cache_dir or default_cache_dir()
    say = progress or (lambda _m: None)
    recipe = load_recipe(recipe_path)
    root = cache_dir / "suites"
    root.mkdir(parents=True, exist_ok=True)
    suite = root / f"{recipe.name}-{suite_key(recipe_path)}"
    with open(root / f"{suite.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (suite / "suite.json").is_file():
            return suite
        staging = Path(tempfile.mkdtemp(prefix=f".{suite.name}.", dir=root))
        try:
            pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="repogym-mine")
            try:
                reports = list(pool.map(lambda pkg: _mine_package(pkg, staging, cache_dir, say), recipe.packages))
            finally:  # a failed package stops the ones not started yet
                pool.shutdown(wait=True, cancel_futures=True)
            summary = {"name": recipe.name, "key": suite_key(recipe_path),
                       "reports": [r.model_dump(mode="json") for r in reports]}
            (staging / "suite.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
            shutil.rmtree(suite, ignore_errors=True)
            os.replace(staging, suite)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return suite


def mine_package(pkg: PackageRecipe, out_dir: Path, *, cache_dir: Path | None = None,
                 progress: Callable[[str], None] | None = None) -> MutationReport:
    """Mine one package of a recipe into ``out_dir`` (the sdist and environments are cached)."""
    return _mine_package(pkg, out_dir, cache_dir or default_cache_dir(), progress or (lambda _m: None))


def _mine_package(pkg: PackageRecipe, out_dir: Path, cache_dir: Path, say: Callable[[str], None]) -> MutationReport:
    say(f"{pkg.package}: fetching {pkg.package}=={pkg.version}")
    template = {
        "repo": {"source": pkg.source().model_dump(mode="json", exclude_none=True),
                 "env": pkg.env().model_dump(exclude_none=True)},
        "limits": {"max_steps": pkg.max_steps, "test_timeout_s": pkg.test_timeout_s},
        "tags": ["realcode", "mutation", pkg.package],
    }
    options = MutationOptions(package=pkg.package, files=pkg.files, seed=pkg.seed, max_tasks=pkg.tasks,
                              max_candidates=pkg.max_candidates, max_failure_ratio=pkg.max_failure_ratio,
                              test_timeout_s=pkg.test_timeout_s)
    with tempfile.TemporaryDirectory(prefix=f"repogym-src-{pkg.package}-") as tmp:
        tree = Path(tmp) / "tree"
        materialize_source(pkg.source(), Path(tmp), tree, cache_dir=cache_dir)
        check_recipe_paths(pkg, tree)  # before any environment is built or suite run
        say(f"{pkg.package}: building its test environment")
        env_dir = ensure_venv(pkg.requirements, cache_dir=cache_dir, python=pkg.python)
        coverage_env = ensure_venv([*pkg.requirements, _COVERAGE], cache_dir=cache_dir, python=pkg.python)
        _, report = mine_mutations(tree, pkg.test_spec(), template, options, out_dir, env_dir=env_dir,
                                   coverage_env_dir=coverage_env, progress=lambda m: say(f"{pkg.package}: {m}"))
    return report


def check_recipe_paths(pkg: PackageRecipe, tree: Path) -> None:
    """Check that every path ``pkg`` names exists in its unpacked sdist ``tree``.

    ``files`` must be files, ``pythonpath`` entries directories, ``tests`` either; all relative
    and inside the tree.

    Raises:
        MiningError: naming each missing path with its field, and a few of the sdist's top-level
            entries (what exists).
    """
    root = tree.resolve()
    problems = []
    for field, paths, ok in (("files", pkg.files, Path.is_file), ("tests", pkg.tests, Path.exists),
                             ("pythonpath", pkg.pythonpath, Path.is_dir)):
        for rel in paths:
            target = (root / rel).resolve()
            if Path(rel).is_absolute() or not target.is_relative_to(root) or not ok(target):
                kind = {"files": "a file", "tests": "a path", "pythonpath": "a directory"}[field]
                problems.append(f"{field}: {rel!r} is not {kind} inside the sdist")
    if problems:
        top = ", ".join(sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir())[:12])
        raise MiningError(f"{pkg.package}=={pkg.version}: " + "; ".join(problems) + f" (the sdist holds: {top})")
