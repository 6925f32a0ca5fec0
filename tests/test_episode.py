"""Tests for repogym_gym.episode.Episode: real episodes on the tiny task, real subprocesses, real grading.

The episode logic is what an RL trainer sees: it must turn every bad action into an observation
(never an exception), refuse paths and commands that leave the workspace, and pay the graded
score on the last step only (plus at most 0.1 of opt-in shaping).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repogym_gym.actions import BashAction, ReadAction, parse_action, tool_schema
from repogym_gym.commands import DEFAULT_ALLOWLIST
from repogym_gym.episode import Episode, EpisodeError, StepResult
from repogym_gym.errors import RepoGymError
from repogym_gym.sandbox import make_sandbox
from repogym_gym.task import Task
from tests.helpers import CALC_SOURCE, FIXED_SOURCE, HIDDEN_TESTS, VISIBLE_TESTS, MakeTask
from tests.sandbox.helpers import require_bwrap, require_docker

FIX: dict[str, Any] = {"kind": "write", "path": "calc/__init__.py", "content": FIXED_SOURCE}
BREAK: dict[str, Any] = {"kind": "write", "path": "calc/__init__.py", "content": CALC_SOURCE}
TEST: dict[str, Any] = {"kind": "test"}
SUBMIT: dict[str, Any] = {"kind": "submit"}
LIST: dict[str, Any] = {"kind": "list_files"}
HIDDEN_ID = "tests/test_calc_hidden.py::test_add_negative"
VISIBLE_F2P = "tests/test_calc.py::test_add"


@pytest.fixture
def env(tiny_task: Task) -> Iterator[Episode]:
    environment = Episode(tiny_task)
    yield environment
    environment.close()


@pytest.fixture
def started(env: Episode) -> Episode:
    env.reset()
    return env


def run(env: Episode, command: str) -> StepResult:
    return env.step({"kind": "run", "command": command})


def repo(env: Episode) -> Path:
    assert env.workspace is not None
    return env.workspace.path


# -- reset -------------------------------------------------------------------------------------


def test_reset_observation_has_problem_statement_and_relative_file_tree(env: Episode, tiny_task: Task) -> None:
    obs, info = env.reset()
    assert tiny_task.spec.problem_statement.strip() in obs.text
    assert "calc/__init__.py" in obs.text.splitlines()
    assert "tests/test_calc.py" in obs.text.splitlines()
    assert env.workspace is not None
    assert str(env.workspace.root) not in obs.text
    assert "test_calc_hidden" not in obs.text
    assert (obs.step, obs.steps_left, obs.error) == (0, 10, None)
    assert "infra_error" not in info and info["task_id"] == "tiny-calc"


def test_reset_steps_left_follows_the_max_steps_argument(tiny_task: Task) -> None:
    env = Episode(tiny_task, max_steps=4)
    try:
        obs, _ = env.reset()
        assert (obs.step, obs.steps_left) == (0, 4)
    finally:
        env.close()


def test_second_reset_gives_a_fresh_workspace_and_removes_the_old_one(started: Episode) -> None:
    old_root = started.workspace.root
    started.step({"kind": "write", "path": "notes.txt", "content": "remember me"})
    run(started, "touch from_run.txt")
    assert (repo(started) / "notes.txt").is_file() and (repo(started) / "from_run.txt").is_file()

    obs, _ = started.reset()

    assert not old_root.exists()
    assert started.workspace.root != old_root
    assert not (repo(started) / "notes.txt").exists() and not (repo(started) / "from_run.txt").exists()
    assert "notes.txt" not in obs.text
    assert started.step({"kind": "read", "path": "notes.txt"}).observation.error


def test_second_reset_restarts_the_step_count(started: Episode) -> None:
    started.step(LIST)
    started.step(LIST)
    obs, _ = started.reset()
    assert (obs.step, obs.steps_left) == (0, 10)
    assert started.step(LIST).observation.step == 1


# -- actions -----------------------------------------------------------------------------------


def test_read_returns_the_file_content(started: Episode) -> None:
    result = started.step({"kind": "read", "path": "calc/__init__.py"})
    assert result.observation.text == CALC_SOURCE
    assert result.observation.error is None
    assert (result.reward, result.terminated, result.truncated) == (0.0, False, False)


def test_read_accepts_an_action_model(started: Episode) -> None:
    assert started.step(ReadAction(path="tests/test_calc.py")).observation.text == VISIBLE_TESTS


def test_read_of_a_missing_file_is_an_error_observation(started: Episode) -> None:
    result = started.step({"kind": "read", "path": "calc/nope.py"})
    assert result.observation.error
    assert "calc/nope.py" in result.observation.text
    assert not result.terminated


def test_read_of_a_directory_is_an_error_observation(started: Episode) -> None:
    result = started.step({"kind": "read", "path": "calc"})
    assert result.observation.error
    assert not result.terminated


def test_write_creates_parent_directories(started: Episode) -> None:
    result = started.step({"kind": "write", "path": "pkg/sub/deep.py", "content": "x = 'é'\n"})
    assert result.observation.error is None
    assert (repo(started) / "pkg" / "sub" / "deep.py").read_text() == "x = 'é'\n"
    assert "pkg/sub/deep.py" in result.observation.text
    assert str(len("x = 'é'\n".encode())) in result.observation.text


def test_write_overwrites_an_existing_file(started: Episode) -> None:
    started.step(FIX)
    assert (repo(started) / "calc" / "__init__.py").read_text() == FIXED_SOURCE


def test_edit_replaces_the_single_occurrence(started: Episode) -> None:
    result = started.step({"kind": "edit", "path": "tests/test_calc.py", "old": "add(2, 3) == 5", "new": "add(2, 2) == 4"})
    assert result.observation.error is None
    assert (repo(started) / "tests" / "test_calc.py").read_text() == VISIBLE_TESTS.replace("add(2, 3) == 5", "add(2, 2) == 4")


@pytest.mark.parametrize(("old", "count"), [("return a * b", 0), ("return a - b", 2)])
def test_edit_refuses_unless_the_old_text_occurs_exactly_once(started: Episode, old: str, count: int) -> None:
    result = started.step({"kind": "edit", "path": "calc/__init__.py", "old": old, "new": "return a + b"})
    assert result.observation.error
    assert f"occurs {count} times" in result.observation.text
    assert "exactly once" in result.observation.text
    assert (repo(started) / "calc" / "__init__.py").read_text() == CALC_SOURCE


def test_edit_of_a_missing_file_is_an_error_observation(started: Episode) -> None:
    result = started.step({"kind": "edit", "path": "nope.py", "old": "a", "new": "b"})
    assert result.observation.error and not (repo(started) / "nope.py").exists()


def test_run_returns_stdout_and_exit_code(started: Episode) -> None:
    result = run(started, "echo hello-from-run && ls calc")
    assert "hello-from-run" in result.observation.text
    assert "__init__.py" in result.observation.text
    assert result.observation.exit_code == 0
    assert result.observation.error is None


def test_run_runs_in_the_workspace(started: Episode) -> None:
    run(started, "touch made_by_run.txt")
    assert (repo(started) / "made_by_run.txt").is_file()


def test_run_reports_the_exact_exit_code(started: Episode) -> None:
    result = run(started, "python -c 'import sys; sys.exit(3)'")
    assert result.observation.exit_code == 3
    assert "[exit code 3]" in result.observation.text


def test_a_failing_command_sets_error(started: Episode) -> None:
    result = run(started, "ls no-such-file")
    assert result.observation.exit_code not in (0, None)
    assert result.observation.error
    assert "no-such-file" in result.observation.text
    assert not result.terminated


def test_a_command_that_times_out_is_killed_and_reported(make_task: MakeTask) -> None:
    env = Episode(make_task(limits={"max_steps": 10, "command_timeout_s": 1}))
    try:
        env.reset()
        start = time.monotonic()
        result = run(env, "sleep 5")
        assert time.monotonic() - start < 4
        assert "timed out" in result.observation.text
        assert result.observation.error
        assert not result.terminated
    finally:
        env.close()


def test_test_action_lists_per_test_outcomes_of_visible_tests(started: Episode) -> None:
    obs = started.step(TEST).observation
    assert f"{VISIBLE_F2P}: failed" in obs.text
    assert "tests/test_calc.py::test_sub: passed" in obs.text
    assert "tests/test_calc.py::test_sub_zero: passed" in obs.text
    assert obs.exit_code not in (0, None)


def test_test_action_never_shows_hidden_tests(started: Episode) -> None:
    for action in (TEST, FIX, TEST):
        obs = started.step(action).observation
        assert "test_calc_hidden" not in obs.text
        assert "test_add_negative" not in obs.text
        assert "add(-2, -3)" not in obs.text
    assert not (repo(started) / "tests" / "test_calc_hidden.py").exists()


def test_test_action_after_the_fix_reports_all_visible_tests_passing(started: Episode) -> None:
    started.step(FIX)
    obs = started.step(TEST).observation
    assert f"{VISIBLE_F2P}: passed" in obs.text
    assert ": failed" not in obs.text
    assert obs.exit_code == 0


def test_list_files_with_a_subdirectory_prefix(started: Episode) -> None:
    started.step({"kind": "write", "path": "tests2/other.py", "content": ""})
    obs = started.step({"kind": "list_files", "path": "tests"}).observation
    assert obs.text.splitlines() == ["tests/test_calc.py"]
    assert obs.error is None


def test_list_files_of_the_root_lists_every_file(started: Episode) -> None:
    assert started.step(LIST).observation.text.splitlines() == ["calc/__init__.py", "tests/test_calc.py"]


@pytest.mark.parametrize("path", ["..", "../..", "calc/../..", "/etc", "/"])
def test_list_files_outside_the_workspace_is_refused(started: Episode, path: str) -> None:
    result = started.step({"kind": "list_files", "path": path})
    assert result.observation.error
    assert "passwd" not in result.observation.text
    assert not result.terminated


def test_submit_with_the_fix_terminates_with_the_graded_score(started: Episode) -> None:
    started.step(FIX)
    result = started.step(SUBMIT)
    assert (result.terminated, result.truncated) == (True, False)
    assert result.reward == result.info["score"] == 1.0
    assert result.info["passed"] is True
    grade = result.info["grade"]
    assert grade["score"] == 1.0
    components = {c["name"]: c for c in grade["components"]}
    assert components["tests"]["role"] == "objective"
    assert components["constraints"]["role"] == "gate"
    assert all(isinstance(c["messages"], list) for c in components.values())
    assert grade["fail_to_pass"] == {VISIBLE_F2P: "passed", HIDDEN_ID: "passed"}
    assert grade["pass_to_pass"] == {"tests/test_calc.py::test_sub": "passed", "tests/test_calc.py::test_sub_zero": "passed"}
    assert "+    return a + b" in grade["patch"]
    assert "-    return a - b" in grade["patch"]
    assert "infra_error" not in result.info
    assert started.done


def _assert_the_next_episode_rebuilds_and_scores_1(env: Episode) -> None:
    env.reset()
    env.step(FIX)
    again = env.step(SUBMIT)
    assert (again.reward, again.info.get("infra_error")) == (1.0, None)


def test_a_baseline_removed_under_a_live_episode_is_an_infra_error_and_the_next_reset_rebuilds_it(
    tiny_task: Task, tmp_path: Path
) -> None:
    """Issue 13: a cache cleared while an episode ran scored the fixed bug 0, counted as the agent's fault."""
    import shutil

    from repogym_gym.baseline import BaselineStore

    env = Episode(tiny_task, store=BaselineStore(tmp_path / "cache"))
    try:
        env.reset()
        env.step(FIX)
        assert env.workspace is not None
        shutil.rmtree(env.workspace.baseline.store.git_dir)
        result = env.step(SUBMIT)
        assert result.terminated and result.reward == 0.0
        assert "git store" in result.info["infra_error"] and "rerun" in result.info["infra_error"]
        _assert_the_next_episode_rebuilds_and_scores_1(env)
    finally:
        env.close()


