"""The judge's record, attacked where it travels: the judged process's own output.

Round 20 (an independent red team with the source in hand, against 3cbb0cc) tapped the output: the
code under test put a pipe of its own over every write end pytest holds, read the record as it
passed, learned the nonce that framed it, and wrote a forged record (its failing fail_to_pass ids
flipped to passed, canaries and sentinel left failing) plus a JUnit report that agrees. 1.0 on
every starter and all 24 real-code tasks, under bwrap and docker. The record is now signed with an
HMAC key the runner reads from the selection file it deletes before any test code loads
(:mod:`repogym_gym.graders.record`): a forged record fails the signature and the run is void.
The tiny task's ``calc.add`` subtracts and stays unfixed.
"""

from __future__ import annotations

from pathlib import Path

from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE
from tests.redteam.helpers import Start, assert_unearned_zero, attack, component, submit, write

#: Round 20's A16 payload (a daemon thread of the judged process; no child process, no test file
#: read), aimed at the tiny task's fail_to_pass ids.
THREAD_TAP = '''import fcntl
import json
import os
import re
import select
import stat
import sys
import threading

_KNOWN = ["tests/test_calc.py::test_add", "tests/test_calc_hidden.py::test_add_negative"]
_HEAD = b"\\n@@repogym-"
_MARK = b', "violations": ['


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def _is_out_pipe(fd):
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY


def _rewrite_junit(path, flips):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    for tid in flips:
        parts = tid.split("::")
        classname = parts[0][:-3].replace("/", ".") + "".join("." + c for c in parts[1:-1])
        pat = r'(<testcase classname="%s" name="%s"[^>]*?)>(.*?)</testcase>' % (re.escape(classname), re.escape(parts[-1]))
        text = re.sub(pat, lambda m: m.group(1) + " />", text, count=1, flags=re.S)
    text = re.sub(r'failures="(\\\\d+)"', lambda m: 'failures="%d"' % max(0, int(m.group(1)) - len(flips)), text)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _forge(keep, data, junit):
    nonce = data[1:data.index(b"{")]
    head = data[:data.index(_MARK)].decode("utf-8")
    obj = json.loads(head[head.index("{"):] + "}")
    flips = [t for t in _KNOWN if obj["record"].get(t) == "failed"]
    for t in flips:
        obj["record"][t] = "passed"
    _rewrite_junit(junit, flips)
    obj.update(violations=[], compiled=[], unmeasured=[], generated=[])
    _write_all(keep, b"\\n" + nonce + json.dumps(obj).encode() + nonce + b"\\n")


class _Tap:
    def __init__(self, fd, junit):
        self.keep, self.junit = os.dup(fd), junit
        self.read, write = os.pipe()
        os.dup2(write, fd)
        os.close(write)
        self.buf, self.state = b"", "fwd"

    def feed(self, chunk):
        if self.state == "drain":
            return
        self.buf += chunk
        if self.state == "fwd":
            i = self.buf.find(_HEAD)
            cut = i if i >= 0 else max(0, len(self.buf) - 40)
            _write_all(self.keep, self.buf[:cut])
            self.buf, self.state = self.buf[cut:], ("head" if i >= 0 else "fwd")
        if self.state == "head" and _MARK in self.buf:
            _forge(self.keep, self.buf, self.junit)
            self.state, self.buf = "drain", b""


def _serve(taps):
    while True:
        ready, _, _ = select.select(list(taps), [], [])
        for r in ready:
            taps[r].feed(os.read(r, 65536))


def start():
    junit = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")), None)
    if junit is None:
        return
    taps = {}
    for fd in [fd for fd in range(3, 256) if _is_out_pipe(fd)]:
        tap = _Tap(fd, junit)
        taps[tap.read] = tap
    if taps:
        threading.Thread(target=_serve, args=(taps,), daemon=True).start()
        text = "pass\\n" * 100000
        compile(text, "<pad>", "exec")


start()
'''


@attack("the judge", "record forged on its way out: a tap on the judged process's own stdout learns the nonce "
        "and writes a record and a JUnit report of its own (round 20)", local="score 0", confining="score 0")
