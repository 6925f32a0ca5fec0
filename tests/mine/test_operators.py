"""Tests for repogym_gym.mine.operators: what each mutation operator yields, where mutations may
occur, exact character spans, equivalence, git-style patches, and real standard-library code."""

from __future__ import annotations

import dataclasses
import doctest
import inspect
import re
import subprocess
import textwrap
import warnings
from pathlib import Path

import pytest

from repogym_gym.mine import equivalence, functions, operators, sourcemap, textdiff
from repogym_gym.mine.operators import (
    OPERATORS,
    Mutation,
    apply_mutation,
    find_mutations,
    is_equivalent,
    unified_diff,
)

HEADER = "def f(a, b, xs):\n"


def mutated_bodies(body: str, operator: str) -> list[str]:
    """The mutated bodies of ``def f(a, b, xs):`` with the dedented ``body``, sorted."""
    source = HEADER + textwrap.indent(textwrap.dedent(body), "    ")
    out = []
    for mutation in find_mutations(source, "m.py", operators=[operator]):
        assert mutation.operator == operator and mutation.function == "f"
        mutated = apply_mutation(source, mutation)
        assert mutated.startswith(HEADER)
        out.append(textwrap.dedent(mutated.removeprefix(HEADER)))
    return sorted(out)


def sites(source: str, **kwargs: object) -> list[tuple[str, str, str, str]]:
    """``(function, operator, original, replacement)`` of each mutation of a dedented module."""
    found = find_mutations(textwrap.dedent(source), "m.py", **kwargs)
    return [(m.function, m.operator, m.original, m.replacement) for m in found]


TRY_TWO = "try:\n    a = b()\nexcept KeyError:\n    a = 1\nexcept ValueError:\n    a = 2\nreturn a\n"
TRY_ONE = "try:\n    a = b()\nexcept KeyError:\n    a = 1\nreturn a\n"
TRY_ELSE_FINALLY = "try:\n    a = b()\nexcept KeyError:\n    a = 1\nelse:\n    a = 3\nfinally:\n    xs()\nreturn a\n"


