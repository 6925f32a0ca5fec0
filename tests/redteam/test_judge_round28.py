"""Red-team round 28 (against 33de1aa, tests/redteam/round28/): code of the submission run inside the policy
from three more kinds of site, then the policy's own frames taken from the collector's garbage.

Round 27 read namespaces plainly but still trusted three things. The arguments of an audit event: any code
can raise any event with ``sys.audit``, and the policy compared a forged ``object.__setattr__`` or
``object.__getattr__`` name (an object with ``__eq__``) with ``in``. Membership of a type in a set or tuple of
types: ``type(add) in (list, ...)`` compares with ``==``, and a metaclass's ``__eq__`` answers first for its
instances. And ``object.__getattribute__(obj, "__dict__")``, which runs a ``__dict__`` property of the
object's class. Each ran the submission's code with the policy's frames on the stack; an exception it kept
became cyclic garbage, ``gc.DEBUG_SAVEALL`` (no audit event) kept it in ``gc.garbage``, and its frames led to
the policy's state: the payload replaced the policy's ``on_runner`` closure cell, wrote "passed" for every
scored test at the finish, cleared the violations and rewrote the JUnit report through a descriptor opened at
import (1.0 with ``add`` still wrong, each of the four).

The properties fixed: an event's arguments are read as the interpreter passes them (a str, bytes, int or
float subclass as an exact copy; an attribute event naming anything but a str is forged, a violation); types
are looked up in sets of their ids, and found in an MRO by identity; an instance's ``__dict__`` is read only
when the first ``__dict__`` of its class's MRO is the interpreter's descriptor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repogym_gym.task import Task
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

PAYLOADS = Path(__file__).parent / "round28"


def payload(entry: str, preamble: str = "") -> str:
    """The package's ``__init__.py``: the shared forge (``core.py``), then the entry that runs code in the policy."""
    text = (PAYLOADS / "core.py").read_text() + "\n\n" + preamble + (PAYLOADS / entry).read_text()
    assert "return a - b" in text
    return text


@attack("the judge", "a forged object.__setattr__ event whose name is an object with __eq__: inside the policy it "
        "takes the policy's frames from gc.garbage and forges ledger and JUnit (round 28)",
        local="score 0 with the reason", confining="score 0 with the reason")
@pytest.mark.parametrize(("event", "more"), [("object.__setattr__", "(None,)"), ("object.__getattr__", "()")])
def test_a_forged_event_s_arguments_run_nothing_in_the_policy(start: Start, tiny_task: Task, event: str, more: str) -> None:
    """The forged event (``object.__setattr__`` or ``object.__getattr__``) names its attribute with an object:
    a violation, refused where it is raised, so the package does not import."""
    env = start(tiny_task)
    write(env, "calc/__init__.py", payload("forged_event.py", f"_EVENT, _MORE = {event!r}, {more}\n\n"))
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    assert invalid and "a forged object.__" in invalid and "not what the interpreter passes" in invalid, invalid


@attack("the judge", "add() an instance of a class whose metaclass's __eq__ answers the policy's type lookups, or an "
        "object whose class's __dict__ is a property the policy read (round 28)",
        local="score 0", confining="score 0")
@pytest.mark.parametrize("entry", ["meta.py", "dict.py"])
def test_a_metaclass_or_a_dict_property_runs_nothing_in_the_policy(start: Start, tiny_task: Task, entry: str) -> None:
    """Types are looked up by id and ``__dict__`` read only through the interpreter's descriptor: the planted code
    never runs inside the policy, finds no frame of it, and the wrong ``add`` scores 0."""
    env = start(tiny_task)
    write(env, "calc/__init__.py", payload(entry))
    result = submit(env)
    assert_unearned_zero(result)