def test_a_byte_flipped_in_the_cached_objects_under_a_live_env_is_an_infra_error_and_the_next_reset_rebuilds(
    tiny_task: Task, tmp_path: Path
) -> None:
    """Issue 13's audit (stop 35): the store verifies objects by hash when it loads a baseline, but a live env
    kept the one it had, so after a byte flipped in a cached blob every later episode scored the fixed bug 0
    with no infra_error, and nothing rebuilt it."""
    from repogym_gym.baseline import BaselineStore

    env = Episode(tiny_task, store=BaselineStore(tmp_path / "cache"))
    try:
        env.reset()
        assert env.workspace is not None
        store = env.workspace.baseline.store
        listing = store.git("cat-file", "--batch-check", "--batch-all-objects").decode().split("\n")
        for oid in [line.split()[0] for line in listing if line.split()[1:2] == ["blob"]]:
            path = store.git_dir / "objects" / oid[:2] / oid[2:]
            path.chmod(0o644)
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0xFF
            path.write_bytes(bytes(data))
        env.step(FIX)
        result = env.step(SUBMIT)
        assert result.terminated and result.reward == 0.0
        assert "corrupt object" in result.info["infra_error"] and "rerun" in result.info["infra_error"]
        _assert_the_next_episode_rebuilds_and_scores_1(env)
    finally:
        env.close()


