"""Red-team round 34 (an attack of bb72e79 with the source in hand): a code object's file name through "..".

The judge classifies code by its ``co_filename``: a name that starts with a trusted root is the interpreter's
own. ``compile`` takes any name, and ``<library dir>/../../…/<tree>/pkg/file.txt`` starts with the library's
directory while its bytes (read through the ``..``) are the package file's own, so the compile was not recorded
and the code was trusted everywhere: its frames, its ``__code__`` assignments, its compiles. A name is now a
root's only when it has no ``.``, ``..`` or empty component.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

from repogym_gym.graders import judge_values
from repogym_gym.task import load_task
from tests.helpers import STARTER, MakeTask
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

HERE = Path(__file__).parent / "round34"

CALC_TEST = """from calc import add


def same(got, want):
    return type(got) is type(want) and got == want


def test_add():
    assert same(add(2, 3), 5)


def test_add_negative():
    assert same(add(-2, -3), -5)
"""


@attack("the judge", "code compiled under a library root's name through '..' (the package's own file): its frame "
        "access and a test helper's __code__ rewritten went unchecked (round 34)", local="score 0", confining="score 0")
def test_code_named_through_dotdot_is_the_submissions(start: Start, make_task: MakeTask) -> None:
    task = make_task(files={"tests/test_calc.py": CALC_TEST},
                     tests={"command": "python -m pytest -q --junitxml={junit} tests",
                            "fail_to_pass": ["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_negative"]})
    env = start(task)
    write(env, "calc/_helper.txt", (HERE / "dotdot_helper.txt").read_text())
    write(env, "calc/__init__.py", (HERE / "dotdot_calc.py").read_text())  # add still subtracts
    result = submit(env)
    assert_unearned_zero(result)
    assert "a frame (_getframe) reached code of the submission" in str(result.info["grade"]), result.info["grade"]


@attack("refactor tasks", "the original code kept in a .txt file the host cannot parse (<> under barry_as_FLUFL), "
        "compiled under a library root's name through '..' (round 34)", local="score 0", confining="score 0")
def test_original_code_compiled_under_a_dotdot_name_is_measured(start: Start) -> None:
    task = load_task(STARTER / "shipping-quote-refactor")
    env = start(task)
    original = (task.root / "repo" / "shipping" / "rates.py").read_text()
    assert original.count("!=") == 1
    write(env, "shipping/legacy.txt", original.replace("!=", "<>"))
    write(env, "shipping/rates.py", (HERE / "dotdot_rates.py").read_text())
    result = submit(env)
    assert_unearned_zero(result)
    tests = component(result, "tests")  # what ran is measured: the behaviour gate fails on the run-time code
    assert any("a function of 75 lines" in m for m in tests["messages"]), tests["messages"]


@attack("the judge", "a hidden test file read through a path under the interpreter's prefix that climbs out with "
        "'..': an oracle of the expected values (round 34)", local="score 0", confining="score 0")
def test_a_test_file_read_through_the_prefix_and_dotdot_is_refused(start: Start, make_task: MakeTask) -> None:
    env = start(make_task())
    write(env, "calc/__init__.py", (HERE / "dotdot_oracle.py").read_text())  # add still subtracts
    result = submit(env)
    assert_unearned_zero(result)
    assert "read a test file" in str(result.info["grade"]), result.info["grade"]


LYING = '''
class Anything(list):
    def __eq__(self, other):
        return True

    __hash__ = None
'''


def test_a_module_named_under_a_root_through_dotdot_is_not_the_installations(tmp_path: Path) -> None:
    """The comparisons judged a class by its module's ``__file__`` and its methods' ``co_filename``, taken as the
    installation's when they started with a root: ``<root>/../../<anywhere>`` did."""
    _, comparisons = judge_values.make_comparisons([sys.prefix], wildcards=False)  # before the package's module
    _, honest = judge_values.make_comparisons([str(tmp_path)], wildcards=False)
    disguised = sys.prefix + "/.." * 40 + str(tmp_path / "anything.py")
    module = types.ModuleType("anything_r34")
    module.__file__ = disguised
    exec(compile(LYING, disguised, "exec"), vars(module))  # noqa: S102 - the package's own code, named as it chose
    sys.modules["anything_r34"] = module
    try:
        assert comparisons["judge_eq"](module.Anything([1]), [2]) is False
        module.__file__ = str(tmp_path / "anything.py")
        exec(compile(LYING, module.__file__, "exec"), vars(module))  # noqa: S102
        assert honest["judge_eq"](module.Anything([1]), [2]) is True  # the same class, truly under a root: its own ==
    finally:
        del sys.modules["anything_r34"]