@pytest.mark.parametrize(
    ("operator", "body", "expected"),
    [
        pytest.param("comparison_swap", "return a < b\n", ["return a <= b\n"], id="lt"),
        pytest.param("comparison_swap", "return a >= b\n", ["return a > b\n"], id="ge"),
        pytest.param("comparison_swap", "return (a) == (b)\n", ["return (a) != (b)\n"], id="eq_in_parens"),
        pytest.param("comparison_swap", "return a is not b\n", ["return a is b\n"], id="is_not"),
        pytest.param("comparison_swap", "return a in xs\n", ["return a not in xs\n"], id="in"),
        pytest.param("comparison_swap", "return a not  in xs\n", ["return a in xs\n"], id="not_in_odd_spacing"),
        pytest.param(
            "comparison_swap", "return 0 < a <= b\n", ["return 0 < a < b\n", "return 0 <= a <= b\n"], id="chain"
        ),
        pytest.param(
            "boolean_swap",
            "return a and (b or xs)\n",
            ["return a and (b and xs)\n", "return a or (b or xs)\n"],
            id="and_or",
        ),
        pytest.param(
            "arithmetic_change", "return a + b * 2\n", ["return a + b / 2\n", "return a - b * 2\n"], id="binop"
        ),
        pytest.param(
            "arithmetic_change",
            "return a // b % 3\n",
            ["return a // b // 3\n", "return a / b % 3\n"],
            id="floordiv_mod",
        ),
        pytest.param("arithmetic_change", "a **= 2\nreturn a\n", ["a *= 2\nreturn a\n"], id="augmented"),
        pytest.param("arithmetic_change", "return 'x: ' + a\n", [], id="string_operand_skipped"),
        pytest.param("constant_off_by_one", "return xs[0]\n", ["return xs[-1]\n", "return xs[1]\n"], id="index"),
        pytest.param("constant_off_by_one", "return 0x10\n", ["return 15\n", "return 17\n"], id="hex_in_decimal"),
        pytest.param(
            "constant_off_by_one", "return 0 .real\n", ["return (-1) .real\n", "return 1 .real\n"], id="paren"
        ),
        pytest.param("constant_off_by_one", "return True, 1.5, 'a'\n", [], id="not_bools_floats_strings"),
        pytest.param(
            "negate_condition",
            "if a:\n    return b\nreturn xs\n",
            ["if not a:\n    return b\nreturn xs\n"],
            id="if",
        ),
        pytest.param(
            "negate_condition",
            "while a < b:  # loop\n    a += 1\n",
            ["while a >= b:  # loop\n    a += 1\n"],
            id="while",
        ),
        pytest.param("negate_condition", "return a if b else xs\n", ["return a if not b else xs\n"], id="ifexp"),
        pytest.param(
            "negate_condition", "return [x for x in xs if x]\n", ["return [x for x in xs if not x]\n"], id="comp"
        ),
        pytest.param("negate_condition", "if a.b(xs) % 2:\n    a()\n", ["if not a.b(xs) % 2:\n    a()\n"], id="call"),
        pytest.param("negate_condition", "if 0 < a <= b:\n    a()\n", ["if not 0 < a <= b:\n    a()\n"], id="chain"),
        pytest.param("negate_condition", "if (a := b()):\n    a()\n", ["if not (a := b()):\n    a()\n"], id="walrus"),
        pytest.param("negate_condition", "if a == b or not xs or a in b:\n    a()\n", [], id="left_to_other_operators"),
        pytest.param("negate_condition", "while True:\n    a()\n", [], id="constant_test_skipped"),
        pytest.param(
            "remove_statement",
            '"""Doc."""\nxs.append(a)\nb += 1\nreturn xs\n',
            ['"""Doc."""\npass\nb += 1\nreturn xs\n', '"""Doc."""\nxs.append(a)\npass\nreturn xs\n'],
            id="call_and_augassign_not_docstring",
        ),
        pytest.param("remove_return_value", "return a, b\n", ["return None\n"], id="tuple"),
        pytest.param("remove_return_value", "return None\n", [], id="already_none"),
        pytest.param(
            "remove_else",
            "if a:\n    b = 1\nelse:  # otherwise\n    b = 2\nreturn b\n",
            ["if a:\n    b = 1\nreturn b\n"],
            id="else",
        ),
        pytest.param(
            "remove_else",
            "if a:\n    b = 1\nelif xs:\n    b = 2\nelse:\n    b = 3\nreturn b\n",
            ["if a:\n    b = 1\nelif xs:\n    b = 2\nreturn b\n"],
            id="only_the_final_else_of_an_elif_chain",
        ),
        pytest.param("swap_call_arguments", "return max(a, b, 0)\n", ["return max(b, a, 0)\n"], id="swap"),
        pytest.param("swap_call_arguments", "return divmod((a), b)\n", ["return divmod((b), a)\n"], id="parens"),
        pytest.param("swap_call_arguments", "return max(a, *xs)\n", [], id="starred_skipped"),
        pytest.param(
            "loop_body_removed",
            "for x in xs:\n    a += x\n    b += x\nreturn a\n",
            ["for x in xs:\n    pass\nreturn a\n"],
            id="for_body_to_pass",
        ),
        pytest.param(
            "loop_body_removed",
            "while a:\n    a -= 1\nreturn a\n",
            ["while a:\n    break\nreturn a\n"],
            id="while_break",
        ),
        pytest.param(
            "slice_bounds",
            "return xs[a:b]\n",
            ["return xs[:b]\n", "return xs[a + 1:b]\n", "return xs[a:]\n", "return xs[a:b - 1]\n"],
            id="names",
        ),
        pytest.param("slice_bounds", "return xs[1:-1]\n", ["return xs[1:]\n", "return xs[:-1]\n"], id="literals"),
        pytest.param("slice_bounds", "return xs[:a - 1]\n", ["return xs[:(a - 1) - 1]\n", "return xs[:]\n"], id="expr"),
        pytest.param(
            "remove_exception_handler",
            TRY_TWO,
            [
                TRY_TWO.replace("except KeyError:\n    a = 1\n", ""),
                TRY_TWO.replace("except ValueError:\n    a = 2\n", ""),
            ],
            id="one_of_two_handlers",
        ),
        pytest.param(
            "remove_exception_handler", TRY_ONE, [TRY_ONE.replace("a = 1", "raise")], id="last_handler_reraises"
        ),
        pytest.param(
            "remove_exception_handler",
            TRY_ELSE_FINALLY,
            [TRY_ELSE_FINALLY.replace("a = 1", "raise")],
            id="else_without_handler_is_invalid",
        ),
        pytest.param(
            "return_constant_flip",
            "if a:\n    return True\nreturn False\n",
            ["if a:\n    return False\nreturn False\n", "if a:\n    return True\nreturn True\n"],
            id="flip",
        ),
        pytest.param("unary_removal", "return not a\n", ["return a\n"], id="not"),
        pytest.param("unary_removal", "return not(a)\n", ["return (a)\n"], id="not_call_like"),
        pytest.param("unary_removal", "return -a, ~b\n", ["return -a, b\n", "return a, ~b\n"], id="minus_invert"),
        pytest.param("unary_removal", "return-a\n", ["return a\n"], id="keeps_keyword_apart"),
        pytest.param("unary_removal", "return-1\n", ["return 1\n"], id="keeps_keyword_and_digit_apart"),
        pytest.param(
            "break_continue_swap",
            "for x in xs:\n    if x:\n        break\n    continue\n",
            [
                "for x in xs:\n    if x:\n        break\n    break\n",
                "for x in xs:\n    if x:\n        continue\n    continue\n",
            ],
            id="swap",
        ),
    ],
)
def test_operator_yields_exactly_these_mutants(operator: str, body: str, expected: list[str]) -> None:
    assert mutated_bodies(body, operator) == sorted(expected)


