"""Confinement: a confining sandbox shows only what the task needs, and is what agents get by default.

Measured at b5c7b20, before the allowlist: bubblewrap showed the host minus hidden paths and
Docker mounted the running interpreter whole, so an interpreter's ``site-packages`` holding
another release of the package under test (boto3 pulls jmespath 1.1.0 into the base
interpreter, its ``visitor.py`` identical to the golden one of the real-code suite's jmespath
tasks), a world-readable export of every episode's patch, or a second checkout of the suite
elsewhere on the host were all a ``diff`` or a ``cat`` away; ``gym.make`` with no sandbox ran a
policy's commands as root on the host; and the ``shell`` agent ran its command outside the
episode's sandbox while its result recorded ``"sandbox": "bwrap"``.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import repogym_gym  # noqa: F401  (registers RepoGym/Task-v0)
from repogym_gym.agents.registry import AgentSpec
from repogym_gym.episode import Episode
from repogym_gym.export import export_jsonl
from repogym_gym.runner import run_task
from repogym_gym.sandbox import Sandbox
from repogym_gym.task import Task, load_task
from tests.helpers import FIXED_SOURCE, GIT_ENV, MakeTask, git
from tests.redteam.helpers import GUARDRAIL, Start, assert_unearned_zero, attack, require_sandbox, run, script, submit

G = "information leaks"
FIX = "return a + b"  # only the golden version of calc/__init__.py (or a fixed source) holds it

READ_PROBE = """\
import glob, os, site, sys
for pattern in {patterns!r}:
    for path in sorted(glob.glob(pattern, recursive=True)) or [pattern]:
        try:
            with open(path, errors="replace") as fh:
                print("read", path, fh.read()[-3000:])
        except OSError as exc:
            print("unreadable", path, type(exc).__name__)
