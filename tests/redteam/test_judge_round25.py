"""Red-team round 25 (against 5cc907e): what a garbage-collector finalizer does with no frame of the submission.

A ``weakref.finalize`` callback made only of builtins and library functions runs wherever the collector
interrupts: its frames are weakref's and the one it interrupted, never the submission's. The judge took
"no frame of the submission on the stack" for "the grader or a library working for it", so a finalizer
started a process the record never noted (refactor 1.0), compiled the original code through
``typing.ForwardRef`` unrecorded (refactor 1.0), opened ``/proc/self/maps`` at pytest's last collection
(with bpo-15994: the record forged, 1.0 on four real-code tasks), made grader-approved changes through
pytest's ``MonkeyPatch`` (0.6 to 1.0), and fed a sealed test's observe function guessed values after the
package had bound its own object where the sealed prelude takes ``sys.audit`` (0.4 on pagination).

The fix is one property: trust is given for what a verified grader frame does at the line that does it,
never for the absence of the submission. A process start and a run-time compile are recorded whoever
calls; the judged process's ``/proc`` is closed to everyone once task code runs; a monkeypatch counts
only when grader code calls it on that line; an observation only when the sealed test calls its observe
function on that line, through the real ``sys.audit``.
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

from repogym_gym.task import Task, load_task
from tests.helpers import CALC_SOURCE, STARTER, MakeTask, tiny_spec
from tests.redteam.helpers import HIDDEN_ID, Start, assert_unearned_zero, attack, component, submit, write

REFACTOR = STARTER / "shipping-quote-refactor"
RATES = "shipping/rates.py"

#: A cycle the collector frees later, wherever it happens to run, and a finalizer of builtins for it.
FINALIZER = '''

import gc as _gc
import weakref as _weakref


class _Cycle:
    pass


_gc.collect()
_cycle = _Cycle()
_cycle.me = _cycle
_weakref.finalize(_cycle, {call})
del _cycle
'''


def _golden_rates(tmp_path: Path) -> str:
    """shipping/rates.py with the starter task's golden patch applied: a refactor the limits accept."""
    work = tmp_path / "golden"
    subprocess.run(["cp", "-r", str(REFACTOR / "repo"), str(work)], check=True)
    subprocess.run(["git", "apply", str(REFACTOR / "solution.patch")], cwd=work, check=True)
    return (work / RATES).read_text()


def _finalizer(imports: str, call: str) -> str:
    return "\n" + imports + FINALIZER.replace("{call}", call)


@attack("refactor tasks", "a process started by a garbage-collector finalizer, no frame of the submission on the stack "
        "(round 25)", local="score 0 with the reason", confining="score 0 with the reason")
def test_a_process_started_from_a_finalizer_is_unmeasured_code(start: Start, tmp_path: Path) -> None:
    """Round 20 served the original code from a forked child; round 25 started the child from a finalizer,
    which the judge did not count as the submission's (refactor 1.0). Every process start counts now."""
    env = start(load_task(REFACTOR))
    reach = 'getattr(getattr(print.__self__, "__imp" + "ort__")("o" + "s"), "sys" + "tem")'  # unknown to the static check
    write(env, RATES, _golden_rates(tmp_path) + _finalizer("", reach + ', "true"'))
    result = submit(env)
    assert_unearned_zero(result)
    recorded = component(result, "tests")["messages"]
    assert any("a process was started at run time (os.system)" in m for m in recorded), recorded


@attack("refactor tasks", "run-time code compiled by typing.ForwardRef from a garbage-collector finalizer (round 25)",
        local="score 0 with the reason", confining="score 0 with the reason")
def test_code_compiled_by_a_library_from_a_finalizer_is_measured(start: Start, tmp_path: Path) -> None:
    """typing was a library that compiles for the grader, so its compiles went unrecorded with no frame of
    the submission on the stack; a finalizer made a ForwardRef of any text. Every text compiled is recorded."""
    body = "lambda w: 1 if w > 1 else 2 if w > 2 else 3 if w > 3 else 4 if w > 4 else 5 if w > 5 else " \
           "6 if w > 6 else 7 if w > 7 else 8 if w > 8 else 9 if w > 9 else 10"
    blob = base64.b64encode(body.encode()).decode()  # a literal would be measured where it is written
    reach = "import base64 as _base64\nimport typing as _typing\n"
    env = start(load_task(REFACTOR))
    write(env, RATES, _golden_rates(tmp_path) + _finalizer(
        reach, f'getattr(_typing, "Forward" + "Ref"), _base64.b64decode({blob!r}).decode()'))
    result = submit(env)
    assert_unearned_zero(result)
    recorded = component(result, "tests")["messages"]
    assert any("complexity 10 > 8" in m for m in recorded), recorded