def test_operator_table_has_every_operator_with_a_one_line_description() -> None:
    assert len(OPERATORS) >= 12
    assert list(OPERATORS) == sorted(OPERATORS)
    assert all(op.summary == OPERATORS[name] and op.noun and op.node_types for name, op in operators._TABLE.items())
    for operator, description in OPERATORS.items():
        assert re.fullmatch(r"[a-z]+(_[a-z]+)+", operator)
        assert description and "\n" not in description


def test_every_operator_fires_on_a_function_that_uses_every_construct() -> None:
    source = textwrap.dedent(
        """\
        def f(a, b, xs):
            for x in xs[a:b]:
                if x < 0 and not a:
                    continue
                elif x:
                    break
                else:
                    b += max(x, a)
            try:
                return -b
            except ValueError:
                return True
        """
    )
    found = {m.operator for m in find_mutations(source, "m.py")}
    assert found == set(OPERATORS)


def test_descriptions_name_the_function_but_not_the_fix() -> None:
    source = "class Parser:\n    def parse(self, a):\n        return a < 10\n"
    for mutation in find_mutations(source, "p.py"):
        assert mutation.description.endswith(" in Parser.parse")
        assert mutation.original not in mutation.description
        assert mutation.replacement not in mutation.description


def test_mutations_happen_only_inside_functions_with_their_qualnames() -> None:
    source = """\
        import functools
        LIMIT = 1 + 2

        def top(a=3 + 4) -> int:
            return a + 1

        class Cls:
            size = 5 + 6

            @functools.lru_cache(maxsize=7 + 8)
            def meth(self, a: int = 9 + 10) -> int:
                x: int = a + 1
                return x

        def outer(a):
            @functools.lru_cache(maxsize=a + 11)
            def inner(b=a + 12):
                return b + 13

            class Local:
                k = a + 14

                def m(self):
                    return a + 15
            return inner

        async def coro(a):
            return await a + 16
        """
    found = {(fn, orig) for fn, op, orig, _ in sites(source, operators=["arithmetic_change"])}
    assert found == {
        ("top", "+"),
        ("Cls.meth", "+"),
        ("outer", "+"),  # inner's decorator, inner's default and Local's body run in outer
        ("outer.<locals>.inner", "+"),
        ("outer.<locals>.Local.m", "+"),
        ("coro", "+"),
    }
    constants = {orig for fn, _, orig, _ in sites(source, operators=["constant_off_by_one"])}
    assert constants == {"1", "11", "12", "13", "14", "15", "16"}  # never module level, class level or defaults


def test_functions_argument_restricts_sites_to_those_qualnames() -> None:
    source = "def f(a):\n    return a + 1\n\ndef g(a):\n    def h():\n        return a - 1\n    return h\n"
    assert {fn for fn, *_ in sites(source, functions=["g.<locals>.h"])} == {"g.<locals>.h"}
    assert {fn for fn, *_ in sites(source, functions=["f", "g"])} == {"f", "g"}
    assert sites(source, functions=["nowhere"]) == []
    assert sites(source, functions=[]) == []


