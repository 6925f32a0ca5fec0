"""The task specification: the strict schema of ``task.yaml``.

A task is data. This module holds its schema, cross-field checks, and the loader that turns a
YAML file into a :class:`TaskSpec` or one :class:`~repogym_gym.errors.TaskSpecError` whose
message names the file, the field and the value (never a pydantic traceback).

Example:
    >>> spec = TaskSpec.model_validate({
    ...     "id": "add-one", "type": "bugfix", "problem_statement": "add_one(1) returns 1",
    ...     "tests": {"command": "python -m pytest --junitxml={junit} tests",
    ...               "fail_to_pass": ["tests/test_add.py::test_add_one"]},
    ... })
    >>> spec.grading.pass_threshold
    1.0
"""

from __future__ import annotations

import difflib
import re
import shlex
from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from repogym_gym.spec_grading import (
    ANSWER_CONTRACTS,
    OBJECTIVE_COMPONENTS,
    REWARD_KINDS,
    AnswerSpec,
    GradingSpec,
    OptimizationSpec,
    RewardKind,
    relative_path,
)
from repogym_gym.spec_run import EnvironmentSpec, LimitsSpec, PythonEnvSpec, StrictModel

__all__ = [
    "ConstraintSpec",
    "EnvironmentSpec",
    "ANSWER_CONTRACTS",
    "AnswerSpec",
    "GitSource",
    "GradingSpec",
    "LimitsSpec",
    "LocalSource",
    "OBJECTIVE_COMPONENTS",
    "PerfSpec",
    "PythonEnvSpec",
    "PypiSource",
    "REWARD_KINDS",
    "RepoSpec",
    "RewardKind",
    "Source",
    "TarballSource",
    "TaskSpec",
    "TaskType",
    "TestSpec",
    "check_sha256",
    "check_task_id",
    "relative_path",
    "spec_json_schema",
]

TaskType = Literal["bugfix", "feature", "refactor", "perf", "answer", "optimization"]

_COMMIT = re.compile(r"^[0-9a-fA-F]{40}$")
_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")
_PROJECT_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,198}[A-Za-z0-9])?$")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]{0,99}$")
_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")
_VERSION_SUFFIX = re.compile(r"-v\d+$")
_PYTEST_LAUNCHERS = (("pytest",), ("python", "-m", "pytest"), ("python3", "-m", "pytest"))


def check_task_id(v: str) -> str:
    """Return ``v`` if it is safe as a Gymnasium name (``RepoGym/<id>-v0``).

    Raises:
        ValueError: for '/', ':', other characters outside letters, digits, '_', '.', '-', a
            length over 100, or a trailing ``-v<digits>`` (Gymnasium would read it as a version).
    """
    if not isinstance(v, str) or not _TASK_ID.fullmatch(v):
        raise ValueError(
            f"id {v!r} must be 1-100 characters of letters, digits, '_', '.', '-' "
            "(no '/' or ':'), starting with a letter or digit"
        )
    if _VERSION_SUFFIX.search(v):
        raise ValueError(
            f"id {v!r} must not end in '-v<digits>': Gymnasium would read it as a version "
            f"(try {v[: v.rindex('-v')] + '_v' + v.rsplit('-v', 1)[1]!r})"
        )
    return v


def check_sha256(v: str) -> str:
    """Return ``v`` lowercased if it is 64 hex characters.

    Raises:
        ValueError: otherwise, quoting the value.
    """
    if not _SHA256.fullmatch(v):
        raise ValueError(f"sha256 {v!r} must be 64 hex characters (e.g. the output of `sha256sum FILE`)")
    return v.lower()


class LocalSource(StrictModel):
    """Source files shipped inside the task directory."""

    type: Literal["local"] = Field("local", description="Source kind: files in the task directory.")
    path: str = Field("repo", description="Directory with the source snapshot, relative to the task directory.")

    @field_validator("path")
    @classmethod
    def _relative(cls, v: str) -> str:
        return relative_path(v)


