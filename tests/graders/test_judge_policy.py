"""The judge's policy, operation by operation: what submission code may not do inside the judged
process, what legitimate code (its own and the standard library's on its behalf) still may, and
the host's refusal of any record that is not exactly the judge's.

Each case runs the real runner (``python -I -S pytest_runner.py``) on a two-file tree: a grader
test file and a submission module ``mod`` whose ``run()`` the test calls.
"""

from __future__ import annotations

import ast
import dis
import inspect
import json
import os
import secrets
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from repogym_gym.graders import judge_code, judge_ledger, judge_namespaces, judge_policy, judge_statements, judge_values
from repogym_gym.graders.record import read_record, sign
from repogym_gym.graders.testrun import POLICY_SCRIPTS, RUNNER_SCRIPT
from repogym_gym.venvs import ensure_venv

REALCODE_RECIPE = Path(__file__).resolve().parents[2] / "task_suites" / "realcode" / "recipe.yaml"

TEST_FILE = "import mod\n\n\ndef test_runs():\n    assert mod.run() == 'ok'\n\n\ndef test_other():\n    assert 1 + 1 == 2\n"

DENIED = {
    "an audit hook": "import sys\nsys.addaudithook(lambda *a: None)",
    "a debugger": "import pdb\npdb.Pdb()",
    "a profile hook": "import sys\nsys.setprofile(lambda *a: None)",
    "a trace hook from a thread": ("import threading\nthreading.settrace(lambda *a: None)\n"
                                   "t = threading.Thread(target=print)\nt.start()\nt.join()"),
    "a heap walk": "import gc\ngc.get_objects()",
    "the referrers of an object": "import gc\ngc.get_referrers(run)",
    "other threads' frames": "import sys\nsys._current_frames()",
    "a frame of its own": "import sys\nsys._getframe(1).f_globals",
    "frames through inspect": "import inspect\ninspect.stack()",
    "a traceback's frame": "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame",
    "frames through pytest's ExceptionInfo": ("import pytest, sys\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
                                              "    pytest.ExceptionInfo.from_current().traceback[0].frame"),
    "a generator's frame": "def g():\n    yield 1\ng().gi_frame",
    "a test's code swapped": "import sys\nsys.modules['test_x'].test_other.__code__ = (lambda: None).__code__",
    "a test's defaults changed": "import sys\nsys.modules['test_x'].test_other.__defaults__ = (1,)",
    "a function built from a test's code": "import sys, types\ntypes.FunctionType(sys.modules['test_x'].test_other.__code__, {})",
    "code claiming a standard library file": "import os\n(lambda: 0).__code__.replace(co_filename=os.__file__)",
    "bytecode built at run time": "f = lambda: 0\nf.__code__.replace(co_code=f.__code__.co_code)",
    "foreign source compiled as a standard library file": "import os\ncompile('x = 1', os.__file__, 'exec')",
    "bytecode unmarshalled": "import marshal\nmarshal.loads(marshal.dumps((lambda: 0).__code__))",
    "ctypes": "import ctypes",
    "the process's memory": "open('/proc/self/mem', 'rb')",
    "a symlink into /proc": "import os, tempfile\nos.symlink('/proc/self/mem', tempfile.mktemp())",
    "a pytest object's class": "import sys\nsys.modules['_pytest.reports'].TestReport.__bases__ = (object,)",
    "a test file's source": "import os\nopen(os.path.join(os.path.dirname(__file__), 'tests', 'test_x.py')).read()",
    "a test file through a symlink": ("import os, tempfile\nlink = tempfile.mktemp()\n"
                                      "os.symlink(os.path.join(os.path.dirname(__file__), 'tests', 'test_x.py'), link)\n"
                                      "open(link).read()"),
    "a test file through '..' from the interpreter's prefix": (  # round 34: a prefix of a path is not its directory
        "import os, sys\nopen(sys.base_prefix + '/..' * 40 + os.path.join(os.path.dirname(os.path.abspath(__file__)), "
        "'tests', 'test_x.py')).read()"),
    "a test file by name from a directory descriptor": ("import os\nfd = os.open(os.path.join(os.path.dirname(__file__), "
                                                        "'tests'), os.O_RDONLY)\nos.open('test_x.py', os.O_RDONLY, dir_fd=fd)"),
    "a test's source lines from the stack": "import traceback\ntraceback.extract_stack()",
    # third round: frames through a private walker; code claiming a trusted file through a
    # bytecode reader of its own, a loader whose reader is its own, a runner file rewritten
    "frames through traceback's private walker": ("import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
                                                  "    list(traceback._walk_tb_with_full_positions(e.__traceback__))"),
    "bytecode through a get_code of its own": ("import marshal, _frozen_importlib_external as fe\n"
                                               "data = marshal.dumps(compile('x = 1', '<q>', 'exec'))\n"
                                               "def get_code(self):\n    return fe._compile_bytecode(data)\n"
                                               "get_code(fe.SourceFileLoader('x', '/nonexistent/x.py'))"),
    "a loader whose get_data is its own": (
        "import importlib.util, marshal, os, _frozen_importlib_external as fe\nst = os.stat(os.__file__)\n"
        "head = importlib.util.MAGIC_NUMBER + bytes(4) + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, 'little') + "
        "(st.st_size & 0xFFFFFFFF).to_bytes(4, 'little')\nloader = fe.SourceFileLoader('os', os.__file__)\n"
        "loader.get_data = lambda path: head + marshal.dumps(compile('x = 1', 'q', 'exec'))\nloader.get_code('os')"),
    "a runner file rewritten, then compiled under its name": (
        "import os, sys\npath = os.path.join(os.path.dirname(sys.argv[0]), 'judge_ledger.py')\n"
        "open(path, 'w').write('x = 1')\ncompile('x = 1', path, 'exec')"),
}

