"""The optional statement writer (issue 12), against the shipped ChatServer: what the model is shown,
what it may not say, and what the task records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogym_gym.errors import MiningError
from repogym_gym.mine.history import HistoryOptions, mine_history
from repogym_gym.mine.writer import StatementFacts, StatementWriter, leaked_lines
from repogym_gym.task import load_task
from repogym_gym.testing import ChatServer, Reply
from tests.mine.test_history import TEMPLATE, TESTS_SPEC, make_repo

PATCH = "--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b  # not a difference\n"
FACTS = StatementFacts("pkg", "bugfix", "Fix add()", {"tests/test_core.py::test_add": "assert -1 == 5"},
                       ("pkg/core.py",), "TEMPLATED")
ISSUE = "add(2, 3) gives -1\n\nCalling `pkg.core.add(2, 3)` returns -1; I expected 5."


def test_the_model_is_shown_the_facts_and_never_the_golden_patch() -> None:
    with ChatServer([Reply.say(ISSUE)]) as server:
        written = StatementWriter("m", base_url=server.base_url).write(FACTS, PATCH)
        [request] = server.requests
        base_url = server.base_url
    assert written.text == ISSUE and written.writer == "model" and written.refused is None
    sent = json.dumps(request.body)
    assert "tests/test_core.py::test_add" in sent and "assert -1 == 5" in sent and "pkg/core.py" in sent
    assert "return a + b" not in sent and "not a difference" not in sent and "tools" not in request.body
    assert written.record() == {"writer": "model", "model": "m", "base_url": base_url + "/", "refused": None,
                              "templated": "TEMPLATED"}


@pytest.mark.parametrize(("answer", "why"), [
    ("", "answered nothing"),
    ("x" * 5000, "5000 characters"),
    ("Change it to `return a + b  # not a difference` and it works.", "quotes 1 line(s) the golden patch adds"),
])
def test_an_answer_that_is_empty_too_long_or_quotes_the_fix_is_refused_and_the_template_kept(answer: str, why: str) -> None:
    with ChatServer([Reply.say(answer)]) as server:
        written = StatementWriter("m", base_url=server.base_url, max_retries=0).write(FACTS, PATCH)
    assert written.text == "TEMPLATED" and written.writer == "template"
    assert written.refused is not None and why in written.refused


def test_a_server_that_fails_is_one_mining_error_naming_it() -> None:
    with ChatServer([Reply.error(401)]) as server, pytest.raises(MiningError, match="refused the API key"):
        StatementWriter("m", base_url=server.base_url, max_retries=0).write(FACTS, PATCH)


def test_short_added_lines_are_not_leaks_and_whitespace_does_not_hide_one() -> None:
    patch = "+++ b/x.py\n+    x = 1\n+    return compute(a,   b)\n"
    assert leaked_lines("set x = 1 first", patch) == []  # under MIN_LEAK_CHARS: too common to be the fix
    assert leaked_lines("try return compute(a, b)", patch) == ["return compute(a,   b)"]


def test_mined_tasks_carry_the_written_statement_and_record_how_it_was_written(tmp_path: Path) -> None:
    repo, shas = make_repo(tmp_path)
    with ChatServer([Reply.say(ISSUE)]) as server:
        tasks, _report = mine_history(repo, f"{shas['root']}..{shas['fix']}", TESTS_SPEC, TEMPLATE,
                                      HistoryOptions(package="pkg"), tmp_path / "out", env_dir=None,
                                      writer=StatementWriter("m", base_url=server.base_url))
        prompt = json.dumps(server.requests[0].body)
    [task] = tasks
    assert load_task(task.root).spec.problem_statement == ISSUE
    record = json.loads((task.root / "statement.json").read_text())
    assert record["writer"] == "model" and record["templated"].startswith("Fix add() subtracting its arguments")
    assert "Fix add() subtracting its arguments" in prompt and "return a + b" not in prompt
