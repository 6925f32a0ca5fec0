"""The judge, third round: the policy's state reached through a frame it handed out, a forged pass
through pytest's own hooks, code that claims a trusted file, and a record the host could not read.

A red-team round with the second policy's source in hand scored 1.0 on the pagination starter task,
bug unfixed, under local, bwrap and docker:

- the hook's frame, first entry of a denial's traceback, obtained through ``traceback``'s private
  walker (not yet a deputy): the hook's default argument led to its closures and the ledger;
- ``session.gethookproxy`` shadowed by an instance attribute: a relay of pytest's hooks whose
  ``pytest_runtest_makereport`` made a genuine passing report from a clean ``CallInfo``;
- code claiming a standard library file, unmarshalled through importlib's bytecode reader called
  from a function of the submission named ``get_code``; and, the same with a file of the runner,
  rewritten in the writable scratch directory and compiled under its name;
- pytest's exit status set to a 6000-digit int: the record was unreadable to the host, an
  ``infra_error`` instead of a 0.

What changed is the property each went through: no frame the policy leaves holds anything (its
locals are deleted before a denial is raised), a passing call report needs a call the runner saw
return cleanly, a bytecode reader counts only inside importlib's own loader on a plain loader (or
pytest's own cache reader), the runner's files live in a read-only directory named by their
content and code compiled under their names is compared with the bytes read at start, and the
record's exit status is a byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repogym_gym.task import Task, load_task
from tests.helpers import STARTER
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

G = "the judge"
INIT = "pagekit/__init__.py"

PAYLOADS = Path(__file__).with_name("round3")  # each attack's code, as the red team wrote it (comment first)


def payload(name: str) -> str:
    return (PAYLOADS / name).read_text()


ATTACKS = {
    "the hook's frame from traceback's private walker": ("hook_frame.py", ("tb_frame",)),
    "session.gethookproxy shadowed: a relay that cleans the failed call": ("hook_relay.py", ("reported passed",)),
    "code claiming os.py through a get_code of its own": ("own_get_code.py", ("marshal.loads",)),
    # round 35: the rewrite itself is refused (the runner's directory is where trust is decided by location)
    "a runner file rewritten, then compiled under its name": ("runner_file.py", ("is not that file's code",
                                                                                  "decides trust by location")),
    "pytest's exit status a 6000-digit int (was an infra error)": ("huge_exit_status.py", ("exited 3",)),
}


@pytest.fixture(scope="module")
def pagination() -> Task:
    return load_task(STARTER / "pagination-off-by-one")


@pytest.mark.parametrize("case", list(ATTACKS))
@attack(G, "the policy's state through a frame it handed out, a pass forged through pytest's hook relay, code "
           "claiming a trusted file (own get_code, rewritten runner file), an exit status past a byte",
        local="score 0", confining="score 0")
def test_the_third_rounds_attacks_score_zero(start: Start, pagination: Task, case: str) -> None:
    name, reasons = ATTACKS[case]
    env = start(pagination)
    original = (pagination.root / "repo" / INIT).read_text()
    write(env, INIT, original + "\n\n" + payload(name))
    result = submit(env)
    assert_unearned_zero(result)
    tests = component(result, "tests")
    invalid = str(tests["details"].get("invalid") or "")
    failed = tests["details"]["fail_to_pass"]["tests/test_paginator.py::test_num_pages_exact_multiple"] != "passed"
    assert any(r in invalid for r in reasons) or (failed and not invalid), invalid or tests
