"""Running a task's tests with runner settings the grader owns, and judging whether the run counts.

For ``runner: pytest`` the grader builds the whole invocation itself::

    PYTHONHASHSEED=0 python -s -P -S -B <scratch>/pytest_runner.py <scratch>/selection-<random>.json
        -c <scratch>/pytest.ini --rootdir <repo> --confcutdir <repo>
        -p no:cacheprovider --continue-on-collection-errors <task args> <sentinel>

- the runner (:mod:`repogym_gym.graders.pytest_runner`) collects only the files behind the
  scored test ids (so test modules a submission adds never load), records every scored outcome
  from pytest's own reports, prints that record once framed by a random nonce, and ends with
  ``os._exit`` so no ``atexit`` hook of the code under test runs after the report is written;
  the grader requires the record and the JUnit report to agree on which ids passed;
- ``-s -P``: no user site and no current directory on sys.path (``-I`` without its ``-E``: the
  sandbox's environment is an allowlist the grader builds, and ``-E`` would also ignore the next
  point); ``-S``: ``site`` runs only once the judge is installed;
- ``PYTHONHASHSEED=0`` (:data:`HASH_SEED`): str and bytes hashes, and so set and dict-of-set
  orders, are the same in every run: a test parametrised from a set gets the same ids with the
  same values in mining, validation and every grading (isodate lost 148 of 378 tests as "flaky"
  to ids that moved with a random seed);
- ``-B -X pycache_prefix=<cache>/pycache``: bytecode is read only from a grader-owned cache
  outside the tree (filled by :func:`warm_pycache` with the interpreter's and pytest's own), and
  never written by a judged run: no ``.pyc`` in the tree (stale, or planted with a matching
  mtime) runs, and no bytecode of a grading copy (its hidden tests, a golden module) lands in the
  cache every sandbox is shown, where a concurrent episode could read it;
- ``-c``: the grader's own ini, so ``pytest.ini``/``pyproject.toml``/``tox.ini``/``setup.cfg`` in
  the repository are never read; it carries the *baseline's* settings (markers, python_files,
  ...) except ``addopts`` and ``required_plugins``, with absolute ``pythonpath`` entries and
  ``junit_family = xunit1`` (so node ids can be rebuilt from the report);
- ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``: no third-party plugin loads by entry point;
- a randomly named sentinel test that must fail, plus must-fail canaries in every scored test
  file that clone a real test's body, are named from its neighbours' words and sit at random
  positions; a sentinel or canary that passes (or is skipped) means the outcomes were forced
  and the run is invalid. Nothing the judged process can read lists them: the runner reads its
  nonce and selection from a file it deletes before any test code loads;
- the runner's plugin reports tampering with pytest itself (replaced internals, plugins
  registered mid-run, trace hooks, swapped test code): any report voids the run.

A run is invalid (and the test component scores 0) when it timed out, wrote no parseable
report, lost or passed the sentinel, its runner record is missing or disagrees with the report,
or its exit code disagrees with its report (pytest with a failing sentinel must exit 1).
"""

from __future__ import annotations

import ast
import configparser
import hashlib
import json
import os
import random
import re
import secrets
import shlex
import shutil
import subprocess
import tempfile
import textwrap
import threading
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from repogym_gym.errors import GraderError, JUnitParseError
from repogym_gym.graders import judge_policy
from repogym_gym.graders.grader_files import grader_files
from repogym_gym.graders.record import read_record, shown_exit_code
from repogym_gym.graders.seal import Observations, Seal, seal_tree
from repogym_gym.junit import JUnitReport, parse_junit_xml
from repogym_gym.owners import owned_temporary
from repogym_gym.paths import default_cache_dir
from repogym_gym.results import CommandResult
from repogym_gym.safetext import replace_paths, short_text
from repogym_gym.sandbox import Sandbox, scrubbed_env
from repogym_gym.spec import TestSpec
from repogym_gym.tree import discard_tree

