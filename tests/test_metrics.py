"""Tests for repogym_gym.metrics: what each construct adds to cyclomatic complexity, qualnames,
line spans, and reading files under a repository root."""

from __future__ import annotations

import ast
import doctest
import os
import textwrap
from pathlib import Path

import pydantic
import pytest

from repogym_gym import metrics
from repogym_gym.metrics import FunctionMetrics, file_metrics, function_metrics


def measure(source: str) -> dict[str, FunctionMetrics]:
    """Metrics of a dedented snippet, keyed by qualname."""
    return {m.qualname: m for m in function_metrics(textwrap.dedent(source))}


def complexity_of(body: str) -> int:
    """Complexity of a function ``f`` whose body is the dedented ``body``."""
    source = "def f(a, b, c, xs):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    (only,) = function_metrics(source)
    return only.complexity


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param("return a\n", 1, id="straight_line_is_1"),
        pytest.param("if a:\n    return b\n", 2, id="if"),
        pytest.param("if a:\n    return b\nelse:\n    return c\n", 2, id="else_not_counted"),
        pytest.param("for x in xs:\n    pass\n", 2, id="for"),
        pytest.param("for x in xs:\n    pass\nelse:\n    pass\n", 2, id="for_else_not_counted"),
        pytest.param("while a:\n    pass\n", 2, id="while"),
        pytest.param(
            "try:\n    pass\nexcept ValueError:\n    pass\nexcept KeyError:\n    pass\n",
            3,
            id="each_except_handler",
        ),
        pytest.param(
            "try:\n    pass\nexcept ValueError:\n    pass\nelse:\n    pass\nfinally:\n    pass\n",
            2,
            id="try_else_finally_not_counted",
        ),
        pytest.param("return a and b\n", 2, id="boolop_two_operands"),
        pytest.param("return a if b else c\n", 2, id="conditional_expression"),
        pytest.param("return [x for x in xs]\n", 2, id="list_comprehension"),
        pytest.param("return {x for x in xs if x}\n", 3, id="set_comprehension_with_if"),
        pytest.param("return {x: x for x in xs}\n", 2, id="dict_comprehension"),
        pytest.param("return sum(x for x in xs)\n", 2, id="generator_expression"),
        pytest.param("assert a\n", 2, id="assert"),
        pytest.param("return re.compile('a|b|c')\n", 3, id="regex_alternatives_passed_to_re"),
        pytest.param("return sub(r'(?!x)y|z', '', a)\n", 3, id="regex_lookahead_and_alternative"),
        pytest.param("p = r'(?P<s>\\d+)|(?P<t>[a|b])'\nreturn p\n", 2, id="regex_shaped_literal_anywhere"),
        pytest.param("return re.match(r'\\d+\\|x', a)\n", 1, id="escaped_bar_and_plain_pattern"),
        pytest.param("return re.match(r'(x{1,5})?y{3}z*?', a)\n", 3, id="optional_group_and_bounded_repeat"),
        pytest.param("return re.Scanner([(r'a', 1), (r'b', 2), (r'c?', 3)])\n", 4, id="scanner_lexicon"),
        pytest.param('"""a docstring: (a|b)"""\nreturn "x|y".split("|")\n', 1, id="docstring_and_separator_not_regex"),
    ],
)
def test_each_counted_construct_adds_its_decision_points(body: str, expected: int) -> None:
    assert complexity_of(body) == expected


def test_a_lambda_is_a_function_of_its_own_wherever_it_is() -> None:
    source = """\
        top = lambda x: x if x else -x
        class C:
            key = staticmethod(lambda r: r and r[0])
            def m(self, xs):
                return sorted(xs, key=lambda x: (
                    x.a or x.b
                ))
        def f(a=lambda: 1 if x else 2):
            return (lambda y: (lambda z: z or y))
        """
    measured = [(m.qualname, m.lineno, m.length, m.complexity) for m in function_metrics(textwrap.dedent(source))]
    assert sorted(measured) == sorted([
        ("<lambda>", 1, 1, 2),
        ("C.<lambda>", 3, 1, 2),
        ("C.m", 4, 4, 2),  # its lambda's choice is its own too (round 38)
        ("C.m.<locals>.<lambda>", 5, 3, 2),
        ("f", 8, 2, 2),  # its default is evaluated by the module, not by f; the `or` of its lambdas is f's
        ("<lambda>", 8, 1, 2),  # so Python names it "<lambda>", not "f.<locals>.<lambda>"
        ("f.<locals>.<lambda>", 9, 1, 2),
        ("f.<locals>.<lambda>.<locals>.<lambda>", 9, 1, 2),
    ])


