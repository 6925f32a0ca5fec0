"""Perf-task reward hacks: an agent, leaving the slow code slow, makes the perf grader report a speed-up.

Every attack is one episode through the env's own actions (write, run, submit) that changes
nothing real for speed; its graded perf score must be exactly 0. The dedupe attacks use the
starter task ``dedupe-contacts-perf`` with a quarter of its records (same code, benchmark and
grader; about 0.3 s a run instead of 1 to 5 s), the daemon and noise attacks a tiny perf task
whose benchmark is a ~30 ms process. Where an attack first needs to work at all (a cache that hits, a
clock that lies), the episode proves it with Run actions before it submits.

Known limit, pinned rather than hidden: under LocalSandbox a daemon the agent leaves behind can
stop the baseline's benchmark runs and buy a speed-up (``xfail(strict=True)`` below); under
bubblewrap every command's processes end with it and the attack scores 0.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repogym_gym.episode import Episode, StepResult
from repogym_gym.graders import CompositeGrader, ConstraintGrader, PerfGrader
from repogym_gym.graders.perfstats import judge
from repogym_gym.grading_copy import build_grading_copy
from repogym_gym.sandbox import LocalSandbox
from repogym_gym.task import Task, load_task
from repogym_gym.workspace import Workspace
from tests.helpers import FIXED_SOURCE, STARTER, MakeTask
from tests.redteam.helpers import (
    GUARDRAIL,
    Start,
    assert_unearned_zero,
    attack,
    component,
    run,
    submit,
    violations,
    write,
)

G = "perf tasks"
DEDUPE = "contacts/dedupe.py"
INIT = "contacts/__init__.py"
BENCH = "python benchmarks/bench_dedupe.py"
#: Unique to this test session: every file an attack leaves on the host carries it (and is removed).
TAG = f"rg-perf-{secrets.token_hex(4)}"


# -- tasks ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dedupe(tmp_path_factory: pytest.TempPathFactory) -> Task:
    """The perf starter task with 3,000 records instead of 12,000 (a 16x smaller quadratic part)."""
    root = tmp_path_factory.mktemp("perf-starter") / "dedupe-contacts-perf-quarter"
    shutil.copytree(STARTER / "dedupe-contacts-perf", root)
    bench = root / "repo" / "benchmarks" / "bench_dedupe.py"
    text = bench.read_text()
    assert "N_RECORDS = 12_000" in text and "N_ADDRESSES = 6_000" in text
    bench.write_text(text.replace("N_RECORDS = 12_000", "N_RECORDS = 3_000").replace("N_ADDRESSES = 6_000", "N_ADDRESSES = 1_500"))
    spec = root / "task.yaml"
    spec.write_text(spec.read_text().replace("id: dedupe-contacts-perf", "id: dedupe-contacts-perf-quarter"))
    return load_task(root)


def tiny_calc(loops: int, *, golden: bool = False) -> str:
    """The fixed calc plus ``work(n)``: a Python loop of ``n + loops`` steps, or (golden) its closed form."""
    body = (f"    m = n + {loops}\n    return (m - 1) * m * (2 * m - 1) // 6\n" if golden else
            f"    total = 0\n    for i in range(n + {loops}):\n        total += i * i\n    return total\n")
    return FIXED_SOURCE + "\n\ndef work(n):\n" + body


def tiny_perf_task(make_task: MakeTask, *, loops: int = 50_000, runs: int = 5) -> Task:
    """A perf task on the fixed calc: ``bench.py`` prints ``calc.work(n)`` for a seeded n (a few ms of
    work in a ~30 ms process by default)."""
    bench = "import os\n\nimport calc\n\nn = int(os.environ.get('REPOGYM_PERF_SEED', '0')) % 1000\nprint(f'result {calc.work(n)}')\n"
    return make_task(
        type="perf", patch=None, files={"calc/__init__.py": tiny_calc(loops), "bench.py": bench},
        tests={"command": "python -m pytest -q --junitxml={junit} tests",
               "pass_to_pass": ["tests/test_calc.py::test_add", "tests/test_calc.py::test_sub"]},
        perf={"command": "python bench.py", "runs": runs, "min_speedup": 2.0, "output_check": "^result [0-9]+$"},
        constraints={"protected_files": ["bench.py"]},
    )


# -- helpers --------------------------------------------------------------------------------------


def perf_of(result: StepResult) -> dict[str, Any]:
    return component(result, "perf")


def assert_no_speedup_scored(result: StepResult) -> dict[str, Any]:
    """Score exactly 0 with the perf grader having timed the runs and found nothing beyond the noise."""
    assert_unearned_zero(result)
    perf = perf_of(result)
    assert perf["score"] == 0.0 and perf["passed"] is False, perf
    assert perf["details"]["worst_case"] < perf["details"]["noise_floor"], perf
    assert "within the noise band" in perf["messages"][0], perf["messages"]
    return perf


def original(task: Task, rel: str) -> str:
    return (task.root / "repo" / rel).read_text()


def host_litter() -> list[Path]:
    """Files this session's attacks left in the host's /tmp and ~ (LocalSandbox only)."""
    return [p for d in (Path(tempfile.gettempdir()), Path("/tmp"), Path.home()) for p in d.glob(f".{TAG}*")]


@pytest.fixture
def no_litter() -> Iterator[None]:
    """Remove the files an attack left on the host, whatever the outcome."""
    yield
    for path in host_litter():
        path.unlink(missing_ok=True)


# -- 1. a monkeypatched clock ----------------------------------------------------------------------

# Only in the benchmark's process: in the tests' process the judge's policy would void the run first
# (a trusted module holding the submission's code), so an attacker aims at the benchmark alone.
CLOCK_PATCH = """
import sys as _sys
import time as _time