__all__ = ["HASH_SEED", "RUNNER_SCRIPT", "SENTINEL_MESSAGE", "TestRun", "baseline_pytest_settings", "hide_planted", "judge_dir",
           "pycache_dir", "pytest_argv", "run_tests", "warm_pycache", "write_ini"]

#: The standalone runner script copied next to the grader's ini for every pytest run.
RUNNER_SCRIPT = Path(__file__).with_name("pytest_runner.py")
#: ``PYTHONHASHSEED`` of every judged run (and of mining's coverage run): stable test ids and orders.
HASH_SEED = "0"
#: The planted sentinel's assertion message (it must fail; output shown to an agent drops its lines).
SENTINEL_MESSAGE = "repogym sentinel: this test must fail"
#: The judge's policy (an audit hook) and its parts, copied beside the runner, which installs it first.
POLICY_SCRIPTS = tuple(Path(__file__).with_name(part) for part in judge_policy.PARTS)

#: Baseline ini keys carried into the grader's ini (everything else is dropped).
CARRIED_INI_KEYS = (
    "python_files",
    "python_classes",
    "python_functions",
    "markers",
    "norecursedirs",
    "testpaths",
    "filterwarnings",
    "xfail_strict",
    "doctest_optionflags",
    "usefixtures",
    "empty_parameter_set_mark",
    "pythonpath",
    "asyncio_mode",
)


def _ini_value(value: object) -> str:
    if isinstance(value, list):
        return "\n" + "\n".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def baseline_pytest_settings(tree: Path) -> dict[str, str]:
    """The carried pytest settings of the baseline tree, in pytest's own lookup order.

    Looks at ``pytest.ini`` ([pytest]), ``pyproject.toml`` ([tool.pytest.ini_options]),
    ``tox.ini`` ([pytest]) and ``setup.cfg`` ([tool:pytest]) at the tree's top; the first that
    has a pytest section wins. Unreadable files are skipped.
    """
    candidates: list[tuple[str, str]] = [("pytest.ini", "pytest"), ("pyproject.toml", ""), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")]
    for name, section in candidates:
        path = tree / name
        if not path.is_file() or path.is_symlink():
            continue
        try:
            if name == "pyproject.toml":
                table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("pytest", {}).get("ini_options")
                if isinstance(table, dict):
                    return {k: _ini_value(v) for k, v in table.items() if k in CARRIED_INI_KEYS}
                continue
            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError, configparser.Error):  # ValueError: not UTF-8, not TOML
            continue
        if parser.has_section(section):
            return {k: v for k, v in parser.items(section) if k in CARRIED_INI_KEYS}
        if name == "pytest.ini":
            return {}
    return {}


def _task_args(spec: TestSpec, junit: Path) -> list[str]:
    argv = shlex.split(spec.command.replace("{junit}", str(junit)))
    for launcher in (["pytest"], ["python", "-m", "pytest"], ["python3", "-m", "pytest"]):
        if argv[: len(launcher)] == launcher:
            return argv[len(launcher) :]
    return argv


def write_ini(path: Path, repo: Path, baseline_tree: Path, spec: TestSpec) -> None:
    """Write the grader-owned pytest ini for a run in ``repo``."""
    settings = baseline_pytest_settings(baseline_tree)
    extra_paths = settings.pop("pythonpath", "").split()
    pythonpath = [str((repo / p).resolve()) for p in [*spec.pythonpath, *extra_paths]]
    lines = ["[pytest]", "addopts ="]
    lines += [f"{k} = " + v.replace("\n", "\n    ") for k, v in settings.items()]
    lines += ["pythonpath =" + "".join(f"\n    {p}" for p in pythonpath), "junit_family = xunit1", "junit_logging = no"]
    path.write_text("\n".join(lines) + "\n")


def pytest_argv(spec: TestSpec, repo: Path, ini: Path, junit: Path, sentinel: str | None,
                runner: Path, selection: Path) -> list[str]:
    """The grader's pytest command line (see the module docstring)."""
    argv = ["python", "-s", "-P", "-S", "-B", "-X", f"pycache_prefix={pycache_dir()}", str(runner), str(selection)]
    argv += ["-c", str(ini), "--rootdir", str(repo), "--confcutdir", str(repo)]
    argv += ["-p", "no:cacheprovider", "--continue-on-collection-errors", *_task_args(spec, junit)]
    return argv + ([sentinel] if sentinel else [])