def _issue13_actions() -> list[Any]:
    import numpy as np

    return [
        '{"kind": "read", "path": ' + "9" * 5000 + "}",  # a 5,000-digit JSON integer
        {"kind": np.array([0, 1]), "path": "calc/__init__.py"},  # a numpy array as kind
        {"kind": "run", "command": "echo " + "a" * 1_000_000},  # a 1 MB command
        {"kind": "write", "path": "a/" * 1999 + "b", "content": "x"},  # 2,000 parts within 4,096 characters
        {"kind": "read", "path": "a/" * 1999 + "b"},
        {"kind": "edit", "path": "a/" * 1999 + "b", "old": "x", "new": "y"},
    ]


@pytest.mark.parametrize("index", range(6))
def test_issue_13_actions_are_observations_never_exceptions(started: Episode, index: int) -> None:
    """Each input of issue 13's "Exceptions out of env.step()" list gives an error observation, and the episode goes on."""
    started_at = time.monotonic()
    result = started.step(_issue13_actions()[index])
    assert time.monotonic() - started_at < 30
    assert not result.terminated and not result.truncated
    assert result.observation.error and result.info["action_error"] == result.observation.error
    result.observation.text.encode("utf-8")  # valid UTF-8
    assert started.step({"kind": "read", "path": "calc/__init__.py"}).observation.error is None


JUNIT_UNKNOWN_ENCODING = """
import os as _o, sys as _s
for _a in _s.argv:
    if _a.startswith("--junitxml="):
        _p = _a.split("=", 1)[1]
        with open(_p, "w") as _f:
            _f.write('<?xml version="1.0" encoding="x-no-such-codec"?><testsuites><testsuite name="pytest" tests="1">'
                     '<testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py"/></testsuite></testsuites>')
        _o.chmod(_p, 0o444)
"""


def test_a_junit_report_declaring_an_unknown_encoding_is_an_invalid_run_through_the_test_action(started: Episode) -> None:
    """Issue 13: through the Test action, a report naming an unknown encoding raised LookupError out of step()."""
    started.step({"kind": "write", "path": "calc/__init__.py", "content": CALC_SOURCE + JUNIT_UNKNOWN_ENCODING})
    result = started.step({"kind": "test"})
    assert not result.terminated
    assert result.observation.text.startswith("The test run is invalid and would score 0: no usable test report")
    assert "the JUnit report cannot be parsed (LookupError)" in result.observation.text
    graded = started.step(SUBMIT)
    assert (graded.reward, graded.info.get("infra_error")) == (0.0, None)