ALLOWED = {
    "a namedtuple": "import collections\nP = collections.namedtuple('P', 'x y')\nassert P(1, 2).x == 1 and P.__module__ == 'mod'",
    "a functional Enum": "import enum\nColor = enum.Enum('Color', 'RED GREEN')\nassert Color.RED.value == 1",
    "a TypeVar and a dataclass": ("import dataclasses, typing\nT = typing.TypeVar('T')\n"
                                  "@dataclasses.dataclass\nclass D:\n    x: int = 1\nassert D().x == 1"),
    "a formatted traceback": ("import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
                              "    assert 'ZeroDivisionError' in traceback.format_exc()"),
    "a logged exception": ("import io, logging\nlog = logging.getLogger('m')\nlog.addHandler(logging.StreamHandler(io.StringIO()))\n"
                           "try:\n    1 / 0\nexcept ZeroDivisionError:\n    log.exception('boom')"),
    "asyncio imported late": "import asyncio\nassert asyncio.run(asyncio.sleep(0, 'x')) == 'x'",
    "its own code replaced": "def f():\n    return 1\nf.__code__ = (lambda: 2).__code__\nassert f() == 2",
    "exec of a string": "ns = {}\nexec('y = 21 * 2', ns)\nassert ns['y'] == 42",
    "a subprocess": "import subprocess, sys\nassert subprocess.run([sys.executable, '-c', 'print(1)'], capture_output=True).stdout == b'1\\n'",
    "inspect.signature": "import inspect\nassert list(inspect.signature(run).parameters) == []",
    "its own source read": "import os\nassert open(__file__).read().startswith('def run')",
}