_judge_files: dict[tuple[Path, tuple[Path, ...]], list[tuple[str, bytes]]] = {}


def judge_dir() -> Path:
    """The runner and the policy's files, in a directory named by their content.

    ``<cache>/judge/<first 16 hex digits of the files' sha256>/``: files 0444 in a directory 0555,
    made once (written aside, then renamed into place) and shown read-only inside a confining
    sandbox. The judged process trusts these files by name, so they must not sit in the writable
    scratch directory (code under test rewrote one there and compiled its own code under the
    name); the runner also compares any code compiled under their names with the bytes it read
    at start. Raises OSError if the cache cannot be written.
    """
    cache = default_cache_dir()
    key = (cache, (RUNNER_SCRIPT, *POLICY_SCRIPTS))
    with _warm_lock:
        files = _judge_files.get(key)
        if files is None:
            files = _judge_files[key] = [(p.name, p.read_bytes()) for p in key[1]]
        digest = hashlib.sha256(b"".join(len(name).to_bytes(4, "big") + name.encode() + len(data).to_bytes(8, "big") + data
                                         for name, data in files)).hexdigest()[:16]
        target = cache / "judge" / digest
        # checked on every run (about 0.5 ms): under LocalSandbox the code under test runs as root and
        # could have rewritten them for the next run
        if not all(_same_bytes(target / name, data) for name, data in files):
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=target.parent))
            for name, data in files:
                (staging / name).write_bytes(data)
                (staging / name).chmod(0o444)
            staging.chmod(0o555)
            if target.exists() or target.is_symlink():
                discard_tree(target)  # not what these files hold (a crash mid-write, a hand edit)
            try:
                os.replace(staging, target)
            except OSError:  # another process put the same files there first
                discard_tree(staging)
                if not all(_same_bytes(target / name, data) for name, data in files):
                    raise
        return target


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        return not path.is_symlink() and path.read_bytes() == data
    except OSError:
        return False


def pycache_dir() -> Path:
    """The grader-owned bytecode cache (``<cache>/pycache``; created by Python on first use)."""
    return default_cache_dir() / "pycache"


_warmed: set[tuple[str, str]] = set()
_warm_lock = threading.Lock()


def warm_pycache(env: Mapping[str, str]) -> None:
    """Fill the grader's bytecode cache for the ``python`` on ``env``'s PATH, once per process.

    A confining sandbox sees the cache read-only and the judge's policy refuses any change to it (round 35
    planted bytecode there under local, whose child processes stay a guardrail's); without this warm-up
    every sandboxed run would compile pytest and the standard library afresh (about 3x slower). It
    runs pytest on a one-line test in a temporary directory, on the host, with the grader's
    interpreter flags; a failure only costs speed.
    """
    path = scrubbed_env(env).get("PATH")
    python = shutil.which("python", path=path)
    key = (str(pycache_dir()), str(python))
    with _warm_lock:
        if python is None or key in _warmed:
            return
        _warmed.add(key)
    with owned_temporary("repogym-warm-", "pycache") as root:
        tmp = str(root)
        (root / "test_warm.py").write_text("def test_warm():\n    assert [1] == [1]\n")
        (root / "pytest.ini").write_text("[pytest]\njunit_family = xunit1\n")
        argv = [python, "-I", "-X", f"pycache_prefix={pycache_dir()}", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "-c", str(root / "pytest.ini"), "--rootdir", tmp, f"--junitxml={root / 'junit.xml'}", str(root / "test_warm.py")]
        try:
            subprocess.run(argv, cwd=tmp, env=scrubbed_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, source={"PATH": path or ""}),
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            pass
        _drop_tree_bytecode(root)


def _drop_tree_bytecode(repo: Path) -> None:
    shutil.rmtree(pycache_dir() / repo.resolve().relative_to(repo.resolve().anchor), ignore_errors=True)