class GitSource(StrictModel):
    """One commit of a git repository; only that commit's files reach the workspace (no history)."""

    type: Literal["git"] = Field(description="Source kind: a git commit.")
    url: str = Field(
        description="Repository to clone: a URL (https://, ssh://, git@host:path) or a local path "
        "(a relative path is relative to the task directory)."
    )
    commit: str = Field(description="Full 40-hex commit id; branches and tags are not accepted (they move).")

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not v.strip() or v != v.strip() or any(ch in v for ch in "\0\n\r"):
            raise ValueError(f"url {v!r} must be a non-empty URL or path without surrounding spaces")
        if v.startswith("-") or v.lower().startswith("ext::"):
            raise ValueError(f"url {v!r} is not a repository location (no leading '-', no ext:: transport)")
        return v

    @field_validator("commit")
    @classmethod
    def _full_commit(cls, v: str) -> str:
        if not _COMMIT.fullmatch(v):
            raise ValueError(
                f"commit {v!r} must be a full 40-character hex commit id (get it with `git rev-parse <rev>`)"
            )
        return v.lower()


class _PinnedArchive(StrictModel):
    """Fields of sources that unpack an archive pinned by its sha256."""

    sha256: str = Field(description="sha256 of the archive file (an sdist is one), 64 hex characters.")
    subdir: str | None = Field(
        None,
        description="Directory inside the archive used as the repository root; null: the archive's "
        "single top-level directory.",
    )

    @field_validator("sha256")
    @classmethod
    def _sha256(cls, v: str) -> str:
        return check_sha256(v)

    @field_validator("subdir")
    @classmethod
    def _subdir(cls, v: str | None) -> str | None:
        return None if v is None else relative_path(v)


class PypiSource(_PinnedArchive):
    """A source distribution (sdist) from the package index, pinned by its sha256."""

    type: Literal["pypi"] = Field(description="Source kind: an sdist from the package index.")
    package: str = Field(description="Project name on the index, e.g. 'six'.")
    version: str = Field(description="Exact version, e.g. '1.16.0' (no ranges).")

    @field_validator("package")
    @classmethod
    def _project_name(cls, v: str) -> str:
        if not _PROJECT_NAME.fullmatch(v):
            raise ValueError(f"package {v!r} is not a valid project name (letters, digits, '.', '_', '-')")
        return v

    @field_validator("version")
    @classmethod
    def _exact_version(cls, v: str) -> str:
        if not _VERSION.fullmatch(v):
            raise ValueError(f"version {v!r} must be one exact version such as '1.16.0' (no ranges, no spaces)")
        return v


class TarballSource(_PinnedArchive):
    """A .tar(.gz|.bz2|.xz) or .zip archive, local or downloaded, pinned by its sha256."""

    type: Literal["tarball"] = Field(description="Source kind: an archive file.")
    url: str = Field(
        description="http(s) URL of the archive, or its path relative to the task directory; "
        "a name ending in .zip is read as a zip file, anything else as a tar file."
    )

    @field_validator("url")
    @classmethod
    def _url_or_path(cls, v: str) -> str:
        if v.startswith(("http://", "https://")):
            return v
        try:
            if "://" in v:
                raise ValueError
            return relative_path(v)
        except ValueError:
            raise ValueError(f"url {v!r} must be an http(s) URL or a path inside the task directory") from None


    def is_remote(self) -> bool:
        """True for an http(s) URL, False for a path in the task directory."""
        return self.url.startswith(("http://", "https://"))


#: Where the task's code comes from, chosen by ``type``.
Source = Annotated[LocalSource | GitSource | PypiSource | TarballSource, Field(discriminator="type")]
_SOURCE_MODELS: dict[str, type[BaseModel]] = {
    "local": LocalSource, "git": GitSource, "pypi": PypiSource, "tarball": TarballSource,
}