def test_a_lambdas_defaults_count_for_the_function_that_evaluates_them() -> None:
    result = measure("def f(xs):\n    return map(lambda x, d=xs and 1: x or d, xs)\n")
    assert (result["f"].complexity, result["f.<locals>.<lambda>"].complexity) == (3, 2)  # the lambda's `or` is f's too


def test_a_module_level_lambda_spread_over_lines_breaks_the_length_limits_of_a_def() -> None:
    source = "quote = lambda w, z: (\n" + "".join(f"    {i} if w == {i} else\n" for i in range(30)) + "    0\n)\n"
    (only,) = function_metrics(source)
    assert (only.qualname, only.lineno, only.length, only.complexity) == ("<lambda>", 1, 33, 31)


def test_bytes_are_decoded_as_the_interpreter_decodes_them() -> None:
    hidden = b"# coding: raw_unicode_escape\n#\\u000adef hidden(x):\\u000a    return x or 1\n"
    assert function_metrics(hidden.decode("utf-8")) == []  # read as UTF-8: two comment lines
    (only,) = function_metrics(hidden, path="m.py")  # as Python runs it: a function
    assert (only.qualname, only.lineno, only.complexity) == ("hidden", 3, 2)
    latin = "# -*- coding: latin-1 -*-\ndef f():\n    return 'é'\n".encode("latin-1")
    assert [m.qualname for m in function_metrics(latin)] == ["f"]
    assert [m.qualname for m in function_metrics(b"\xef\xbb\xbfdef f():\n    pass\n")] == ["f"]


@pytest.mark.parametrize(
    "source", [b"x = '\xff'\n", b"# coding: no-such-codec\nx = 1\n", b"x = 1\0\n"], ids=["not-utf8", "unknown-codec", "null-byte"]
)
def test_undecodable_bytes_are_a_syntax_error_naming_the_path(source: bytes) -> None:
    with pytest.raises(SyntaxError) as caught:
        function_metrics(source, path="pkg/bad.py")
    assert caught.value.filename == "pkg/bad.py"


def test_with_is_not_counted() -> None:
    assert complexity_of("with a as x, b as y:\n    pass\n") == 1


def test_elif_chain_counts_each_branch() -> None:
    body = "if a:\n    pass\nelif b:\n    pass\nelif c:\n    pass\nelse:\n    pass\n"
    assert complexity_of(body) == 4


def test_boolop_with_three_operands_adds_two() -> None:
    assert complexity_of("return a and b and c\n") == 3


def test_mixed_boolops_count_each_operator() -> None:
    assert complexity_of("return a and (b or c)\n") == 3


def test_comprehension_with_two_for_clauses_and_an_if_adds_three() -> None:
    assert complexity_of("return [x for x in xs for y in x if y]\n") == 4


def test_match_with_three_cases_adds_three() -> None:
    body = "match a:\n    case 1:\n        pass\n    case 2 | 3:\n        pass\n"
    body += "    case _ if b:\n        pass\n"
    assert complexity_of(body) == 4


def test_nested_function_is_measured_separately_and_not_counted_in_parent() -> None:
    result = measure(
        """\
        def outer(a):
            if a:
                pass
            def inner(b):
                for x in b:
                    if x:
                        pass
            return inner
        """
    )
    assert [m.qualname for m in result.values()] == ["outer", "outer.<locals>.inner"]
    assert result["outer"].complexity == 2
    assert result["outer.<locals>.inner"].complexity == 3


def test_nested_function_defaults_and_decorators_count_for_parent() -> None:
    result = measure(
        """\
        def outer(a, b):
            @deco(a or b)
            def inner(x=a if b else 0):
                return x and a
            return inner
        """
    )
    assert result["outer"].complexity == 3
    assert result["outer.<locals>.inner"].complexity == 2