print("done")
"""


def _site_dirs() -> list[Path]:
    """The running interpreter's site-packages and its base installation's."""
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    return [Path(p) for p in dict.fromkeys([sysconfig.get_path("purelib"), base["purelib"]]) if os.path.isdir(p)]


@pytest.fixture
def planted_release() -> Iterator[list[Path]]:
    """Another release of the tiny task's package, its ``calc/__init__.py`` identical to the golden
    one, in each site-packages of the interpreter (as boto3's jmespath sits in the base
    interpreter's); under a directory name nothing imports."""
    token = secrets.token_hex(4)
    planted = []
    try:
        for site_dir in _site_dirs():
            release = site_dir / f"repogym_redteam_release_{token}"
            (release / "calc").mkdir(parents=True)
            (release / "calc" / "__init__.py").write_text(FIXED_SOURCE)
            planted.append(release)
        yield planted
    finally:
        for release in planted:
            shutil.rmtree(release, ignore_errors=True)


@attack(G, "another release of the package under test in the interpreter's site-packages (diff shows the golden patch)",
        local=GUARDRAIL, confining="no effect")
def test_another_release_in_the_interpreters_site_packages_is_out_of_sight(start: Start, tiny_task: Task,
                                                                         planted_release: list[Path]) -> None:
    """Confining sandboxes only: under LocalSandbox commands run the host's own interpreter.

    The sandbox binds the base interpreter's standard library, never a ``site-packages``; the
    ``python`` of a task without an environment of its own is the grader's test environment
    (pytest and what it requires), so no third-party package of the host is importable either.
    """
    env = start(tiny_task)
    patterns = [str(p / "calc" / "__init__.py") for p in planted_release]
    patterns += [f"{d}/repogym_redteam_release_*/calc/__init__.py" for d in _site_dirs()]  # as found by a search
    out = script(env, READ_PROBE.format(patterns=patterns)).observation.text
    assert "done" in out and FIX not in out, out
    for release in planted_release:
        diff = run(env, f"diff {release}/calc/__init__.py calc/__init__.py").observation.text
        assert FIX not in diff, diff
    probe = ("import importlib.util, site, sys\n"
             "print('third:', [m for m in ('yaml', 'pydantic', 'numpy', 'gymnasium', 'jmespath', 'boto3', 'repogym_gym')"
             " if importlib.util.find_spec(m)])\n")
    imports = script(env, probe, name="imports.py").observation.text
    assert "third: []" in imports, imports


#: Lists every Python module, archive and site directory in sight outside what a confining sandbox
#: shows on purpose (the interpreter's standard library, the task's environment, the grader's
#: bytecode cache, the workspace); covered files are devices there, not regular files.
PYTHON_CODE_PROBE = """\
import json, os, stat, sys
stdlib = [os.path.realpath(p) for p in {stdlib!r}]
shown = [os.path.realpath(p) for p in [{pycache!r}, {judge!r}, os.environ.get("VIRTUAL_ENV", "/nonexistent"), os.getcwd()]]
def under(path, roots):
    return any(path == r or path.startswith(r + "/") for r in roots)
found, stack = [], ["/"]
while stack:
    try:
        entries = list(os.scandir(stack.pop()))
    except OSError:
        continue
    for entry in entries:
        path = entry.path
        try:
            if entry.is_dir(follow_symlinks=False):
                if path in ("/proc", "/sys", "/dev"):
                    continue
                if entry.name in ("site-packages", "dist-packages") and not under(path, shown) and os.listdir(path):
                    found.append(path + "/")  # the standard library's own is covered: empty
                stack.append(path)
            elif stat.S_ISREG(os.lstat(path).st_mode):  # a covered file is a device here
                if entry.name.endswith((".py", ".pyc", ".pyi")) and not under(path, stdlib + shown):
                    found.append(path)
                elif entry.name.endswith((".whl", ".egg", ".pyz")) and not under(path, shown[-1:]):
                    found.append(path)
        except OSError:
            continue
print("python code in sight:", len(found), json.dumps(sorted(found)[:40]))
"""
#: Finds any other copy of the tiny task's module holding the fix, and adopts it (what diffing
#: against another release comes to).
ADOPT_PROBE = """\
import os
mine = os.path.realpath("calc/__init__.py")
for top, dirs, files in os.walk("/"):
    if top.startswith(("/proc", "/sys", os.getcwd())):
        dirs[:] = []
        continue
    for name in files:
        path = os.path.join(top, name)
        if (name == "calc.py" or path.endswith("/calc/__init__.py")) and os.path.realpath(path) != mine:
            try:
                text = open(path, errors="replace").read()
            except OSError:
                continue
            if {fix!r} in text:
                print("adopted", path)
                open("calc/__init__.py", "w").write(text)
print("searched")
"""


def _stdlib_dirs() -> list[str]:
    from repogym_gym.sandbox.runtime import python_runtime

    return list(python_runtime().dirs)


@pytest.fixture
def vendored_release(system_dirs: None) -> Iterator[list[Path]]:
    """Near-copies of the tiny task's fixed module where main's sandbox covered nothing: a cloud
    SDK's ``lib/third_party``, the ``setuptools/_vendor`` of an interpreter bundled in it, and
    a stray module in its ``bin`` beside its programs (the Google Cloud SDK under ``/usr/lib``
    held jmespath 0.10.0 and a Python 3.12 with setuptools' more_itertools); each differs from
    the golden file's bytes. The walk of the system directories is done once per process, so
    it is forgotten after planting (and after removing)."""
    from repogym_gym.sandbox.pytrees import clear_cache

    root = Path(tempfile.mkdtemp(prefix="repogym-redteam-sdk-", dir="/usr/lib"))
    near = "# calc 0.9, vendored\n" + FIXED_SOURCE + "\n\ndef mul(a, b):\n    return a * b\n"
    copies = [root / "lib" / "third_party" / "calc" / "__init__.py",
              root / "platform" / "python" / "lib" / "python3.12" / "site-packages" / "setuptools" / "_vendor" / "calc" / "__init__.py",
              root / "bin" / "calc.py"]
    try:
        for copy in copies:
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(near)
        (root / "platform" / "python" / "lib" / "python3.12" / "os.py").write_text("")
        for tool in ("sdk", "sdk-helper"):
            (root / "bin" / tool).write_text("#!/bin/sh\n")
            (root / "bin" / tool).chmod(0o755)
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() or path.name.startswith("sdk") else 0o644)
        clear_cache()
        yield copies
    finally:
        shutil.rmtree(root, ignore_errors=True)
        clear_cache()