def test_operators_argument_restricts_operator_ids() -> None:
    source = "def f(a):\n    return a + 1 < 2\n"
    assert {op for _, op, _, _ in sites(source, operators=["comparison_swap", "boolean_swap"])} == {"comparison_swap"}


def test_unknown_operator_raises_value_error_listing_the_valid_ids() -> None:
    with pytest.raises(
        ValueError,
        match=r"unknown mutation operator 'comparison_swp' \(did you mean 'comparison_swap'\?\); valid operators: arithmetic_change, boolean_swap, ",
    ) as info:
        find_mutations("def f(): pass\n", "m.py", operators=["comparison_swp"])
    assert all(op in str(info.value) for op in OPERATORS)


@pytest.mark.parametrize("argument", ["operators", "functions"])
def test_a_single_string_instead_of_a_list_raises_type_error(argument: str) -> None:
    with pytest.raises(TypeError, match=rf"{argument}='comparison_swap' is a string; pass a list of names"):
        find_mutations("def f(): pass\n", "m.py", **{argument: "comparison_swap"})


def test_source_that_does_not_compile_raises_syntax_error() -> None:
    with pytest.raises(SyntaxError):
        find_mutations("def f(:\n", "m.py")
    with pytest.raises(SyntaxError):  # parses, but the compiler rejects it
        find_mutations("def f():\n    nonlocal x\n", "m.py")


def test_columns_count_characters_not_utf8_bytes() -> None:
    source = 'def f(a):\n    s = "é€😀"; return a < len(s)  # ☃\n'
    (mutation,) = find_mutations(source, "m.py", operators=["comparison_swap"])
    line = source.splitlines()[1]
    assert (mutation.lineno, mutation.col, mutation.end_col) == (2, line.index("<"), line.index("<") + 1)
    assert apply_mutation(source, mutation) == source.replace("a < len", "a <= len")


def test_multiline_spans_and_crlf_line_endings_survive() -> None:
    source = "def f(a, b):\r\n    if a:\r\n        b = (1 +\r\n             2)\r\n    else:\r\n        b = 3\r\n    return b\r\n"
    found = {m.operator: m for m in find_mutations(source, "m.py")}
    statement = next(m for m in find_mutations(source, "m.py", operators=["remove_statement"]) if m.lineno == 3)
    assert (statement.lineno, statement.col, statement.end_lineno, statement.end_col) == (3, 8, 4, 15)
    assert apply_mutation(source, statement) == source.replace("b = (1 +\r\n             2)", "pass")
    orelse = found["remove_else"]
    assert (orelse.lineno, orelse.col, orelse.end_lineno, orelse.end_col) == (5, 0, 7, 0)
    assert apply_mutation(source, orelse) == source.replace("    else:\r\n        b = 3\r\n", "")


def test_formatting_and_comments_outside_the_span_survive_byte_for_byte() -> None:
    source = textwrap.dedent(
        """\
        # header comment
        def  f( a,b ,   xs ) :   # odd spacing
            \"\"\"Docstring with 1 + 2 < 3 in it.\"\"\"
            total=0;   limit = len( xs )  -1   # two statements
            for x in xs [ a : b ] :
                if(x>limit)or(not x):  # parens
                    total += x*2
            return total
        """
    )
    lines = source.splitlines(keepends=True)
    mutations = find_mutations(source, "m.py")
    assert len(mutations) > 20
    for m in mutations:
        mutated = apply_mutation(source, m)
        before = "".join(lines[: m.lineno - 1]) + lines[m.lineno - 1][: m.col]
        after = lines[m.end_lineno - 1][m.end_col :] + "".join(lines[m.end_lineno :])
        assert mutated == before + m.replacement + after
        assert source == before + m.original + after


def test_find_mutations_is_sorted_and_deterministic() -> None:
    source = inspect.getsource(textwrap)
    first, second = find_mutations(source, "textwrap.py"), find_mutations(source, "textwrap.py")
    assert first == second
    keys = [(m.lineno, m.col, m.operator, m.replacement) for m in first]
    assert keys == sorted(keys)


