"""The canonical form of benchmark results: plain builtin data only, and the perf grader delivering it."""

from __future__ import annotations

import ast
import collections
import doctest
import subprocess
import sys
from pathlib import Path

import pytest

from repogym_gym.graders import CompositeGrader, PerfGrader, canon
from repogym_gym.graders.canon import NotPlainData, canonical, digest
from repogym_gym.graders.perf import CANON_ENV, CANON_PATH
from repogym_gym.task import Task
from tests.helpers import MakeTask, grade_files, tiny_spec

# -- the encoding ------------------------------------------------------------------------------------------


def test_the_docstring_examples_run() -> None:
    failures, tried = doctest.testmod(canon, verbose=False)
    assert tried >= 4 and failures == 0


#: Distinct values, some equal under ``==``: every one must encode differently.
DISTINCT = [None, True, False, 0, 1, -1, 1.0, 0.0, -0.0, float("inf"), "", "1", "a", "\ud800", b"", b"a", (), [], {},
            set(), frozenset(), (1,), [1], [True], [1.0], ("a",), [("a",)], [[], []], [[[]]], {1: 2}, {2: 1}, {1: (2,)},
            {"a": 1, "b": 2}, {1}, frozenset({1}), {1, 2}, 10**5000, -(10**5000), ["ab"], ["a", "b"], [b"ab"], "s1:a"]


def test_values_that_differ_in_any_type_or_value_encode_differently() -> None:
    encodings = [canonical(value) for value in DISTINCT]
    assert len(set(encodings)) == len(DISTINCT)


def test_the_order_of_a_dict_or_set_does_not_count_and_every_other_order_does() -> None:
    assert canonical({"a": 1, "b": [2]}) == canonical({"b": [2], "a": 1})
    assert canonical({3, 1, 2}) == canonical({1, 2, 3}) == canonical(set([2, 3, 1]))
    assert canonical([1, 2]) != canonical([2, 1])
    assert canonical(list({"a": 1, "b": 2}.items())) != canonical(list({"b": 2, "a": 1}.items()))


def test_a_shared_object_is_encoded_wherever_it_appears() -> None:
    shared = [1, 2]
    assert canonical([shared, shared]) == canonical([[1, 2], [1, 2]])


def test_any_depth_of_nesting_is_fine() -> None:
    deep: list = []
    inner = deep
    for _ in range(100_000):
        inner.append([])
        inner = inner[0]
    assert canonical(deep).startswith(b"l1:l1:") and len(digest(deep)) == 16


class AdoptingList(list):
    def __eq__(self, other: object) -> bool:
        self[:] = other  # type: ignore[index]
        return True

    __hash__ = None  # type: ignore[assignment]


class Str(str):
    pass


class Int(int):
    pass


@pytest.mark.parametrize(
    ("value", "place", "kind"),
    [
        (AdoptingList([1]), "result", "AdoptingList"),
        ([1, (2, Str("x"))], "result[1][1]", "Str"),
        ({"k": [0, 1, Int(2)]}, "result['k'][2]", "Int"),
        ({Str("k"): 1}, "result[<key>] (its key)", "Str"),
        (collections.OrderedDict(a=1), "result", "OrderedDict"),
        ([collections.defaultdict(list)], "result[0]", "defaultdict"),
        ((x for x in [1]), "result", "generator"),
        ([bytearray(b"a")], "result[0]", "bytearray"),
        ({frozenset({1}): [range(3)]}, "result[<key>][0]", "range"),
        ([{1, object()}], "result[0]{...}", "object"),
    ],
    ids=["list-subclass", "str-subclass-in-tuple", "int-subclass-in-dict", "str-subclass-key", "OrderedDict",
         "defaultdict", "generator", "bytearray", "range-under-a-frozenset-key", "object-in-a-set"],
)
def test_an_object_not_exactly_of_a_builtin_data_type_is_refused_where_it_is(value: object, place: str, kind: str) -> None:
    with pytest.raises(NotPlainData) as caught:
        canonical(value)
    message = str(caught.value)
    assert message.startswith(f"{place}: an object of type ") and f"{kind} is not plain data" in message, message
    assert isinstance(caught.value, TypeError)


