"""Red-team round 29 (against ef99efc, tests/redteam/round29/): three more sites where code of the submission ran
inside the policy, each then forging ledger and JUnit report with round 28's shared forge (round28/core.py).

- An exact ``PosixPath`` whose ``_drv`` slot held an object with ``__bool__``, handed to the ``open`` check by
  a weakref callback made of ``functools.partial(sys.audit, "open", path, ...)``: the policy trusted the path
  by its class and converted it (``os.stat`` calls pathlib's ``__fspath__``, which reads the slots).
- An exact pytest ``LocalPath`` whose instance dict held a planted key hashing like ``strpath``: the
  conversion looked ``strpath`` up.
- A class body whose ``__prepare__`` mapping (a dict subclass with its own ``get``) exec'd the visible test
  file's own verified code: the policy read ``caller.f_locals.get("module")`` from that frame.

1.0 each with ``add`` still wrong, under local and bwrap. The properties fixed: a path object is never
converted by the policy; its text is read by the interpreter's own descriptors (pathlib's cached ``_str``
slot, ``LocalPath``'s ``strpath``) and only when it is exactly a str, else the open is refused; a frame's
``f_locals`` is read as a plain dict (``dict``'s own methods for a subclass, nothing for another mapping).

Round 29 also read a calling test's expected value from its bytecode, through its own frame taken from
``gc.garbage`` (1.0 on the unsealed tiny task): an oracle of an unsealed test, which sealing closes (the
expected values are not in the file the judged process runs; README, "Sealed tests").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repogym_gym.grading import grade_patch
from repogym_gym.task import Task
from tests.helpers import MakeTask
from tests.redteam.helpers import Start, assert_unearned_zero, attack, submit, write

HERE = Path(__file__).parent


@attack("the judge", "an exact PosixPath with an object in its slots, or a LocalPath with a planted key, converted by "
        "the policy's open check; a class body's __prepare__ mapping read as its f_locals (round 29)",
        local="score 0", confining="score 0")
@pytest.mark.parametrize("entry", ["pathdrv.py", "localpath.py", "flocals.py"])
def test_nothing_the_policy_reads_of_a_path_or_a_frame_runs_code(start: Start, tiny_task: Task, entry: str) -> None:
    """The planted code never runs inside the policy, so no frame of it is in the garbage, the forge finds
    nothing to rewire, and the wrong ``add`` scores 0."""
    parts = [HERE / "round28" / "core.py", HERE / "round29" / entry]
    if entry != "flocals.py":  # the two path entries share their trigger
        parts.append(HERE / "round29" / "open_trigger.py")
    text = "\n\n".join(part.read_text() for part in parts)
    assert "return a - b" in text
    env = start(tiny_task)
    write(env, "calc/__init__.py", text)
    result = submit(env)
    assert_unearned_zero(result)


PATH_TESTS = '''from calc import add


def test_add_negative(tmp_path, tmpdir):
    target = tmp_path / "out.txt"
    target.write_text(str(add(2, -7)))
    assert int(target.read_text()) == -5
    with open(tmp_path / "out.txt") as handle:  # io.FileIO handed a PosixPath: read by its _str slot
        assert handle.read() == "-5"
    with open(tmpdir / "other.txt", "w") as handle:  # and a LocalPath: by its strpath
        handle.write("ok")
    assert (tmpdir / "other.txt").read() == "ok"
'''


def test_tests_that_open_pathlib_and_py_path_objects_still_pass(make_task: MakeTask) -> None:
    """The other side of the fix: a test opening files through pytest's ``tmp_path`` and ``tmpdir`` (path
    objects handed to ``io.FileIO`` while tests are judged) passes with the golden patch."""
    task = make_task(hidden={"tests/test_calc_hidden.py": PATH_TESTS})
    result = grade_patch(task, task.golden_patch())
    assert (result.score, result.infra_error) == (1.0, None), result.summary()
