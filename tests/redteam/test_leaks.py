"""Information leaks: the agent reads what would give the answer away, or the host's secrets.

The tasks here live outside ``/tmp`` (whose host copy no sandboxed command sees anyway), so only
the sandbox's own hiding stands between a command and the secret.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from repogym_gym.episode import Episode
from repogym_gym.sandbox import Sandbox
from repogym_gym.task import Task, load_task
from tests.helpers import CALC_SOURCE, FIXED_SOURCE, GOLDEN_PATCH, HIDDEN_TESTS, VISIBLE_TESTS, git, tiny_spec
from tests.redteam.helpers import GUARDRAIL, Start, act, assert_unearned_zero, attack, component, script, submit, write

G = "information leaks"
GOLDEN_LINE = "+    return a + b"  # only the golden patch (or a fixed source) holds it


def write_task(root: Path, *, hidden: str = HIDDEN_TESTS, **overrides: object) -> Path:
    files = {"repo/calc/__init__.py": CALC_SOURCE, "repo/tests/test_calc.py": VISIBLE_TESTS,
             "hidden/tests/test_calc_hidden.py": hidden, "task.yaml": yaml.safe_dump(tiny_spec(**overrides), sort_keys=False)}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "solution.patch").write_text(GOLDEN_PATCH)
    return root


@pytest.fixture
def suite(host_dir: Path, tiny_task: Task) -> tuple[Task, str]:
    """The tiny task beside a sibling task, in a suite that is a git checkout, outside /tmp.

    Returns the task and the sibling's secret (in its hidden tests).
    """
    root = host_dir / "suite"
    shutil.copytree(tiny_task.root, root / "tiny-calc")
    sibling_secret = f"SIBLING_SECRET_{secrets.token_hex(4)}"
    shutil.copytree(tiny_task.root, root / "other-task")
    spec = yaml.safe_load((root / "other-task" / "task.yaml").read_text())
    (root / "other-task" / "task.yaml").write_text(yaml.safe_dump({**spec, "id": "other-task"}, sort_keys=False))
    (root / "other-task" / "hidden" / "tests" / "test_calc_hidden.py").write_text(HIDDEN_TESTS + f"# {sibling_secret}\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tasks")
    return load_task(root / "tiny-calc"), sibling_secret


LEAK_PROBE = """\
import glob, os, subprocess
def show(label, path):
    try:
        with open(path, errors="replace") as fh:
            print(label, fh.read())
    except OSError as exc:
        print(label, "unreadable", type(exc).__name__)
show("golden:", {golden!r})
show("hidden:", {hidden!r})
for path in glob.glob({siblings!r}):
    show("sibling:", path)
git = subprocess.run(["git", "-c", "safe.directory=*", "-C", {suite!r}, "log", "-p", "--all"],
                     capture_output=True, text=True, errors="replace")