def test_methods_have_class_qualnames() -> None:
    result = measure(
        """\
        class Outer:
            flag = 1 if True else 0
            def method(self):
                pass
            class Inner:
                async def deep(self):
                    pass

        def factory():
            class Local:
                def m(self):
                    return self or None
            return Local
        """
    )
    assert list(result) == [
        "Outer.method",
        "Outer.Inner.deep",
        "factory",
        "factory.<locals>.Local.m",
    ]
    assert result["factory"].complexity == 1
    assert result["factory.<locals>.Local.m"].complexity == 2


def test_class_body_inside_function_counts_for_that_function() -> None:
    result = measure(
        """\
        def factory(a):
            class Local:
                value = 1 if a else 2
            return Local
        """
    )
    assert result["factory"].complexity == 2


def test_module_and_class_level_code_is_not_measured() -> None:
    source = "if True:\n    x = y = 3\nclass C:\n    z = 1 if x else 2\n"
    assert function_metrics(source) == []


def test_a_comprehension_outside_any_function_is_a_function() -> None:
    """Eighth red-team round: a module-level generator expression held the original 75-line,
    complexity-26 ``quote()`` as its element, driven by ``next()`` from a 14-line ``def``: quality 1.0
    on shipping-quote-refactor. A comprehension outside any function is a scope that can run again."""
    source = ("_ARGS = []\n_G = ((1 if a else 2 if b else 3)\n      for a, b in iter(_ARGS.pop, None))\n"
              "class C:\n    L = [y for y in range(3) if y]\n\ndef f(a):\n    return [x for x in a if x]\n")
    got = {m.qualname: (m.length, m.complexity) for m in function_metrics(source)}
    assert got == {"<genexpr>": (2, 4), "C.<listcomp>": (1, 3), "f": (2, 3)}


def test_async_def_and_async_for_are_measured() -> None:
    result = measure(
        """\
        async def fetch(source):
            async for item in source:
                async with item:
                    pass
        """
    )
    assert result["fetch"].complexity == 2
    assert (result["fetch"].lineno, result["fetch"].end_lineno) == (1, 4)


def test_length_excludes_decorators() -> None:
    source = "import functools\n\n@functools.cache\n@staticmethod\n"
    source += "def f():\n    x = 1\n    return x\n"
    (only,) = function_metrics(source, path="pkg/mod.py")
    assert only == FunctionMetrics(
        path="pkg/mod.py", qualname="f", lineno=5, end_lineno=7, length=3, complexity=1
    )


def test_results_are_ordered_by_line() -> None:
    result = function_metrics("def a():\n    def b():\n        pass\ndef c():\n    pass\n")
    assert [(m.qualname, m.lineno) for m in result] == [("a", 1), ("a.<locals>.b", 2), ("c", 4)]


def test_syntax_error_carries_the_path() -> None:
    with pytest.raises(SyntaxError) as caught:
        function_metrics("def f(:\n    pass\n", path="pkg/broken.py")
    assert caught.value.filename == "pkg/broken.py"


def test_null_byte_syntax_error_carries_the_path() -> None:
    with pytest.raises(SyntaxError) as caught:
        function_metrics("x = 1\0\n", path="pkg/nul.py")
    assert caught.value.filename == "pkg/nul.py"


def test_model_rejects_inconsistent_length() -> None:
    with pytest.raises(pydantic.ValidationError, match="end_lineno - lineno \\+ 1 = 3"):
        FunctionMetrics(path="a.py", qualname="f", lineno=1, end_lineno=3, length=2, complexity=1)


def test_model_is_frozen_and_forbids_extra_fields() -> None:
    fields = {"path": "a.py", "qualname": "f", "lineno": 1, "end_lineno": 1, "length": 1}
    only = FunctionMetrics(**fields, complexity=1)
    with pytest.raises(pydantic.ValidationError):
        only.complexity = 2  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError):
        FunctionMetrics(**fields, complexity=1, extra=0)  # type: ignore[call-arg]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small repository: top.py, pkg/a.py, pkg/sub/b.py, and a non-Python file."""
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "top.py").write_text("def top():\n    pass\n", encoding="utf-8")
    (tmp_path / "pkg" / "a.py").write_text("def a(x):\n    return x or 1\n", encoding="utf-8")
    (tmp_path / "pkg" / "sub" / "b.py").write_text(
        "\ufeffclass B:\n    def m(self):\n        pass\n", encoding="utf-8"
    )
    (tmp_path / "pkg" / "notes.txt").write_text("def not_python(:\n", encoding="utf-8")
    return tmp_path