def _untagged(error: ErrorDetails, kind: object) -> InitErrorDetails:
    """A source's validation error without the union tag in its location, in the task's words."""
    loc = error["loc"]
    if loc and loc[0] == kind:
        loc = loc[1:]
    if error["type"] == "union_tag_invalid":
        return {
            "type": PydanticCustomError(
                "source_type", "source type {tag} is not one of {expected}",
                {"tag": repr(kind), "expected": ", ".join(map(repr, _SOURCE_MODELS))},
            ),
            "loc": (*loc, "type"),
            "input": kind,
        }
    if error["type"] == "extra_forbidden" and isinstance(kind, str) and kind in _SOURCE_MODELS:
        known = sorted(_SOURCE_MODELS[kind].model_fields)
        close = difflib.get_close_matches(str(loc[-1]) if loc else "", known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known fields: {known}"
        if kind == "local" and not close:
            hint += "; set 'type' to git, pypi or tarball for another kind of source"
        return {
            "type": PydanticCustomError("unknown_field", "unknown field of a {kind} source ({hint})",
                                        {"kind": kind, "hint": hint}),
            "loc": loc,
            "input": error["input"],
        }
    details: InitErrorDetails = {"type": error["type"], "loc": loc, "input": error["input"]}
    if "ctx" in error:
        details["ctx"] = error["ctx"]
    return details


class RepoSpec(StrictModel):
    """Where the code comes from and how to prepare it."""

    source: Source = Field(
        default_factory=LocalSource,
        description="Where the code comes from: local (default; 'type' may be left out), git, pypi or tarball.",
    )
    setup: list[str] = Field(
        default_factory=list,
        description="Shell commands run once, in the work tree, before the baseline snapshot; "
        "their build artefacts become part of the baseline.",
    )
    patches: list[str] = Field(
        default_factory=list,
        description="Patch files (relative to the task directory) applied in order after the source is "
        "materialised and before setup, e.g. the injected fault of a mined task.",
    )
    env: PythonEnvSpec | None = Field(
        None,
        description="A Python environment for setup, tests and commands, kept outside the work tree "
        "(cached by its requirements); None uses the grader's own interpreter.",
    )

    @field_validator("patches")
    @classmethod
    def _relative_patches(cls, v: list[str]) -> list[str]:
        return [relative_path(p) for p in v]

    @field_validator("source", mode="wrap")
    @classmethod
    def _source(cls, v: object, handler: ValidatorFunctionWrapHandler) -> object:
        # A source without 'type' is local (the schema before sources had kinds). Errors inside a
        # source read 'repo.source.<field>', without pydantic's union tag in the location.
        if isinstance(v, dict) and "type" not in v:
            v = {"type": "local", **v}
        try:
            return handler(v)
        except ValidationError as exc:
            kind = v.get("type") if isinstance(v, dict) else None
            raise ValidationError.from_exception_data(exc.title, [_untagged(e, kind) for e in exc.errors()]) from None


class TestSpec(StrictModel):
    """How the task's tests run and which test ids carry the reward."""

    __test__ = False

    command: str = Field(
        description="Test command; '{junit}' is replaced by the path of the JUnit XML report "
        "the grader reads (outside the repository)."
    )
    runner: Literal["pytest", "generic"] = Field(
        "pytest",
        description="'pytest' lets the grader own the runner settings (its own ini, no plugin "
        "autoload, a must-fail sentinel test); 'generic' runs the command as given.",
    )
    fail_to_pass: list[str] = Field(default_factory=list, description="Test ids that fail before and must pass after.")
    pass_to_pass: list[str] = Field(default_factory=list, description="Test ids that pass before and must keep passing.")
    hidden: str | None = Field(
        "hidden",
        description="Directory (relative to the task directory) whose files are copied into the "
        "repository at the same relative paths only while grading; null for none.",
    )
    restore: list[str] = Field(
        default_factory=list,
        description="More files restored to the baseline before grading (the files behind "
        "fail_to_pass / pass_to_pass ids always are).",
    )
    pythonpath: list[str] = Field(
        default_factory=lambda: ["."],
        description="pytest runner only: directories (relative to the repository) put on sys.path.",
    )
    sealed: bool = Field(False, description="Seal the hidden test files of scored ids: the host compares what "
                         "they observe with the golden patch's observations (repogym_gym.graders.seal).")

    @field_validator("command")
    @classmethod
    def _has_junit_placeholder(cls, v: str) -> str:
        if "{junit}" not in v:
            raise ValueError(f"command {v!r} must contain the '{{junit}}' placeholder for the JUnit report path")
        try:
            shlex.split(v)
        except ValueError as exc:
            raise ValueError(f"command {v!r} is not valid shell syntax: {exc}") from None
        return v

    @field_validator("restore", "pythonpath")
    @classmethod
    def _relative(cls, v: list[str]) -> list[str]:
        return [relative_path(p) for p in v]

    @field_validator("hidden")
    @classmethod
    def _hidden_relative(cls, v: str | None) -> str | None:
        return None if v is None else relative_path(v)

    @field_validator("fail_to_pass", "pass_to_pass")
    @classmethod
    def _unique_ids(cls, v: list[str]) -> list[str]:
        seen: set[str] = set()
        for test_id in v:
            if not test_id.strip():
                raise ValueError("test ids must not be empty")
            if test_id in seen:
                raise ValueError(f"test id {test_id!r} is listed twice")
            seen.add(test_id)
        return v

    @model_validator(mode="after")
    def _check(self) -> TestSpec:
        overlap = sorted(set(self.fail_to_pass) & set(self.pass_to_pass))
        if overlap:
            raise ValueError(f"test ids {overlap} are in both fail_to_pass and pass_to_pass")
        if self.runner == "pytest":
            argv = shlex.split(self.command)
            if not any(tuple(argv[: len(p)]) == p for p in _PYTEST_LAUNCHERS):
                raise ValueError(
                    f"command {self.command!r} must start with 'pytest' or 'python -m pytest' when "
                    "runner is 'pytest' (set runner: generic for other test commands)"
                )
        elif self.sealed:
            raise ValueError("sealed: true needs runner: pytest (the judge's signed record carries the observations)")
        return self

    def test_files(self) -> list[str]:
        """Files behind the fail_to_pass / pass_to_pass ids (the part before the first ``::``).

        Only ids that look like paths (contain ``/`` or end in ``.py`` before ``::``) name a file.
        """
        files: set[str] = set()
        for test_id in (*self.fail_to_pass, *self.pass_to_pass):
            head = test_id.split("::", 1)[0]
            if "::" in test_id and ("/" in head or head.endswith(".py")):
                files.add(head)
        return sorted(files)

    def support_dirs(self) -> list[str]:
        """The directories of :meth:`test_files` other than the repository's root: every ``.py``
        file directly in one is test support (a ``common.py`` of helpers the tests import), as
        much the grader's as the tests themselves (protected, restored, and verified by the judge)."""
        return sorted({f.rpartition("/")[0] for f in self.test_files()} - {""})


class PerfSpec(StrictModel):
    """A benchmark timed against the pristine baseline (see PerfGrader for the score formula)."""

    command: str = Field(description="Benchmark command, run in the repository; should run for >= 0.5 s.")
    runs: Annotated[int, Field(ge=1, le=50)] = Field(5, description="Interleaved baseline/candidate pairs.")
    min_speedup: Annotated[float, Field(gt=1.0)] = Field(2.0, description="Speed-up (baseline/candidate) that scores 1 and passes.")
    noise_floor: Annotated[float, Field(ge=1.0)] = Field(1.15, description="Speed-up below which the score is 0.")
    timing: Literal["wall", "reported"] = Field("wall",
        description="'wall' times the process tree from outside, max(wall, CPU seconds); 'reported' trusts a last stdout line "
        '{"seconds": x} (more precise, but agent-reachable code could fake it).',
    )
    timeout_s: Annotated[float, Field(gt=0)] = Field(120.0, description="Timeout of one benchmark run, seconds.")
    output_check: str | None = Field(
        None,
        description="Regex whose first match in the benchmark's stdout must be the same for the candidate as for "
        "the baseline (both get the same random REPOGYM_PERF_SEED); a benchmark that skips its work, exits early "
        "or replays a remembered answer fails it. The match must not include timings.",
    )

    @field_validator("output_check")
    @classmethod
    def _output_check_compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"output_check {v!r} is not a valid regular expression: {exc}") from None
        return v

    @model_validator(mode="after")
    def _floor_below_target(self) -> PerfSpec:
        if self.noise_floor >= self.min_speedup:
            raise ValueError(
                f"noise_floor ({self.noise_floor}) must be below min_speedup ({self.min_speedup})"
            )
        return self