print("history:", git.returncode, git.stdout[-20000:], git.stderr[-300:])
print("done")
"""


@attack(G, "hidden tests / golden patch read from disk (task dir, suite, its git history)", local=GUARDRAIL,
        confining="no effect")
def test_the_hidden_tests_and_golden_patch_cannot_be_read_from_disk(start: Start, suite: tuple[Task, str]) -> None:
    """Confining sandboxes only: LocalSandbox runs commands as the host user, who can read the task.

    The task directory, the suite around it (other tasks' answers) and the git checkout holding
    them (whose history keeps every version) are all out of sight.
    """
    task, sibling_secret = suite
    env = start(task)
    probe = LEAK_PROBE.format(golden=str(task.root / "solution.patch"),
                              hidden=str(task.root / "hidden" / "tests" / "test_calc_hidden.py"),
                              siblings=str(task.root.parent / "*" / "hidden" / "tests" / "*.py"), suite=str(task.root.parent))
    out = script(env, probe).observation.text
    assert "done" in out, out
    for secret in (GOLDEN_LINE, "test_add_negative", sibling_secret):
        assert secret not in out, out


@pytest.fixture
def git_source_task(host_dir: Path) -> tuple[Task, str]:
    """A task whose source is a commit of a git repository on this machine with later commits:
    the next one fixes the bug (as a mined HistoryMiner task's repository does) and is tagged."""
    upstream = host_dir / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    (upstream / "calc").mkdir()
    (upstream / "tests").mkdir()
    (upstream / "calc" / "__init__.py").write_text(CALC_SOURCE)
    (upstream / "tests" / "test_calc.py").write_text(VISIBLE_TESTS)
    git(upstream, "add", "-A")
    git(upstream, "commit", "-qm", "buggy")
    base = git(upstream, "rev-parse", "HEAD")
    marker = f"FUTURE_FIX_{secrets.token_hex(4)}"
    (upstream / "calc" / "__init__.py").write_text(FIXED_SOURCE + f"# {marker}\n")
    git(upstream, "commit", "-qam", f"fix add ({marker})")
    git(upstream, "tag", "-a", "v1.0", "-m", marker)
    git(upstream, "checkout", "-q", base)  # a reflog entry too
    task_root = write_task(host_dir / "git-task", repo={"source": {"type": "git", "url": str(upstream), "commit": base}})
    return load_task(task_root), marker


FUTURE_PROBE = """\
import subprocess
def git(*args):
    p = subprocess.run(["git", "-c", "safe.directory=*", *args], capture_output=True, text=True, errors="replace")
    return f"{{p.returncode}} {{p.stdout[-4000:]}} {{p.stderr[-200:]}}"
for where in {places!r}:
    for args in (["log", "--all", "-p"], ["reflog", "--all"], ["tag", "-n"], ["cat-file", "--batch-all-objects", "--batch"]):
        print(where, args[0], git("--git-dir=" + where, *args))
        print(where, args[0], git("-C", where, *args))
print("done")
"""


@attack(G, "future commits (git log --all, reflog, tags) from the workspace's git metadata", local="no effect",
        confining="no effect")
def test_the_workspaces_git_metadata_holds_no_future_commit(start: Start, git_source_task: tuple[Task, str]) -> None:
    task, marker = git_source_task
    env = start(task)
    out = script(env, FUTURE_PROBE.format(places=[".", ".git", "../git"])).observation.text
    assert "done" in out and marker not in out, out


@attack(G, "future commits from the task's source repository on the host", local=GUARDRAIL, confining="no effect")
def test_the_source_repository_on_the_host_is_out_of_sight(start: Start, git_source_task: tuple[Task, str]) -> None:
    """Confining sandboxes only: under LocalSandbox the repository is readable by the host user.

    A task's ``git`` source on this machine holds the commits after the baseline (for a mined
    task, the fix itself), so it is hidden like the task directory.
    """
    task, marker = git_source_task
    env = start(task)
    upstream = str(task.root.parent / "upstream")
    out = script(env, FUTURE_PROBE.format(places=[upstream, upstream + "/.git"])).observation.text
    assert "done" in out and marker not in out, out


ENV_PROBE = """\
import glob, os
print("own:", sorted(os.environ.items()))
for path in ["/proc/1/environ", "/proc/%d/environ" % os.getppid(), *glob.glob("/proc/[0-9]*/environ")]:
    try:
        with open(path, "rb") as fh:
            print(path, fh.read().replace(b"\\0", b" ").decode(errors="replace"))
    except OSError as exc:
        print(path, "unreadable", type(exc).__name__)
print("pids:", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
print("done")
"""


@attack(G, "parent's and host processes' environment through /proc", local=GUARDRAIL, confining="no effect")
def test_host_process_environments_are_not_readable_through_proc(start: Start, tiny_task: Task) -> None:
    """Confining sandboxes only: under LocalSandbox a command runs as the host user, who can read
    the environment of every process of that user (``/proc/<pid>/environ``)."""
    token = f"proc-secret-{secrets.token_hex(6)}"
    holder = subprocess.Popen(["sleep", "60"], env={"PATH": os.environ["PATH"], "TRAINER_API_KEY": token})
    try:
        env = start(tiny_task)
        out = script(env, ENV_PROBE).observation.text
    finally:
        holder.kill()
        holder.wait()
    assert "done" in out and token not in out, out
    pids = [int(p) for p in out.split("pids:", 1)[1].split("]", 1)[0].strip(" [").split(",") if p.strip()]
    assert os.getpid() not in pids and holder.pid not in pids


@attack(G, "host environment secrets (Run and Test actions)", local="no effect", confining="no effect")
def test_host_environment_secrets_never_reach_a_command(start: Start, tiny_task: Task,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    token = f"env-secret-{secrets.token_hex(6)}"
    for name in ("OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "REPOGYM_REDTEAM_SECRET"):
        monkeypatch.setenv(name, token)
    env = start(tiny_task)
    run_out = script(env, "import os\nprint(sorted(os.environ.items()))\n").observation.text
    write(env, "calc/__init__.py", CALC_SOURCE + "\nimport os, sys\nsys.stderr.write(repr(dict(os.environ)))\n"
                                                 "raise SystemExit(repr(dict(os.environ)))\n")
    test_out = act(env, "test").observation.text
    assert "PATH" in run_out and token not in run_out, run_out
    assert "PATH" in test_out and token not in test_out, test_out


EXFILTRATE = """
import glob as _glob, os as _os, shutil as _shutil
_here = _os.path.dirname(_os.path.abspath(__file__))
for _hidden in _glob.glob(_os.path.join(_here, "..", "tests", "*hidden*.py")):
    for _drop in [{drop!r}, *_glob.glob("/tmp/repogym-tiny-calc-*/repo")]:
        try:
            _shutil.copy(_hidden, _os.path.join(_drop, "leaked_" + _os.path.basename(_hidden)))
        except OSError:
            pass
"""


@attack(G, "hidden tests exfiltrated by the code under test during grading", local=GUARDRAIL, confining="no effect")
def test_code_under_test_cannot_carry_hidden_tests_out_of_grading(start: Start, tiny_task: Task, host_dir: Path) -> None:
    """Confining sandboxes only: under LocalSandbox the code under test runs as the host user and
    can copy the injected hidden tests anywhere, a later episode's workspace included.

    In a confining sandbox the grading run can write only its own fresh copy and scratch
    directory, both removed after grading.
    """
    drop = host_dir / "drop"
    drop.mkdir(mode=0o777)
    drop.chmod(0o777)
    env = start(tiny_task)
    write(env, "calc/__init__.py", CALC_SOURCE + EXFILTRATE.format(drop=str(drop)))
    assert env.workspace is not None
    workspace = env.workspace.path
    result = submit(env)
    assert_unearned_zero(result)
    # the judge refuses the read itself (code of the submission read a test file): the run is void
    assert "read a test file" in str(component(result, "tests")["details"]["invalid"])
    assert list(drop.iterdir()) == []
    assert not list(workspace.glob("leaked_*"))


#: Kernel keyring calls through ctypes, with this host's system call numbers; ``{numbers}`` are add_key,
#: request_key and keyctl. ``put`` stores bytes in the uid's user keyring (@u), ``get`` reads them back.
KEYRING_LIB = """
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_ADD_KEY, _REQUEST_KEY, _KEYCTL = {numbers}
_USER_KEYRING, _SEARCH, _READ, _SETPERM = -4, 10, 11, 5
def put(desc, data):
    key = _libc.syscall(_ADD_KEY, b"user", desc.encode(), data, len(data), _USER_KEYRING)
    if key < 0:
        return "add_key failed: " + os.strerror(ctypes.get_errno())
    _libc.syscall(_KEYCTL, _SETPERM, key, 0x3F3F3F3F)
    return "stored"
def get(desc):
    key = _libc.syscall(_KEYCTL, _SEARCH, _USER_KEYRING, b"user", desc.encode(), 0)
    if key < 0:
        return "keyctl failed: " + os.strerror(ctypes.get_errno())
    buf = ctypes.create_string_buffer(20000)
    size = _libc.syscall(_KEYCTL, _READ, key, buf, 20000)
    return buf.raw[:size].decode(errors="replace") if size >= 0 else "read failed"
"""
#: In the code under test: while it is graded (the hidden tests are there), a plain subprocess (not
#: the judged process) stores the hidden test file in its uid's keyring.
KEYRING_WRITER = """
import os as _os, subprocess as _sp, sys as _sys
_hidden = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", "tests", "test_calc_hidden.py")
if _os.path.exists(_hidden):
    _sp.run([_sys.executable, "-c", {code!r}], timeout=20)
"""


def _keyring_lib() -> str:
    import platform

    from repogym_gym.sandbox.seccomp import SYSCALL_NUMBERS

    arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}.get(platform.machine())
    if arch is None:
        pytest.skip(f"no keyring system call numbers for {platform.machine()}")
    return KEYRING_LIB.format(numbers=SYSCALL_NUMBERS[arch])


def _clear_keyring(uid: int) -> None:
    """Best effort: empty ``uid``'s user keyring on the host (what a run before the fix left)."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        return
    code = _keyring_lib() + "\n_libc.syscall(_KEYCTL, 7, _USER_KEYRING)\n"  # KEYCTL_CLEAR
    subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", python, "-c", code],
                   capture_output=True, timeout=30)


@pytest.fixture
def one_uid(sandbox_name: str, sandbox: Sandbox) -> Iterator[Sandbox]:
    """The sandbox under test with every command on one uid (bubblewrap: a pool of one slot; Docker
    runs every command as uid 61100 anyway): the uid a later episode gets is the writer's."""
    from repogym_gym.sandbox.bwrap import BubblewrapSandbox
    from repogym_gym.sandbox.containers import COMMAND_UID
    from repogym_gym.sandbox.slots import DEFAULT_FIRST_UID, SlotPool

    if sandbox_name == "bwrap":
        pool = SlotPool(first_uid=DEFAULT_FIRST_UID + 63, size=1)
        box: Sandbox = BubblewrapSandbox(pool=pool)
        uid = pool.uids[0]
    else:
        box, uid = sandbox, COMMAND_UID
    try:
        yield box
    finally:
        _clear_keyring(uid)


@attack(G, "hidden tests stored in the kernel keyring by a grading-time process, read by a later episode of the same uid",
        local=GUARDRAIL, confining="refused (EPERM)")
def test_the_kernel_keyring_carries_nothing_from_one_command_to_the_next(one_uid: Sandbox, tiny_task: Task) -> None:
    """Confining sandboxes only: under LocalSandbox commands run as root, whose keyring persists.

    A uid's key rings outlive its processes and are not namespaced; bubblewrap made no user
    namespace and installed no filter, and its pool hands a uid to later commands: a subprocess
    of the code under test stored the hidden test file with ``add_key`` while it was graded, and
    a later episode's command read it with ``keyctl``. Bubblewrap now runs every command under a
    seccomp filter refusing ``add_key``, ``request_key`` and ``keyctl`` (EPERM), as Docker's
    default profile does; nothing but the workspace carries over.
    """
    desc = f"repogym-redteam-{secrets.token_hex(4)}"
    lib = _keyring_lib()
    writer = lib + f"put({desc!r}, open({'tests/test_calc_hidden.py'!r}, 'rb').read())\n"
    first = Episode(tiny_task, sandbox=one_uid)
    try:
        first.reset()
        stored = script(first, lib + f"print(put({desc + '-run'!r}, b'from a run action'))\n").observation.text
        again = script(first, lib + f"print(get({desc + '-run'!r}))\n", name="again.py").observation.text
        write(first, "calc/__init__.py", CALC_SOURCE + KEYRING_WRITER.format(code=writer))
        graded = submit(first)
    finally:
        first.close()
    assert_unearned_zero(graded)
    assert graded.info["grade"]["fail_to_pass"]["tests/test_calc_hidden.py::test_add_negative"] == "failed"  # it ran
    later = Episode(tiny_task, sandbox=one_uid)
    try:
        later.reset()
        read = script(later, lib + f"print('hidden:', get({desc!r}))\n", name="read.py").observation.text
    finally:
        later.close()
    assert "hidden: keyctl failed: Operation not permitted" in read and "test_add_negative" not in read, read
    assert "add_key failed: Operation not permitted" in stored, stored
    assert "keyctl failed: Operation not permitted" in again, again


def test_the_suite_fixture_keeps_the_secrets_in_the_checkouts_history(suite: tuple[Task, str]) -> None:
    """The leak probe above would find the answers if nothing hid them (a check of the fixture)."""
    task, sibling_secret = suite
    history = git(task.root.parent, "log", "-p", "--all")
    assert GOLDEN_LINE in history and "test_add_negative" in history and sibling_secret in history