def test_mutants_that_would_not_compile_are_never_produced() -> None:
    source = """\
        def f(a):
            match a:
                case -0:
                    return 1

        def g():
            x = 1
            def h():
                nonlocal x
                return x
            return h
        """
    found = sites(source)
    assert ("f", "constant_off_by_one", "0", "1") in found  # case -1
    assert ("f", "constant_off_by_one", "0", "-1") not in found  # case --1 is a syntax error
    assert ("g", "remove_statement", "x = 1", "pass") not in found  # nonlocal x would lose its binding


def test_equivalent_mutants_are_dropped() -> None:
    source = """\
        def f(a):
            return -0, max(a, a)
        """
    assert sites(source) == [
        ("f", "remove_return_value", "-0, max(a, a)", "None"),
        ("f", "constant_off_by_one", "0", "-1"),
        ("f", "constant_off_by_one", "0", "1"),
    ]  # `-0` -> `0` folds to the same constant; identical arguments are not swapped


def test_mutants_of_dead_code_are_equivalent_even_when_they_shift_table_indices() -> None:
    source = """\
        def f(a):
            if False:
                b = foo(a + 1, 2)
            return bar(a)
        """
    # Removing `b = foo(...)` drops `foo` from co_names and `b` from co_varnames, which shifts
    # the index LOAD_GLOBAL uses for `bar`: the instructions still do the same.
    assert sites(source) == [("f", "remove_return_value", "bar(a)", "None")]


def test_is_equivalent_ignores_formatting_but_not_behaviour() -> None:
    source = "def f(x):\n    return x + 0\n"
    assert is_equivalent(source, "def f(x):\n\n    # comment\n    return (x+0)\n")
    assert not is_equivalent(source, "def f(x):\n    return x - 0\n")
    assert not is_equivalent(source, "def f(x):\n    return x + 0.0\n")  # 0 == 0.0, yet not the same
    assert not is_equivalent("x = 0.0\n", "x = -0.0\n")
    assert not is_equivalent("def f(x):\n    return x\n", "def f(y):\n    return y\n")  # keyword name
    assert not is_equivalent("def f(x):\n    return g(x)\n", "def f(x):\n    return h(x)\n")
    assert not is_equivalent(source, 'def f(x):\n    "Doc."\n    return x + 0\n')
    dead = "def f(x):\n    if 0:\n        y = z(1.5)\n    return x + 0\n"
    assert is_equivalent(dead, dead.replace("y = z(1.5)", "pass"))  # unused co_consts/co_names entries
    assert not is_equivalent(source, "def f(x):\n    return x +\n")
    with pytest.raises(SyntaxError):
        is_equivalent("def f(:\n", source)


def test_is_equivalent_does_not_inherit_the_callers_future_imports() -> None:
    # This test module has `from __future__ import annotations`; compile() must not inherit it.
    assert not is_equivalent("def f(x: int): pass\n", "def f(x: 'int'): pass\n")


def test_apply_mutation_rejects_a_source_that_changed() -> None:
    source = "def f(a):\n    return a < 1\n"
    (mutation,) = find_mutations(source, "m.py", operators=["comparison_swap"])
    with pytest.raises(ValueError, match=r"comparison_swap at m.py:2:13 expects '<' but the source has '>'; find"):
        apply_mutation(source.replace("<", ">"), mutation)
    with pytest.raises(ValueError, match=r"does not fit this source: line 2 is outside the source \(1..1\)"):
        apply_mutation("x = 1", mutation)
    moved = dataclasses.replace(mutation, col=40, end_col=41)
    with pytest.raises(ValueError, match=r"column 40 is outside line 2 \(0..16 characters\)"):
        apply_mutation(source, moved)


def test_mutation_is_frozen() -> None:
    (mutation,) = find_mutations("def f(a):\n    return a < 1\n", "m.py", operators=["comparison_swap"])
    assert isinstance(mutation, Mutation)
    with pytest.raises(dataclasses.FrozenInstanceError):
        mutation.replacement = "=="