def test_submit_without_the_fix_scores_zero_with_reasons(started: Episode) -> None:
    result = started.step(SUBMIT)
    assert result.terminated and result.reward == result.info["score"] == 0.0
    assert result.info["passed"] is False
    grade = result.info["grade"]
    assert grade["fail_to_pass"] == {VISIBLE_F2P: "failed", HIDDEN_ID: "failed"}
    assert grade["patch"] == ""
    tests = next(c for c in grade["components"] if c["name"] == "tests")
    assert tests["messages"]
    assert "infra_error" not in result.info


def test_submit_grades_the_hidden_test_too(started: Episode) -> None:
    # Fixing only the visible case must not earn full credit: add(-2, -3) is still wrong.
    special = "def add(a, b):\n    return 5 if (a, b) == (2, 3) else a - b\n\n\ndef sub(a, b):\n    return a - b\n"
    started.step({"kind": "write", "path": "calc/__init__.py", "content": special})
    result = started.step(SUBMIT)
    assert result.info["grade"]["fail_to_pass"] == {VISIBLE_F2P: "passed", HIDDEN_ID: "failed"}
    assert result.reward < 1.0 and result.info["passed"] is False


def test_submit_ignores_a_tampered_visible_test_file(started: Episode) -> None:
    started.step({"kind": "write", "path": "tests/test_calc.py", "content": "def test_add():\n    pass\n"})
    result = started.step(SUBMIT)
    assert result.reward == 0.0


# -- path guard --------------------------------------------------------------------------------


def test_read_through_a_symlink_planted_by_a_run_action_is_refused(started: Episode) -> None:
    assert run(started, "ln -s /etc x").observation.exit_code == 0
    assert (repo(started) / "x").is_symlink()
    result = started.step({"kind": "read", "path": "x/passwd"})
    assert result.observation.error
    assert "root:" not in result.observation.text
    assert not result.terminated


def test_read_through_a_symlink_to_an_outside_file_is_refused(started: Episode, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    os.symlink(secret, repo(started) / "leak.txt")
    result = started.step({"kind": "read", "path": "leak.txt"})
    assert result.observation.error
    assert "TOP-SECRET-VALUE" not in result.observation.text


def test_write_through_a_symlink_to_an_outside_file_is_refused(started: Episode, tmp_path: Path) -> None:
    host = tmp_path / "host.txt"
    host.write_text("original")
    os.symlink(host, repo(started) / "link.txt")
    result = started.step({"kind": "write", "path": "link.txt", "content": "pwned"})
    assert result.observation.error
    assert host.read_text() == "original"
    assert not result.terminated


def test_write_through_a_symlinked_directory_is_refused(started: Episode, tmp_path: Path) -> None:
    host_dir = tmp_path / "hostdir"
    host_dir.mkdir()
    assert run(started, f"ln -s {host_dir} d").observation.exit_code == 0
    result = started.step({"kind": "write", "path": "d/new.txt", "content": "pwned"})
    assert result.observation.error
    assert list(host_dir.iterdir()) == []


def test_edit_through_a_symlink_to_an_outside_file_is_refused(started: Episode, tmp_path: Path) -> None:
    host = tmp_path / "host.py"
    host.write_text("value = 1\n")
    os.symlink(host, repo(started) / "host.py")
    result = started.step({"kind": "edit", "path": "host.py", "old": "value = 1", "new": "value = 2"})
    assert result.observation.error
    assert host.read_text() == "value = 1\n"


def test_absolute_paths_are_refused(started: Episode, tmp_path: Path) -> None:
    host = tmp_path / "host.txt"
    host.write_text("original")
    read = started.step({"kind": "read", "path": str(host)})
    write = started.step({"kind": "write", "path": str(host), "content": "pwned"})
    assert read.observation.error and "original" not in read.observation.text
    assert write.observation.error and "absolute" in write.observation.error
    assert host.read_text() == "original"


def test_dotdot_paths_are_refused(started: Episode) -> None:
    root = started.workspace.root
    write = started.step({"kind": "write", "path": "../escape.txt", "content": "x"})
    read = started.step({"kind": "read", "path": "../../../../etc/passwd"})
    assert write.observation.error and not (root / "escape.txt").exists()
    assert read.observation.error and "root:" not in read.observation.text


def test_refusal_observations_never_show_the_absolute_workspace_path(started: Episode) -> None:
    root = str(started.workspace.root)
    for action in ({"kind": "write", "path": ".", "content": "x"}, {"kind": "write", "path": "../x", "content": "x"}):
        obs = started.step(action).observation
        assert obs.error
        assert root not in obs.text


# -- the Run allowlist -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "touch marker; curl http://127.0.0.1:9/",
        "touch marker; wget http://127.0.0.1:9/",
        "touch marker; ssh localhost true",
        "touch marker; bash -c 'true'",
        "touch marker && env",
        "touch marker; echo calc | xargs ls",
        "touch marker; echo $(id)",
        "touch marker; echo `id`",
        'touch marker; echo "$(id)"',
        "touch marker; cat <(ls)",
        "touch marker; /usr/bin/curl http://127.0.0.1:9/",
        "touch marker\ncurl http://127.0.0.1:9/",
        "touch marker & sh -c true",
    ],
)
def test_a_refused_command_runs_nothing(started: Episode, command: str) -> None:
    result = run(started, command)
    assert result.observation.error
    assert result.observation.text.startswith("Refused:")
    assert result.observation.exit_code is None
    assert not (repo(started) / "marker").exists()
    assert not result.terminated and result.reward == 0.0