class ConstraintSpec(StrictModel):
    """Scope and quality rules; every glob uses .gitignore syntax (``*.py``, ``src/**``, ``conftest.py``)."""

    allowed_files: list[str] | None = Field(None, description="Globs of files the change may touch; null means any.")
    protected_files: list[str] = Field(default_factory=list, description="More globs that must not change.")
    allow_protected: list[str] = Field(
        default_factory=list,
        description="Globs lifting the default protection (conftest.py, pytest.ini, setup.cfg, ...); "
        "never the files behind fail_to_pass / pass_to_pass.",
    )
    allow_symlinks: bool = Field(False, description="Carry symlinks that point inside the repository.")
    max_files_changed: Annotated[int, Field(ge=1)] | None = None
    max_lines_changed: Annotated[int, Field(ge=1)] | None = Field(None, description="Added plus removed lines.")
    forbidden_patterns: list[str] = Field(default_factory=list, description="Regexes that must not appear in added lines.")
    required_patterns: list[str] = Field(default_factory=list, description="Regexes that must match somewhere in `paths` after the change.")
    max_function_length: Annotated[int, Field(ge=1)] | None = Field(None, description="Lines per function, on `paths`.")
    max_cyclomatic_complexity: Annotated[int, Field(ge=1)] | None = Field(None, description="Per function, on `paths`.")
    paths: list[str] = Field(default_factory=list, description="Files or directories the quality limits and required_patterns apply to.")

    @field_validator("forbidden_patterns", "required_patterns")
    @classmethod
    def _compiles(cls, v: list[str]) -> list[str]:
        for pattern in v:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
        return v

    @field_validator("paths")
    @classmethod
    def _relative(cls, v: list[str]) -> list[str]:
        return [relative_path(p) for p in v]

    @field_validator("allowed_files", "protected_files", "allow_protected")
    @classmethod
    def _inside(cls, v: list[str] | None) -> list[str] | None:
        """Globs match paths inside the repository: a '..' part never matches, and a leading '/' (an
        absolute path, or gitignore's anchor) is refused rather than guessed at."""
        for glob in v or []:
            if glob.startswith("/") or ".." in PurePosixPath(glob).parts:
                raise ValueError(f"glob {glob!r} must be relative to the repository root and stay inside it "
                                 f"(write {glob.lstrip('/')!r} for a path from the root)" if glob.startswith("/")
                                 else f"glob {glob!r} must stay inside the repository (no '..' part)")
        return v

    def has_quality_limits(self) -> bool:
        """True when a function-length or complexity limit is set."""
        return self.max_function_length is not None or self.max_cyclomatic_complexity is not None