def test_unified_diff_is_a_git_style_patch() -> None:
    original = "".join(f"line {i}\n" for i in range(1, 11))
    mutated = original.replace("line 5\n", "LINE 5\n")
    assert unified_diff(original, mutated, "pkg/mod.py") == (
        "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
        "@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+LINE 5\n line 6\n line 7\n line 8\n"
    )
    assert unified_diff(original, original, "pkg/mod.py") == ""
    assert unified_diff("a\nb", "a\nc", "m.py").endswith(
        "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    )


@pytest.mark.parametrize("path", ["/abs/m.py", "../m.py", "a b.py", 'q"uote.py', "a//b.py", ""])
def test_unified_diff_rejects_paths_git_would_quote_or_escape(path: str) -> None:
    with pytest.raises(ValueError, match="cannot appear in a patch: use a relative posix path such as 'pkg/mod.py'"):
        unified_diff("a\n", "b\n", path)


def git_apply(root: Path, patches: str) -> None:
    (root / "fix.patch").write_text(patches, encoding="utf-8", newline="")
    proc = subprocess.run(
        ["git", "apply", "fix.patch"], check=False, cwd=root, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def test_reverse_diff_restores_crlf_and_unterminated_files_with_git_apply(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    source = "def f(a):\r\n    return a < 1  # é\r\n\r\ndef g(b):\n    return b and 2"
    patches = []
    for i, mutation in enumerate(find_mutations(source, "m.py")):
        path = f"m{i}/mod.py"
        mutated = apply_mutation(source, mutation)
        (tmp_path / path).parent.mkdir()
        (tmp_path / path).write_bytes(mutated.encode("utf-8"))
        patches.append(unified_diff(mutated, source, path))
    git_apply(tmp_path, "".join(patches))
    for i in range(len(patches)):
        assert (tmp_path / f"m{i}/mod.py").read_bytes() == source.encode("utf-8")


def looks_right(m: Mutation) -> bool:
    """Per operator, what the replaced text and its replacement must look like."""
    original, new = " ".join(m.original.split()), m.replacement
    checks = {
        "comparison_swap": lambda: original in {"<", "<=", ">", ">=", "==", "!=", "is", "is not", "in", "not in"},
        "boolean_swap": lambda: {original, new} == {"and", "or"},
        "arithmetic_change": lambda: re.fullmatch(r"(\+|-|\*\*?|//?|%|<<|>>|&|\||\^)=?", original) is not None,
        "constant_off_by_one": lambda: abs(int(new.strip("()")) - int(original, 0)) == 1,
        "negate_condition": lambda: (new == f"not {m.original}" and not m.original.startswith("("))
        or (new == f"not {m.original}" and ":=" in m.original) or (original, new) in {("<", ">="), ("<=", ">"), (">", "<="), (">=", "<")},
        "remove_statement": lambda: new == "pass",
        "remove_return_value": lambda: new == "None",
        "remove_else": lambda: original.startswith("else") and new == "",
        "swap_call_arguments": lambda: sorted(m.original) == sorted(new) and new != m.original,
        "loop_body_removed": lambda: new in {"pass", "break"},
        "slice_bounds": lambda: new == "" or new.endswith((" + 1", " - 1")),
        "remove_exception_handler": lambda: (original.startswith("except") and new == "") or new == "raise",
        "return_constant_flip": lambda: {original, new} == {"True", "False"},
        "unary_removal": lambda: original in {"not", "-", "~"} and new.strip() == "",
        "break_continue_swap": lambda: {original, new} == {"break", "continue"},
    }
    return checks[m.operator]()


@pytest.mark.parametrize("module_name", ["textwrap", "shlex", "fractions"])
def test_every_mutant_of_a_stdlib_module_compiles_differs_and_reverts_with_git_apply(
    module_name: str, tmp_path: Path
) -> None:
    module = __import__(module_name)
    source = inspect.getsource(module)
    mutations = find_mutations(source, f"{module_name}.py")
    assert len(mutations) > 100
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    patches = []
    for i, mutation in enumerate(mutations):
        assert looks_right(mutation), mutation
        mutated = apply_mutation(source, mutation)
        assert mutated != source
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(mutated, module_name, "exec", dont_inherit=True)
        assert not is_equivalent(source, mutated), mutation
        path = f"m{i}/{module_name}.py"
        (tmp_path / path).parent.mkdir()
        (tmp_path / path).write_text(mutated, encoding="utf-8", newline="")
        patches.append(unified_diff(mutated, source, path))
    git_apply(tmp_path, "".join(patches))
    restored = {(tmp_path / f"m{i}/{module_name}.py").read_bytes().decode("utf-8") for i in range(len(patches))}
    assert restored == {source}


@pytest.mark.parametrize("module", [operators, equivalence, functions, sourcemap, textdiff])
def test_docstring_examples_run(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
