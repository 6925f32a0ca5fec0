"""Host-side reads: the agent shapes what the host parses (trees, names, settings, source, text).

Every read the host makes of what the agent controls is total: a tree nested past PATH_MAX or
thousands of levels deep, a name that is not UTF-8, a ``pyproject.toml`` or a module nested too
deeply for a recursive parser, text with lone surrogates. A failure caused by the submission is
a graded 0 with its reason (never ``infra_error``, which trainers drop, so a policy that found it
would never see a negative reward) or an error observation for a bad action, and never an
exception out of ``step()``. Each attack below also applies the real fix, so the reason it names
is the only thing between the submission and a score of 1.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from repogym_gym.episode import Episode, StepResult
from repogym_gym.sandbox.disk import tree_bytes
from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE, MakeTask
from tests.redteam.helpers import (
    GUARDRAIL,
    Start,
    act,
    assert_unearned_zero,
    attack,
    component,
    messages,
    run,
    script,
    submit,
    violations,
    write,
)

G = "host-side reads"
_MB = 1024 * 1024

# 20 directories of 250 bytes: 5,000 bytes of path, past PATH_MAX (4,096) from the workspace alone
PAST_PATH_MAX = """\
import os
for _ in range(20):
    os.mkdir("d" * 250)
    os.chdir("d" * 250)
with open("deep.py", "w") as fh:
    fh.write("x = 1\\n")