def test_file_metrics_reads_files_and_directories_in_order(tree: Path) -> None:
    result = file_metrics(tree, ["top.py", "pkg"])
    assert [(m.path, m.qualname, m.complexity) for m in result] == [
        ("top.py", "top", 1),
        ("pkg/a.py", "a", 2),
        ("pkg/sub/b.py", "B.m", 1),
    ]


def test_file_metrics_normalises_dot_paths(tree: Path) -> None:
    result = file_metrics(tree, ["./pkg/sub/", "."])
    assert [m.path for m in result] == ["pkg/sub/b.py", "pkg/a.py", "pkg/sub/b.py", "top.py"]


def test_file_metrics_missing_path_raises_naming_it(tree: Path) -> None:
    with pytest.raises(FileNotFoundError, match="'pkg/missing.py'") as caught:
        file_metrics(tree, ["top.py", "pkg/missing.py"])
    assert caught.value.filename == "pkg/missing.py"


def test_file_metrics_syntax_error_names_relative_path(tree: Path) -> None:
    (tree / "pkg" / "bad.py").write_text("def bad(:\n", encoding="utf-8")
    with pytest.raises(SyntaxError) as caught:
        file_metrics(tree, ["pkg"])
    assert caught.value.filename == "pkg/bad.py"


def test_file_metrics_rejects_a_bare_string(tree: Path) -> None:
    with pytest.raises(TypeError, match="pass a list"):
        file_metrics(tree, "top.py")


def test_docstring_examples_run() -> None:
    outcome = doctest.testmod(metrics, raise_on_error=False, verbose=False)
    assert outcome.attempted >= 2
    assert outcome.failed == 0


# --- what the code under test may leave in the grading copy ------------------------------------------


def test_an_expression_too_deep_for_the_parser_is_a_syntax_error_naming_the_file() -> None:
    with pytest.raises(SyntaxError, match="nested too deeply to measure") as info:
        function_metrics("x = " + "+".join(["1"] * 100_000) + "\n", path="pkg/deep.py")
    assert info.value.filename == "pkg/deep.py"


