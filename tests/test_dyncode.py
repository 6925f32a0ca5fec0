"""Tests for repogym_gym.dyncode: every form of reference through which data can become running code,
and the everyday code that is none."""

from __future__ import annotations

import ast
import doctest

import pytest

from repogym_gym import dyncode
from repogym_gym.dyncode import dynamic_code


def references(source: str) -> list[str]:
    """The ``line: reference`` of each finding."""
    return [m.split(" (")[0].removeprefix("m.py:") for m in dynamic_code(ast.parse(source), "m.py")]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("exec(src)\n", ["1: `exec`"]),
        ("_run = exec\n", ["1: `exec`"]),
        ("eval('1')\n", ["1: `eval`"]),
        ("code = compile(src, 'f', 'exec')\n", ["1: `compile`"]),
        ("m = __import__('os')\n", ["1: `__import__`"]),
        ("b = __builtins__\n", ["1: `__builtins__`"]),
        ("breakpoint()\n", ["1: `breakpoint`"]),
        ("import builtins\n", ["1: `builtins`"]),
        ("from builtins import exec as run\n", ["1: `builtins`"]),
        ("import importlib.util as u\n", ["1: `importlib.util`"]),
        ("from importlib.machinery import SourceFileLoader\n", ["1: `importlib.machinery`"]),
        ("import runpy, zipimport\n", ["1: `runpy`", "1: `zipimport`"]),
        ("import pickle\n", ["1: `pickle`"]),
        ("import marshal\n", ["1: `marshal`"]),
        ("import subprocess\n", ["1: `subprocess`"]),
        ("import ctypes\n", ["1: `ctypes`"]),
        ("import timeit\n", ["1: `timeit`"]),
        ("import os\nos.system('python x.txt')\n", ["2: `os.system`"]),
        ("import os as o\no.popen('x')\n", ["2: `o.popen`"]),
        ("from os import execv\n", ["1: `os.execv`"]),
        ("import os\nos.posix_spawn('p', [], {})\n", ["2: `posix_spawn`"]),
        ("L = type(__loader__)\n", ["1: `__loader__`"]),
        ("L = mod.__spec__.loader\n", ["1: `__spec__`"]),
        ("import types\nF = types.FunctionType\n", ["2: `FunctionType`"]),
        ("from types import CodeType\n", ["1: `CodeType`"]),
        ("c = f.__code__\n", ["1: `__code__`"]),
        ("g = f.__globals__\n", ["1: `__globals__`"]),
        ("s = object.__subclasses__()\n", ["1: `__subclasses__`"]),
        ("import sys\nc = sys._getframe().f_code\n", ["2: `f_code`"]),
        ("import sys\nsys.meta_path.append(Finder())\n", ["2: `meta_path`"]),
        ("loader.exec_module(module)\n", ["1: `exec_module`"]),
        ("import gc\nxs = gc.get_objects()\n", ["2: `get_objects`"]),
        ("run = getattr(b, 'exec')\n", ["1: `'exec'`"]),
        ("run = getattr(b, name='eval')\n", ["1: `'eval'`"]),
        ("import operator\nf = operator.attrgetter('__code__')(g)\n", ["2: `'__code__'`"]),
        ("run = globals()['__builtins__']['exec']\n", ["1: `'__builtins__'`", "1: `'exec'`"]),
        ("import sys\nm = sys.modules['importlib']\n", ["2: `sys.modules`", "2: `'importlib'`"]),
        # ninth round: a module dropped and imported again reruns its (unmeasured) top-level code per call
        ("import sys as s\ns.modules.pop('pkg._body', None)\n", ["2: `s.modules`"]),
        ("from sys import modules\n", ["1: `sys.modules`"]),
        ("import importlib\n", ["1: `importlib`"]),
        # ninth round: annotations held as strings, evaluated per call
        ("import typing\nhints = typing.get_type_hints(f)\n", ["2: `get_type_hints`"]),
        ("class R:\n    __annotations__ = {'a': 'x if y else z'}\n", ["2: `__annotations__`"]),
        ("NAME = 'runpy'\n", ["1: `'runpy'`"]),
        # round 36: builtins reached as a builtin function's __self__, exec then named by a computed string
        ("run = getattr(print.__self__, 'ex' + 'ec')\n", ["1: `__self__`"]),
        ("b = getattr(len, '__self__')\n", ["1: `'__self__'`"]),
    ],
)
def test_each_form_of_reference_is_found_with_its_line(source: str, expected: list[str]) -> None:
    assert references(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "import re\npattern = re.compile('x')\n",
        "import platform\nname = platform.system()\n",
        "model.eval()\n",
        "app.exec_()\n",
        "config['system'] = 1\nrow['code'] = 2\nuser['profile'] = 3\n",
        "import os\npath = os.path.join('a', 'b')\nos.environ.get('X')\n",
        "from . import pickle\n",
        "import ast\nvalue = ast.literal_eval('[1]')\n",
        "exec = 1\n",
        "import json, typing\nfrom types import SimpleNamespace\n",
        "MODE = 'exec'\nLEVEL = 'trace'\n",
    ],
    ids=["re.compile", "platform.system", "model.eval", "app.exec_", "dict-keys", "os.path", "relative-import",
         "literal_eval", "assigned-name", "plain-imports", "plain-strings"],
)
def test_everyday_code_is_no_reference(source: str) -> None:
    assert dynamic_code(ast.parse(source), "m.py") == []


def test_a_message_names_file_line_reference_and_why() -> None:
    (message,) = dynamic_code(ast.parse("x = 1\nimport runpy\n"), "pkg/m.py")
    assert message == "pkg/m.py:2: `runpy` (import machinery: loads a module from any file or runs a file as a script)"


def test_findings_are_in_line_order() -> None:
    found = references("import subprocess\n\n\ndef f():\n    return eval('1')\n\n\nimport pickle\n")
    assert found == ["1: `subprocess`", "5: `eval`", "8: `pickle`"]


def test_a_deep_tree_is_walked_without_recursion() -> None:
    expr: ast.expr = ast.Name(id="exec", ctx=ast.Load(), lineno=7, col_offset=0)
    for _ in range(100_000):  # far past the interpreter's recursion limit
        expr = ast.UnaryOp(op=ast.USub(), operand=expr, lineno=7, col_offset=0)
    tree = ast.Module(body=[ast.Expr(value=expr, lineno=7, col_offset=0)], type_ignores=[])
    assert [m.split(" (")[0] for m in dynamic_code(tree, "m.py")] == ["m.py:7: `exec`"]


def test_docstring_examples_run() -> None:
    outcome = doctest.testmod(dyncode, raise_on_error=False, verbose=False)
    assert outcome.attempted >= 2 and outcome.failed == 0
