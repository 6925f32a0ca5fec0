"""Red-team round 27 (a static review of bcfbe03): what the judge read by lookup, and the path objects it trusted.

Round 26 made the policy compare only values of exact builtin types, but it still read namespaces by key:
a dict lookup compares the key it looks for with every stored key of the same hash, so a key of another
type planted in a namespace (a str subclass, any object with ``__hash__`` and ``__eq__``) ran its ``__eq__``
inside the policy, where no audit event is raised; a class's ``__name__`` may be a str subclass, whose
``__format__`` the policy's messages called; and the snapshots compared each namespace's size, so one key
deleted and another added went unseen. A path object was trusted when pathlib's ``__fspath__`` served it,
but that calls ``str(self)``: a subclass's ``__str__`` named ``/proc`` to the open and a harmless file to the
policy's check.

The properties fixed: the policy reads a namespace through its items (never a lookup), and only entries
whose key is exactly a str; a namespace's keys are compared by identity and order, every key that is new
is looked at; names of another type read as placeholders; a path object is trusted only when it is
exactly one of pathlib's classes or pytest's ``LocalPath``, noted before any task code ran.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE, FIXED_SOURCE
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write


@attack("the judge", "a pathlib subclass whose __str__ names /proc to the open and a harmless file to the judge's "
        "check, opened by a garbage-collector finalizer (round 27)", local="refused", confining="refused")
def test_a_path_object_of_a_subclass_of_pathlib_is_not_trusted(start: Start, tiny_task: Task) -> None:
    """``io.FileIO`` converts its path once before the audit event and the policy converted it again to
    check it: the second answer was harmless. Only pathlib's own classes are trusted now, so the read fails
    and a later test sees it did."""
    planted = CALC_SOURCE.replace("def add(a, b):\n    return a - b\n", '''\
import io as _io
import pathlib as _pathlib
import weakref as _weakref

_SEEN = []
_ASKED = [0]


class _Path(_pathlib.PosixPath):
    def __str__(self):
        _ASKED[0] += 1
        return "/proc/self/maps" if _ASKED[0] == 1 else "/tmp"


class _Cycle:
    pass


def add(a, b):
    cycle = _Cycle()  # freed by a later collection, most often in pytest's own code
    cycle.me = cycle
    _ASKED[0] = 0
    _weakref.finalize(cycle, _SEEN.extend, map(_io.FileIO.read, map(_io.FileIO, [_Path("/tmp")]), [64]))
    return a + b if _SEEN else a - b
''')
    env = start(tiny_task)
    write(env, "calc/__init__.py", planted)
    result = submit(env)
    assert_unearned_zero(result)


@attack("the judge", "a verdict-path namespace changed with its size kept: a key deleted, a builtin's name added "
        "(round 27)", local="score 0 with the reason", confining="score 0 with the reason")
def test_a_key_deleted_and_another_added_on_the_verdict_path_voids_the_run(start: Start, tiny_task: Task) -> None:
    """The snapshots compared a namespace's size: with the fix in place, deleting ``__cached__`` from
    ``_pytest.reports`` and binding ``isinstance`` there (which its code would call instead of the builtin)
    went unseen (1.0). Every key that is new is looked at now."""
    env = start(tiny_task)
    write(env, "calc/__init__.py", FIXED_SOURCE + '''

import _pytest.reports as _reports

_NS = vars(_reports)
del _NS["__cached__"]
_NS["isinstance"] = isinstance
''')
    result = submit(env)
    assert_unearned_zero(result)
    recorded = component(result, "tests")["messages"]
    assert any("_pytest.reports" in m and "isinstance was added" in m for m in recorded), recorded


INSIDE_THE_POLICY = '''
import sys

from repogym_gym.graders import judge_namespaces, judge_policy

CAUGHT, RAN = [], []
real_build = judge_namespaces.build


def build(J):
    real_build(J)
    CAUGHT.append(J)


judge_namespaces.build = build
judge_policy.install({"nonce": "n", "key": "00" * 32, "tree": "/nonexistent-tree", "grader_files": {},
                      "scored_files": [], "scored_ids": [], "runner_files": {}})
J = CAUGHT.pop()


class Key:
    """A planted key: the hash of the name it hides behind, an __eq__ that says where it ran."""

    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        RAN.append(("__eq__", other))
        return False


class Name(str):
    def __format__(self, spec):
        RAN.append(("__format__", str(self)))
        return "formatted"

    def __eq__(self, other):
        RAN.append(("__eq__ of a name", other))
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def first():
    pass


def second():
    pass


class Owner:
    pass


namespace = {"keep": first, "data": 1, "swap": second}
snap = J["snapshot_row"]("namespace under test", Owner, namespace)
J["add_row"]("under test", snap)
J["check_group"]("under test")
print("clean", J["violations"])

# the key deleted and another added: the size is kept
del namespace["data"]
namespace["added"] = print
J["check_group"]("under test")
print("swapped", J["violations"])
del J["violations"][:]

# a planted key hiding behind "keep": put before it, so a lookup of "keep" meets it first
del namespace["keep"]
namespace[Key("keep")] = 0
namespace["keep"] = first
del RAN[:]  # the insertion above met the planted key: this script's own comparison
J["check_group"]("under test")
J["compare"]([snap], True)
print("planted", J["violations"])
print("ran", RAN)
del RAN[:]

# a class made with a planted key and a name of a str subclass
Made = type("Made", (), {Key("__module__"): 1, "__module__": "elsewhere"})
Made.__name__ = Name("Made")
del RAN[:]
print("class dict", sorted(J["class_dict"](Made)), J["class_dict"](Made).get("__module__"))
print("name", J["name_of"](Made()), J["class_qualname"](Made))
print("ran", RAN)


class Loud(dict):
    def get(self, *args):
        RAN.append(("get", args))
        return None

    def items(self):
        RAN.append(("items", ()))
        return []

    def __iter__(self):
        RAN.append(("__iter__", ()))
        return iter(())


holder = Owner()
holder.__dict__ = Loud(x=1)
print("instance dict", J["instance_dict"](holder, "__dict__").get("x"), type(J["instance_dict"](holder, "__dict__")).__name__)
print("ran", RAN)


class Lenient(type):
    __dict__ = None  # a metaclass entry that lets a class's own __dict__ be rebound later


class Later(metaclass=Lenient):
    pass


later = Later()
later.x = 2
first = J["instance_dict"](later, "__dict__").get("x")  # judged (and its keys cached) before the rebinding
Later.__dict__ = property(lambda self: RAN.append(("__dict__ property", ())) or {})
print("rebound", first, J["instance_dict"](later, "__dict__"))
print("ran", RAN)
'''


def test_the_policy_reads_namespaces_by_items_and_names_of_other_types_as_placeholders() -> None:
    """White-box, the policy installed in a fresh interpreter: a namespace whose size is kept while a key
    is replaced by another is a violation naming the new key; a planted key of another type hiding behind
    a name never runs inside the policy (not in the before-pass check, not in the comparison) and is named;
    a class dict with one is read with a placeholder str for it; a class name of a str subclass is never formatted;
    an object's ``__dict__`` of a dict subclass is read with ``dict``'s own methods."""
    done = subprocess.run([sys.executable, "-c", INSIDE_THE_POLICY], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line and not line.startswith("class"))
    assert lines["clean"] == "[]", done.stdout
    assert "namespace under test: added was added" in lines["swapped"], done.stdout
    assert "a key of type Key was added" in lines["planted"], done.stdout
    assert all(line == "ran []" for line in done.stdout.splitlines() if line.startswith("ran")), done.stdout
    class_line = next(line for line in done.stdout.splitlines() if line.startswith("class dict"))
    assert class_line == ("class dict ['<a key of another type #0>', '__dict__', '__doc__', '__module__', '__weakref__'] "
                          "elsewhere"), done.stdout
    assert lines["name"] == "<class with a name of another type> Made", done.stdout
    assert lines["instance"] == "dict 1 dict", done.stdout
    assert lines["rebound"] == "2 {}", done.stdout  # round 30: a __dict__ property set after a first read  # a dict subclass as __dict__: read with dict's own methods