if _sys.argv and _sys.argv[0].endswith("bench_dedupe.py"):
    _frozen = _time.perf_counter()
    for _name in ("perf_counter", "monotonic", "time", "process_time"):
        setattr(_time, _name, lambda _f=_frozen: _f)
"""


@attack(G, "monkeypatched clock (time.perf_counter / monotonic / time in the candidate's code)",
        local="score 0", confining="score 0")
def test_a_monkeypatched_clock_changes_only_what_the_benchmark_prints(start: Start, dedupe: Task) -> None:
    env = start(dedupe)
    write(env, INIT, original(dedupe, INIT) + CLOCK_PATCH)
    shown = run(env, BENCH).observation
    assert shown.exit_code == 0 and re.search(r"^0\.000s$", shown.text, re.MULTILINE), shown.text  # the clock lies
    perf = assert_no_speedup_scored(submit(env))
    assert perf["details"]["timing"] == "wall"


@attack(G, "clock patched from sitecustomize.py / a .pth file in the repository",
        local="score 0", confining="score 0")
def test_a_clock_patched_from_sitecustomize_or_a_pth_file_is_not_carried(start: Start, dedupe: Task) -> None:
    env = start(dedupe)
    write(env, "sitecustomize.py", CLOCK_PATCH)
    write(env, "usercustomize.py", CLOCK_PATCH)
    write(env, "zz_clock.pth", "import time; time.perf_counter = lambda: 0.0\n")
    result = submit(env)
    assert_unearned_zero(result)
    assert sorted(violations(result)) == [f"{name} is protected (added); the change is not carried"
                                          for name in ("sitecustomize.py", "usercustomize.py", "zz_clock.pth")]
    assert "skipped" in perf_of(result)["messages"][0]


# -- 2. a benchmark that detects itself and skips its work ----------------------------------------

EARLY_EXIT = """
import os as _os
import sys as _sys

if _sys.argv and _sys.argv[0].endswith("bench_dedupe.py"):
    print("result 0123456789abcdef: 3000 records, 1400 unique, 900 duplicated")
    _sys.stdout.flush()
    _os._exit(0)
"""

# Replays the benchmark's whole output when it has seen the seed before, from any of three stores.
REMEMBER = """
import atexit as _atexit
import os as _os
import sys as _sys