def test_file_metrics_refuses_a_fifo_and_a_symlink_out_of_the_root_without_blocking(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (tmp_path / "outside.py").write_text("def leaked():\n    pass\n")
    (root / "pkg" / "ok.py").write_text("def f():\n    pass\n")
    os.symlink(tmp_path / "outside.py", root / "out.py")
    with pytest.raises(OSError, match="symlink out of the repository"):
        file_metrics(root, ["out.py"])
    os.mkfifo(root / "pkg" / "pipe.py")
    with pytest.raises(OSError, match="not a regular file"):
        file_metrics(root, ["pkg"])


def test_file_metrics_walks_a_directory_3000_levels_deep(deep_dir: Path) -> None:
    fd = os.open(deep_dir, os.O_RDONLY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    with open(os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
        fh.write("def f():\n    pass\n")
    os.close(fd)
    with pytest.raises(OSError, match="cannot be read"):  # nested past PATH_MAX: refused, never a RecursionError
        file_metrics(deep_dir, ["."])


def test_file_metrics_refuses_a_file_past_the_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "MAX_SOURCE_BYTES", 100)
    (tmp_path / "big.py").write_text("x = 1\n" * 50)
    with pytest.raises(ValueError, match="too large to measure"):
        file_metrics(tmp_path, ["big.py"])


def test_a_module_s_top_level_is_measured_for_its_logic_not_its_tables() -> None:
    from repogym_gym.metrics import tree_metrics

    source = ("\"\"\"Doc.\"\"\"\nimport os\nTABLE = {\n    'a': 1,\n    'b': 2,\n}\n\n\nclass C:\n    X = 1 if os.sep else 2\n\n\n"
              "def f(x=1 if os.sep else 0):\n    return x\n\n\nif os.sep == '/':\n    y = 1\nelif os.sep:\n    y = 2\n"
              "for i in range(3):\n    pass\nZ = [v for v in TABLE if v]\n")
    tree = ast.parse(source)
    module = [m for m in tree_metrics(tree, "m.py", top_level=True) if m.kind == "module"]
    assert [m.qualname for m in tree_metrics(tree, "m.py")] == ["f", "<listcomp>"]  # without top_level: functions only
    assert len(module) == 1
    (top,) = module
    # decisions: the class body's IfExp, f's default IfExp, if + elif, for; the listcomp is its own scope
    assert (top.qualname, top.lineno, top.complexity) == ("<module>", 1, 1 + 5)
    assert top.length == 4 + 2  # the if/elif (4 lines) and the for (2); not the docstring, import, table, class, def
    tables = tree_metrics(ast.parse("A = {\n  1: 2,\n}\nB = 3\n"), "t.py", top_level=True)
    assert [(m.qualname, m.length, m.complexity) for m in tables] == [("<module>", 0, 1)]


@pytest.mark.parametrize(("body", "points"), [
    ("return (lambda: b, lambda: a)[c]()", 1),  # round 38's if/else
    ("return (x, y, z)[n]", 2),
    ("return {1: x, 2: y, 3: z}[n]", 2),
    ("return table[w <= 500]", 1),
    ("return table[int(not c)]", 1),
    ("return ok[(w <= 0) | (w > 30000)]", 2),  # the | of two conditions, and the index that is a condition
    ("pair = (x, y)\n    flag = w <= 500\n    return pair[flag]", 2),  # round 39: through names (the condition, the pair)
    ("w5, w2 = w <= 500, w <= 2000\n    return table[w5] + table[w2]", 2),
    ("return (x, y).__getitem__(w > 0)", 2),  # the condition where it is made, and the pair it chooses from
    ("return {True: x, False: y}.get(c is None)", 2),
    ("with suppress(ZeroDivisionError):\n        return 1 / (w > 5)\n    return 0", 2),  # an except handler, and a truth value as a divisor
    ("return table[zone]", 0),  # a lookup in a table is data, not a choice
    ("return (x, y)[0]", 0),
    ("return (x, y, z)[-1]", 0),  # a constant index chooses nothing (the lambda attack's tuple of steps)
    ("return flags & mask", 0),
    # round 42: a condition counts where it is made, whatever then chooses with it
    ("return (y, x)[w > 5:][0]", 2),  # a slice of alternatives with a computed bound, and its condition
    ("return [y, x].pop(w > 5)", 2),
    ("with nullcontext((w <= 500, w <= 2000)) as (f1, f2):\n        return table[f1] + table[f2]", 2),
    ("return w > 5", 1),
    ("return not ok", 1),
    ("if w > 5 and w < 9:\n        return 1\n    return 0", 2),  # an if's own test is counted by the if
    ("return x or y", 1),  # and / or of values chooses a value: counted once, as before
    ("flag = or_(le(w, 1), gt(w, 9))\n    return flag", 2),  # like le(...) or gt(...)
    ("return (x, y)[1:]", 0),  # a constant slice chooses nothing
])
def test_a_choice_made_by_indexing_counts_as_a_decision(body: str, points: int) -> None:
    """Red-team round 38 kept a refactor task's whole if/elif ladder as ``(lambda: B, lambda: A)[c]()``
    selections: complexity 1, quality 1.0."""
    result = measure(f"def f(a, b, c, n, w, x, y, z, zone, table, ok, flags, mask):\n    {body}\n")
    assert result["f"].complexity == 1 + points


def test_a_chain_of_names_written_last_link_first_settles_in_one_pass() -> None:
    """Red-team round 41: a 30,000-link alias chain written against the order the settling visited it moved
    one link per pass (157 s of host CPU in one ``submit``, no reward earned). Each name now settles once,
    from the largest value that reaches it; the chain's end still carries the table's three alternatives,
    and a module-level name is seen through by every function without a copy per function."""
    n = 30_000
    links = "\n".join(f"    a{i} = a{i - 1}" for i in range(n, 0, -1))
    source = f"def f(w, x, y, z):\n    a0 = (x, y, z)\n{links}\n    return a{n}[w]\n"
    assert measure(source)["f"].complexity == 1 + 2
    module = "T0 = (1, 2, 3, 4)\n" + "".join(f"T{i} = T{i - 1}\n" for i in range(1, 2000)) + "".join(
        f"def f{i}(w):\n    return T{1999 - i}[w]\n\n\n" for i in range(200))
    found = measure(module)
    assert {found[f"f{i}"].complexity for i in range(200)} == {1 + 3}
    # a smaller value reaching a name that already holds a larger one does not lower it
    assert complexity_of("big = (x, y, z)\nflag = w > 1\nbig = flag\nreturn big[w]") == 1 + 2 + 1  # + the condition made