print("nested", len(os.getcwd()), flush=True)
"""


def assert_utf8_everywhere(result: StepResult) -> None:
    """Every string of the observation and of info encodes as UTF-8 (strict), and info is JSON."""
    obs = result.observation
    obs.text.encode("utf-8")
    (obs.error or "").encode("utf-8")
    json.dumps(result.info, ensure_ascii=False).encode("utf-8")


def fixed(env: Episode) -> None:
    write(env, "calc/__init__.py", FIXED_SOURCE)


@attack(G, "expression nested 100,000 deep in a never-imported module (the quality grader's parser)",
        local="score 0", confining="score 0")
def test_an_expression_too_deep_to_parse_scores_0_not_infra_error(start: Start, make_task: MakeTask) -> None:
    """``ast.parse`` of ``1+1+...+1`` (100,000 terms) raises RecursionError; before, the quality
    grader crashed and the episode was masked as ``infra_error``. Now the file is unmeasurable: 0."""
    env = start(make_task(constraints={"max_function_length": 50}))
    fixed(env)
    write(env, "calc/never_imported.py", "x = " + "+".join(["1"] * 100_000) + "\n")
    result = submit(env)
    assert_unearned_zero(result)
    quality = component(result, "quality")
    assert quality["passed"] is False and any("nested too deeply" in m for m in quality["messages"]), quality
    assert component(result, "tests")["score"] == 1.0  # the fix itself works: the deep module is the only reason


@attack(G, "directory nested past PATH_MAX (ListFiles, Test, Submit, trajectory)", local="score 0",
        confining="score 0")
def test_a_directory_nested_past_path_max_scores_0(start: Start, tiny_task: Task, tmp_path: Path) -> None:
    """Before, Submit raised ``OSError: [Errno 36] File name too long`` out of ``step()``."""
    env = start(tiny_task, trajectory_dir=tmp_path / "trajectories")
    fixed(env)
    out = script(env, PAST_PATH_MAX).observation
    assert out.exit_code == 0 and "nested" in out.text, out.text
    listing = act(env, "list_files")
    assert listing.observation.error is None and "calc/__init__.py" in listing.observation.text
    test = act(env, "test")
    assert "Not run as submitted" in test.observation.text and "byte limit" in test.observation.text, test.observation.text
    result = submit(env)
    assert_unearned_zero(result)
    assert any("1024-byte limit" in v for v in violations(result, "file_types")), violations(result, "file_types")
    assert Path(result.info["trajectory_path"]).is_file()
    for step in (listing, test, result):
        assert_utf8_everywhere(step)


@attack(G, "directory nested past PATH_MAX, then more commands (round 43: the sandbox's hand-over walk failed "
        "before every command)", local="runs as usual", confining="runs as usual")
def test_commands_still_run_after_a_tree_past_path_max(start: Start, tiny_task: Task) -> None:
    """Round 43: before each command the confining sandboxes hand the workspace to the sandbox's uid with a
    path-based walk, which raised ``ENAMETOOLONG`` below the deep tree: every later Run failed, the one that
    removes the tree included. The walk goes through directory descriptors now."""
    env = start(tiny_task)
    fixed(env)
    assert script(env, PAST_PATH_MAX).observation.exit_code == 0
    again = run(env, "ls -d dddd* && echo still-runs")
    assert again.observation.error is None and "still-runs" in again.observation.text, again.observation.text
    removed = run(env, "rm -rf " + "d" * 250 + " attack.py")
    assert removed.observation.exit_code == 0, removed.observation.text
    result = submit(env)
    assert result.info.get("infra_error") is None and result.reward == 1.0, result.info.get("grade")


@attack(G, "pyproject.toml of 5,000 nested arrays (Test, Submit)", local="score 0", confining="score 0")
def test_a_pyproject_too_deep_to_parse_scores_0(start: Start, tiny_task: Task) -> None:
    """tomllib recurses: 5,000 nested arrays raised RecursionError out of Test and Submit. Settings
    that cannot be read cannot be shown unchanged, so the file is not carried (a constraint)."""
    env = start(tiny_task)
    fixed(env)
    write(env, "pyproject.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n")
    test = act(env, "test").observation
    assert "Not run as submitted" in test.text and "pyproject.toml" in test.text, test.text
    result = submit(env)
    assert_unearned_zero(result)
    assert any("pyproject.toml" in v for v in violations(result)), violations(result)


@attack(G, "file name that is not UTF-8 (ListFiles, Test, Submit, trajectory)", local="score 0",
        confining="score 0")
def test_a_file_name_that_is_not_utf8_scores_0_and_every_observation_is_utf8(start: Start, tiny_task: Task,
                                                                           tmp_path: Path) -> None:
    """Before, ListFiles showed a lone surrogate (not UTF-8) and Submit raised while writing the
    trajectory. Observations replace it with U+FFFD; the file is not carried (a constraint)."""
    env = start(tiny_task, trajectory_dir=tmp_path / "trajectories")
    fixed(env)
    out = run(env, "python -c \"open(b'calc/bad\\xff.py', 'w').write('x = 1')\"").observation
    assert out.exit_code == 0, out.text
    listing = act(env, "list_files")
    assert "calc/bad\ufffd.py" in listing.observation.text, listing.observation.text
    test = act(env, "test")
    assert "not valid UTF-8" in test.observation.text, test.observation.text
    result = submit(env)
    assert_unearned_zero(result)
    assert any("b'calc/bad\\xff.py'" in v for v in violations(result, "file_types")), violations(result, "file_types")
    assert "calc/bad\ufffd.py" in result.info["grade"]["files_changed"]
    Path(result.info["trajectory_path"]).read_text(encoding="utf-8")  # written, and valid UTF-8
    for step in (listing, test, result):
        assert_utf8_everywhere(step)


@pytest.mark.parametrize("kind", ["write", "edit", "read", "run", "raw-json"])
@attack(G, "lone surrogate in an action's text (write, edit, read, run, JSON escape)", local="refused",
        confining="refused")
def test_an_action_with_a_lone_surrogate_is_refused(start: Start, tiny_task: Task, kind: str) -> None:
    """Before, a Write of ``"x\\udcff"`` raised UnicodeEncodeError out of ``step()``. Text that is
    not valid Unicode is a bad action: an error observation, and the episode goes on."""
    env = start(tiny_task)
    action: object = {
        "write": {"kind": "write", "path": "calc/x.py", "content": "x = '\udcff'\n"},
        "edit": {"kind": "edit", "path": "calc/__init__.py", "old": "return a - b", "new": "return a + b  # \udcff"},
        "read": {"kind": "read", "path": "calc/\udcff.py"},
        "run": {"kind": "run", "command": "echo \udcff"},
        "raw-json": '{"kind": "write", "path": "calc/x.py", "content": "\\udcff"}',
    }[kind]
    result = env.step(action)
    assert result.observation.error and "lone surrogate" in result.observation.text, result.observation.text
    assert "lone surrogate" in result.info["parse_error"]
    assert_utf8_everywhere(result)
    assert not (env.workspace.path / "calc" / "x.py").exists()  # type: ignore[union-attr]
    fixed(env)
    graded = submit(env)
    assert graded.reward == 1.0, graded.observation.text[-2000:]


# A module that, imported while the tests run, leaves a tree 1,500 levels deep in its directory
# (the Test action's copy, the grading copy): shutil.rmtree recursed once per level.
DEEP_AT_IMPORT = FIXED_SOURCE + """

import os as _os

_fd = _os.open(".", _os.O_RDONLY)
try:
    for _ in range(1500):
        _os.mkdir("n", dir_fd=_fd)
        _child = _os.open("n", _os.O_RDONLY, dir_fd=_fd)
        _os.close(_fd)
        _fd = _child
except FileExistsError:
    pass
finally:
    _os.close(_fd)
