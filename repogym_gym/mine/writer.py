"""An optional writer of issue-style problem statements: an OpenAI-compatible model rewrites a mined
task's templated statement the way a user would report it (SWE-smith and R2E-Gym do this).

Off by default (``repogym mine history --writer-model M``). The model is shown what an issue
reporter could know: the package, the framing (``bugfix`` or ``feature``), the commit's message,
the failing tests with one line of each failure, and the names of the files the fix touches;
never the golden patch. What it answers is refused, and the templated statement kept, when it
is empty, longer than :data:`MAX_WRITTEN_CHARS`, or quotes a line the golden patch adds (at least
:data:`MIN_LEAK_CHARS` characters, whitespace ignored). Either way the task records what
happened in ``statement.json`` beside ``task.yaml``::

    {"writer": "model" | "template", "model": "...", "base_url": "...", "refused": null | "why",
     "templated": "<the statement the miner wrote>"}

Example:
    >>> writer = StatementWriter("Qwen2.5-7B-Instruct", base_url="http://localhost:8000/v1")   # doctest: +SKIP
    >>> writer.write(facts).text                                                              # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from repogym_gym.errors import AgentError, AgentInfraError, MiningError

__all__ = ["MAX_WRITTEN_CHARS", "MIN_LEAK_CHARS", "StatementFacts", "StatementWriter", "WrittenStatement",
           "leaked_lines", "record_statement"]

#: Longest statement accepted from the model, characters.
MAX_WRITTEN_CHARS = 4000
#: Shortest added line of the golden patch whose appearance in a statement counts as a leak, characters.
MIN_LEAK_CHARS = 12

_SYSTEM = ("You write GitHub issues. Given facts about a failing test suite, write the issue a user of the "
           "library would file: what they did, what they expected, what happened instead. Do not propose a "
           "fix, do not write code that implements one, do not mention tests being hidden. Plain text or "
           "Markdown, under 300 words.")


@dataclass(frozen=True)
class StatementFacts:
    """What the writer may tell the model about a task (never the golden patch).

    Attributes:
        package: The library's name.
        kind: ``bugfix`` or ``feature`` (:func:`~repogym_gym.mine.statement.statement_kind`).
        commit_text: The commit's message (:func:`~repogym_gym.mine.statement.commit_text`).
        failing: Test id -> one line of its failure, for the tests the fix makes pass.
        files: Paths of the source files the fix changes.
        templated: The miner's own statement (kept when the model's is refused).
    """

    package: str
    kind: Literal["bugfix", "feature"]
    commit_text: str
    failing: dict[str, str]
    files: tuple[str, ...]
    templated: str


@dataclass(frozen=True)
class WrittenStatement:
    """The statement a task gets (``text``), and how it came to be (the rest: what ``statement.json`` records)."""

    text: str
    writer: Literal["model", "template"]
    model: str
    base_url: str
    refused: str | None
    templated: str

    def record(self) -> dict[str, object]:
        """``statement.json``'s content (module docstring)."""
        return {k: v for k, v in asdict(self).items() if k != "text"}


def leaked_lines(statement: str, golden_patch: str) -> list[str]:
    """Lines the golden patch adds (``+`` lines, at least :data:`MIN_LEAK_CHARS` characters once
    whitespace is removed) that ``statement`` contains, whitespace ignored.

    >>> leaked_lines("use `return a + b  # fixed` here", "+++ b/x.py\\n+    return a + b  # fixed\\n-    return a - b\\n")
    ['return a + b  # fixed']
    """
    squeezed = "".join(statement.split())
    found = []
    for line in golden_patch.splitlines():
        if not line.startswith("+") or line.startswith("+++"):
            continue
        body = line[1:].strip()
        if len("".join(body.split())) >= MIN_LEAK_CHARS and "".join(body.split()) in squeezed:
            found.append(body)
    return found


class StatementWriter:
    """Asks a model behind an OpenAI-compatible server (OpenAI, vLLM, SGLang) for an issue-style statement.

    Args:
        model: The model name the server serves.
        base_url: The server's URL (default ``$OPENAI_BASE_URL``, else OpenAI's).
        api_key_env: Variable holding the key (a local server given ``base_url`` needs none).
        temperature: Sampling temperature (0: the same facts give the same statement where the server allows).
        request_timeout_s: Seconds per request.
        max_retries: The client's retries of a failed request.
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float = 0.0, request_timeout_s: float = 120.0, max_retries: int = 2) -> None:
        import openai  # noqa: PLC0415 - the LLM SDK loads only when a writer is asked for

        from repogym_gym.agents.llm import api_key_from_env  # noqa: PLC0415
        from repogym_gym.agents.openai_chat import OpenAIBackend  # noqa: PLC0415

        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key_from_env("statement writer", api_key_env, base_url)
        client = openai.OpenAI(api_key=key, base_url=base_url, timeout=request_timeout_s, max_retries=max_retries)
        self.model, self.base_url = model, str(client.base_url)
        self._backend: Any = OpenAIBackend(client, model, temperature=temperature, max_tokens=800,
                                      key_hint=f"check ${api_key_env}")

    def write(self, facts: StatementFacts, golden_patch: str) -> WrittenStatement:
        """The statement for ``facts``: the model's, or the templated one with why the model's was refused.

        ``golden_patch`` is never sent; it is only searched for in the answer.

        Raises:
            MiningError: when the server cannot be used (refused key, unknown model, no answer
                after the retries), naming the server and what it said.
        """
        try:
            turn = self._backend.complete([{"role": "system", "content": _SYSTEM},
                                           {"role": "user", "content": _prompt(facts)}], [])
        except (AgentError, AgentInfraError) as exc:
            raise MiningError(f"the statement writer failed: {exc}") from None
        text = (turn.content or "").strip()
        refused = None
        if not text:
            refused = "the model answered nothing"
        elif len(text) > MAX_WRITTEN_CHARS:
            refused = f"the model's statement has {len(text)} characters (at most {MAX_WRITTEN_CHARS})"
        elif leaks := leaked_lines(text, golden_patch):
            refused = f"the model's statement quotes {len(leaks)} line(s) the golden patch adds"
        return WrittenStatement(facts.templated if refused else text, "template" if refused else "model", self.model,
                                self.base_url, refused, facts.templated)


def _prompt(facts: StatementFacts) -> str:
    framing = ("The library lacks behaviour its users expect" if facts.kind == "feature"
               else "The library misbehaves")
    failing = "\n".join(f"- {test_id}: {line}" for test_id, line in list(facts.failing.items())[:10])
    files = ", ".join(facts.files[:10]) or "(unknown)"
    return (f"Library: {facts.package}\n{framing}. These checks fail now and should pass:\n{failing}\n\n"
            f"The maintainers' own note on the change:\n{facts.commit_text or '(none)'}\n\n"
            f"Files involved: {files}\n\nWrite the issue.")


def record_statement(task_dir: Path, written: WrittenStatement) -> None:
    """Write ``statement.json`` (module docstring) into ``task_dir``."""
    (task_dir / "statement.json").write_text(json.dumps(written.record(), indent=2, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