@attack(G, "another release of the package under test elsewhere in the system directories or the image (a cloud SDK's "
           "third_party, a bundled interpreter's setuptools/_vendor, Debian's dist-packages): diff shows the golden patch",
        local=GUARDRAIL, confining="no effect, score 0")
def test_no_python_code_is_in_sight_but_the_stdlib_the_task_env_and_the_workspace(
        start: Start, tiny_task: Task, vendored_release: list[Path]) -> None:
    """Confining sandboxes only: under LocalSandbox commands read the host.

    Main covered the site directories of ``/usr/lib/python3*`` and ``/usr/local/lib/python3*``
    only: under bubblewrap, ``diff`` against the Google Cloud SDK's jmespath 0.10.0 earned 1.0 on
    jmespath-mut-254ea216, and the Docker image held Debian's dist-packages (more_itertools
    8.10.0). Now every Python tree of the bound system directories is covered (found by walking
    them) and the image holds none: the walk below finds no Python code but the interpreter's
    standard library, the task's environment, the grader's bytecode cache, the judge's own files
    (the runner and its policy, read-only) and the workspace, and
    an agent adopting whatever copy of the module it finds earns nothing.
    """
    from repogym_gym.graders.testrun import judge_dir, pycache_dir

    env = start(tiny_task)
    for copy in vendored_release:
        diff = run(env, f"diff {copy} calc/__init__.py").observation.text
        assert FIX not in diff, diff
    adopted = script(env, ADOPT_PROBE.format(fix=FIX), name="adopt.py").observation.text
    assert "searched" in adopted and "adopted" not in adopted, adopted
    probe = PYTHON_CODE_PROBE.format(stdlib=_stdlib_dirs(), pycache=str(pycache_dir()), judge=str(judge_dir()))
    listing = script(env, probe, name="probe.py").observation.text
    assert "python code in sight: 0 []" in listing, listing
    assert_unearned_zero(submit(env))


@attack(G, "another release vendored in the task's own environment or the interpreter's library (setuptools and "
           "pkg_resources _vendor, ensurepip's setuptools wheel)", local=GUARDRAIL, confining="no effect")
def test_the_task_environment_and_the_interpreter_carry_no_vendored_release(start: Start, make_task: MakeTask) -> None:
    """Confining sandboxes only: under LocalSandbox the host's interpreter and its wheels are read.

    A task env was a venv with pip and setuptools 65.5.0, whose ``_vendor`` (and pkg_resources')
    held more_itertools 8.8.0 with the golden hunks of three real-code tasks; the interpreter's
    ``ensurepip/_bundled`` holds that setuptools as a wheel. The env now holds its requirements
    and what they require, and the wheels are covered.
    """
    task = make_task(repo={"env": {"requirements": [f"pytest=={pytest.__version__}"]}})
    env = start(task)
    code = textwrap.dedent(f"""\
        import os, sys, zipfile
        roots = [os.environ["VIRTUAL_ENV"], *{_stdlib_dirs()!r}]
        for root in roots:
            for top, dirs, files in os.walk(root):
                for name in dirs:
                    if name in ("_vendor", "setuptools", "pkg_resources", "pip", "_distutils_hack"):
                        print("vendored:", os.path.join(top, name), sorted(os.listdir(os.path.join(top, name)))[:8])
                for name in files:
                    if name.endswith((".whl", ".egg")):
                        try:
                            with zipfile.ZipFile(os.path.join(top, name)) as archive:
                                print("wheel:", name, [n for n in archive.namelist() if "_vendor/" in n][:3])
                        except (OSError, zipfile.BadZipFile) as exc:
                            print("unreadable:", name, type(exc).__name__)
        print("prefix", sys.prefix, "done")
        """)
    out = script(env, code, name="vendored.py").observation.text
    assert "done" in out and "/envs/" in out.split("prefix", 1)[1], out  # it ran in the task's environment
    assert "vendored:" not in out and "wheel:" not in out, out


