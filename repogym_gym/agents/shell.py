"""ShellAgent: runs an external command-line coding agent (aider-style) in the workspace, then submits.

The command is a template: it is split like a shell would (:func:`shlex.split`, no shell
runs), then each argument's placeholders are filled in, so a path with spaces stays one
argument:

- ``{workspace}``: the episode's repository (also the command's working directory);
- ``{problem_file}``: a file holding the problem statement, outside the workspace;
- ``{task_id}``: the task's id.

The command runs through the episode's own sandbox (:meth:`~repogym_gym.episode.Episode.run_command`,
as the episode's Run actions do): in bubblewrap or Docker it sees only what the task's commands
see (the system directories, the workspace, the task's Python environment) as an unprivileged
uid, with no network; in the local sandbox it runs on the host. Its environment is scrubbed
(plus the ``env_passthrough`` variables, e.g. the tool's API key), a timeout kills every
process it started, its output is capped. The program must be visible inside the sandbox (a
system directory such as ``/usr/local/bin``, or the task's environment); a tool that needs the
network runs only in the local sandbox. Whatever it leaves in the workspace is graded; a failing
or timed-out command is not an error of the run, only a worse workspace.

Example:
    >>> agent = ShellAgent("aider --yes --message-file {problem_file}",
    ...                    env_passthrough=["OPENAI_API_KEY"])                     # doctest: +SKIP
"""

from __future__ import annotations

import os
import shlex
import shutil
import string
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repogym_gym.agents.base import AgentBase
from repogym_gym.errors import AgentError, AgentInfraError
from repogym_gym.owners import owned_temporary
from repogym_gym.sandbox import scrubbed_env
from repogym_gym.task import Task

__all__ = ["PLACEHOLDERS", "ShellAgent"]

#: The placeholders a command template may use.
PLACEHOLDERS = ("workspace", "problem_file", "task_id")
SUBMIT = {"kind": "submit"}


class ShellAgent(AgentBase):
    """Runs ``command`` once in the workspace, then submits.

    Args:
        command: The command template (see the module docstring).
        timeout_s: Seconds the command may run; also bounded by the episode's time limit.
        env_passthrough: Host environment variables the command sees besides the sandbox's
            allowlist (``PATH``, locale ...); unset ones are left out.
        output_limit_bytes: Bytes of stdout and of stderr kept (head and tail).

    Attributes:
        log: What the last run printed (command, exit code, stdout, stderr); "" before a run.

    Raises:
        AgentError: for a template that does not split, an unknown placeholder, a timeout
            that is not positive, or a program that is not on ``PATH``.
    """

    name = "shell"
    #: An external program acting for a model is untrusted: it runs in the episode's sandbox.
    trusted = False

    def __init__(self, command: str, timeout_s: float = 600.0, env_passthrough: Sequence[str] = (),
                 output_limit_bytes: int = 64_000) -> None:
        try:
            self._template = shlex.split(command)
            fields = {f for arg in self._template for _, f, _, _ in string.Formatter().parse(arg) if f is not None}
        except ValueError as exc:
            raise AgentError(f"agent 'shell': command {command!r} is not a valid template: {exc}") from None
        if not self._template:
            raise AgentError("agent 'shell': command is empty")
        unknown = sorted(fields - set(PLACEHOLDERS))
        if unknown:
            raise AgentError(f"agent 'shell': command {command!r} uses unknown placeholder(s) {unknown}; "
                             f"valid ones are {list(PLACEHOLDERS)} (write {{{{ and }}}} for literal braces)")
        if timeout_s <= 0:
            raise AgentError(f"agent 'shell': timeout_s must be positive, got {timeout_s}")
        program = self._template[0]
        if "{" not in program and shutil.which(program, path=scrubbed_env()["PATH"]) is None:
            raise AgentError(f"agent 'shell': program {program!r} of command {command!r} is not on PATH")
        self.command = command
        self.timeout_s = timeout_s
        self._passthrough = tuple(env_passthrough)
        self._output_limit = output_limit_bytes
        self._episode: Any = None
        self._workspace: Path | None = None
        self._deadline: float | None = None
        self._task: Task | None = None
        self._ran = False
        self.log = ""

    def attach(self, env: Any, deadline: float | None) -> None:
        """Find the episode (its workspace and sandbox) in ``env`` and remember the episode's deadline."""
        self._episode = env.get_wrapper_attr("episode")
        self._workspace = Path(self._episode.workspace.path)
        self._deadline = deadline

    def begin(self, task: Task) -> None:
        """Arm the command for this episode."""
        self._task, self._ran, self.log = task, False, ""

    def act(self, observation: Any, info: dict[str, Any]) -> dict[str, Any]:
        """Run the command on the first call; submit.

        Raises:
            AgentError: when no workspace was attached (the agent needs ``run_episode``).
            AgentInfraError: when the program cannot be started.
        """
        if not self._ran:
            self._ran = True
            self._run()
        return dict(SUBMIT)

    def conversation(self) -> list[dict[str, Any]] | None:
        """The problem statement and the command's output as two chat messages (None before a run)."""
        if not self._ran or self._task is None:
            return None
        return [{"role": "user", "content": self._task.spec.problem_statement},
                {"role": "assistant", "content": self.log}]

    def _run(self) -> None:
        if self._episode is None or self._workspace is None or self._task is None:
            raise AgentError("agent 'shell' needs the episode's workspace: run it with run_episode(), which calls attach()")
        timeout = self.timeout_s
        if self._deadline is not None:
            timeout = min(timeout, self._deadline - time.monotonic())
        if timeout <= 0:
            self.log = f"$ {self.command}\nnot run: the episode's time limit was reached"
            return
        passed = {k: os.environ[k] for k in self._passthrough if k in os.environ}
        with owned_temporary("repogym-shell-", self._task.id) as tmp:
            problem_file = tmp / "problem.md"
            problem_file.write_text(self._task.spec.problem_statement, encoding="utf-8")
            values = {"workspace": str(self._workspace), "problem_file": str(problem_file), "task_id": self._task.id}
            argv = [arg.format(**values) for arg in self._template]
            # the problem file's directory is the command's to read (handed to its uid in bwrap, mounted in Docker)
            result = self._episode.run_command(argv, timeout_s=timeout, env=passed, output_limit_bytes=self._output_limit,
                                               writable=[tmp])
        if result.exit_code is None:
            raise AgentInfraError(f"agent 'shell': {result.stderr}")
        status = f"timed out after {timeout:g} s" if result.timed_out else f"exit code {result.exit_code}"
        self.log = (f"$ {shlex.join(argv)}\n{status} ({result.duration_s:.1f} s)\n"
                    f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}")