@pytest.mark.parametrize(
    "command",
    ["echo $'\\'' ; env > marker ; echo '\\'", "echo x #'\nenv > marker\n#'"],
    ids=["ansi-c-quote", "comment"],
)
def test_quoting_tricks_do_not_smuggle_a_denylisted_program(started: Episode, command: str) -> None:
    run(started, command)
    assert not (repo(started) / "marker").exists()


def test_python_c_is_allowed(started: Episode) -> None:
    result = run(started, 'python -c "print(6 * 7)"')
    assert "42" in result.observation.text
    assert result.observation.exit_code == 0 and result.observation.error is None


def test_a_narrower_custom_allowlist_is_honoured(tiny_task: Task) -> None:
    env = Episode(tiny_task, allowlist={"echo"})
    try:
        env.reset()
        assert "hi" in run(env, "echo hi").observation.text
        refused = run(env, "touch marker; echo hi")
        assert refused.observation.error and "'touch' is not an allowed program" in refused.observation.text
        assert not (repo(env) / "marker").exists()
    finally:
        env.close()


def test_a_wider_custom_allowlist_is_honoured(tiny_task: Task) -> None:
    env = Episode(tiny_task, allowlist=DEFAULT_ALLOWLIST | {"uname"})
    default = Episode(tiny_task)
    try:
        env.reset()
        default.reset()
        assert run(env, "uname").observation.exit_code == 0
        assert run(default, "uname").observation.error
    finally:
        env.close()
        default.close()


# -- a bad action is data ----------------------------------------------------------------------

BAD_ACTIONS: list[Any] = [
    {"kind": "fly"},
    {"kind": "read"},
    {"kind": "read", "path": 3},
    {"kind": "write", "path": "a.py"},
    {"kind": "read", "path": "a.py", "mode": "rb"},
    {"kind": "edit", "path": "a.py", "old": "", "new": "x"},
    {"kind": "run", "command": ""},
    {"kind": 99},
    {},
    [["read", "a.py"]],  # one call that is a list (a list of calls is several: test_calls.py)
    42,
    b'{"kind": "submit"}',
    "please read the file",
    '{"kind": "read", "path": ',
    "x" * 1_000_000,
    None,
]


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=lambda a: repr(a)[:30])
def test_a_bad_action_is_an_error_observation(started: Episode, action: Any) -> None:
    result = started.step(action)
    assert result.observation.error
    assert result.info["parse_error"]
    assert (result.observation.step, result.observation.steps_left) == (1, 9)
    assert (result.reward, result.terminated, result.truncated) == (0.0, False, False)
    assert len(result.observation.text) < 20_000


@pytest.mark.parametrize("action", [{"kind": ["read"], "path": "a"}, {"kind": {"x": 1}}, {"name": ["read"], "arguments": {}}])
def test_an_unhashable_kind_is_an_error_observation(started: Episode, action: Any) -> None:
    result = started.step(action)
    assert result.observation.error and result.info["parse_error"]


def test_deeply_nested_json_is_an_error_observation(started: Episode) -> None:
    result = started.step("[" * 100_000)
    assert result.observation.error and result.info["parse_error"]


@pytest.mark.parametrize(
    "action",
    [
        {"kind": "read", "path": "a" * 300},
        {"kind": "write", "path": "a" * 300, "content": "x"},
        {"kind": "edit", "path": "a" * 300, "old": "x", "new": "y"},
    ],
    ids=["read", "write", "edit"],
)
def test_an_over_long_path_is_an_error_observation(started: Episode, action: dict[str, Any]) -> None:
    result = started.step(action)
    assert result.observation.error
    assert "infra_error" not in result.info
    assert not result.terminated


def test_the_episode_grades_correctly_after_bad_actions(started: Episode) -> None:
    for action in (None, "garbage", {"kind": "fly"}, {"kind": "read"}, 7):
        assert started.step(action).observation.error
    started.step(FIX)
    result = started.step(SUBMIT)
    assert result.observation.step == 7
    assert result.terminated and result.reward == 1.0


def test_refused_and_failed_actions_do_not_set_parse_error(started: Episode) -> None:
    for action in ({"kind": "read", "path": "/etc/passwd"}, {"kind": "read", "path": "nope"}, {"kind": "run", "command": "curl x"}):
        result = started.step(action)
        assert result.observation.error and "parse_error" not in result.info


# -- the step budget ---------------------------------------------------------------------------


def test_running_out_of_steps_after_the_fix_truncates_with_the_graded_score(tiny_task: Task) -> None:
    env = Episode(tiny_task, max_steps=3)
    try:
        env.reset()
        first, second = env.step(FIX), env.step(LIST)
        last = env.step(LIST)
        assert [(r.terminated, r.truncated, r.reward) for r in (first, second)] == [(False, False, 0.0)] * 2
        assert (last.terminated, last.truncated) == (False, True)
        assert last.reward == last.info["score"] == 1.0
        assert last.observation.steps_left == 0
        assert env.done
    finally:
        env.close()


def test_running_out_of_steps_without_the_fix_scores_zero(tiny_task: Task) -> None:
    env = Episode(tiny_task, max_steps=3)
    try:
        env.reset()
        results = [env.step(LIST) for _ in range(3)]
        assert results[-1].truncated and not results[-1].terminated
        assert results[-1].reward == results[-1].info["score"] == 0.0
        assert "infra_error" not in results[-1].info
    finally:
        env.close()


