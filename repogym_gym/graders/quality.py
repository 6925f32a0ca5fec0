"""QualityGrader: function length and cyclomatic complexity limits on ``constraints.paths``
and on every Python file the submission adds or changes (so moving code elsewhere is no escape).
A changed file that builds code from strings (``exec``, ``eval``, ``compile``,
``types.FunctionType``...) scores 0: the metrics cannot see such code.

Each set limit is one rule; ``score`` is the fraction of rules with no violating function, and
``passed`` requires all (design doc 000, "QualityGrader"). It is the objective of refactor tasks
and a gate elsewhere. Unreadable or unparseable files violate every rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

from repogym_gym.graders.base import GradingContext, component
from repogym_gym.metrics import file_metrics
from repogym_gym.results import GradeComponent, Role

__all__ = ["QualityGrader"]

_DYNAMIC_CALLS = {"exec", "eval", "compile", "__import__"}
_DYNAMIC_ATTRS = {"FunctionType", "CodeType", "LambdaType"}


def _dynamic_code(repo: Path, paths: list[str]) -> list[str]:
    """Places in ``paths`` that build code from data (exec, eval, compile, FunctionType...)."""
    found = []
    for rel in paths:
        try:
            tree = ast.parse((repo / rel).read_text(encoding="utf-8"), rel)
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name in _DYNAMIC_CALLS or name in _DYNAMIC_ATTRS:
                    found.append(f"{rel}:{node.lineno}: {name}() builds code the quality limits cannot measure")
    return found


class QualityGrader:
    """Measures every function under ``constraints.paths`` of the grading copy."""

    name = "quality"

    def __init__(self, role: Role = "gate") -> None:
        self.role: Role = role

    def grade(self, ctx: GradingContext) -> GradeComponent:
        spec = ctx.task.spec.constraints
        rules = {
            "max_function_length": (spec.max_function_length, "length", "lines"),
            "max_cyclomatic_complexity": (spec.max_cyclomatic_complexity, "complexity", "complexity"),
        }
        rules = {k: v for k, v in rules.items() if v[0] is not None}
        # The limits apply to every Python file the submission adds or changes as well, so code
        # moved out of `paths` into a new module is still measured.
        changed = [c.path for c in ctx.snapshot.changes.carried if c.path.endswith(".py") and c.status != "deleted"]
        paths = list(dict.fromkeys([*spec.paths, *sorted(changed)]))
        try:
            metrics = file_metrics(ctx.repo, paths)
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as exc:
            return component(self, score=0.0, passed=False, messages=[f"cannot measure {paths}: {exc}"],
                             details={"violations": {name: ["unmeasurable"] for name in rules}})
        dynamic = _dynamic_code(ctx.repo, changed)
        if dynamic:  # code built from strings is invisible to the AST metrics
            return component(self, score=0.0, passed=False, messages=dynamic,
                             details={"violations": {name: ["dynamic code"] for name in rules}})
        violations: dict[str, list[str]] = {}
        for name, (limit, attr, unit) in rules.items():
            violations[name] = [
                f"{m.path}:{m.lineno} {m.qualname}: {getattr(m, attr)} {unit} > {limit}"
                for m in metrics if getattr(m, attr) > limit
            ]
        bad = [name for name, v in violations.items() if v]
        messages = [v for name in bad for v in violations[name]]
        worst = {
            "max_function_length": max((m.length for m in metrics), default=0),
            "max_cyclomatic_complexity": max((m.complexity for m in metrics), default=0),
        }
        return component(self, score=1 - len(bad) / len(rules), passed=not bad, messages=messages,
                         details={"violations": violations, "worst": worst, "functions": len(metrics)})