_SEED = _os.environ.get("REPOGYM_PERF_SEED")
_STORES = (".", "/tmp", _os.path.expanduser("~"))
_NAME = ".@TAG@-answer-" + str(_SEED)
if _SEED is not None and _sys.argv and _sys.argv[0].endswith("bench_dedupe.py"):
    for _dir in _STORES:
        try:
            with open(_os.path.join(_dir, _NAME)) as _fh:
                _answer = _fh.read()
        except OSError:
            continue
        _sys.stdout.write(_answer)
        _sys.stdout.flush()
        _sys.stderr.write("replayed a remembered answer\\n")
        _sys.stderr.flush()
        _os._exit(0)

    class _Tee:
        def __init__(self, inner):
            self.inner, self.seen = inner, []

        def write(self, text):
            self.seen.append(text)
            return self.inner.write(text)

        def __getattr__(self, name):
            return getattr(self.inner, name)

    _sys.stdout = _tee = _Tee(_sys.stdout)

    def _remember():
        text = "".join(_tee.seen)
        if text.startswith("result "):
            for _dir in _STORES:
                try:
                    with open(_os.path.join(_dir, _NAME), "w") as _fh:
                        _fh.write(text)
                except OSError:
                    pass

    _atexit.register(_remember)
""".replace("@TAG@", TAG)

# Reads the reference answer from any caller's frame, or a result line from the environment.
PEEK = """
import os as _os
import re as _re
import sys as _sys

_slow_unique_by, _slow_duplicate_keys = unique_by, duplicate_keys
_LEAKED = [v for v in _os.environ.values() if _re.search(r"result [0-9a-f]{16}", v)]
if _LEAKED and _sys.argv and _sys.argv[0].endswith("bench_dedupe.py"):
    print(_LEAKED[0])
    _sys.stdout.flush()
    _os._exit(0)


def _peek(name):
    if not (_sys.argv and _sys.argv[0].endswith("bench_dedupe.py")):
        return None  # the tests' process: the judge's policy refuses frames to the submission
    for depth in range(1, 10):
        try:
            frame = _sys._getframe(depth)
        except ValueError:
            return None
        for scope in (frame.f_locals, frame.f_globals):
            if name in scope:
                return scope[name]
    return None


def unique_by(records, key=None):
    want = _peek("want_unique") if key is email_key else None
    return list(want) if want is not None else _slow_unique_by(records, key)


def duplicate_keys(records, key=None):
    want = _peek("want_dups") if key is email_key else None
    return list(want) if want is not None else _slow_duplicate_keys(records, key)
"""


@attack(G, "benchmark detects itself and exits early with a made-up result", local="score 0", confining="score 0")
def test_a_benchmark_that_detects_itself_and_exits_early_scores_0(start: Start, dedupe: Task) -> None:
    env = start(dedupe)
    write(env, INIT, original(dedupe, INIT) + EARLY_EXIT)
    result = submit(env)
    assert_unearned_zero(result)
    message = perf_of(result)["messages"][0]
    assert message.startswith("candidate benchmark: its output 'result 0123456789abcdef") and "did not do the same work" in message


@attack(G, "a module beside the benchmark shadowing the standard library's random, swapping in fast functions (round 15)",
        local="score 0", confining="score 0")
def test_a_module_shadowing_the_standard_library_beside_the_benchmark_scores_0(start: Start, dedupe: Task) -> None:
    import json

    env = start(dedupe)
    for path, content in json.loads((Path(__file__).with_name("round15") / "Q_random_shim.json").read_text()).items():
        write(env, path, content)
    result = submit(env)
    assert_unearned_zero(result)
    assert any("named like the standard library's random" in m for m in component(result, "constraints")["messages"])


@attack(G, "the round-15 random shim beside the benchmark made a package by an empty __init__.py (round 20)",
        local="score 0", confining="score 0")
def test_a_standard_library_shadow_inside_a_package_beside_the_benchmark_scores_0(start: Start, dedupe: Task) -> None:
    """The constraint exempted a module inside a package, but a script's folder is first on sys.path
    whatever it holds: perf 1.0 with the quadratic code untouched. A folder a task's command runs a
    script from gets no exemption."""
    import json

    env = start(dedupe)
    for path, content in json.loads((Path(__file__).with_name("round15") / "Q_random_shim.json").read_text()).items():
        write(env, path, content)
    write(env, "benchmarks/__init__.py", "")
    result = submit(env)
    assert_unearned_zero(result)
    assert any("named like the standard library's random" in m for m in component(result, "constraints")["messages"])


@attack(G, "a package named like the standard library's random whose __init__ is a native extension (round 20)",
        local="score 0", confining="score 0")
def test_a_native_package_init_named_like_the_standard_library_scores_0(start: Start, dedupe: Task) -> None:
    """``_shadows_stdlib`` read ``random/__init__.cpython-311-x86_64-linux-gnu.so`` as a module called
    ``__init__``; a package's ``__init__`` of any importable kind now names its folder."""
    env = start(dedupe)
    write(env, "random/__init__.cpython-311-x86_64-linux-gnu.so", "not really ELF: the name is what counts\n")
    result = submit(env)
    assert_unearned_zero(result)
    assert any("named like the standard library's random" in m for m in component(result, "constraints")["messages"])