def test_submit_on_the_last_step_terminates_rather_than_truncates(tiny_task: Task) -> None:
    env = Episode(tiny_task, max_steps=2)
    try:
        env.reset()
        env.step(FIX)
        last = env.step(SUBMIT)
        assert (last.terminated, last.truncated, last.reward) == (True, False, 1.0)
    finally:
        env.close()


def test_a_bad_action_on_the_last_step_still_grades(tiny_task: Task) -> None:
    env = Episode(tiny_task, max_steps=2)
    try:
        env.reset()
        env.step(FIX)
        last = env.step("not an action")
        assert last.truncated and last.reward == 1.0 and last.info["parse_error"]
    finally:
        env.close()


# -- reward ------------------------------------------------------------------------------------


def test_every_non_final_step_earns_zero_without_shaping(started: Episode) -> None:
    actions = [{"kind": "read", "path": "calc/__init__.py"}, TEST, FIX, TEST, {"kind": "run", "command": "echo x"}, LIST, None]
    assert [started.step(a).reward for a in actions] == [0.0] * len(actions)
    assert started.step(SUBMIT).reward == 1.0


def shaping_env(task: Task) -> Episode:
    env = Episode(task, reward_shaping=True, max_steps=30)
    env.reset()
    return env


def test_shaping_pays_for_a_newly_passing_visible_fail_to_pass_test(tiny_task: Task) -> None:
    env = shaping_env(tiny_task)
    try:
        assert env.step(TEST).reward == 0.0
        assert env.step(FIX).reward == 0.0
        assert 0.0 < env.step(TEST).reward <= 0.1
    finally:
        env.close()


def test_shaping_never_pays_twice_for_the_same_passing_tests(tiny_task: Task) -> None:
    env = shaping_env(tiny_task)
    try:
        env.step(FIX)
        assert env.step(TEST).reward > 0.0
        assert env.step(TEST).reward == 0.0
        env.step(BREAK)
        assert env.step(TEST).reward == 0.0
        env.step(FIX)
        assert env.step(TEST).reward == 0.0
    finally:
        env.close()


def test_shaping_total_never_exceeds_the_budget_plus_the_score(tiny_task: Task) -> None:
    env = shaping_env(tiny_task)
    try:
        total = 0.0
        for _ in range(3):
            for action in (FIX, TEST, BREAK, TEST):
                total += env.step(action).reward
        total += env.step(FIX).reward
        final = env.step(SUBMIT)
        total += final.reward
        assert final.info["score"] == 1.0
        assert total <= 0.1 + final.info["score"] + 1e-9
        assert total > final.info["score"]
    finally:
        env.close()


def test_shaping_does_not_change_the_final_reward_without_progress(tiny_task: Task) -> None:
    env = shaping_env(tiny_task)
    try:
        rewards = [env.step(TEST).reward for _ in range(3)] + [env.step(SUBMIT).reward]
        assert rewards == [0.0, 0.0, 0.0, 0.0]
    finally:
        env.close()


def test_shaping_never_pays_for_a_planted_copy_of_the_hidden_test(tiny_task: Task) -> None:
    env = shaping_env(tiny_task)
    try:
        env.step({"kind": "write", "path": "tests/test_calc_hidden.py", "content": "def test_add_negative():\n    pass\n"})
        assert env.step(TEST).reward == 0.0
    finally:
        env.close()


def test_shaping_never_pays_for_a_tampered_visible_test(tiny_task: Task) -> None:
    env = shaping_env(tiny_task)
    try:
        env.step({"kind": "edit", "path": "tests/test_calc.py", "old": "assert add(2, 3) == 5", "new": "pass"})
        assert env.step(TEST).reward == 0.0
    finally:
        env.close()


def test_hidden_test_source_is_not_in_the_workspace(started: Episode) -> None:
    files = [p.read_text() for p in repo(started).rglob("*.py")]
    assert HIDDEN_TESTS not in files


# -- lifecycle ---------------------------------------------------------------------------------


def test_step_before_reset_raises(env: Episode) -> None:
    with pytest.raises(EpisodeError, match=r"before reset\(\)"):
        env.step(LIST)


def test_step_after_submit_raises(started: Episode) -> None:
    started.step(SUBMIT)
    with pytest.raises(EpisodeError, match=r"after the episode ended; call reset\(\)"):
        started.step(LIST)


def test_step_after_truncation_raises(tiny_task: Task) -> None:
    env = Episode(tiny_task, max_steps=1)
    try:
        env.reset()
        assert env.step(LIST).truncated
        with pytest.raises(EpisodeError, match="after the episode ended"):
            env.step(LIST)
    finally:
        env.close()


def test_reset_after_the_episode_ended_starts_a_new_one(started: Episode) -> None:
    started.step(SUBMIT)
    obs, _ = started.reset()
    assert obs.step == 0 and not started.done
    assert started.step(LIST).observation.error is None


def test_episode_error_is_a_repogym_error_and_a_runtime_error() -> None:
    assert issubclass(EpisodeError, RepoGymError) and issubclass(EpisodeError, RuntimeError)


