"""Red-team round 26 (against aa78fde): code the judge ran for the submission, and text it could not read.

Round 25's fix recorded every run-time compile but left three ways past the record: ``ast.parse``'s compile
was exempt by its caller alone, and a path object made of builtins, converted inside that compile, compiled
the original code with ``ast.parse`` as its caller; a text compiled with the ``barry_as_FLUFL`` grammar flag,
or behind a UTF-8 BOM, did not parse on the host, which skipped what it could not parse (refactor 1.0 each).
And the policy compared a ``SourceFileLoader``'s instance-dict keys with ``==``: a str subclass planted there
ran its ``__eq__`` inside the policy, took a frame through ``collections.namedtuple`` (or held an exception
whose traceback kept the policy's frames), reached the policy's state and rewrote the ledger (1.0).

The properties fixed: the policy compares only values of exact builtin types, so nothing of the submission
runs inside it, and an event raised inside it by anything but its own code is a violation; an exception the
policy catches leaves without its traceback; ``ast.parse`` is exempt only for its own text and name; the
host measures run-time code in every grammar ``compile()`` accepts and fails closed on text it cannot parse.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

from repogym_gym.task import Task, load_task
from tests.helpers import CALC_SOURCE, STARTER
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

REFACTOR = STARTER / "shipping-quote-refactor"
RATES = "shipping/rates.py"


def _hidden_original() -> str:
    """The task's original (unrefactored) rates.py as a base64 literal: a literal would be measured where it is
    written, so the attacks carry it encoded and compile it at run time."""
    return base64.b64encode((REFACTOR / "repo" / RATES).read_bytes()).decode()


def _original_compiled(how: str) -> str:
    """rates.py that compiles the original code at run time as ``how`` shows and runs it as the module."""
    return f'''"""Shipping rates."""

import ast as _ast
import base64 as _b64
import functools as _ft

_B = getattr(print, "__se" + "lf__")
_C = getattr(_B, "comp" + "ile")
_SRC = _b64.b64decode({_hidden_original()!r})
{how}
'''


def _assert_measured(start: Start, how: str) -> None:
    env = start(load_task(REFACTOR))
    write(env, RATES, _original_compiled(how))
    result = submit(env)
    assert_unearned_zero(result)
    recorded = component(result, "tests")["messages"]
    assert any("run-time code 1" in m and "complexity" in m for m in recorded), recorded


@attack("refactor tasks", "the original code compiled by a builtins-only __fspath__ while ast.parse converts its filename "
        "(round 26)", local="score 0 with the reason", confining="score 0 with the reason")
def test_a_compile_inside_ast_parse_s_argument_conversion_is_measured(start: Start) -> None:
    """``ast.parse`` was exempt by its caller alone; a compile made while it converts its filename has it as
    caller too. Only the compile of ``ast.parse``'s own text and name is exempt now."""
    _assert_measured(start, '''_STORE = []


class _P:
    __fspath__ = _ft.partial(_STORE.extend, map(_C, [_SRC.decode(), "pass"], ["<rates>", "<z>"], ["exec", "exec"]))


try:
    _ast.parse("", _P())
except TypeError:
    pass
getattr(_B, "ex" + "ec")(_STORE[0], globals())''')


@attack("refactor tasks", "the original code compiled with the barry_as_FLUFL grammar flag (`<>`), which the host's "
        "parse rejected (round 26)", local="score 0 with the reason", confining="score 0 with the reason")
def test_code_compiled_in_another_grammar_is_measured_in_it(start: Start) -> None:
    """The host skipped a recorded text it could not parse; ``!=`` written ``<>`` and compiled with flag
    0x400000 ran whole. The host parses in each grammar a compile() flag selects, and fails closed."""
    _assert_measured(start, '_SRC = _SRC.decode().replace("!" + "=", "<" + ">")\n'
                            'getattr(_B, "ex" + "ec")(_C(_SRC, "<rates>", "exec", 0x400000), globals())')


@attack("refactor tasks", "the original code compiled behind a UTF-8 BOM, which the host's parse rejected (round 26)",
        local="score 0 with the reason", confining="score 0 with the reason")