class TaskSpec(StrictModel):
    """One coding task (the contents of ``task.yaml``)."""

    id: str = Field(description="Unique id, safe as a Gymnasium name: letters, digits, '_', '.', '-'.")
    type: TaskType
    problem_statement: str = Field(min_length=1)
    repo: RepoSpec = Field(default_factory=RepoSpec)
    tests: TestSpec | None = Field(None, description="The tests (every type but answer needs them).")
    answer: AnswerSpec | None = Field(None, description="An answer task's answer file and reference.")
    optimization: OptimizationSpec | None = Field(None, description="An optimization task's program and scoring.")
    perf: PerfSpec | None = None
    constraints: ConstraintSpec = Field(default_factory=ConstraintSpec)
    grading: GradingSpec = Field(default_factory=GradingSpec)
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    environment: EnvironmentSpec = Field(default_factory=EnvironmentSpec)
    tags: list[str] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _gym_safe_id(cls, v: str) -> str:
        return check_task_id(v)

    @model_validator(mode="after")
    def _reward_signal(self) -> TaskSpec:
        kind = self.type
        if kind == "perf" and self.perf is None:
            raise ValueError("a perf task needs a 'perf' section (benchmark command, runs, min_speedup)")
        if kind != "perf" and self.perf is not None:
            raise ValueError(f"a {kind} task must not have a 'perf' section (only perf tasks are timed)")
        untested = kind in ("answer", "optimization")
        if (kind == "answer") != (self.answer is not None) or (kind == "optimization") != (self.optimization is not None) \
                or untested == (self.tests is not None):
            raise ValueError("an answer task has an 'answer' section and an optimization task an 'optimization' section, "
                             f"neither 'tests'; every other type has 'tests' (this {kind} task has "
                             f"{'' if self.tests else 'no '}tests, {'an' if self.answer else 'no'} answer and "
                             f"{'an' if self.optimization else 'no'} optimization section)")
        if kind in ("bugfix", "feature") and self.tests is not None and not self.tests.fail_to_pass:
            raise ValueError(f"a {kind} task needs at least one tests.fail_to_pass id (its reward signal)")
        if kind == "refactor":  # noqa: SIM102 - one rule per task type
            if not self.constraints.has_quality_limits() or not self.constraints.paths:
                raise ValueError(
                    "a refactor task needs constraints.max_function_length or "
                    "constraints.max_cyclomatic_complexity, and constraints.paths (its reward signal)"
                )
        rewards = self.reward_kinds()
        allowed = {kind} if untested else {"tests", "diff_similarity"} | (
            {"graded", "binary"} if kind in ("bugfix", "feature") else set())
        if len(set(rewards)) != len(rewards) or not set(rewards) <= allowed:
            raise ValueError(f"grading.rewards {rewards}: each kind once, of those this {kind} task can offer: "
                             f"{sorted(allowed)}")
        for name in self.grading.weights:
            if name not in self.objectives():
                raise ValueError(
                    f"grading.weights names {name!r}, which is not an objective of a {kind} task "
                    f"(objectives: {self.objectives()})"
                )
        if sum(self.grading.weights.get(name, 1.0) for name in self.objectives()) == 0:  # every score would be 0
            raise ValueError(f"grading.weights gives the objectives {self.objectives()} a total weight of 0, so every "
                             "submission, the golden patch too, would score 0; give one a weight above 0 or leave weights out")
        return self

    def objectives(self) -> list[str]:
        """Names of the components that are objectives for this task type (the rest are gates)."""
        return {
            "bugfix": ["tests"],
            "feature": ["tests"],
            "refactor": ["quality"],
            "perf": ["perf"],
            "answer": ["answer"],
            "optimization": ["optimization"],
        }[self.type]

    def tested(self) -> TestSpec:
        """The task's tests.

        Raises:
            ValueError: for an answer task, which has none.
        """
        if self.tests is None:
            raise ValueError(f"task {self.id!r} is an {self.type} task: it has no tests")
        return self.tests

    def reward_kinds(self) -> list[str]:
        """The reward kinds the task offers, its default first: ``grading.rewards``, else ``answer`` for an
        answer task, ``optimization`` for an optimization task and ``tests`` (the task type's pipeline) for the rest."""
        if self.grading.rewards is not None:
            return list(self.grading.rewards)
        return [self.type if self.type in ("answer", "optimization") else "tests"]


def spec_json_schema() -> dict[str, object]:
    """JSON Schema of ``task.yaml`` (what ``repogym tasks schema`` prints)."""
    return TaskSpec.model_json_schema()