def test_close_is_idempotent_and_removes_the_workspace(started: Episode) -> None:
    root = started.workspace.root
    assert root.exists()
    started.close()
    assert not root.exists()
    started.close()
    assert started.workspace is None


def test_close_before_reset_is_fine(tiny_task: Task) -> None:
    env = Episode(tiny_task)
    env.close()
    env.close()


def test_close_removes_a_workspace_made_read_only_by_the_agent(started: Episode) -> None:
    root = started.workspace.root
    run(started, "mkdir -p locked/inner && touch locked/inner/f && chmod 500 locked/inner && chmod 500 locked")
    started.close()
    assert not root.exists()


def test_reset_after_close_raises(started: Episode) -> None:
    started.close()
    with pytest.raises(EpisodeError, match="closed"):
        started.reset()


def test_step_after_close_raises(started: Episode) -> None:
    started.close()
    with pytest.raises(EpisodeError, match="closed"):
        started.step(LIST)


# -- infrastructure errors ---------------------------------------------------------------------


@pytest.fixture
def broken_env(make_task: MakeTask) -> Iterator[Episode]:
    environment = Episode(make_task(repo={"setup": ["exit 3"]}))
    yield environment
    environment.close()


def test_failing_setup_is_reported_by_reset(broken_env: Episode) -> None:
    obs, info = broken_env.reset()
    assert "exit 3" in info["infra_error"]
    assert "SetupError" in info["infra_error"]
    assert obs.error == info["infra_error"]
    assert broken_env.workspace is None


def test_the_step_after_a_failed_setup_ends_the_episode_flagged(broken_env: Episode) -> None:
    broken_env.reset()
    result = broken_env.step(FIX)
    assert (result.terminated, result.reward) == (True, 0.0)
    assert "exit 3" in result.info["infra_error"]
    assert result.observation.error
    assert "score" not in result.info
    with pytest.raises(EpisodeError):
        broken_env.step(SUBMIT)


def test_a_failed_setup_is_reported_again_on_the_next_reset(broken_env: Episode) -> None:
    broken_env.reset()
    broken_env.step(SUBMIT)
    _, info = broken_env.reset()
    assert "exit 3" in info["infra_error"]


# -- nothing raises out of step() ----------------------------------------------------------------------


class _BrokenGrader:
    """A custom grader with a bug: it returns no component (the composite cannot even weigh it)."""

    name, role = "broken", "objective"

    def grade(self, ctx: Any) -> Any:
        return None


def test_a_grading_pipeline_that_crashes_ends_the_episode_with_infra_error_not_an_exception(tiny_task: Task) -> None:
    from repogym_gym.graders.composite import CompositeGrader

    env = Episode(tiny_task, grader=CompositeGrader([_BrokenGrader()]))  # type: ignore[list-item]
    try:
        env.reset()
        result = env.step({"kind": "submit"})
    finally:
        env.close()
    assert result.terminated and result.reward == 0.0
    assert result.info["infra_error"].startswith("grading crashed: AttributeError")


def test_edit_refuses_a_file_that_is_not_utf8_instead_of_rewriting_its_bytes(started: Episode) -> None:
    (repo(started) / "data.txt").write_bytes(b"caf\xe9 = 1\nkeep\n")
    obs = started.step({"kind": "edit", "path": "data.txt", "old": "keep", "new": "kept"}).observation
    assert obs.error and "is not UTF-8 text (byte 3)" in obs.text
    assert (repo(started) / "data.txt").read_bytes() == b"caf\xe9 = 1\nkeep\n"


def test_reading_a_fifo_is_refused_without_waiting(started: Episode) -> None:
    os.mkfifo(repo(started) / "pipe")
    began = time.monotonic()
    obs = started.step({"kind": "read", "path": "pipe"}).observation
    assert obs.error and "not a regular file" in obs.text and time.monotonic() - began < 5


def test_a_raw_action_with_lone_surrogates_is_recorded_as_valid_utf8(tiny_task: Task, tmp_path: Path) -> None:
    env = Episode(tiny_task, trajectory_dir=tmp_path)
    try:
        env.reset()
        bad = env.step("not json \udcff")
        assert bad.observation.error and "parse_error" in bad.info
        result = env.step({"kind": "submit"})
    finally:
        env.close()
    text = Path(result.info["trajectory_path"]).read_text(encoding="utf-8")
    assert "not json \ufffd" in text