"""

# git metadata an agent makes in its work tree is not part of its change, but it is the host's to remove
DEEP_IN_WORKSPACE = """\
import os
os.makedirs(".git", exist_ok=True)
fd = os.open(".git", os.O_RDONLY)
for _ in range(3000):
    os.mkdir("w", dir_fd=fd)
    child = os.open("w", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = child
print("deep")
"""


@attack(G, "directory nested thousands of levels deep (workspace, Test copy, grading copy)",
        local="removed, graded as usual", confining="removed, graded as usual")
def test_a_tree_thousands_of_levels_deep_is_removed_and_graded_as_usual(start: Start, tiny_task: Task) -> None:
    """Before, removing such a tree raised RecursionError (out of the Test action, out of Submit,
    out of ``close()``) and left it on the host's disk. Trees are now removed through directory
    descriptors at any depth; the code under test making junk directories changes no score."""
    env = start(tiny_task)
    assert env.workspace is not None
    root = env.workspace.root
    out = script(env, DEEP_IN_WORKSPACE).observation
    assert out.exit_code == 0 and "deep" in out.text, out.text
    write(env, "calc/__init__.py", DEEP_AT_IMPORT)
    test = act(env, "test").observation
    assert test.error is None and "Visible tests:" in test.text, test.text
    result = submit(env)
    assert result.info.get("infra_error") is None and result.reward == 1.0, result.observation.text[-2000:]
    env.reset()  # drops the workspace: removed whole
    assert not root.exists()


@attack(G, "disk filled below a directory nested past PATH_MAX", local=GUARDRAIL, confining="bounded")
def test_the_disk_limit_counts_files_below_a_directory_nested_past_path_max(start: Start, make_task: MakeTask) -> None:
    """Confining sandboxes only: LocalSandbox sets no disk limit.

    Before, the disk watch listed directories by path and skipped the ones it could not list, so
    100 MiB written past PATH_MAX under a 20 MiB limit went uncounted. The watch now walks
    through directory descriptors, at any depth."""
    task = make_task(limits={"max_steps": 10, "test_timeout_s": 60, "command_timeout_s": 60, "file_size_mb": 4,
                             "disk_mb": 20})
    env = start(task)
    assert env.workspace is not None
    fill = PAST_PATH_MAX + """
import time
for i in range(25):
    with open("blob%d.bin" % i, "wb") as fh:
        fh.write(b"x" * (4 * 1024 * 1024))
        fh.flush()
        os.fsync(fh.fileno())
    time.sleep(0.05)
print("done", flush=True)
"""
    began = time.monotonic()
    out = script(env, fill).observation.text
    assert "killed by repogym" in out and "disk limit of 20 MiB" in out and "done" not in out, out
    assert time.monotonic() - began < 50
    held = tree_bytes([env.workspace.path])
    slack = 160 * _MB if env.sandbox.name == "docker" else 64 * _MB
    assert held <= 20 * _MB + slack and held < 100 * _MB, f"the workspace holds {held // _MB} MiB of the 100 MiB attempted"
    result = submit(env)
    assert_unearned_zero(result)
    assert messages(result)


@attack(G, "a module of megabytes for the quality grader's parser (the host's memory)", local="score 0", confining="score 0")
def test_a_module_too_large_to_parse_is_unmeasurable(start: Start, make_task: MakeTask) -> None:
    """Python's parser holds about 500 times a module's size: a 4 MB module took the host process
    from 63 MB to 2 GB. Source past the grader's parse budget is unmeasurable (score 0), unparsed."""
    env = start(make_task(constraints={"max_function_length": 50}))
    fixed(env)
    write(env, "calc/big.py", "".join(f"v{i} = {i}\n" for i in range(100_000)))
    result = submit(env)
    assert_unearned_zero(result)
    quality = component(result, "quality")
    assert any("more than the grader parses" in m for m in quality["messages"]), quality


@attack(G, "the workspace made sticky (chmod +t .) before a command", local="n/a (no uid hand-over)",
        confining="runs as usual")
def test_a_sticky_workspace_is_not_an_infra_error(start: Start, tiny_task: Task) -> None:
    """The confining sandboxes hand a command's tree to its slot uid and refuse a shared (sticky)
    directory; a workspace a command made sticky is still the episode's own, not an infra error."""
    env = start(tiny_task)
    assert run(env, "chmod +t .").observation.exit_code == 0
    listed = run(env, "ls")
    assert "infra_error" not in listed.info, listed.info
    assert listed.observation.exit_code == 0 and "calc" in listed.observation.text, listed.observation.text
    fixed(env)
    result = submit(env)
    assert result.info.get("infra_error") is None and result.reward == 1.0, result.observation.text[-1500:]


@attack(G, "action whose field is a list nested 100,000 deep (the trajectory's record of it; round 20)",
        local="refused", confining="refused")
def test_an_action_nested_too_deep_to_repr_is_an_observation(start: Start, tiny_task: Task, tmp_path: Path) -> None:
    """Before, the trajectory's repr() of the unparsed action raised RecursionError out of ``step()``,
    at the last step after grading too (the graded reward lost)."""
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    env = start(tiny_task, trajectory_dir=tmp_path / "trajectories", max_steps=2)
    refused = env.step({"kind": "read", "path": nested})
    assert refused.observation.error and not refused.terminated, refused.observation.text
    last = env.step({"kind": "read", "path": nested})  # the step budget ends here: graded, not raised
    assert last.truncated and last.info["score"] == 0.0 and last.info.get("infra_error") is None, last.info
    steps = json.loads(Path(last.info["trajectory_path"]).read_text())["steps"]
    assert len(steps) == 2 and steps[0]["raw_action"].startswith("{'kind': 'read'"), steps[0]