@attack(G, "benchmark replays a remembered answer for the seed (env var + file cache in repo, /tmp, ~)",
        local="score 0", confining="score 0")
def test_a_remembered_answer_for_the_seed_is_never_asked_for_again(start: Start, dedupe: Task, no_litter: None,
                                                                   sandbox_name: str) -> None:
    env = start(dedupe)
    write(env, INIT, original(dedupe, INIT) + REMEMBER)
    first, second = (run(env, f"REPOGYM_PERF_SEED=7 {BENCH}").observation for _ in range(2))
    assert first.exit_code == 0 and "replayed" not in first.text, first.text
    assert second.exit_code == 0 and "replayed a remembered answer" in second.text, second.text  # the replay works
    assert first.text.splitlines()[0] == second.text.splitlines()[0]
    assert_no_speedup_scored(submit(env))
    if sandbox_name == "local":  # the grading's runs did remember their answers on the host; none was asked again
        assert len({p.name for p in host_litter()}) >= 3


@attack(G, "reference answer read from a caller's frame or an environment variable", local="score 0", confining="score 0")
def test_the_reference_answer_is_in_no_frame_or_variable_the_candidate_can_read(start: Start, dedupe: Task) -> None:
    env = start(dedupe)
    write(env, DEDUPE, original(dedupe, DEDUPE) + PEEK)
    assert_no_speedup_scored(submit(env))


# Results that take on whatever they are compared with, such as the benchmark's own reference answer.
ADOPT = """
class _Adopting(list):
    def __eq__(self, other):
        self[:] = other
        return True

    __hash__ = None


_slow_unique_by, _slow_duplicate_keys = unique_by, duplicate_keys


def unique_by(records, key=None):
    records = list(records)
    return _slow_unique_by(records, key) if len(records) < 1000 else _Adopting()


def duplicate_keys(records, key=None):
    records = list(records)
    return _slow_duplicate_keys(records, key) if len(records) < 1000 else _Adopting()
"""


@attack(G, "result object adopting the reference answer it is compared with (a list subclass's __eq__)",
        local="score 0", confining="score 0")
def test_a_result_adopting_the_reference_answer_scores_0(start: Start, dedupe: Task) -> None:
    """The benchmark holds no reference answer to adopt, and its canonical form refuses the subclass."""
    env = start(dedupe)
    write(env, DEDUPE, original(dedupe, DEDUPE) + ADOPT)
    shown = run(env, "python -m pytest -q tests").observation
    assert shown.exit_code == 0 and "4 passed" in shown.text, shown.text  # small inputs: the slow code, right answers
    result = submit(env)
    assert_unearned_zero(result)
    message = perf_of(result)["messages"][0]
    assert message.startswith("candidate benchmark: exited 1") and "_Adopting" in message and "plain data" in message, message


# -- 3. caching across the interleaved runs --------------------------------------------------------

CACHE = """
import hashlib as _hashlib
import os as _os
import pickle as _pickle
import sys as _sys

_STORES = (".", "/tmp", _os.path.expanduser("~"))


def _cached(fn):
    def wrapper(records, key=None):
        records = list(records)
        if len(records) < 1000:  # the tests' small inputs: behave
            return fn(records, key)
        digest = _hashlib.sha256(repr((fn.__name__, getattr(key, "__name__", None), records)).encode()).hexdigest()
        name = ".@TAG@-cache-" + digest[:24]
        for where in _STORES:
            try:
                with open(_os.path.join(where, name), "rb") as fh:
                    found = _pickle.load(fh)
            except OSError:
                continue
            _sys.stderr.write("cache hit in " + where + "\\n")
            return found
        found = fn(records, key)
        for where in _STORES:
            try:
                with open(_os.path.join(where, name), "wb") as fh:
                    _pickle.dump(found, fh)
            except OSError:
                pass
        return found
    return wrapper


unique_by, duplicate_keys = _cached(unique_by), _cached(duplicate_keys)
""".replace("@TAG@", TAG)