def test_a_container_that_contains_itself_is_refused() -> None:
    loop: list = [1]
    loop.append([loop])
    with pytest.raises(NotPlainData, match=r"^result\[1\]\[0\]: a list that contains itself has no canonical form$"):
        canonical(loop)


def test_refusing_calls_none_of_the_objects_own_methods() -> None:
    class Loud(list):
        def __iter__(self):  # noqa: ANN204
            raise AssertionError("iterated")

        def __len__(self) -> int:
            raise AssertionError("measured")

        def __repr__(self) -> str:
            raise AssertionError("printed")

    with pytest.raises(NotPlainData, match="Loud is not plain data"):
        canonical({"k": Loud([1])})


def test_the_module_is_standalone_and_runs_from_its_path_alone(tmp_path: Path) -> None:
    tree = ast.parse(Path(canon.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"__future__", "hashlib"}
    code = "import runpy, sys; print(runpy.run_path(sys.argv[1])['digest']([('a', 1), None]))"
    shown = subprocess.run([sys.executable, "-I", "-S", "-c", code, canon.__file__], cwd=tmp_path, capture_output=True,
                           text=True, timeout=30, check=True)
    assert shown.stdout.strip() == digest([("a", 1), None])


# -- the perf grader delivers it ---------------------------------------------------------------------------------

BENCH = (
    "import json\nimport os\nimport runpy\n\n"
    f"digest = runpy.run_path(os.environ[{CANON_ENV!r}])['digest']\n\n"
    "from calc.slow import result, seconds  # noqa: E402\n\n"
    "print(f'result {digest(result())}')\n"
    "print(json.dumps({'seconds': seconds()}))\n"
)
SLOW = "def result():\n    return [('a', 1), ('b', 2)]\n\n\ndef seconds():\n    return 1.0\n"
FAST = SLOW.replace("return 1.0", "return 0.25")
PERF = {"command": "python bench.py", "runs": 2, "min_speedup": 4.0, "timing": "reported",
        "output_check": "^result [0-9a-f]{16}$"}
PERF_ONLY = CompositeGrader([PerfGrader()])
FAKE_CANON = "def digest(value):\n    return 'f' * 16\n"


@pytest.fixture
def canon_task(make_task: MakeTask) -> Task:
    tests = {**tiny_spec()["tests"], "fail_to_pass": []}
    return make_task(type="perf", files={"calc/slow.py": SLOW, "bench.py": BENCH}, tests=tests, perf=PERF, patch=None)


def test_a_faster_candidate_returning_plain_data_matches_the_baselines_digest(canon_task: Task) -> None:
    perf = grade_files(canon_task, {"calc/slow.py": FAST}, grader=PERF_ONLY).component("perf")
    assert (perf.score, perf.passed) == (1.0, True), perf.messages


def test_a_candidate_returning_a_list_subclass_scores_0_naming_it(canon_task: Task) -> None:
    lying = "class Adopting(list):\n    pass\n\n\n" + FAST.replace("return [", "return Adopting([").replace("2)]", "2)])")
    perf = grade_files(canon_task, {"calc/slow.py": lying}, grader=PERF_ONLY).component("perf")
    assert (perf.score, perf.passed) == (0.0, False)
    assert perf.messages[0].startswith("candidate benchmark: exited 1"), perf.messages
    assert "result: an object of type calc.slow.Adopting is not plain data" in perf.messages[0], perf.messages


@pytest.mark.parametrize("planted", [CANON_PATH, f"{CANON_PATH}/__main__.py"], ids=["a-file", "a-directory"])
def test_the_submissions_own_file_at_the_canon_path_is_replaced(canon_task: Task, planted: str) -> None:
    """A fake canonical form whose digest is a constant would make this correct candidate's output differ."""
    perf = grade_files(canon_task, {"calc/slow.py": FAST, planted: FAKE_CANON}, grader=PERF_ONLY).component("perf")
    assert (perf.score, perf.passed) == (1.0, True), perf.messages