@attack("the judge", "/proc/self/maps opened by a garbage-collector finalizer (round 25: with bpo-15994, the record "
        "re-signed)", local="refused", confining="refused")
def test_the_process_s_proc_is_closed_to_a_finalizer(start: Start, tiny_task: Task) -> None:
    """A finalizer read the live mappings at pytest's last collection, where the judge saw no code of the
    submission; with the dangling-memoryview bug that found the record's key (1.0 on four real-code tasks).
    Once task code runs, the process's /proc is nobody's: the read fails, and a later test sees it did."""
    planted = CALC_SOURCE.replace("def add(a, b):\n    return a - b\n", '''\
import io as _io
import weakref as _weakref

_SEEN = []


class _Cycle:
    pass


def add(a, b):
    cycle = _Cycle()  # freed by a later collection, wherever it runs: most often in pytest's own code
    cycle.me = cycle
    _weakref.finalize(cycle, _SEEN.extend, map(_io.FileIO.read, map(_io.FileIO, ["/proc/self/maps"]), [64]))
    return a + b if _SEEN else a - b
''')
    env = start(tiny_task)
    write(env, "calc/__init__.py", planted)
    result = submit(env)
    assert_unearned_zero(result)


SPLICE = '''

import functools as _functools
import sys as _sys
import _pytest.monkeypatch as _mp

_TARGET = _sys.modules["_pytest.runner"]
'''


@attack("the judge", "a change to pytest made through MonkeyPatch from a garbage-collector finalizer, taken for the "
        "grader's own (round 25)", local="score 0 with the reason", confining="score 0 with the reason")
def test_a_monkeypatch_from_a_finalizer_voids_the_run(start: Start, tiny_task: Task) -> None:
    """A change pytest's monkeypatch makes is accepted as the grader's when grader code asks for it; a finalizer
    asked with no frame of the submission on the stack and pytest's own modules took whatever it set (0.6 to
    1.0). Only a verified grader frame calling the method on that line counts now."""
    call = '_mp.MonkeyPatch().setattr, _TARGET, "repogym_mark", 1, False'
    env = start(tiny_task)
    write(env, "calc/__init__.py", CALC_SOURCE + SPLICE + FINALIZER.replace("{call}", call))
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    assert invalid and "monkeypatch was not called by grader code" in invalid, invalid


def _sealed_task(make_task: MakeTask) -> Task:
    spec = tiny_spec()
    spec["tests"] = {**spec["tests"], "fail_to_pass": [HIDDEN_ID], "sealed": True}
    return make_task(tests=spec["tests"])


@attack("the judge", "the sealed prelude's audit bound to the package's own object (observations dropped; round 25)",
        local="score 0 with the reason", confining="score 0 with the reason")
def test_a_sealed_file_s_audit_rebound_by_the_package_voids_the_run(start: Start, make_task: MakeTask) -> None:
    """The visible test module imports the package first; it set ``sys.audit`` to a builtin that drops every
    call, so the hidden sealed file bound that at its prelude and no observation reached the judge."""
    env = start(_sealed_task(make_task))
    write(env, "calc/__init__.py", "import functools as _functools\nimport io as _io\nimport sys as _sys\n\n_sys.audit = _functools.partial(print, file=_io.StringIO())\n\n" + CALC_SOURCE)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    assert invalid and "_repogym_audit is not sys.audit" in invalid, invalid


@attack("the judge", "a sealed test's observe function called by a garbage-collector finalizer with a guessed value "
        "(round 25)", local="score 0 with the reason", confining="score 0 with the reason")
def test_an_observation_from_a_finalizer_voids_the_run(start: Start, make_task: MakeTask) -> None:
    """The observe function's only check was that no frame of the submission called it: a finalizer called
    it with a guessed value. Its caller must be the sealed test, at a line that observes."""
    planted = CALC_SOURCE.replace("def add(a, b):\n    return a - b\n", '''\
import gc as _gc
import sys as _sys
import weakref as _weakref


class _Cycle:
    pass


def add(a, b):
    sealed = [m for n, m in list(_sys.modules.items()) if n.endswith("test_calc_hidden")]
    if sealed:
        _gc.collect()
        cycle = _Cycle()
        cycle.me = cycle
        _weakref.finalize(cycle, sealed[0]._repogym_observe, 0, -5)
    return a - b
''')
    env = start(_sealed_task(make_task))
    write(env, "calc/__init__.py", planted)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    # where the collector runs the finalizer decides which rule refuses it (CPython 3.12 collects at other
    # points than 3.11): the sealed test's frame is not its caller, or a frame of the submission is below it
    assert invalid and ("an observation was not made by its sealed test" in invalid
                        or "an observation was reached through code of the submission" in invalid), invalid