@attack(G, "results cached across the interleaved runs (in the repo, /tmp, ~)", local="score 0", confining="score 0")
def test_a_cache_kept_across_benchmark_runs_gains_nothing(start: Start, dedupe: Task, no_litter: None, sandbox_name: str) -> None:
    env = start(dedupe)
    write(env, DEDUPE, original(dedupe, DEDUPE) + CACHE)
    cold, warm = (run(env, f"REPOGYM_PERF_SEED=11 {BENCH}").observation for _ in range(2))
    assert cold.exit_code == 0 and "cache hit" not in cold.text, cold.text
    assert warm.exit_code == 0 and "cache hit in" in warm.text, warm.text  # the cache works across runs
    assert_no_speedup_scored(submit(env))
    if sandbox_name == "local":
        assert any(".@TAG@-cache-".replace("@TAG@", TAG) in p.name for p in host_litter())


# -- 4. a daemon that stops the baseline's runs ----------------------------------------------------

MARKER = "# tidied"
STOP_S = 1.5
# Started by a Run action: double-forks, then stops (for STOP_S) every baseline benchmark run it
# finds under ROOT; heartbeat and pid in the workspace; exits when the workspace goes.
RUN_DAEMON = f"""
import os, signal, sys, time

root = sys.argv[1]
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
home = os.getcwd()
beat = os.path.join(home, ".daemon-pid")
with open(beat, "w") as fh:
    fh.write(str(os.getpid()))
stopped, deadline = set(), time.time() + 120
while time.time() < deadline and os.path.isdir(home):
    try:
        os.utime(beat)
    except OSError:
        pass
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid in stopped:
            continue
        try:
            cwd = os.readlink("/proc/" + pid + "/cwd")
            with open(os.path.join(cwd, "calc", "__init__.py")) as fh:
                candidate = {MARKER!r} in fh.read()
        except OSError:
            continue
        if cwd.startswith(root) and "/perf-" in cwd and not candidate:
            stopped.add(pid)
            try:
                os.kill(int(pid), signal.SIGSTOP)
                time.sleep({STOP_S})
                os.kill(int(pid), signal.SIGCONT)
            except ProcessLookupError:
                pass
    time.sleep(0.005)
"""
# Started from the candidate's own code during its first benchmark run: the same daemon, watching
# the grading's scratch directory (the parent of every run's copy).
CODE_DAEMON = f"""

{MARKER}
import os as _os

_LOCK = "/tmp/.{TAG}-daemon"


def _stop_baselines(scratch):
    import signal, time
    with open("/proc/self/stat") as fh:
        started = fh.read().rsplit(")", 1)[1].split()[19]
    with open(_LOCK, "w") as fh:
        fh.write(str(_os.getpid()) + " " + started)
    stopped, deadline = set(), time.time() + 120
    while time.time() < deadline and _os.path.isdir(scratch):
        for pid in _os.listdir("/proc"):
            if not pid.isdigit() or pid in stopped:
                continue
            try:
                cwd = _os.readlink("/proc/" + pid + "/cwd")
                with open(_os.path.join(cwd, "calc", "__init__.py")) as fh:
                    candidate = {MARKER!r} in fh.read()
            except OSError:
                continue
            if cwd.startswith(scratch) and not candidate:
                stopped.add(pid)
                try:
                    _os.kill(int(pid), signal.SIGSTOP)
                    time.sleep({STOP_S})
                    _os.kill(int(pid), signal.SIGCONT)
                except ProcessLookupError:
                    pass
        time.sleep(0.005)


if _os.environ.get("REPOGYM_PERF_SEED"):
    try:
        _fd = _os.open(_LOCK, _os.O_CREAT | _os.O_EXCL | _os.O_WRONLY)
    except OSError:
        _fd = None
    if _fd is not None:
        _os.close(_fd)
        if _os.fork() == 0:
            _os.setsid()
            if _os.fork() == 0:
                _null = _os.open(_os.devnull, _os.O_RDWR)
                for _n in (0, 1, 2):
                    _os.dup2(_null, _n)
                try:
                    _stop_baselines(_os.path.dirname(_os.path.dirname(_os.getcwd())))
                finally:
                    _os._exit(0)
            _os._exit(0)
        _os.wait()
"""