@pytest.fixture
def exported(tiny_task: Task, host_dir: Path) -> tuple[Path, Path]:
    """A golden run of the tiny task in ``host_dir/run`` and its export ``host_dir/exports/golden.jsonl``."""
    out, export = host_dir / "run", host_dir / "exports" / "golden.jsonl"
    results = run_task(tiny_task, "golden", out=out, sandbox="local")
    assert results[0].score == 1.0
    assert export_jsonl(out, export) == 1
    assert FIX in export.read_text()  # the patch that earned the score
    return out, export


@attack(G, "an export (JSONL of every episode's patch) or a results directory read by a later episode",
        local=GUARDRAIL, confining="no effect")
def test_exports_and_results_are_private_and_out_of_sight(sandbox: Sandbox, tiny_task: Task,
                                                         exported: tuple[Path, Path]) -> None:
    """Confining sandboxes only: under LocalSandbox commands run as the files' owner.

    Every file is 0600 and every directory the runner and the export made is 0700, so even a
    sandbox that shows the directory (revealed here on purpose) leaves them unreadable to the
    command's unprivileged uid.
    """
    out, export = exported
    made = [out, *(p for p in out.rglob("*") if p.is_dir()), export.parent]
    files = [export, *(p for p in out.rglob("*") if p.is_file())]
    assert {oct(p.stat().st_mode & 0o777) for p in made} == {"0o700"}, [(str(p), oct(p.stat().st_mode)) for p in made]
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {"0o600"}
    assert any(p.suffix == ".json" and "trajectories" in p.parts for p in files)
    patterns = [str(export), f"{out}/**/*.json"]
    for box in (sandbox, sandbox.scoped(reveal=[out.parent])):  # type: ignore[attr-defined]
        env = Episode(tiny_task, sandbox=box)
        try:
            env.reset()
            text = script(env, READ_PROBE.format(patterns=patterns)).observation.text
        finally:
            env.close()
        assert "done" in text and FIX not in text, text


@pytest.fixture
def second_checkouts(tiny_task: Task, host_dir: Path) -> Iterator[tuple[Task, list[Path]]]:
    """The tiny task in a suite checkout outside /tmp, plus a copy of that suite under /opt and a
    ``git clone`` of it under /srv: every one holds the golden patch (the clone in its history)."""
    suite = host_dir / "suite"
    shutil.copytree(tiny_task.root, suite / "tiny-calc")
    (suite / "README.md").write_text("suite\n")
    git(suite, "init", "-q")
    git(suite, "add", "-A")
    git(suite, "commit", "-qm", "tasks")
    others = [Path(tempfile.mkdtemp(prefix="repogym-redteam-", dir=d)) for d in ("/opt", "/srv")]
    try:
        for other in others:
            other.chmod(0o755)
        shutil.copytree(suite, others[0] / "suite", symlinks=True)
        subprocess.run(["git", "clone", "-q", str(suite), str(others[1] / "clone")], check=True, env=GIT_ENV,
                       capture_output=True)
        yield load_task(suite / "tiny-calc"), [others[0] / "suite", others[1] / "clone"]
    finally:
        for other in others:
            shutil.rmtree(other, ignore_errors=True)


@attack(G, "a second checkout of the suite elsewhere on the host (a copy under /opt, a git clone)", local=GUARDRAIL,
        confining="no effect")
