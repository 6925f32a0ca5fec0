"""repogym_gym: coding tasks as reinforcement-learning environments.

A coding task is data (``task.yaml`` + a source snapshot + hidden tests + a golden patch) and
the reward is a pure function of the task and a patch: :func:`grade_patch`. Workspaces,
sandboxes and graders exist to produce patches and evaluate them reproducibly. Importing the
package registers ``RepoGym/<task>-v0`` Gymnasium ids for the bundled tasks.

Example:
    >>> import repogym_gym as rg
    >>> task = rg.load_task("task_suites/starter/parse-duration")      # doctest: +SKIP
    >>> rg.grade_patch(task, task.golden_patch()).score                # doctest: +SKIP
    1.0
"""

from repogym_gym.agents.registry import AgentSpec, make_agent
from repogym_gym.baseline import BaselineStore
from repogym_gym.diffsim import diff_similarity
from repogym_gym.episode import Episode, StepResult
from repogym_gym.errors import (
    ActionError,
    AgentError,
    AgentInfraError,
    AgentNotFoundError,
    BrokenTaskError,
    CommandRefusedError,
    DiskFullError,
    EpisodeError,
    GitCommandError,
    GitMetadataError,
    GraderError,
    JUnitParseError,
    MiningError,
    PatchError,
    PathEscapeError,
    RepoGymError,
    RepoGymWarning,
    RunError,
    SandboxConfigError,
    SandboxError,
    SandboxUnavailableError,
    ServeError,
    SetupError,
    SourceError,
    TaskError,
    TaskNotFoundError,
    TaskSpecError,
    UnconfinedWarning,
    WorkspaceError,
)
from repogym_gym.graders import (
    CompositeGrader,
    ConstraintGrader,
    DiffSimilarityGrader,
    Grader,
    GradingContext,
    PerfGrader,
    QualityGrader,
    TestGrader,
)
from repogym_gym.grading import default_grader, grade_patch, grade_workspace
from repogym_gym.junit import JUnitReport, parse_junit_xml
from repogym_gym.results import CommandResult, GradeComponent, GradeResult
from repogym_gym.runner import RunResult, RunSummary, pass_at_k, run_suite, run_task
from repogym_gym.sandbox import LocalSandbox, Sandbox, make_sandbox
from repogym_gym.spec import TaskSpec
from repogym_gym.task import Task, load_task, load_tasks
from repogym_gym.validate import TaskValidation, validate_task
from repogym_gym.workspace import Workspace

from repogym_gym.gym.dataset import dataset  # isort: skip
from repogym_gym.gym.registration import register_bundled as _register_bundled, register_suite  # isort: skip

__version__ = "0.1.0"

# Gymnasium ids exist only after this import (Gymnasium 1.4 reads no entry-point group); it is
# cheap: each bundled task.yaml's id and step budget are read, nothing is materialised.
_register_bundled()

__all__ = [
    "ActionError",
    "AgentError",
    "AgentInfraError",
    "AgentNotFoundError",
    "AgentSpec",
    "BaselineStore",
    "BrokenTaskError",
    "CommandRefusedError",
    "CommandResult",
    "CompositeGrader",
    "ConstraintGrader",
    "DiffSimilarityGrader",
    "DiskFullError",
    "Episode",
    "EpisodeError",
    "GitCommandError",
    "GitMetadataError",
    "GradeComponent",
    "GradeResult",
    "Grader",
    "GraderError",
    "GradingContext",
    "JUnitParseError",
    "JUnitReport",
    "LocalSandbox",
    "MiningError",
    "PatchError",
    "PathEscapeError",
    "PerfGrader",
    "QualityGrader",
    "RepoGymError",
    "RepoGymWarning",
    "RunError",
    "RunResult",
    "RunSummary",
    "Sandbox",
    "SandboxConfigError",
    "SandboxError",
    "SandboxUnavailableError",
    "ServeError",
    "SetupError",
    "SourceError",
    "StepResult",
    "Task",
    "TaskError",
    "TaskNotFoundError",
    "TaskSpec",
    "TaskSpecError",
    "TaskValidation",
    "TestGrader",
    "UnconfinedWarning",
    "Workspace",
    "WorkspaceError",
    "__version__",
    "dataset",
    "default_grader",
    "diff_similarity",
    "grade_patch",
    "grade_workspace",
    "load_task",
    "load_tasks",
    "make_agent",
    "make_sandbox",
    "parse_junit_xml",
    "pass_at_k",
    "register_suite",
    "run_suite",
    "run_task",
    "validate_task",
]