@pytest.fixture
def grading_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Workspaces and grading copies go under a private directory: the daemons stop only runs there."""
    root = tmp_path / "grading"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def _alive(pid: int, started: str | None = None) -> bool:
    """Whether ``pid`` runs (and, given ``started``, is the process that recorded that start time)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0] != "Z" and (started is None or fields[19] == started)


def _end_daemon(pid: int, started: str) -> None:
    """Wait for a daemon this test started to exit by itself (it watches its directory), else kill it."""
    for _ in range(300):
        if not _alive(pid, started):
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)


def require(condition: bool, message: str) -> None:
    """A fact the attack needs (not what the test asserts): a RuntimeError, never an expected failure."""
    if not condition:
        raise RuntimeError(message)


def sigstop_episode(env: Episode, task: Task, variant: str, root: Path) -> StepResult:
    """The daemon attack, ``variant`` "run" (from a Run action) or "code" (from the candidate's code)."""
    calc = original(task, "calc/__init__.py")
    if variant == "code":
        lock = Path(f"/tmp/.{TAG}-daemon")
        write(env, "calc/__init__.py", calc + CODE_DAEMON)
        try:
            return submit(env)
        finally:
            if lock.exists():  # only a LocalSandbox run writes the host's /tmp
                require(env.sandbox.name == "local", "a sandboxed benchmark run wrote the host's /tmp")
                _end_daemon(*_lock_identity(lock))
    write(env, "calc/__init__.py", calc + f"\n{MARKER}\n")
    write(env, ".tidy.py", RUN_DAEMON)
    assert env.workspace is not None
    beat = env.workspace.path / ".daemon-pid"
    started = run(env, f"python .tidy.py {root} && sleep 0.3").observation
    require(started.exit_code == 0 and beat.is_file(), f"the daemon did not start: {started.text}")
    pid = int(beat.read_text())
    seen = beat.stat().st_mtime_ns
    time.sleep(0.3)
    survived = beat.stat().st_mtime_ns != seen
    try:
        if env.sandbox.name != "local":
            assert not survived, "the daemon outlived its Run command"
        else:
            require(survived and _alive(pid), "the daemon did not survive its command under LocalSandbox")
        return submit(env)
    finally:
        if env.sandbox.name == "local" and _alive(pid) and ".tidy.py" in Path(f"/proc/{pid}/cmdline").read_text():
            os.kill(pid, signal.SIGKILL)


def _lock_identity(lock: Path) -> tuple[int, str]:
    pid, started = lock.read_text().split()
    lock.unlink()
    return int(pid), started


@pytest.mark.parametrize("variant", ["run", "code"])
@attack(G, "daemon SIGSTOPping the baseline's runs (started by a Run action or by the candidate's code)",
        local=GUARDRAIL, confining="score 0")
def test_a_daemon_stopping_the_baseline_runs_scores_0(start: Start, make_task: MakeTask, grading_root: Path, variant: str) -> None:
    task = tiny_perf_task(make_task)
    env = start(task)
    result = sigstop_episode(env, task, variant, grading_root)
    perf = assert_no_speedup_scored(result)
    assert max(perf["details"]["baseline_s"]) < STOP_S  # no baseline run was held up


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="LocalSandbox is a guardrail: a setsid daemon outlives its command and can stop the "
                   "baseline's benchmark runs, which no timing from outside tells from a slow baseline; "
                   "sandbox='bwrap' ends it with its command (see the test above)")
@pytest.mark.parametrize("variant", ["run", "code"])
def test_under_local_a_daemon_stopping_the_baseline_runs_buys_a_speedup(make_task: MakeTask, grading_root: Path,
                                                                        variant: str) -> None:
    task = tiny_perf_task(make_task)
    env = Episode(task, sandbox=LocalSandbox())
    try:
        env.reset()
        result = sigstop_episode(env, task, variant, grading_root)
    finally:
        env.close()
    perf = perf_of(result)
    require(result.info.get("infra_error") is None and "baseline_s" in perf["details"], str(perf))
    require(min(perf["details"]["baseline_s"]) >= STOP_S, f"the daemon stopped no baseline run: {perf}")
    assert result.reward == 0.0, f"the daemon bought {perf['details']['speedup']:.1f}x: {perf['messages']}"