def _selection(spec: TestSpec, nonce: str, key: bytes, sentinel_file: str | None, repo: Path,
               python_files: str) -> dict[str, object]:
    """What the runner reads (and deletes) before any test code loads; planted tests are not listed.
    ``python_files``: the baseline's pytest setting (which files a whole-suite run collects)."""
    ids = [*spec.fail_to_pass, *spec.pass_to_pass]
    heads = [i.split("::", 1)[0] for i in ids if "::" in i]
    files = sorted({h for h in heads if h.endswith(".py")}) if len(heads) == len(ids) else []
    if files and sentinel_file:
        files = sorted({*files, sentinel_file})
    return {"nonce": nonce, "key": key.hex(), "files": files, "ids": ids, "tree": str(repo.resolve()),
            "grader_files": grader_files(repo, spec, sentinel_file, python_files), "sources": _source_hashes(repo)}


def _source_hashes(repo: Path) -> dict[str, str]:
    """{absolute path: sha256} of every ``.py`` file of the tree as the run starts: the judge leaves a
    file's compile out of the run-time code only if it compiles these bytes (a module the code under
    test writes into the tree, or rewrites, while the tests run is measured as run-time code)."""
    root = repo.resolve()
    found: dict[str, str] = {}
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(top, d)) and d not in (".git", "__pycache__")]
        for name in names:
            path = os.path.join(top, name)
            if name.endswith(".py") and not os.path.islink(path):
                try:
                    found[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                except OSError:
                    continue
    return found


@dataclass(frozen=True)
class TestRun:
    """One test run and the verdict on whether it counts.

    Attributes:
        result: What the command did.
        report: The parsed JUnit report (None when there was none or it did not parse).
        invalid: Why the run cannot be trusted (None when it can).
        sentinel: The sentinel's node id (pytest runner), or None.
        compiled: Source texts the judge saw compiled below a frame of the submission (its record's
            ``compiled``; at most 1 MiB): code that ran without being a carried file.
        unmeasured: Why run-time code could not be carried as text (a code object built, a syntax
            tree compiled, the 1 MiB exceeded).
        generated: Texts ``dataclasses`` and ``namedtuple`` compiled for the submission (methods written
            from field names, which the submission chooses): measured unless they have those shapes.
        observed: With a :class:`~repogym_gym.graders.seal.Seal`, the sealed tests' observations from
            the judge's signed record (test id -> ``(count, chained sha256 hex)``); None without one.
    """

    __test__ = False

    result: CommandResult
    report: JUnitReport | None
    invalid: str | None
    sentinel: str | None = None
    junit_path: Path | None = None
    canaries: tuple[str, ...] = ()
    compiled: tuple[str, ...] = ()
    unmeasured: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()
    observed: dict[str, Observations] | None = None

    def planted(self) -> set[str]:
        """Ids of the tests the grader planted (sentinel and canaries), not the task's."""
        return {*self.canaries, *([self.sentinel] if self.sentinel else [])}

    def task_statuses(self) -> dict[str, str]:
        """Status of every test of the report but the planted ones, in report order ({} without a report)."""
        if self.report is None:
            return {}
        planted = self.planted()
        return {i: self.report.statuses[i] for i in self.report.ids if i not in planted}

    def task_output(self, limit_chars: int) -> str:
        """The last ``limit_chars`` characters of the run's output without the planted tests.

        Their failure sections, their lines of the short summary and pytest's totals (which count
        them) are dropped, so what an agent reads names only the task's tests.
        """
        return hide_planted(self.result.tail(limit_chars), self.planted())


#: A progress line of pytest: marks, after a file's path without ``-q``, and the share done.
_PROGRESS = re.compile(r"(\S+\.py )?[.FEsxX]+\s*(\[\s*\d+%\])?")


def hide_planted(output: str, planted: set[str]) -> str:
    """pytest ``output`` without the tests of ``planted`` (node ids): sections, summary lines, totals, and the
    progress lines (``.F.F..F  [100%]``), whose marks count the planted tests too (one mark each, in an order
    the output does not name)."""
    names = {i.rsplit("::", 1)[-1] for i in planted}
    kept, skipping = [], False
    for line in output.splitlines():
        header = re.match(r"^_{3,} (.+?) _{3,}$", line)
        if header:
            skipping = header.group(1).rsplit(".", 1)[-1] in names
        elif re.match(r"^={3,}", line):
            skipping = False
        if skipping or any(f"::{n}" in line for n in names) or SENTINEL_MESSAGE in line:
            continue
        if re.match(r"^=* ?\d+ (failed|passed)", line.strip("= ")) or _PROGRESS.fullmatch(line.rstrip()):
            continue  # pytest's totals and progress marks include the planted tests; the statuses above do not
        kept.append(line)
    return "\n".join(kept)


_FAILING_TAILS = (
    "assert {a} == {b}",
    "assert not {a}",
    "assert [{a}] == [{b}]",
    "assert str({a}) == {b!r}",
)


def _canary_name(names: list[str], taken: set[str], rng: random.Random) -> str:
    words = sorted({w for n in names for w in n.split("_") if w and w != "test"}) or ["case"]
    for size in (2, 3, 1, 4):
        for _ in range(8):
            name = "test_" + "_".join(rng.sample(words, min(size, len(words))))
            if name not in taken:
                return name
    return f"test_{rng.choice(words)}_{len(taken)}"


def _plant_canaries(repo: Path, spec: TestSpec) -> list[str]:
    """Plant must-fail tests that look like their neighbours in every scored test file of ``repo``.

    Each canary clones the body of a real test of the same file (so it reads like one), keeps
    that test's first statement when it is an assignment or an assertion (so it starts like one),
    then asserts what cannot hold (so the rest of the clone never runs: no side effects twice), is
    named by recombining words of the file's test names, and sits at a random position among the
    file's top-level definitions. A hook that
    forces the outcomes of a file's tests forces these too, and a run in which one passes is
    void. Only grader-owned copies get canaries, never a workspace; no file the judged process
    can read lists them.
    """
    rng = random.Random(secrets.randbits(64))
    files = sorted({i.split("::", 1)[0] for i in (*spec.fail_to_pass, *spec.pass_to_pass) if "::" in i})
    canaries = []
    for rel in files:
        path = repo / rel
        if not rel.endswith(".py") or not path.is_file() or path.is_symlink():
            continue
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
        donors = [f for f in functions if not f.decorator_list and not f.args.args and not any(
            isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for n in ast.walk(f))
            and not any(w in ast.unparse(f) for w in ("skip", "xfail"))]
        lines = text.splitlines(keepends=True)
        taken = {f.name for f in functions} | {n.name for n in tree.body if hasattr(n, "name")}
        inserts: list[tuple[int, str]] = []
        for _ in range(min(3, max(1, len(functions) // 3))):
            name = _canary_name([f.name for f in functions], taken, rng)
            taken.add(name)
            a = rng.randrange(2, 1000)
            tail = rng.choice(_FAILING_TAILS).format(a=a, b=a + 1)
            if donors:  # rebuilt from the AST: multi-line strings come out on one line, indentation uniform
                donor = rng.choice(donors)
                statements = [ast.unparse(stmt) for stmt in donor.body]
            else:
                statements = []
            # A canary starts like its donor (its first statement, when that is an assignment or an
            # assertion, so nothing recognises it by its start), then fails: the rest of the cloned
            # body reads like its neighbours but never runs, so a stateful test's side effects never
            # happen twice.
            lead = 1 if donors and isinstance(donor.body[0], (ast.Assign, ast.AnnAssign, ast.Assert)) else 0
            body = "\n".join([*statements[:lead], tail, *statements[lead:]])
            code = f"def {name}():\n" + textwrap.indent(body, "    ") + "\n"
            anchors = [f.end_lineno or f.lineno for f in functions] or [len(lines)]
            inserts.append((rng.choice(anchors), code))
            canaries.append(f"{rel}::{name}")
        for line_no, code in sorted(inserts, reverse=True):
            lines.insert(line_no, "\n\n" + code)
        path.write_text("".join(lines), encoding="utf-8", errors="surrogateescape")
    return canaries


def _plant_sentinel(repo: Path) -> tuple[str, str]:
    token = secrets.token_hex(6)
    filename = f"test_{token}.py"
    func = f"test_{secrets.token_hex(6)}"
    (repo / filename).write_text(f"def {func}():\n    assert False, {SENTINEL_MESSAGE!r}\n")
    return filename, f"{filename}::{func}"


def run_tests(
    spec: TestSpec,
    *,
    repo: Path,
    scratch: Path,
    baseline_tree: Path,
    sandbox: Sandbox,
    timeout_s: float,
    output_limit_bytes: int,
    sentinel: bool = True,
    extra_env: Mapping[str, str] | None = None,
    seal: Seal | None = None,
) -> TestRun:
    """Run the task's tests in ``repo`` and judge the run.

    Args:
        spec: The task's ``tests`` section.
        repo: The tree to test (a grading copy, or a workspace for visible-test feedback).
        scratch: A directory outside ``repo`` for the ini and the report.
        baseline_tree: Where the trusted pytest settings are read from.
        sandbox: Where the command runs.
        timeout_s: Seconds before the run is killed.
        output_limit_bytes: Output kept per stream.
        sentinel: Plant a must-fail sentinel test (pytest runner only).
        extra_env: More environment variables (e.g. a task's Python environment on PATH).
        seal: Test files to seal first (:mod:`repogym_gym.graders.seal`), and in which form.

    Raises:
        GraderError: when a file to seal does not parse, or ``seal`` is given for a runner that is not pytest.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    junit = scratch / f"junit-{secrets.token_hex(4)}.xml"
    if seal:
        if spec.runner != "pytest":
            raise GraderError("sealed tests need the pytest runner (the judge's record carries their observations)")
        seal_tree(repo, seal)
    sentinel_id = None
    nonce, key = "", b""
    canaries: list[str] = []
    if spec.runner == "pytest":
        ini = scratch / "pytest.ini"
        write_ini(ini, repo, baseline_tree, spec)
        sentinel_file = None
        if sentinel:
            sentinel_file, sentinel_id = _plant_sentinel(repo)
            canaries = _plant_canaries(repo, spec)
        runner = judge_dir() / RUNNER_SCRIPT.name
        nonce = f"@@repogym-{secrets.token_hex(16)}@@"
        key = secrets.token_bytes(32)  # the record's HMAC key: the runner reads it, the tests never can
        selection = scratch / f"selection-{secrets.token_hex(8)}.json"
        selection.write_text(json.dumps(_selection(spec, nonce, key, sentinel_file, repo,
                                                  baseline_pytest_settings(baseline_tree).get("python_files", ""))))
        argv = pytest_argv(spec, repo, ini, junit, sentinel_file, runner, selection)
        warm_pycache(extra_env or {})
        env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONHASHSEED": HASH_SEED}
    else:
        argv = ["bash", "-c", spec.command.replace("{junit}", shlex.quote(str(junit)))]
        env = {"PYTHONHASHSEED": HASH_SEED}  # the same orders for a Python test command the task runs itself
    # the runner's record (every test of the scored files) ends the output: keep room for it
    # (run-time code is carried up to 1 MiB of characters, up to 6 bytes each once escaped)
    limit = max(output_limit_bytes, 12_000_000) if nonce else output_limit_bytes
    try:
        result = sandbox.run(argv, cwd=repo, timeout_s=timeout_s, env={**(extra_env or {}), **env},
                             output_limit_bytes=limit, writable=[scratch])
    finally:
        # The code under test may have put anything where the sentinel was (a directory, a fifo):
        # remove whatever stands there, never raising, so it cannot turn a 0 into an infra error.
        if sentinel_id:
            discard_tree(repo / sentinel_id.split("::")[0])
        if spec.runner == "pytest":
            _drop_tree_bytecode(repo)
    shown: dict[str | os.PathLike[str], str] = {repo: "", scratch: "<scratch>/"}  # a reason reaches the agent and trainer
    record = None
    if nonce:
        record, stdout = read_record(result.stdout, nonce, key)
        result = result.model_copy(update={"stdout": stdout})
    if result.timed_out:
        return TestRun(result, None, f"the test run timed out after {timeout_s:g} s", sentinel_id, junit)
    try:
        report = parse_junit_xml(junit)
    except JUnitParseError as exc:
        # the judged process can write the report itself: what the parser says of it is cut short
        why = f"no usable test report (exit code {shown_exit_code(result.exit_code)}): {short_text(str(exc), 240)}"
        return TestRun(result, None, replace_paths(why, shown), sentinel_id, junit)
    invalid = _check_record(spec, result, report, record, sentinel_id, canaries) if nonce else None
    passing_canaries = [c for c in canaries if report.status_of(c) in ("passed", "skipped")]
    if passing_canaries and not invalid:
        invalid = f"must-fail tests planted in the test files did not fail ({len(passing_canaries)}): the outcomes were forced"
    compiled = tuple(record["compiled"]) if record else ()  # type: ignore[arg-type]
    unmeasured = tuple(record["unmeasured"]) if record else ()  # type: ignore[arg-type]
    generated = tuple(record["generated"]) if record else ()  # type: ignore[arg-type]
    observed = {k: (v[0], v[1]) for k, v in record["observed"].items()} if seal and record else None  # type: ignore[attr-defined]
    invalid = replace_paths(invalid, shown)
    return TestRun(result, report, invalid or _judge(spec, result, report, sentinel_id), sentinel_id, junit, tuple(canaries),
                   compiled, unmeasured, generated, observed)


def _check_record(spec: TestSpec, result: CommandResult, report: JUnitReport, record: dict[str, object] | None,
                  sentinel_id: str | None, canaries: list[str]) -> str | None:
    """Why the JUnit report cannot be trusted given the runner's own record, or None."""
    if record is None:
        return "the judge's record is missing or malformed (the process was cut short, or its output was forged)"
    violations = cast(list[str], record["violations"])  # read_record checked the record's schema and types
    if violations:
        shown = "; ".join(short_text(str(v), 160) for v in violations[:3])
        more = f" (and {len(violations) - 3} more)" if len(violations) > 3 else ""
        return f"the code under test broke the judge's policy: {shown}{more}"
    if record.get("exit_code") != result.exit_code:
        return f"the test process exited {shown_exit_code(result.exit_code)} but pytest returned {shown_exit_code(record.get('exit_code'))}"
    outcomes = record["record"]
    assert isinstance(outcomes, dict)
    for test_id in [*spec.fail_to_pass, *spec.pass_to_pass, *canaries, *([sentinel_id] if sentinel_id else [])]:
        if (outcomes.get(test_id) == "passed") != (report.status_of(test_id) == "passed"):
            return (f"the JUnit report says {test_id} {report.status_of(test_id)} but pytest recorded "
                    f"{outcomes.get(test_id, 'nothing')}: the report was rewritten")
    return None


def _judge(spec: TestSpec, result: CommandResult, report: JUnitReport, sentinel_id: str | None) -> str | None:
    failing = [i for i in report.failed_ids() if i != sentinel_id]
    if sentinel_id is not None:
        status = report.status_of(sentinel_id)
        if status != "failed":
            return f"the must-fail sentinel test is {status} in the report: the report is forged or the run was tampered with"
        if result.exit_code != 1:
            return f"pytest exited {shown_exit_code(result.exit_code)} but its report holds a failing test (expected exit code 1)"
        return None
    if spec.runner == "pytest":
        expected = 1 if failing else 0
        if result.exit_code != expected:
            return f"pytest exited {shown_exit_code(result.exit_code)} but its report says {len(failing)} failing tests"
        return None
    if (result.exit_code == 0) != (not failing):
        return f"the test command exited {shown_exit_code(result.exit_code)} but its report says {len(failing)} failing tests"
    return None