def test_a_second_checkout_of_the_suite_is_out_of_sight(start: Start, second_checkouts: tuple[Task, list[Path]]) -> None:
    """Confining sandboxes only: under LocalSandbox commands read the host.

    No list of hidden paths can name every copy; the sandbox shows an allowlist, so no copy is
    there to read.
    """
    task, copies = second_checkouts
    assert all(FIX in (c / "tiny-calc" / "solution.patch").read_text() for c in copies)
    env = start(task)
    patterns = [f"{c}/tiny-calc/solution.patch" for c in copies] + [f"{c}/**/*hidden*.py" for c in copies]
    out = script(env, READ_PROBE.format(patterns=patterns)).observation.text
    history = script(env, "import subprocess\n"
                          f"for repo in {[str(c) for c in copies]!r}:\n"
                          "    p = subprocess.run(['git', '-c', 'safe.directory=*', '-C', repo, 'log', '-p', '--all'],"
                          " capture_output=True, text=True)\n"
                          "    print(repo, p.returncode, p.stdout[-5000:], p.stderr[-200:])\n", name="history.py").observation.text
    assert "done" in out and FIX not in out and "test_add_negative" not in out, out
    assert FIX not in history, history


C = "confinement"


@attack(C, "gym.make with no sandbox named: the policy's commands run as root on the host", local="n/a (local is asked for)",
        confining="confined")
def test_gym_make_confines_a_policy_by_default(sandbox_name: str, make_task: MakeTask, host_dir: Path) -> None:
    """``gym.make`` names no sandbox here: bubblewrap is the default where it runs, Docker where
    the task asks for it. The drop directory is world-writable, so only the sandbox stands in
    the way of a write there."""
    require_sandbox(sandbox_name).close()
    overrides = {} if sandbox_name == "bwrap" else {"environment": {"sandbox": sandbox_name}}
    task = make_task(**overrides)
    drop = host_dir / "drop"
    drop.mkdir(mode=0o777)
    drop.chmod(0o777)
    env = gym.make("RepoGym/Task-v0", task=str(task.root))
    try:
        env.reset(seed=0)
        assert env.unwrapped.sandbox_name == sandbox_name  # type: ignore[attr-defined]
        code = f"import os; print('uid', os.getuid()); open({str(drop / 'escaped')!r}, 'w').write('x')"
        step = env.step({"kind": "run", "command": f"python -c {shlex.quote(code)}"})
        out = step[0]["text"]
    finally:
        env.close()
    uid = out.split("uid ", 1)[1].split()[0] if "uid " in out else ""
    assert uid.isdigit() and int(uid) != 0, out
    assert list(drop.iterdir()) == [], out


@attack(C, "the shell agent's command run as root outside the episode's sandbox (its result saying bwrap)",
        local=GUARDRAIL, confining="confined, recorded")
def test_the_shell_agents_command_runs_in_the_sandbox_its_result_records(sandbox_name: str, tiny_task: Task,
                                                                        host_dir: Path, tmp_path: Path) -> None:
    """Confining sandboxes only: under LocalSandbox the command runs as the host user.

    Run by ``run_task`` (the runner's own path), the command prints its uid and tries to write
    outside the workspace; the result must name the sandbox the command really ran in."""
    require_sandbox(sandbox_name).close()
    drop = host_dir / "drop"
    drop.mkdir(mode=0o777)
    drop.chmod(0o777)
    code = (f"import os; print('uid', os.getuid()); open({str(drop / 'escaped')!r}, 'w').write('x')")
    spec = AgentSpec(type="shell", options={"command": shlex.join(["python", "-c", code]), "timeout_s": 120})
    (result,) = run_task(tiny_task, spec, out=tmp_path / "run", sandbox=sandbox_name)
    assert result.status == "graded" and result.sandbox == sandbox_name, result
    log = (result.conversation or [{}, {}])[1].get("content", "")
    assert "uid " in log and int(log.split("uid ", 1)[1].split()[0]) != 0, log
    assert list(drop.iterdir()) == [], log


def test_the_read_probe_finds_what_it_is_pointed_at(tmp_path: Path) -> None:
    """The probe above reads a file it is given (a check of the probe, outside any sandbox)."""
    target = tmp_path / "x" / "calc" / "__init__.py"
    target.parent.mkdir(parents=True)
    target.write_text(FIXED_SOURCE)
    code = READ_PROBE.format(patterns=[str(target), f"{tmp_path}/**/calc/__init__.py"])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.count(FIX) == 2 and "done" in out