def test_code_compiled_behind_a_bom_is_measured(start: Start) -> None:
    _assert_measured(start, 'getattr(_B, "ex" + "ec")(_C(b"\\xef\\xbb\\xbf" + _SRC, "<rates>", "exec"), globals())')


#: A str subclass planted as a key of a SourceFileLoader's instance dict, where the policy's loader check
#: compared keys with "name": its __eq__ took a frame through namedtuple (which names _getframe) and walked
#: out to the policy's state; it reports here whether it ever ran.
PLANTED_KEY = '''

import collections as _collections
import importlib.machinery as _machinery
import json.scanner as _probe
import sys as _sys

_REACHED = []


class _K(str):
    __hash__ = str.__hash__

    def __eq__(self, other):
        try:
            _collections.namedtuple("T", map(_REACHED.append, map(_sys._getframe, [0])), rename=True)
        except TypeError:
            pass
        return True


_loader = _machinery.SourceFileLoader("json.scanner", _probe.__file__)
vars(_loader)[_K("zz")] = 1
try:
    _loader.get_code("json.scanner")
except BaseException:
    pass
'''


@attack("the judge", "a str subclass planted where the policy compares keys: its __eq__ runs inside the policy and "
        "reaches its state (round 26)", local="score 0 with the reason", confining="score 0 with the reason")
def test_a_str_subclass_key_compared_by_the_policy_runs_nothing_there(start: Start, tiny_task: Task) -> None:
    """The planted key is no longer compared (exact types first), so the loader is no genuine one and its
    bytecode read is refused; the bug stays in, and nothing ran inside the policy."""
    env = start(tiny_task)
    write(env, "calc/__init__.py", CALC_SOURCE + PLANTED_KEY)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    assert invalid and "marshal.loads is not allowed while tests are judged" in invalid, invalid


#: The policy's guard itself, white-box: its dispatch made to call code of this file (as a planted __eq__
#: would), which raises an event inside the policy and raises an exception it keeps.
INSIDE_THE_POLICY = '''
import sys

from repogym_gym.graders import judge_policy, judge_runtime

HELD, CAUGHT = [], []
real_build = judge_runtime.build


def build(J):
    real_build(J)
    J["state"]["codes"] = {"loader_callers": set()}  # as after init: compiles reach on_compile

    def foreign_on_compile(source, filename, caller):
        if filename == "<getframe>":
            sys._getframe(0)  # an event raised inside the policy by code that is not the policy's
        elif filename == "<raise>":
            HELD.append(LookupError("kept"))
            raise HELD[0]
        return None

    J["on_compile"] = foreign_on_compile
    J["violations_seen"] = J["violations"]
    CAUGHT.append(J)


judge_runtime.build = build
judge_policy.install({"nonce": "n", "key": "00" * 32, "tree": "/nonexistent-tree", "grader_files": {},
                      "scored_files": [], "scored_ids": [], "runner_files": {}})
J = CAUGHT.pop()
for name in ("<getframe>", "<raise>"):
    try:
        compile("1", name, "eval")
    except RuntimeError as exc:
        print("refused", name, exc)
print("violations", J["violations_seen"])
print("held traceback", HELD[0].__traceback__, HELD[0].__context__, HELD[0].__cause__)
'''


def test_an_event_raised_inside_the_policy_by_foreign_code_is_a_violation_and_its_exception_leaves_bare() -> None:
    """Whatever the next planted object is, code that is not the policy's raising an event while the policy runs
    is a violation (the policy's own reads and ``id`` calls are not), and an exception it raises leaves the
    policy with no traceback, context or cause that could hold the policy's frames."""
    done = subprocess.run([sys.executable, "-c", INSIDE_THE_POLICY], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert any(line.startswith("refused <getframe>") for line in lines), done.stdout
    assert any(line.startswith("refused <raise>") and "policy failed on compile: LookupError" in line for line in lines), \
        done.stdout
    violations = next(line for line in lines if line.startswith("violations"))
    assert "code ran inside the judge's policy and raised sys._getframe" in violations, violations
    assert "held traceback None None None" in lines, done.stdout