def test_reset_removes_a_workspace_holding_a_tree_3000_levels_deep(started: Episode) -> None:
    fd = os.open(repo(started), os.O_RDONLY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    assert started.workspace is not None
    old = started.workspace.root
    started.reset()
    assert not old.exists()


def test_a_run_command_with_a_nul_byte_is_refused_not_raised(started: Episode) -> None:
    """Popen raised ValueError (embedded null byte) out of step()."""
    result = run(started, "echo a\0b")
    assert result.observation.error and "NUL byte" in result.observation.text


GLOBAL_SWAP = """

def _swap():
    import sys
    module = next(m for n, m in list(sys.modules.items()) if n.endswith("test_calc"))
    module.sub = min


_swap_at_call = add


def add(a, b):  # noqa: F811
    _swap()
    return _swap_at_call(a, b)
"""


def test_an_invalid_visible_run_names_repository_paths_never_the_host_s(started: Episode) -> None:
    """Issue 13: the Test action's invalid-run reason quoted the grading copy's host path
    (``/tmp/repogym-test-<pid>...``): observations show repository paths only."""
    started.step({"kind": "write", "path": "calc/__init__.py", "content": CALC_SOURCE + GLOBAL_SWAP})
    result = started.step({"kind": "test"})
    text = result.observation.text
    assert text.startswith("The test run is invalid and would score 0: the code under test broke the judge's policy"), text
    assert "tests/test_calc.py" in text and "repogym-test-" not in text and tempfile.gettempdir() + "/" not in text, text


def _call(action: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": action["kind"], "arguments": {k: v for k, v in action.items() if k != "kind"}}) + "</tool_call>"


def test_every_call_of_a_completion_runs_in_order_one_step_each(started: Episode) -> None:
    """Issue 14: of two ``<tool_call>`` blocks only the first ran, and the second, a submit, was lost."""
    result = started.step("Fixing it.\n" + _call(FIX) + "\n" + _call(SUBMIT) + _call(TEST))
    assert result.terminated and result.reward == 1.0 and result.observation.step == 2
    results = result.info["tool_results"]
    assert [(r["tool_call_id"], r["name"], r["error"]) for r in results] == [
        ("call_0", "write", None), ("call_1", "submit", None), ("call_2", "test", "not run: the episode ended")]
    assert result.observation.text.startswith("[call 1 of 3: write (call_0)]\nWrote ")
    assert result.info["action_error"] is None  # every call that ran worked (new-user trial: a 1.0 reported one)


def test_one_call_with_a_surrogate_id_leaves_info_valid_utf8(started: Episode) -> None:
    """Red-team round 44: with one call per step, ``tool_results`` skipped ``safe_json`` and kept a
    lone-surrogate id; ``json.dumps(info).encode()`` raised in the trainer."""
    result = started.step({"id": "call_\udcff\ud800", "name": "list_files", "arguments": {}})
    json.dumps(result.info, ensure_ascii=False).encode("utf-8")
    assert result.info["tool_results"][0]["tool_call_id"] == "call_0"
    assert "not valid UTF-8" in result.info["action_error"]


def test_a_bad_call_is_its_own_error_and_the_budget_counts_every_call(tiny_task: Task, tmp_path: Path) -> None:
    env = Episode(tiny_task, max_steps=3, trajectory_dir=tmp_path)
    try:
        env.reset()
        first = env.step([READ_CALL := {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path": "calc/__init__.py"}'}},
                          {"id": "c2", "type": "function", "function": {"name": "nope", "arguments": "{}"}}])
        assert not (first.terminated or first.truncated) and first.observation.steps_left == 1
        assert [r["error"] is None for r in first.info["tool_results"]] == [True, False]
        assert first.info["parse_error"].startswith("c2: unknown action kind 'nope'")
        last = env.step([READ_CALL, READ_CALL])  # the budget ends at the first: graded, the second not run
        assert last.truncated and "score" in last.info and last.observation.step == 3
        assert [r["error"] for r in last.info["tool_results"]] == [None, "not run: the episode ended"]
        steps = json.loads(Path(last.info["trajectory_path"]).read_text())["steps"]
        assert [s["action"]["kind"] if s["action"] else None for s in steps] == ["read", None, "read"]
    finally:
        env.close()


# -- bash (issue 14): any command under the confining sandboxes, refused by the local guardrail --


def test_bash_parses_and_is_in_the_schema_unless_left_out() -> None:
    assert parse_action({"name": "bash", "arguments": {"command": "echo hi | tr a-z A-Z"}}) == BashAction(command="echo hi | tr a-z A-Z")
    assert [t["function"]["name"] for t in tool_schema()][-1] == "bash"
    assert "bash" not in [t["function"]["name"] for t in tool_schema(bash=False)]


def test_the_local_guardrail_refuses_bash_with_the_reason(tiny_task: Task) -> None:
    env = Episode(tiny_task, sandbox=make_sandbox("local"))
    try:
        assert "bash" not in env.reset()[0].text  # the first observation lists the actions that work here
        result = env.step({"kind": "bash", "command": "echo hi"})
    finally:
        env.close()
    assert result.info["action_error"] and "needs a confining sandbox (bwrap or docker)" in result.observation.text
    assert "hi\n" not in result.observation.text


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
def test_bash_runs_any_command_capped_and_timed_out_in_a_confining_sandbox(tiny_task: Task, sandbox: str) -> None:
    box = require_bwrap() if sandbox == "bwrap" else require_docker()
    limited = tiny_task.spec.model_copy(update={"limits": tiny_task.spec.limits.model_copy(
        update={"command_timeout_s": 2, "output_limit_bytes": 10_000})})
    task = Task(spec=limited, root=tiny_task.root)
    env = Episode(task, sandbox=box)
    try:
        assert "bash (any command)" in env.reset()[0].text
        # uname and yes are no allowlisted programs: `run` refuses them, bash runs them
        assert "uname" in env.step({"kind": "run", "command": "uname -s"}).info["action_error"]
        ran = env.step({"kind": "bash", "command": "uname -s && yes x | head -c 50000"})
        assert ran.observation.text.startswith("Linux\n") and ran.observation.exit_code == 0
        assert len(ran.observation.text) < 20_000  # the output limit
        slow = env.step({"kind": "bash", "command": "sleep 30"})
        assert "[timed out after 2 s]" in slow.observation.text and slow.info["action_error"]
    finally:
        env.close()
        box.close()
