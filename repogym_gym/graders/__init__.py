"""Graders: components with roles (objective / gate) combined into one GradeResult."""

from repogym_gym.graders.answer import AnswerGrader
from repogym_gym.graders.base import Grader, GradingContext, component
from repogym_gym.graders.composite import CompositeGrader, combine
from repogym_gym.graders.constraint import ConstraintGrader
from repogym_gym.graders.optimization import OptimizationGrader
from repogym_gym.graders.perf import PerfGrader, perf_score
from repogym_gym.graders.quality import QualityGrader
from repogym_gym.graders.similarity import DiffSimilarityGrader
from repogym_gym.graders.tests import TestGrader, score_tests

__all__ = [
    "AnswerGrader",
    "CompositeGrader",
    "ConstraintGrader",
    "DiffSimilarityGrader",
    "Grader",
    "OptimizationGrader",
    "GradingContext",
    "PerfGrader",
    "QualityGrader",
    "TestGrader",
    "combine",
    "component",
    "perf_score",
    "score_tests",
]