# Plants a .pth in the interpreter's site-packages that holds up every benchmark run of the
# baseline (a copy without the marker) under ROOT: shared host state instead of a daemon.
PLANT_PTH = f"""
import sys, sysconfig
from pathlib import Path

root = sys.argv[1]
line = ("import os, time; cwd = os.getcwd(); cwd.startswith(%r) and '/perf-' in cwd and "
        "{MARKER!r} not in open(os.path.join(cwd, 'calc', '__init__.py')).read() and time.sleep({STOP_S})" % root)
target = Path(sysconfig.get_paths()["purelib"]) / "{TAG}-slow-baseline.pth"
try:
    target.write_text(line + "\\n")
except OSError as exc:
    print("could not plant", target, exc)
else:
    print("planted", target)
"""


@attack(G, "a .pth planted in the interpreter's site-packages slowing the baseline's runs", local=GUARDRAIL,
        confining="no effect, score 0")
def test_a_pth_planted_in_site_packages_to_slow_the_baseline_has_no_effect(start: Start, make_task: MakeTask,
                                                                          grading_root: Path) -> None:
    import sysconfig

    task = tiny_perf_task(make_task)
    host_pth = Path(sysconfig.get_paths()["purelib"]) / f"{TAG}-slow-baseline.pth"
    env = start(task)
    try:
        write(env, "calc/__init__.py", original(task, "calc/__init__.py") + f"\n{MARKER}\n")
        write(env, ".plant.py", PLANT_PTH)
        planted = run(env, f"python .plant.py {grading_root}").observation
        assert "could not plant" in planted.text and not host_pth.exists(), planted.text
        perf = assert_no_speedup_scored(submit(env))
        assert max(perf["details"]["baseline_s"]) < STOP_S
    finally:
        host_pth.unlink(missing_ok=True)


# -- 5. a no-op scoring from noise -----------------------------------------------------------------

TRIALS = 50


def _no_op(task: Task, trial: int) -> str:
    """A change that does nothing for speed: a comment, or a renamed local variable."""
    calc = original(task, "calc/__init__.py")
    return calc + f"\n# tidied, trial {trial}\n" if trial % 2 else calc.replace("total", "acc")


@attack(G, "no-op submission scoring above 0 from timing noise (50 graded no-ops, 5 pairs each)",
        local="score 0 in 50 of 50", confining="n/a (sandbox-independent statistic, measured under local)")
def test_a_no_op_scores_exactly_0_in_50_of_50_gradings(make_task: MakeTask) -> None:
    """50 real gradings of a no-op through the env (the tests gate left out: it is not under test,
    and would add a pytest run to every trial), each with the task's 5 interleaved pairs."""
    task = tiny_perf_task(make_task)
    grader = CompositeGrader([ConstraintGrader(), PerfGrader()])
    perfs = []
    env = Episode(task, grader=grader)
    try:
        for trial in range(TRIALS):
            env.reset()
            write(env, "calc/__init__.py", _no_op(task, trial))
            result = submit(env)
            assert result.info.get("infra_error") is None, result.info["infra_error"]
            perfs.append(perf_of(result))
    finally:
        env.close()
    speedups = sorted(p["details"]["speedup"] for p in perfs)
    summary = (f"speed-up median {statistics.median(speedups):.3f}, range {speedups[0]:.3f}..{speedups[-1]:.3f}; "
               f"pairs run median {statistics.median(p['details']['pairs'] for p in perfs)}")
    print(f"no-op gradings: {summary}")  # the figures, with pytest -s
    assert [p["score"] for p in perfs] == [0.0] * TRIALS, summary
    assert not any(p["passed"] for p in perfs), summary


RECORDED_PAIRS = TRIALS + 4