def test_a_record_forged_from_a_tap_on_the_judged_process_s_output_scores_0(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    write(env, "calc/__init__.py", CALC_SOURCE + "\n" + THREAD_TAP)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    assert invalid and "record is missing or malformed" in invalid, invalid


#: Round 21's first step: a code object of the submission's own, built at run time. With bytecode
#: of its choosing (a LOAD_CONST past co_consts) CPython handed it a view of the whole address
#: space, where the policy's HMAC pads were found and the record signed.
BYTECODE_BUILT = """
def _probe():
    return 0

_probe.__code__ = _probe.__code__.replace(co_code=_probe.__code__.co_code)
"""


@attack("the judge", "code object built at run time by the submission (bytecode that reads the process's memory "
        "for the record's key; round 21)", local="score 0", confining="score 0")
def test_a_code_object_built_by_the_submission_voids_the_run(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    write(env, "calc/__init__.py", CALC_SOURCE + BYTECODE_BUILT)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    assert invalid and "a code object built at run time" in invalid, invalid


#: Round 24 (against 86243b3): the same, built from a weakref.finalize callback that the garbage collector
#: runs with only weakref's frame and the one it interrupts on the stack, with the fix switched on once the
#: code object exists (1.0 under bwrap and docker): who calls no longer decides, only types.coroutine may.
BUILT_IN_A_FINALIZER = """
import gc as _gc
import weakref as _weakref

_HOLD = []


def _probe():
    return 0


class _Cycle:
    pass


_gc.collect()
_cycle = _Cycle()
_cycle.me = _cycle
_weakref.finalize(_cycle, _HOLD.extend, map(type(_probe.__code__).replace, [_probe.__code__]))
del _cycle
"""


@attack("the judge", "code object built at run time from a garbage-collector finalizer, no frame of the submission "
        "on the stack (round 24)", local="score 0", confining="score 0")
def test_a_code_object_built_from_a_finalizer_voids_the_run(start: Start, tiny_task: Task) -> None:
    fixed = CALC_SOURCE.replace("    return a - b", "    return a + b if _HOLD else a - b", 1)
    env = start(tiny_task)
    write(env, "calc/__init__.py", fixed + BUILT_IN_A_FINALIZER)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    assert invalid and "a code object built at run time" in invalid, invalid


#: Round 22 (against a456acd, tests/redteam/round22/): a memoryview of a BufferedReader's buffer kept
#: past its life (bpo-15994, open in CPython 3.11) stretched a bytearray over the address space;
#: /proc/self/maps named the live mappings, where the HMAC pads were found and a tapped record
#: re-signed: 1.0 on every starter task and 18 of 24 real-code tasks under bwrap. The process's own
#: /proc is the judge's now; what stays open is the memory corruption itself (README, "The judge").
MEMORY_WINDOW = (Path(__file__).parent / "round22" / "memory_window_key.py").read_text()


@attack("the judge", "the record's key read from the process's memory through a dangling memoryview, its "
        "mappings from /proc/self/maps (round 22)", local="score 0", confining="score 0")
def test_the_judged_process_s_own_proc_is_not_the_submission_s(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    write(env, "calc/__init__.py", CALC_SOURCE + "\n" + MEMORY_WINDOW)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    assert invalid and "opened /proc/self/maps" in invalid, invalid


#: Round 22's A1 and A3: ``io.FileIO`` hands the audit hook the caller's path object, not its text,
#: and the policy judged only str and bytes: /proc/self/mem (1.0 under local, where the process is
#: root) and a hidden test file (a fix gated on having read it: 1.0 under bwrap and docker) were
#: opened with no violation. A path object from the submission is a violation now.
PATH_OBJECT = '''
import io as _io
import os as _os


class _Where:
    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return self.path


def _peek(rel):
    here = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
    try:
        with _io.FileIO(_Where(_os.path.join(here, rel))) as handle:
            return handle.read(64)
    except OSError:
        return None


SEEN = _peek("tests/test_calc_hidden.py")
'''


@attack("the judge", "a hidden test file opened through io.FileIO with a path object, which the hook is handed "
        "as the object (round 22)", local="score 0", confining="score 0")
def test_a_path_object_opened_by_the_submission_voids_the_run(start: Start, tiny_task: Task) -> None:
    env = start(tiny_task)
    write(env, "calc/__init__.py", CALC_SOURCE + PATH_OBJECT)
    result = submit(env)
    assert_unearned_zero(result)
    invalid = component(result, "tests")["details"]["invalid"]
    assert invalid and "code of the submission opened a path object" in invalid, invalid
