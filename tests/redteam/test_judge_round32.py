"""Red-team round 32 (a source review of b4b79fd) and round 33: what the comparisons as builtin values
(``judge_values``) still let the package's code run or undo.

- a dict subclass whose ``__iter__`` is its own: ``dict.copy`` of it calls its ``keys()``, code of the package
  run while the forms are made (finding 5);
- a set rebuilt from forms hashed each item again, a package's ``__hash__`` among them (finding 7);
- ``type in mro`` and ``==`` of two ``__module__`` values compared with a metaclass's or a ``str`` subclass's
  own ``__eq__`` while a class was judged (findings 9, 10);
- pytest's rewriting import hook taken out of ``sys.meta_path``: later test modules were compiled plainly, which
  the policy accepted as their files' own code (finding 3; now refused once pytest installed the hook);
- a class's own ``__dict__`` property ran while the forms were made (``object.__getattribute__``; finding 6);
- a ``set`` subclass planted as the plugin manager's ``_conftest_plugins`` was iterated inside the policy;
- the opaque keys are reachable (a handed-out comparison's defaults): the package's own call of the plain key
  between the making of the forms and their check replaced the record the check read (finding 11).

Each is a unit test of ``make_comparisons`` against values made here; a module under ``roots`` stands for a
module of the interpreter's installation.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

from repogym_gym.graders import judge_values
from repogym_gym.task import Task
from tests.helpers import MakeTask
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write
from tests.redteam.test_judge_round31 import forms_changed_in_an_assertion

HERE = Path(__file__).parent


def test_a_dict_subclass_is_copied_without_its_own_iteration() -> None:
    ran: list[str] = []

    class Lying(dict):  # type: ignore[type-arg]
        def __iter__(self):  # type: ignore[no-untyped-def]
            ran.append("__iter__")
            return iter(())

        def keys(self):  # type: ignore[no-untyped-def]
            ran.append("keys")
            return []

        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = None  # type: ignore[assignment]

    _, comparisons = judge_values.make_comparisons([sys.prefix])
    assert comparisons["judge_eq"](Lying(a=1), {"a": 2}) is False
    assert comparisons["judge_eq"](Lying(a=1), {"a": 1}) is True
    assert ran == []


def test_a_set_rebuilt_from_forms_hashes_no_item_of_the_package() -> None:
    hashed: list[object] = []

    class Item:
        def __hash__(self) -> int:
            hashed.append(self)
            return 1

    class Lying(tuple):  # type: ignore[type-arg]
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = tuple.__hash__

    values = {Lying((Item(),))}
    hashed.clear()
    _, comparisons = judge_values.make_comparisons([sys.prefix])
    assert comparisons["judge_eq"](values, {(1,)}) is False
    assert hashed == []
    assert comparisons["judge_eq"]({Lying((1,))}, {(1,)}) is True  # items of the interpreter's types: a builtin set


INSTALLED = '''
calls = []


class Meta(type):
    def __eq__(cls, other):
        calls.append(("metaclass", other))
        return NotImplemented

    __hash__ = type.__hash__


class Base(metaclass=Meta):
    pass


class Holder(Base):
    pass


holder = Holder()


class Named(str):
    def __eq__(self, other):
        calls.append(("str", other))
        return str.__eq__(self, other)

    __hash__ = str.__hash__


class Planted:
    pass


Planted.__module__ = Named(__name__)


class Nested:
    def __eq__(self, other):
        return True

    __hash__ = None


Nested.__qualname__ = "holder.Nested"


class Built(Planted):
    def __eq__(self, other):
        return True

    __hash__ = None
'''


def test_judging_a_class_runs_no_comparison_of_a_metaclass_or_a_str_subclass(tmp_path: Path) -> None:
    (tmp_path / "installed_r32.py").write_text(INSTALLED)
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("installed_r32")
    finally:
        sys.path.remove(str(tmp_path))
    try:
        _, comparisons = judge_values.make_comparisons([str(tmp_path)])
        module.calls.clear()
        assert comparisons["judge_eq"](module.Nested(), 1) is False  # qualname through an instance: not genuine
        assert comparisons["judge_eq"](module.Built(), 1) is False  # a base of a planted module name: not whole
        assert module.calls == []
    finally:
        del sys.modules["installed_r32"]


def test_the_package_calling_the_plain_key_itself_does_not_hide_forms_it_changed() -> None:
    """Round 32, finding 11: the package replaces an item of the forms unittest's ``assertEqual`` holds, then
    calls the plain key itself (reachable as a default of a handed-out comparison), which replaced the one
    record of the last forms with its own: the check found nothing to check."""
    keys, comparisons = judge_values.make_comparisons([sys.prefix])
    assert keys[0] in comparisons["judge_eq"].__defaults__
    failures = forms_changed_in_an_assertion(keys, lambda: keys[0](1) == keys[0](1))
    assert len(failures) == 1 and "changed while they were compared" in failures[0], failures


FIRST = """from calc import sub


def test_sub():
    assert sub(5, 3) == 2
"""
LATER = """from calc import add


def test_add():
    assert add(2, 3) == 5
"""
HIDDEN = """from calc import add


def test_add_negative():
    assert add(-2, -3) == -5
"""


@attack("the judge", "pytest's assertion-rewriting hook taken out of sys.meta_path by the package, which the first "
        "test module imports: later test modules compiled plainly, their == the result's own (round 32)",
        local="score 0", confining="score 0")
def test_pytests_rewriting_switched_off_voids_the_run(start: Start, make_task: MakeTask) -> None:
    task = make_task(files={"tests/test_a_first.py": FIRST, "tests/test_calc.py": LATER},
                     hidden={"tests/test_calc_hidden.py": HIDDEN},
                     tests={"command": "python -m pytest -q --junitxml={junit} tests",
                            "fail_to_pass": ["tests/test_calc.py::test_add", "tests/test_calc_hidden.py::test_add_negative"],
                            "pass_to_pass": ["tests/test_a_first.py::test_sub"]})
    env, text = start(task), (HERE / "round33" / "meta_path.py").read_text()
    write(env, "calc/__init__.py", text)
    assert "sys.meta_path.remove" in text.replace("_sys", "sys")  # and add still returns a wrong number
    assert_unearned_zero(submit(env))


@attack("the judge", "a set subclass planted as the plugin manager's _conftest_plugins: its __iter__ ran inside "
        "the policy's check of pytest's objects (round 32)", local="score 0", confining="score 0")
def test_a_planted_conftest_set_is_named_not_iterated(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    text = (HERE / "round33" / "conftest_set.py").read_text()
    write(env, "calc/__init__.py", text)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = str(component(result, "tests")["details"].get("invalid") or "")
    assert "_conftest_plugins" in invalid, repr(component(result, "tests"))


def test_an_instance_dict_is_read_by_the_interpreters_descriptor_only() -> None:
    """Round 32, finding 6: a class of the package that defines ``__dict__`` as a property had it run while
    the forms were made (``object.__getattribute__(value, "__dict__")``): such a value stands as a placeholder."""
    ran: list[str] = []

    class Liar(types.SimpleNamespace):
        @property  # type: ignore[misc]
        def __dict__(self) -> dict[str, int]:  # type: ignore[override]
            ran.append("__dict__")
            return {"a": 1}

    _, comparisons = judge_values.make_comparisons([sys.prefix])
    assert comparisons["judge_eq"](Liar(a=2), {"a": 1}) is False
    assert comparisons["judge_eq"](types.SimpleNamespace(a=1), types.SimpleNamespace(a=1)) is True
    assert ran == []