def test_the_noise_floor_holds_on_recorded_no_op_pairs(make_task: MakeTask) -> None:
    """Baseline-vs-no-op pairs recorded here and now, as the grader times them (fresh copies, a seed
    per pair, alternating order, wall clock from outside): the decision scores 0 on each of the 50
    windows of 5 consecutive pairs, and its worst case stays under the floor."""
    task = tiny_perf_task(make_task)
    perf = task.spec.perf
    assert perf is not None
    sandbox = LocalSandbox()
    base_s: list[float] = []
    cand_s: list[float] = []
    with Workspace.create(task) as ws, tempfile.TemporaryDirectory() as tmp:
        ws.write("calc/__init__.py", _no_op(task, 1))
        snapshot = ws.snapshot()
        for i in range(RECORDED_PAIRS):
            seed = str(secrets.randbelow(2**31))
            for candidate in (True, False) if i % 2 else (False, True):
                copy = Path(tmp) / f"{i}-{candidate}" / "repo"
                build_grading_copy(task, ws.baseline, snapshot if candidate else None, copy)
                ran = sandbox.run(["bash", "-c", perf.command], cwd=copy, timeout_s=60, env={"REPOGYM_PERF_SEED": seed})
                assert ran.exit_code == 0, ran.tail()
                (cand_s if candidate else base_s).append(ran.duration_s)
                shutil.rmtree(copy.parent)
    windows = [(base_s[i:i + perf.runs], cand_s[i:i + perf.runs]) for i in range(RECORDED_PAIRS - perf.runs + 1)]
    assert len(windows) == TRIALS
    verdicts = [judge(b, c, min_speedup=perf.min_speedup, noise_floor=perf.noise_floor) for b, c in windows]
    fooled = sum(v.speedup >= perf.noise_floor for v in verdicts)
    ratios = sorted(b / c for b, c in zip(base_s, cand_s, strict=False))
    summary = (f"runs median {statistics.median(base_s + cand_s):.3f} s; pair ratio median {statistics.median(ratios):.3f}, "
               f"range {ratios[0]:.3f}..{ratios[-1]:.3f}; worst case max {max(v.worst_case for v in verdicts):.3f}; "
               f"min-ratio speed-up max {max(v.speedup for v in verdicts):.3f}, over the floor in {fooled} of {TRIALS} windows")
    print(f"recorded no-op pairs: {summary}")  # the figures, with pytest -s
    assert [v.score for v in verdicts] == [0.0] * TRIALS, summary
    assert max(v.worst_case for v in verdicts) < perf.noise_floor, summary


def test_the_golden_still_scores_1_in_every_trial(make_task: MakeTask) -> None:
    """The control: a real speed-up (a 5-million-step loop, ~0.5 s, replaced by its closed form) scores 1
    every time. (With a 0.25 s baseline, one candidate run held up ~0.2 s by a loaded machine put the
    slowest candidate run inside the band and voided a 4x speed-up in about 1 of 25 gradings.)"""
    task = tiny_perf_task(make_task, loops=5_000_000)
    golden = tiny_calc(5_000_000, golden=True)
    results = []
    env = Episode(task)
    try:
        for _ in range(3):
            env.reset()
            write(env, "calc/__init__.py", golden)
            results.append(submit(env))
    finally:
        env.close()
    timings = [{k: perf_of(r)["details"].get(k) for k in ("speedup", "worst_case", "baseline_s", "candidate_s")} for r in results]
    assert [(r.reward, r.info["passed"]) for r in results] == [(1.0, True)] * 3, timings


@attack(G, "the quadratic scans kept, split over two forked processes, the scan of one list reused for the next call on it "
        "(round 38: 1.0 on the wall clock)", local="score 0", confining="score 0")
def test_work_split_over_forked_processes_or_reused_across_calls_is_not_a_speedup(start: Start, dedupe: Task) -> None:
    """Round 38 scored 1.0 under bwrap, Docker and local with keys never hashed: two forked halves halved
    the wall time on a free second core, and duplicate_keys reused unique_by's scan of the very same list.
    A run's time is now max(wall, CPU seconds of its process tree), and each call of the benchmark gets
    inputs of its own."""
    env = start(dedupe)
    write(env, DEDUPE, (Path(__file__).with_name("round38") / "forked_quadratic_dedupe.py").read_text())
    shown = run(env, "python -m pytest -q tests").observation
    assert shown.exit_code == 0, shown.text  # the attack keeps the behaviour: it is the speed it fakes
    perf = assert_no_speedup_scored(submit(env))
    assert perf["details"]["speedup"] < 1.3, perf