def judge(tmp_path: Path, body: str, test_file: str = TEST_FILE, env: dict[str, str] | None = None,
          ids: list[str] | None = None, prelude: str = "", python: str = sys.executable,
          conftest: str | None = None) -> tuple[dict | None, str]:
    """Run the runner on a tree whose ``mod.run()`` executes ``body`` under ``python`` (this
    interpreter, or a task environment's); (record or None, output)."""
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_x.py").write_text(test_file)
    if conftest is not None:
        (tree / "tests" / "conftest.py").write_text(conftest)
    (tree / "mod.py").write_text(prelude + "def run():\n" + textwrap.indent(body, "    ") + "\n    return 'ok'\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    shutil.copyfile(RUNNER_SCRIPT, scratch / "pytest_runner.py")
    for part in POLICY_SCRIPTS:
        shutil.copyfile(part, scratch / part.name)
    nonce, key = f"@@{secrets.token_hex(8)}@@", secrets.token_bytes(32)
    ids = ids or ["tests/test_x.py::test_runs", "tests/test_x.py::test_other"]
    (scratch / "sel.json").write_text(json.dumps({"nonce": nonce, "key": key.hex(), "files": ["tests/test_x.py"], "ids": ids,
                                                 "tree": str(tree), "grader_files": ["tests/test_x.py", *(
                                                     ["tests/conftest.py"] if conftest is not None else [])]}))
    (scratch / "pytest.ini").write_text(f"[pytest]\naddopts =\npythonpath =\n    {tree}\n")
    env = {"PATH": os.environ["PATH"], "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "HOME": str(tmp_path), **(env or {})}
    done = subprocess.run([python, "-I", "-S", str(scratch / "pytest_runner.py"), str(scratch / "sel.json"),
                           "-c", str(scratch / "pytest.ini"), "--rootdir", str(tree), "-p", "no:cacheprovider", "-q",
                           str(tree / "tests")], cwd=tree, env=env, capture_output=True, text=True, timeout=120)
    record, _ = read_record(done.stdout, nonce, key)
    return record, done.stdout + done.stderr


KEY = b"k" * 32


def _read_record(stdout: str, nonce: str) -> tuple[dict | None, str]:
    """read_record of ``stdout`` whose every ``nonce + payload + nonce`` is signed with :data:`KEY`."""
    pieces = stdout.split(nonce)
    signed = "".join(f"{nonce}{piece}{nonce}{sign(piece, KEY)}{nonce}" if i % 2 else piece for i, piece in enumerate(pieces))
    return read_record(signed, nonce, KEY)


def test_a_record_whose_signature_does_not_match_is_no_record() -> None:
    """Round 20 (tests/redteam/test_judge_record.py): code under test read the record off its own
    stdout, learned the nonce and printed a forged one; a record is now also signed with a key the
    judged process's code never sees."""
    good = '{"exit_code": 0, "record": {"t": "passed"}, "violations": []}'
    assert read_record(f"@@n@@{good}@@n@@{sign(good, KEY)}@@n@@", "@@n@@", KEY)[0] is not None
    forged = good.replace("0", "1", 1)
    assert read_record(f"@@n@@{forged}@@n@@{sign(good, KEY)}@@n@@", "@@n@@", KEY)[0] is None  # edited payload
    assert read_record(f"@@n@@{good}@@n@@{sign(good, b'x' * 32)}@@n@@", "@@n@@", KEY)[0] is None  # other key
    assert read_record(f"@@n@@{good}@@n@@", "@@n@@", KEY)[0] is None  # the unsigned framing of before
    assert read_record(f"@@n@@{good}@@n@@@@n@@", "@@n@@", KEY)[0] is None  # an empty signature
    # round 21: a non-ASCII signature made hmac.compare_digest raise TypeError (an infra error, not a 0)
    for odd in ("\u00ff" * 64, "\ufffd", "\udcff" + "0" * 63):
        assert read_record(f"@@n@@{good}@@n@@{odd}@@n@@", "@@n@@", KEY)[0] is None


def test_a_record_carrying_more_run_time_code_than_the_judge_does_is_refused_before_parsing() -> None:
    """Round 20 (A04): a forged record's 4 MB 'compiled' text took the host to 2 GB and 46 s in the
    quality grader; the host now refuses what the judge would never carry."""
    from repogym_gym.graders.record import MAX_RUNTIME_CODE_CHARS

    big = json.dumps({"exit_code": 0, "record": {}, "violations": [], "compiled": ["x" * (MAX_RUNTIME_CODE_CHARS + 1)]})
    assert _read_record(f"@@n@@{big}@@n@@", "@@n@@")[0] is None
    many = json.dumps({"exit_code": 0, "record": {}, "violations": [], "compiled": ["x"] * 4097})
    assert _read_record(f"@@n@@{many}@@n@@", "@@n@@")[0] is None
    fits = json.dumps({"exit_code": 0, "record": {}, "violations": [], "compiled": ["x"] * 4096})
    assert _read_record(f"@@n@@{fits}@@n@@", "@@n@@")[0] is not None


#: What the violation of each denied case says.
NAMED = {
    'an audit hook': 'sys.addaudithook',
    'a debugger': 'pdb.Pdb',
    'a profile hook': 'sys.setprofile',
    'a trace hook from a thread': 'sys.settrace',
    'a heap walk': 'gc.get_objects',
    'the referrers of an object': 'gc.get_referrers',
    "other threads' frames": 'sys._current_frames',
    'a frame of its own': '_getframe',
    'frames through inspect': '_getframe',
    "a traceback's frame": 'tb_frame',
    "frames through pytest's ExceptionInfo": 'tb_frame',
    "a generator's frame": 'gi_frame',
    "a test's code swapped": '__code__ of',
    "a test's defaults changed": '__defaults__ of',
    "a function built from a test's code": 'a function built from code of',
    'code claiming a standard library file': 'code built to claim',
    'bytecode built at run time': 'a code object built at run time',
    'foreign source compiled as a standard library file': "is not that file's code",
    'bytecode unmarshalled': 'marshal.loads',
    'ctypes': 'importing ctypes',
    "the process's memory": '/proc/self/mem',
    'a symlink into /proc': 'a symlink to',
    "a pytest object's class": '__bases__ of class TestReport',
    "a test file's source": 'read a test file',
    "a test file through a symlink": 'read a test file',
    "a test file through '..' from the interpreter's prefix": 'read a test file',
    "a test file by name from a directory descriptor": 'read a test file',
    "a test's source lines from the stack": '_getframe',
    "frames through traceback's private walker": 'tb_frame',
    "bytecode through a get_code of its own": 'marshal.loads',
    "a loader whose get_data is its own": 'marshal.loads',
    "a runner file rewritten, then compiled under its name": "decides trust by location",  # round 35: the write itself
}


@pytest.mark.parametrize("case", list(DENIED))
def test_submission_code_is_refused(tmp_path: Path, case: str) -> None:
    record, output = judge(tmp_path, DENIED[case])
    assert record is not None, output[-3000:]
    assert any(NAMED[case] in v for v in record["violations"]), (record["violations"], output[-2000:])
    assert not any("the judge's policy failed" in v for v in record["violations"]), record["violations"]


@pytest.fixture(scope="module")
def task_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The interpreter of an environment with the real-code suite's pytest pin (pytest 9.0, whose
    ``config.hook`` is a ``PathAwareHookProxy`` of the relay), not this suite's own pytest."""
    pins = {r for p in yaml.safe_load(REALCODE_RECIPE.read_text())["packages"] for r in p["requirements"]}
    assert len(pins) == 1, pins
    env = ensure_venv(sorted(pins), cache_dir=tmp_path_factory.mktemp("task-env"))
    return str(env / "bin" / "python")


@pytest.mark.parametrize("case", list(ALLOWED))
def test_legitimate_code_still_runs_under_the_task_environments_pytest(tmp_path: Path, case: str,
                                                                       task_python: str) -> None:
    record, output = judge(tmp_path, ALLOWED[case], python=task_python)
    assert record is not None, output[-3000:]
    assert record["violations"] == [], record["violations"]
    assert record["record"] == {"tests/test_x.py::test_runs": "passed", "tests/test_x.py::test_other": "passed"}, output[-2000:]


@pytest.mark.parametrize("case", list(ALLOWED))
def test_legitimate_code_still_runs(tmp_path: Path, case: str) -> None:
    record, output = judge(tmp_path, ALLOWED[case])
    assert record is not None, output[-3000:]
    assert record["violations"] == [], record["violations"]
    assert record["record"] == {"tests/test_x.py::test_runs": "passed", "tests/test_x.py::test_other": "passed"}, output[-2000:]


DOCTEST_FILE = '''import doctest

import mod


def example():
    """
    >>> 1 + 1
    2
    """


def test_runs():
    assert mod.run() == 'ok'


def test_other():
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(example):
        runner.run(test)
    assert (runner.tries, runner.failures) == (1, 0)
'''


def test_a_test_that_runs_doctests_is_judged_like_any_other(tmp_path: Path) -> None:
    """doctest's runner makes a pdb.Pdb (its output-redirecting debugger): toolz's doctest test failed
    under the judge for it. A debugger is refused only to code of the submission (DENIED above)."""
    record, output = judge(tmp_path, "pass", test_file=DOCTEST_FILE)
    assert record is not None, output[-3000:]
    assert record["violations"] == [], record["violations"]
    assert record["record"] == {"tests/test_x.py::test_runs": "passed", "tests/test_x.py::test_other": "passed"}, output[-2000:]


def test_the_violation_names_the_operation_and_the_file(tmp_path: Path) -> None:
    record, output = judge(tmp_path, DENIED["a heap walk"])
    assert record is not None, output
    assert any("gc.get_objects" in v and "mod.py" in v for v in record["violations"]), record["violations"]


def test_a_test_module_whose_code_is_not_its_file_is_refused(tmp_path: Path) -> None:
    """The grader's copy of a test file is read before anything runs; a module built otherwise fails."""
    forged = TEST_FILE + "\n\ndef test_more():\n    pass\n"
    body = (f"import sys, types\nm = types.ModuleType('test_y')\nm.__file__ = sys.modules['test_x'].__file__\n"
            f"exec(compile({forged!r}, m.__file__, 'exec'), m.__dict__)")
    record, output = judge(tmp_path, body)
    assert record is not None, output
    assert any("not the code of that file" in v for v in record["violations"]), record["violations"]


def test_no_closure_of_the_policy_looks_up_a_global() -> None:
    """Every name the hook uses was bound when it was installed: rebinding a builtin or a module
    attribute later (``builtins.type = fake``) never reaches the policy's code."""
    found: dict[str, set[str]] = {}
    builders = (judge_code._core, judge_policy._rules, judge_code.build, judge_namespaces.build, judge_ledger.build,
                judge_statements.build, judge_statements.tracer_for, judge_values.make_comparisons)
    stack = [c for builder in builders for c in builder.__code__.co_consts if hasattr(c, "co_code")]
    while stack:
        code = stack.pop()
        stack.extend(c for c in code.co_consts if hasattr(c, "co_code"))
        for instruction in dis.get_instructions(code):
            if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                found.setdefault(instruction.argval, set()).add(code.co_name)
    assert found == {}, found


def test_every_event_the_dispatch_names_is_one_guarded_looks_at() -> None:
    """guarded lets an event outside ``watched`` through without asking dispatch (builtins.id, raised
    some 24,000 times by a more-itertools run, made the judged run 2.2 times slower): an event a
    branch of dispatch names but ``watched`` forgets would be let through unjudged."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(judge_policy._rules)))
    functions = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    named: set[str] = set()
    for node in ast.walk(functions["dispatch"]):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "event":
            for right in node.comparators:
                named |= {right.value} if isinstance(right, ast.Constant) else {f"<{ast.unparse(right)}>"}
    sets = {node.targets[0].id: node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name) and node.targets[0].id in ("watched", "deny_always", "process_events")}
    names = {n.id for n in ast.walk(sets["watched"]) if isinstance(n, ast.Name) and n.id != "frozenset"}
    listed = {f"<{name}>" for name in names} | {
        n.value for name in (names | {"watched"}) & sets.keys() for n in ast.walk(sets[name]) if isinstance(n, ast.Constant)}
    assert {"exec", "open", "<deny_always>", "<process_events>", "repogym.judge"} <= named, named
    assert named - listed == set(), named - listed
    assert "builtins.id" not in listed


@pytest.mark.parametrize("payload", [
    '{"exit_code": "1", "record": {}, "violations": []}',
    '{"exit_code": 1, "record": {"a": "PASSED"}, "violations": []}',
    '{"exit_code": 1, "record": {"a": "passed"}, "violations": [3]}',
    '{"exit_code": 1, "record": [], "violations": []}',
    '{"exit_code": 1, "record": {}, "violations": [], "tampering": []}',
    '{"exit_code": true, "record": {}, "violations": []}',
    '{"exit_code": 1, "record": {}, "violations": [], "compiled": "def f(): pass"}',
    '{"exit_code": 1, "record": {}, "violations": [], "compiled": [], "unmeasured": [1]}',
    '{"exit_code": 1, "record": {}, "violations": [], "observed": {"t": [1, "ab"]}}',
    '{"exit_code": 1, "record": {}, "violations": [], "observed": {"t": [-1, "' + "a" * 64 + '"]}}',
    '{"exit_code": 1, "record": {}, "violations": [], "observed": {"t": [true, "' + "a" * 64 + '"]}}',
    '{"exit_code": 1, "record": {}, "violations": [], "observed": {"t": [1, "' + "A" * 64 + '", 2]}}',
    '{"exit_code": 1, "record": {}, "violations": [], "observed": [["t", 1]]}',
    "[" * 100_000 + "]" * 100_000,
    '"just a string"',
])
def test_a_record_not_exactly_the_judges_is_no_record(payload: str) -> None:
    nonce = "@@n@@"
    record, rest = _read_record(f"before\n{nonce}{payload}{nonce}\nafter", nonce)
    assert record is None
    assert rest.startswith("before") and rest.endswith("after")


def test_a_record_framed_twice_is_no_record() -> None:
    good = '{"exit_code": 0, "record": {"t": "passed"}, "violations": []}'
    assert _read_record(f"@@n@@{good}@@n@@", "@@n@@")[0] == {**json.loads(good), "compiled": [], "unmeasured": [], "generated": [], "observed": {}}
    assert _read_record(f"@@n@@{good}@@n@@@@n@@{good}@@n@@", "@@n@@")[0] is None


SIGNAL_HANDLER = """\
import gc, os, signal

def on_alarm(signum, frame_):  # would receive whatever frame it interrupts, the policy's own included
    gc.get_objects()

try:
    signal.signal(signal.SIGALRM, on_alarm)
    outcome = "installed"
except ValueError as exc:
    outcome = f"refused: {exc}"
with open(os.environ["COUNTS"], "w") as fh:
    fh.write(outcome)
"""


def test_code_under_test_cannot_install_a_signal_handler(tmp_path: Path) -> None:
    """Python runs signal handlers between any two bytecodes, the policy's own included, and hands them
    the frame they interrupt: pytest runs in a thread of its own, from which Python refuses to install
    a handler (and in which none runs)."""
    counts = tmp_path / "counts"
    record, output = judge(tmp_path, SIGNAL_HANDLER, env={"COUNTS": str(counts)})
    assert record is not None, output[-3000:]
    assert counts.read_text().startswith("refused: signal only works in main thread"), counts.read_text()
    assert record["record"]["tests/test_x.py::test_runs"] == "passed"


def test_the_hook_frame_a_denial_carries_out_holds_nothing() -> None:
    """A denial's traceback starts at the hook's frame: whoever reads it (here the grader's own test,
    which may) finds the exception and the event's name there, nothing that reaches the policy's
    state (a default argument of the hook led to its closures and the ledger, third round)."""
    assert judge_policy._rules.__code__.co_consts  # the hook is built in _rules
    hooks = [c for c in judge_policy._rules.__code__.co_consts if hasattr(c, "co_code") and c.co_name == "hook"]
    assert len(hooks) == 1 and hooks[0].co_freevars == (), hooks


HOOK_FRAME_TEST = """\
import sys


def test_runs():
    try:
        sys._current_frames()
    except RuntimeError as exc:
        tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert sorted(tb.tb_frame.f_locals) == ["error", "event"], sorted(tb.tb_frame.f_locals)


def test_other():
    assert 1 + 1 == 2
"""


def test_a_denials_hook_frame_keeps_only_the_exception(tmp_path: Path) -> None:
    record, output = judge(tmp_path, "pass", test_file=HOOK_FRAME_TEST)
    assert record is not None, output[-3000:]
    assert record["record"]["tests/test_x.py::test_runs"] == "passed", output[-3000:]
    assert any("sys._current_frames" in v for v in record["violations"])


RELAY = """\
import sys
for finder in sys.meta_path:
    config = getattr(finder, "config", None)
    if config is None:
        continue
    session = config.pluginmanager.get_plugin("session")
    real = session.gethookproxy

    class Relay:  # item.ihook: the real hooks, but a failed call's report is made from a clean CallInfo
        def __init__(self, hooks):
            self.hooks = hooks

        def __getattr__(self, name):
            value = getattr(self.hooks, name)
            if name != "pytest_runtest_makereport":
                return value

            def makereport(item, call):
                if call.when == "call" and call.excinfo is not None:
                    call = type(call)(None, None, call.start, call.stop, call.duration, call.when, _ispytest=True)
                return value(item=item, call=call)
            return makereport

    session.gethookproxy = lambda fspath: Relay(real(fspath))
    break
"""

RELAY_TESTS = """\
import mod


def test_runs():
    assert mod.run() == "ok"


def test_other():
    assert 1 + 1 == 3
"""


def test_a_pass_needs_a_call_seen_to_return_cleanly(tmp_path: Path) -> None:
    """Third round: ``session.gethookproxy`` shadowed by an instance attribute gave every item a hook
    relay whose ``pytest_runtest_makereport`` turned a failed call into a genuine passing report.
    The runner now watches the call itself (a wrapper of ``pytest_runtest_call``): a passing call
    report counts only after a call seen to return without an exception."""
    record, output = judge(tmp_path, RELAY, test_file=RELAY_TESTS)
    assert record is not None, output[-3000:]
    assert record["record"]["tests/test_x.py::test_other"] == "failed", (record, output[-2000:])
    assert any("reported passed, but its call raised" in v for v in record["violations"]), record["violations"]


UNITTEST_TESTS = """\
import unittest

import mod


class T(unittest.TestCase):
    def test_runs(self):
        self.assertEqual(mod.run(), "ok")

    def test_other(self):
        self.assertEqual(1 + 1, 3)
"""


def test_a_unittest_failure_recorded_by_its_case_is_seen_as_it_happens(tmp_path: Path) -> None:
    """A unittest case records its failure instead of raising it; the runner tells the policy as it is
    recorded, so a failure cleared from the item before the report (by a thread of the submission,
    say) still fails the test. Here nothing is cleared: the honest outcomes come through."""
    tree_ids = ["tests/test_x.py::T::test_runs", "tests/test_x.py::T::test_other"]
    record, output = judge(tmp_path, "pass", test_file=UNITTEST_TESTS, ids=tree_ids)
    assert record is not None, output[-3000:]
    assert record["record"] == {tree_ids[0]: "passed", tree_ids[1]: "failed"}, (record, output[-2000:])
    assert record["violations"] == []


CLEARED = """\
import sys
for finder in sys.meta_path:
    config = getattr(finder, "config", None)
    if config is not None:
        session = config.pluginmanager.get_plugin("session")
for item in session.items:  # unittest feeds the failure to the item, then runs the case's cleanups
    if item.name == "test_other":
        item.instance.addCleanup(lambda item=item: item.__dict__.update(_excinfo=None))
"""

CLEARED_TESTS = UNITTEST_TESTS.replace("self.assertEqual(1 + 1, 3)", "mod.run()\n        self.assertEqual(1 + 1, 3)")


def test_a_unittest_failure_cleared_before_its_report_still_fails(tmp_path: Path) -> None:
    """Third round: a cleanup registered on the case by the code under test ran after unittest had
    fed the failure to pytest's item and cleared it there; the report was a pass."""
    tree_ids = ["tests/test_x.py::T::test_runs", "tests/test_x.py::T::test_other"]
    record, output = judge(tmp_path, CLEARED, test_file=CLEARED_TESTS, ids=tree_ids)
    assert record is not None, output[-3000:]
    assert record["record"][tree_ids[1]] == "failed", (record, output[-2000:])


def test_an_exit_status_past_a_byte_is_no_exit_status(tmp_path: Path) -> None:
    """Third round: pytest's exit status set to a 6000-digit int (the int-to-str limit lifted) made the
    record unreadable to the host (a ValueError, then an infra error). The policy writes 3 for an
    exit status that is not 0-255, and the host reads any unreadable record as no record."""
    body = ("import sys\nsys.set_int_max_str_digits(0)\nfor f in sys.meta_path:\n    c = getattr(f, 'config', None)\n"
            "    if c is not None:\n        s = c.pluginmanager.get_plugin('session')\n"
            "        c.add_cleanup(lambda: setattr(s, 'exitstatus', 10 ** 6000))\n        break")
    record, output = judge(tmp_path, body)
    assert record is not None, output[-3000:]
    assert record["exit_code"] == 3
    digits = "1" * 5000
    assert _read_record(f'@@n@@{{"exit_code": {digits}, "record": {{}}, "violations": []}}@@n@@', "@@n@@")[0] is None


FIND_SESSION = """\
import sys
for finder in sys.meta_path:
    config = getattr(finder, "config", None)
    if config is not None:
        session = config.pluginmanager.get_plugin("session")
        break
"""

PARAMETRIZED_TESTS = """\
import pytest

import mod


def test_runs():
    assert mod.run() == "ok"


@pytest.mark.parametrize("n, expected", [(2, 5)])
def test_other(n, expected):
    assert n * 2 == expected
"""

REWIRED = {
    # found while closing the third round: pytest's objects are reachable and their instance
    # attributes are not audited, so the test's inputs and pytest's flow could be rewired
    "a later test's parameter rewritten": (
        FIND_SESSION + "for item in session.items:\n    if item.name.startswith('test_other'):\n"
        "        item.callspec.params['expected'] = 4", "its parameters changed after collection"),
    "pytest_pyfunc_call answered by a relay, the test never called": (
        FIND_SESSION + "real = session.gethookproxy\n\nclass Relay:\n    def __init__(self, hooks):\n"
        "        self.hooks = hooks\n\n    def __getattr__(self, name):\n        if name == 'pytest_pyfunc_call':\n"
        "            return lambda pyfuncitem: True\n        return getattr(self.hooks, name)\n\n"
        "session.gethookproxy = lambda fspath: Relay(real(fspath))", "were rewired"),
    "a hook's _hookexec swapped": (
        FIND_SESSION + "hook = config.pluginmanager.hook.pytest_pyfunc_call\nreal = hook._hookexec\n\n"
        "def hookexec(name, impls, kwargs, firstresult):\n    return True if name == 'pytest_pyfunc_call' else "
        "real(name, impls, kwargs, firstresult)\n\nhook._hookexec = hookexec", "were rewired"),
    "a trusted method bound to an object of the submission put on the config": (
        FIND_SESSION + "import contextlib\n\nclass Answer:\n    @property\n    def enter_result(self):\n"
        "        return True\n\nconfig.answer = contextlib.nullcontext.__enter__.__get__(Answer())", "were rewired"),
    "an item's session slot swapped": (
        FIND_SESSION + "class Fake:\n    def __getattr__(self, name):\n        return getattr(session, name)\n\n"
        "for item in session.items:\n    if item.name.startswith('test_other'):\n        item.session = Fake()",
        "session or config is not pytest's"),
}


@pytest.mark.parametrize("case", list(REWIRED))
def test_pytests_own_objects_and_a_tests_inputs_cannot_be_rewired(tmp_path: Path, case: str) -> None:
    body, named = REWIRED[case]
    ids = ["tests/test_x.py::test_runs", "tests/test_x.py::test_other[2-5]"]
    record, output = judge(tmp_path, body, test_file=PARAMETRIZED_TESTS, ids=ids)
    assert record is not None, output[-3000:]
    assert any(named in v for v in record["violations"]), (record, output[-2000:])


@pytest.mark.parametrize("case", list(REWIRED))
def test_pytests_own_objects_cannot_be_rewired_under_the_task_environments_pytest(
        tmp_path: Path, case: str, task_python: str) -> None:
    body, named = REWIRED[case]
    ids = ["tests/test_x.py::test_runs", "tests/test_x.py::test_other[2-5]"]
    record, output = judge(tmp_path, body, test_file=PARAMETRIZED_TESTS, ids=ids, python=task_python)
    assert record is not None, output[-3000:]
    assert any(named in v for v in record["violations"]), (record, output[-2000:])


#: pytest 9.0's config.hook caches hook callers in its own __dict__: a submission that puts there
#: a function of trusted code that is not pytest's own wrapper of the relay's caller.
PROXY_REWIRED = {
    "a trusted function cached as a hook": (
        "import posixpath\n" + FIND_SESSION + "config.hook.__dict__['pytest_addhooks'] = posixpath.normpath"),
    "pytest's path wrapper of a caller that is not the relay's": (
        FIND_SESSION + "import types\nfrom _pytest.config.compat import PathAwareHookProxy\n\n"
        "def collect(**kwargs):\n    return None\n\ncollect.name, collect.spec = 'pytest_collect_file', None\n"
        "relay = types.SimpleNamespace(pytest_collect_file=collect)\n"
        "config.hook.__dict__['pytest_collect_file'] = PathAwareHookProxy(relay).pytest_collect_file"),
}


@pytest.mark.parametrize("case", list(PROXY_REWIRED))
def test_the_configs_path_aware_hook_proxy_holds_only_the_relays_callers(tmp_path: Path, case: str,
                                                                         task_python: str) -> None:
    """Left open by the sixth round: the proxy's cached members were accepted if they were any
    function of trusted code; now only the relay's caller or pytest's ``fixed_hook`` wrapping it."""
    record, output = judge(tmp_path, PROXY_REWIRED[case], python=task_python)
    assert record is not None, output[-3000:]
    assert any("were rewired" in v and "hook" in v for v in record["violations"]), (record, output[-2000:])


DECORATED_TESTS = """\
import unittest
from unittest import mock

import mod


class T(unittest.TestCase):
    @mock.patch("mod.run", return_value="ok")
    def test_runs(self, run):
        self.assertEqual(mod.run(), "ok")

    @unittest.skip("not today")
    def test_other(self):
        self.assertEqual(1 + 1, 3)
"""


def test_a_test_decorated_by_trusted_code_is_bound_through_its_wrappers(tmp_path: Path) -> None:
    """more-itertools' test_recipes decorates tests with ``mock.patch`` and ``unittest.skip``: the item's
    function is the standard library's wrapper, whose ``__wrapped__`` is the verified test (the real-code
    job lost a task to this: "its function ... is not code of a verified test file")."""
    ids = ["tests/test_x.py::T::test_runs", "tests/test_x.py::T::test_other"]
    record, output = judge(tmp_path, "pass", test_file=DECORATED_TESTS, ids=ids)
    assert record is not None, output[-3000:]
    assert record["violations"] == [], record["violations"]
    assert record["record"] == {ids[0]: "passed", ids[1]: "skipped"}, record



# -- fourth round ------------------------------------------------------------------------------------

REBIND_TESTS = """\
import mod


def test_runs():
    assert mod.run() == "ok"


def test_other():
    assert 1 + 1 == 3


mod.rebind()
"""


def test_a_test_id_runs_only_the_function_its_name_says(tmp_path: Path) -> None:
    """A red-team round found items bound to *a* verified function of their file: a name rebound to
    another (passing) test before collection ran that body under the failing test's id."""
    tree = "def rebind():\n    import sys\n    ns = vars(sys.modules['test_x'])\n    ns['test_other'] = ns['test_runs']\n\n\n"
    record, output = judge(tmp_path, "pass", test_file=REBIND_TESTS, prelude=tree)
    assert record is not None, output[-3000:]
    assert any("it would run test_runs, another test of its file" in v for v in record["violations"]), record


SHADOWED_CASE = FIND_SESSION + """\
for item in session.items:
    if item.name == "test_other":
        item.obj.__self__.assertEqual = lambda *args, **kwargs: None
"""

SHADOWED_CASE_TESTS = UNITTEST_TESTS.replace("self.assertEqual(1 + 1, 3)", "mod.run()\n        self.assertEqual(1 + 1, 3)")


def test_a_test_cases_assertions_hidden_on_its_instance_void_the_run(tmp_path: Path) -> None:
    ids = ["tests/test_x.py::T::test_runs", "tests/test_x.py::T::test_other"]
    record, output = judge(tmp_path, SHADOWED_CASE, test_file=SHADOWED_CASE_TESTS, ids=ids)
    assert record is not None, output[-3000:]
    assert any("its test case's assertEqual hidden by an instance attribute" in v for v in record["violations"]), record


COMPILING_THREAD = """\
import threading

def spin():  # harmless: compiles in a loop while the tests run (each compile is an audited event)
    while True:
        compile("x = 1", "<spin>", "exec")

threading.Thread(target=spin, daemon=True).start()
"""


def test_a_thread_of_the_code_under_test_does_not_void_a_sound_run(tmp_path: Path) -> None:
    """The policy's announcement of its own ``sys._getframe`` was one slot for the whole process:
    another thread's event used it up and the policy refused itself, voiding a correct patch."""
    record, output = judge(tmp_path, COMPILING_THREAD)
    assert record is not None, output[-3000:]
    assert record["violations"] == [], record["violations"]
    assert record["record"] == {"tests/test_x.py::test_runs": "passed", "tests/test_x.py::test_other": "passed"}


# -- fifth round -------------------------------------------------------------------------------------

RESULT_SHADOWED = FIND_SESSION + """\
item = session._setupstate.stack and list(session._setupstate.stack)[-1]
if item is not None and type(item).__name__ == "TestCaseFunction":  # the running item is unittest's result
    item.addFailure = item.addError = item.addSubTest = lambda *args, **kwargs: None
"""


def test_a_unittest_failure_told_to_no_result_still_fails(tmp_path: Path) -> None:
    """Fifth round: the running item's addFailure, addError and addSubTest shadowed during its call,
    so unittest told pytest nothing and the call looked clean (1.0 on more-itertools-mut-0c3b3728).
    The runner now hears of every exception a test part raises where unittest catches it."""
    ids = ["tests/test_x.py::T::test_runs", "tests/test_x.py::T::test_other"]
    record, output = judge(tmp_path, RESULT_SHADOWED, test_file=SHADOWED_CASE_TESTS, ids=ids)
    assert record is not None, output[-3000:]
    assert record["record"][ids[1]] != "passed", (record, output[-2000:])


SUBTESTS = """\
import unittest

import mod


class T(unittest.TestCase):
    def test_runs(self):
        self.assertEqual(mod.run(), "ok")

    def test_other(self):
        for n in (1, 2):
            with self.subTest(n=n):
                self.assertEqual(n, 1)
"""


def test_a_failing_subtest_fails_its_test_without_voiding_the_run(tmp_path: Path) -> None:
    ids = ["tests/test_x.py::T::test_runs", "tests/test_x.py::T::test_other"]
    record, output = judge(tmp_path, "pass", test_file=SUBTESTS, ids=ids)
    assert record is not None, output[-3000:]
    assert record["violations"] == [], record["violations"]
    assert record["record"] == {ids[0]: "passed", ids[1]: "failed"}, record


# -- sixth round -------------------------------------------------------------------------------------

INSTANCE_SWAPPED = FIND_SESSION + """\
class Noop:  # what pytest calls for a unittest item: item.instance(result=item)
    def __call__(self, *args, **kwargs):
        return None

    def __getattr__(self, name):
        return lambda *args, **kwargs: None

for item in session.items:
    if item.name == "test_other":
        item._instance = Noop()
"""


def test_a_unittest_items_instance_is_the_one_its_method_belongs_to(tmp_path: Path) -> None:
    """Sixth round: a later unittest item's ``_instance`` replaced by a callable of the submission,
    so no test body ran and the call was clean (1.0 on more-itertools-mut-0c3b3728)."""
    ids = ["tests/test_x.py::T::test_runs", "tests/test_x.py::T::test_other"]
    record, output = judge(tmp_path, INSTANCE_SWAPPED, test_file=UNITTEST_TESTS, ids=ids)
    assert record is not None, output[-3000:]
    # later versions than the task environments' build the instance afresh at setup
    assert record["record"].get(ids[1]) == "failed" or any(
        "instance is not the one its test method belongs to" in v for v in record["violations"]), (record, output[-2000:])



FAILING_TESTS = "import mod\n\n\ndef test_runs():\n    assert mod.run() == 'ok'\n\n\ndef test_other():\n    assert 1 + 1 == 3\n"

#: Seventh round: a plugin whose pytest_pyfunc_call (firstresult) returns non-None, so pytest never
#: calls the test and the call is clean. Its function is trusted code (tempfile.gettempdir), so the
#: rule on an implementation's code alone let it through; registered at import it was part of the
#: implementations as collection ended.
PLUGINS = {
    "registered at import by the submission": (
        "import tempfile, types\nfrom _pytest.debugging import pytestPDB\n"
        "pytestPDB._pluginmanager.register(types.SimpleNamespace(pytest_pyfunc_call=tempfile.gettempdir), 'p7')\n",
        "registered by code of the submission"),
    "added to the hook caller without registering": (
        "import pluggy, tempfile, types\nfrom _pytest.debugging import pytestPDB\n"
        "plugin = types.SimpleNamespace(pytest_pyfunc_call=tempfile.gettempdir)\n"
        "opts = dict(wrapper=False, hookwrapper=False, optionalhook=False, tryfirst=True, trylast=False, specname=None)\n"
        "pytestPDB._pluginmanager.hook.pytest_pyfunc_call._add_hookimpl("
        "pluggy.HookImpl(plugin, 'p7', tempfile.gettempdir, opts))\n",
        "is not the own of a plugin"),
    "a trusted method bound to an object of the submission": (
        "import contextlib, pluggy\nfrom _pytest.debugging import pytestPDB\n"
        "class Answer:\n    @property\n    def enter_result(self):\n        return True\n"
        "opts = dict(wrapper=False, hookwrapper=False, optionalhook=False, tryfirst=True, trylast=False, specname=None)\n"
        "plugin = contextlib.nullcontext(True)\n"
        "pytestPDB._pluginmanager.hook.pytest_pyfunc_call._add_hookimpl(pluggy.HookImpl(plugin, 'p7', "
        "contextlib.nullcontext.__enter__.__get__(Answer()), opts))\n",
        "is not the own of a plugin"),
}


@pytest.mark.parametrize("case", list(PLUGINS))
def test_a_plugin_of_the_submission_voids_the_run(tmp_path: Path, case: str) -> None:
    prelude, named = PLUGINS[case]
    record, output = judge(tmp_path, "pass", test_file=FAILING_TESTS, prelude=prelude)
    assert record is not None, output[-3000:]
    assert any(named in v for v in record["violations"]), (record, output[-2000:])
    assert record["record"].get("tests/test_x.py::test_other") != "passed" or record["violations"], record


def test_a_grader_conftests_own_plugin_still_counts(tmp_path: Path) -> None:
    """What the registration rule must keep: a conftest (grader code) registering a plugin object."""
    conftest = ("import pytest\n\nclass Plugin:\n    @pytest.hookimpl(tryfirst=True)\n"
                "    def pytest_runtest_setup(self, item):\n        item.stash_marker = True\n\n"
                "def pytest_configure(config):\n    config.pluginmanager.register(Plugin(), 'grader-plugin')\n")
    record, output = judge(tmp_path, "pass", conftest=conftest)
    assert record is not None, output[-3000:]
    assert record["violations"] == [], record["violations"]
    assert record["record"] == {"tests/test_x.py::test_runs": "passed", "tests/test_x.py::test_other": "passed"}


UNITTEST_SETUP_TESTS = """\
import unittest

import mod


class T(unittest.TestCase):
    def setUp(self):
        mod.run()

    def test_runs(self):
        self.assertEqual(1 + 1, 3)
"""

OUTCOME_CLEARED = FIND_SESSION + """\
import os
node_id = os.environ["PYTEST_CURRENT_TEST"].rsplit(" ", 1)[0]
item = next(i for i in session.items if i.nodeid == node_id)
item.instance._outcome.success = False  # unittest skips the method; nothing is raised
"""


def test_a_unittest_outcome_cleared_without_an_exception_is_no_pass(tmp_path: Path) -> None:
    """Seventh round: code that setUp calls set ``_outcome.success = False`` without raising, so
    unittest skipped the test method and the call was clean (1.0 on jmespath-mut-293bc4bf)."""
    ids = ["tests/test_x.py::T::test_runs"]
    record, output = judge(tmp_path, OUTCOME_CLEARED, test_file=UNITTEST_SETUP_TESTS, ids=ids)
    assert record is not None, output[-3000:]
    assert record["record"][ids[0]] != "passed", (record, output[-2000:])
    assert any("marked failed with no exception" in v or "never called its test method" in v
               for v in record["violations"]), record["violations"]


def test_a_unittest_pass_needs_its_method_to_have_run(tmp_path: Path) -> None:
    """An honest unittest run still passes, subtests and skips included: the evidence is there."""
    tests = ("import unittest\n\nimport mod\n\n\nclass T(unittest.TestCase):\n    def setUp(self):\n        mod.run()\n\n"
             "    def test_runs(self):\n        for n in range(3):\n            with self.subTest(n=n):\n"
             "                self.assertEqual(n, n)\n\n    @unittest.skip('no')\n    def test_other(self):\n"
             "        self.fail()\n")
    ids = ["tests/test_x.py::T::test_runs", "tests/test_x.py::T::test_other"]
    record, output = judge(tmp_path, "pass", test_file=tests, ids=ids)
    assert record is not None, output[-3000:]
    assert record["violations"] == [], record["violations"]
    assert record["record"] == {ids[0]: "passed", ids[1]: "skipped"}, (record, output[-2000:])


TYPE_EQUALITY_TESTS = """\
import unittest

import mod


class T(unittest.TestCase):
    def setUp(self):
        mod.run()

    def test_runs(self):
        self.assertEqual([1, 2], [1, 3])
"""

#: Ninth round: unittest's equality table rewired from code setUp calls, so assertEqual on lists
#: compares with something else (1.0 on more-itertools-mut-0c3b3728 and jmespath-mut-254ea216).
TYPE_EQUALITY = {
    "a name that inverts the comparison": ("case._type_equality_funcs[list] = 'assertNotEqual'",
                                           "compares list values with"),
    "unittest's assertEqual bound to an object of the submission": (
        "import types, unittest\n\nclass S:\n    def _getAssertEqualityFunc(self, first, second):\n"
        "        return lambda *args, **kwargs: None\n\n"
        "case._type_equality_funcs[list] = types.MethodType(unittest.TestCase.assertEqual, S())",
        "type-equality function of its test case is code of the submission"),
}
FIND_CASE = FIND_SESSION + """\
import os
node_id = os.environ["PYTEST_CURRENT_TEST"].rsplit(" ", 1)[0]
case = next(i for i in session.items if i.nodeid == node_id).instance
"""


@pytest.mark.parametrize("case", list(TYPE_EQUALITY))
def test_a_unittest_cases_equality_table_holds_only_unittests_own(tmp_path: Path, case: str) -> None:
    body, named = TYPE_EQUALITY[case]
    ids = ["tests/test_x.py::T::test_runs"]
    record, output = judge(tmp_path, FIND_CASE + body, test_file=TYPE_EQUALITY_TESTS, ids=ids)
    assert record is not None, output[-3000:]
    assert any(named in v for v in record["violations"]), (record, output[-2000:])


def test_a_key_planted_in_sys_modules_does_not_answer_the_judges_lookup(tmp_path: Path) -> None:
    """Round 34: the judge read ``sys.modules.get("sys")``, which a planted key with the hash of "sys" answered."""
    prelude = (Path(__file__).parents[1] / "redteam" / "round34" / "planted_modules_key.py").read_text() + "\n\n"
    record, output = judge(tmp_path, "pass", prelude=prelude)
    assert record is not None, output[-2000:]
    assert any("sys.meta_path was replaced" in v for v in record["violations"]), (record["violations"], output[-2000:])


PLANTED = "zz_planted_by_a_judged_test.py"  # in the interpreter's library directory, if a route were let through
INTO_THE_LIBRARY = {
    "a file written": f"import os\nopen(os.path.join(os.path.dirname(os.__file__), {PLANTED!r}), 'w').write('x = 1')",
    "a file created relative to a directory descriptor": (
        f"import os\nfd = os.open(os.path.dirname(os.__file__), os.O_RDONLY)\nos.open({PLANTED!r}, os.O_WRONLY | os.O_CREAT, "
        "dir_fd=fd)"),
    "a file written through a symlink to the directory": (
        f"import os, tempfile\nd = tempfile.mkdtemp()\nos.symlink(os.path.dirname(os.__file__), d + '/l')\n"
        f"open(d + '/l/' + {PLANTED!r}, 'w').write('x = 1')"),
    "a file renamed into it": (
        f"import os, tempfile\nd = tempfile.mkdtemp()\nopen(d + '/x', 'w').write('x = 1')\n"
        f"os.rename(d + '/x', os.path.join(os.path.dirname(os.__file__), {PLANTED!r}))"),
    "a directory made in it": f"import os\nos.mkdir(os.path.join(os.path.dirname(os.__file__), {PLANTED!r}))",
}


@pytest.mark.parametrize("case", list(INTO_THE_LIBRARY))
def test_nothing_is_changed_where_trust_is_decided_by_location(tmp_path: Path, case: str) -> None:
    """Round 35: a .pyc of a library module written into the bytecode cache made the package's code the library's;
    every route into a trusted root (the cache, the interpreter, the runner's directory) is refused and voids the run."""
    target = Path(os.path.dirname(os.__file__)) / PLANTED
    try:
        record, output = judge(tmp_path, INTO_THE_LIBRARY[case])
        assert record is not None, output[-3000:]
        assert any("where the judge decides trust by location" in v for v in record["violations"]), record["violations"]
        assert not target.exists()
    finally:
        if target.is_dir():
            target.rmdir()
        target.unlink(missing_ok=True)


def test_writes_elsewhere_stay_allowed(tmp_path: Path) -> None:
    body = ("import os, tempfile\nd = tempfile.mkdtemp()\nopen(d + '/x', 'w').write('x')\nos.rename(d + '/x', d + '/y')\n"
            "os.mkdir(d + '/z')\nfd = os.open(d, os.O_RDONLY)\nos.close(os.open('w', os.O_WRONLY | os.O_CREAT, dir_fd=fd))\n"
            "os.chdir(d)\nopen('relative', 'w').write('r')")
    record, output = judge(tmp_path, body)
    assert record is not None and record["violations"] == [], (record, output[-2000:])
