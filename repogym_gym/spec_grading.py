"""How a task is graded: ``grading:`` and ``answer:`` of task.yaml, and the reward kinds a task may offer.

Split from :mod:`repogym_gym.spec`, which re-exports every name here.
"""

from __future__ import annotations

import math
from pathlib import PurePosixPath
from typing import Annotated, Literal, get_args

from pydantic import Field, field_validator, model_validator

from repogym_gym.diffsim import check_weights
from repogym_gym.equivalence import check_expected
from repogym_gym.spec_run import StrictModel

__all__ = [
    "ANSWER_CONTRACTS",
    "AnswerSpec",
    "GradingSpec",
    "OptimizationSpec",
    "OBJECTIVE_COMPONENTS",
    "REWARD_KINDS",
    "RewardKind",
    "relative_path",
]

#: Component names that can be objectives (and so can carry a weight in ``grading.weights``).
OBJECTIVE_COMPONENTS = ("tests", "quality", "perf")

#: Reward kinds a task may offer (``grading.rewards``; README "Choosing a reward"); graded and binary score
#: the tests of a bugfix or feature task, diff_similarity compares the patch with the golden one, answer
#: compares an answer file with the task's reference answer, optimization scores a program on generated cases.
RewardKind = Literal["tests", "graded", "binary", "diff_similarity", "answer", "optimization"]
REWARD_KINDS: tuple[str, ...] = get_args(RewardKind)

AnswerContract = Literal["int", "float", "string", "set", "json", "expression"]
#: Typed answer contracts (:mod:`repogym_gym.equivalence`).
ANSWER_CONTRACTS: tuple[str, ...] = get_args(AnswerContract)


def relative_path(value: str) -> str:
    """Return ``value`` as a normalised relative posix path inside a tree.

    Raises:
        ValueError: for an empty, absolute or ``..``-escaping path.
    """
    if not value or not value.strip():
        raise ValueError("path must not be empty")
    pure = PurePosixPath(value)
    if pure.is_absolute() or ".." in pure.parts:
        raise ValueError(f"path {value!r} must be relative and stay inside the repository")
    return pure.as_posix()


class GradingSpec(StrictModel):
    """How components combine: score = Σ wᵢ·sᵢ / Σ wᵢ over objectives, 0 if any gate fails."""

    weights: dict[str, Annotated[float, Field(ge=0)]] = Field(
        default_factory=dict, description="Objective component name -> weight (default 1 each)."
    )
    pass_threshold: Annotated[float, Field(ge=0, le=1)] = 1.0
    partial_credit: bool = Field(True, description="k of n fail_to_pass passing scores k/n; off: all or nothing.")
    require_all_pass_to_pass: bool = Field(
        True, description="Any broken pass_to_pass scores 0; off: score x (1 - broken/total)."
    )
    rewards: list[RewardKind] | None = Field(
        None, min_length=1,
        description="Reward kinds offered, the first the default (none given: 'answer' for an answer task, else "
                    "'tests'); gym.make(id, reward=...) picks another.")
    diff_weights: dict[Literal["format", "size", "file", "region", "sim", "judge"], Annotated[float, Field(ge=0)]] = Field(
        default_factory=dict, description="diff_similarity component -> weight (format, size, file, region, sim, judge).")

    @field_validator("diff_weights")
    @classmethod
    def _scorable(cls, v: dict[str, float]) -> dict[str, float]:
        check_weights(v)  # the scorer's own rule, at load: a task whose every grade would fail is refused here
        return v

    @field_validator("weights")
    @classmethod
    def _known_components(cls, v: dict[str, float]) -> dict[str, float]:
        for name in v:
            if name not in OBJECTIVE_COMPONENTS:
                raise ValueError(
                    f"weights has unknown component {name!r}; objectives are {list(OBJECTIVE_COMPONENTS)}"
                )
        return v


class AnswerSpec(StrictModel):
    """An answer task's answer: the file the agent writes and the reference it must equal under a contract.

    The reference lives in task.yaml, which no sandbox shows the agent; the golden patch writes it.
    """

    path: str = Field("answer.txt", description="Where the agent writes its answer, relative to the repository root.")
    expected: str = Field(min_length=1, description="The reference answer, as text in the contract's syntax.")
    contract: AnswerContract = Field("string", description=f"How answers compare: one of {list(ANSWER_CONTRACTS)}.")
    abs_tol: Annotated[float, Field(ge=0)] = Field(0.0, description="float: absolute tolerance.")
    rel_tol: Annotated[float, Field(ge=0, lt=1)] = Field(1e-9, description="float: relative tolerance.")
    normalise: list[Literal["strip", "lower", "collapse_whitespace"]] = Field(
        ["strip"], description="string and set items: applied to both sides before comparing.")
    variables: list[Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,30}$")]] = Field(
        default_factory=list, description="expression: the free symbols an answer may use.")
    timeout_s: Annotated[float, Field(gt=0, le=60)] = Field(10.0, description="expression: seconds for the symbolic check.")

    @field_validator("path")
    @classmethod
    def _inside(cls, v: str) -> str:
        return relative_path(v)

    @model_validator(mode="after")
    def _expected_is_valid(self) -> AnswerSpec:
        problem = check_expected(self)
        if problem is not None:
            raise ValueError(f"expected {self.expected[:80]!r} is not a valid {self.contract} answer: {problem}")
        if self.contract == "float" and not math.isfinite(self.abs_tol + self.rel_tol):
            raise ValueError("answer tolerances must be finite")
        return self


class OptimizationSpec(StrictModel):
    """An optimization task's program and how it is scored (design doc 004, "Optimization score").

    The generator, scorer and baseline are files of the task directory (never shown to the agent):
    ``generator`` defines ``generate(rng: random.Random, index: int) -> str`` (a case: the program's stdin),
    ``scorer`` defines ``score(case: str, output: str) -> float`` in [0, 1] (raising ``ValueError`` for an
    infeasible or malformed output), ``baseline`` is a simple program the reference solution must beat.
    """

    program: str = Field("solution.py", description="The program the agent writes, relative to the repository root.")
    command: str | None = Field(None, description="How it runs from the repository root, the case on stdin "
                                                  "(default: python <program>).")
    generator: str = Field(description="Task-directory file defining generate(rng, index) -> str.")
    scorer: str = Field(description="Task-directory file defining score(case, output) -> float in [0, 1].")
    baseline: str = Field(description="Task-directory file: a simple program the reference must beat.")
    cases: Annotated[int, Field(ge=1, le=200)] = 10
    seed: Annotated[int, Field(ge=0)] = 0
    time_limit_s: Annotated[float, Field(gt=0, le=600)] = Field(10.0, description="Seconds per run of a case.")
    scorer_timeout_s: Annotated[float, Field(gt=0, le=3600)] = Field(120.0, description="Seconds for generating or "
                                                                                        "scoring all cases.")

    @field_validator("program", "generator", "scorer", "baseline")
    @classmethod
    def _inside(cls, v: str) -> str:
        return relative_path(v)

    def run_command(self) -> str:
        """The command that runs the program (``command``, else ``python <program>``)."""
        return self.command or f"python {self.program}"

