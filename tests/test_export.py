"""repogym_gym.export: one SFT-ready JSON line per episode, from real and synthetic results."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from repogym_gym.conversation import SYSTEM_PROMPT
from repogym_gym.errors import RunError
from repogym_gym.export import ExportRecord, equal_reward_groups, export_jsonl, write_jsonl
from repogym_gym.gym import tool_schema
from repogym_gym.runner import RunResult
from tests.helpers import FIXED_SOURCE
from tests.report.results_dirs import real_results, synthetic, tiny_task_dir, write_run

CONVERSATION = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "fix ünïcode ✓"},
                {"role": "assistant", "content": "done"}]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[RunResult]]:
    """A results directory of one golden and one noop episode of the tiny task, graded for real."""
    task = tiny_task_dir(tmp_path_factory.mktemp("task") / "tiny-calc")
    out = tmp_path_factory.mktemp("run")
    return out, real_results(out, task)


def test_real_episodes_export_scores_patch_and_the_conversation_of_their_trajectory(
        real_run: tuple[Path, list[RunResult]], tmp_path: Path) -> None:
    out, _ = real_run
    assert export_jsonl(out, tmp_path / "ds.jsonl") == 2
    golden, noop = lines(tmp_path / "ds.jsonl")
    assert (golden["agent"], golden["task_id"], golden["score"], golden["passed"]) == ("golden", "tiny-calc", 1.0, True)
    assert (noop["agent"], noop["score"], noop["passed"], noop["patch"]) == ("noop", 0.0, False, "")
    assert "+    return a + b" in golden["patch"]
    assert {c["name"] for c in golden["components"]} >= {"tests"}
    assert all(set(c) == {"name", "role", "score", "passed", "weight"} for c in golden["components"])
    messages = golden["messages"]
    assert messages[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert messages[1]["role"] == "user" and "add(2, 3) returns -1" in messages[1]["content"]
    calls = [m["tool_calls"][0]["function"] for m in messages if m["role"] == "assistant"]
    assert [c["name"] for c in calls] == ["write", "submit"]
    assert json.loads(calls[0]["arguments"]) == {"path": "calc/__init__.py", "content": FIXED_SOURCE}
    assert [m["role"] for m in messages[2:]] == ["assistant", "tool"] * 2
    assert golden["tools"] == tool_schema()
    assert golden["steps"] == 2 and golden["duration_s"] > 0


def test_every_line_validates_as_an_export_record(real_run: tuple[Path, list[RunResult]], tmp_path: Path) -> None:
    out, _ = real_run
    export_jsonl(out, tmp_path / "ds.jsonl")
    for line in (tmp_path / "ds.jsonl").read_text().splitlines():
        ExportRecord.model_validate_json(line)


def test_a_kept_conversation_is_exported_instead_of_the_trajectory(tmp_path: Path) -> None:
    result = synthetic("llm", "t1", conversation=CONVERSATION).model_copy(update={"trajectory": "trajectories/gone.json"})
    write_run(tmp_path / "run", [result])
    assert export_jsonl(tmp_path / "run", tmp_path / "ds.jsonl") == 1
    [line] = lines(tmp_path / "ds.jsonl")
    assert line["messages"] == CONVERSATION


def test_infra_errors_are_left_out_by_default_and_kept_with_a_null_score_on_request(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [synthetic("a", "t1", 0, 0.5, conversation=CONVERSATION),
                                       synthetic("a", "t1", 1, infra_error="SandboxError: gone")])
    assert export_jsonl(run, tmp_path / "graded.jsonl") == 1
    assert [line["sample"] for line in lines(tmp_path / "graded.jsonl")] == [0]
    assert export_jsonl(run, tmp_path / "all.jsonl", include_infra_errors=True) == 2
    infra = lines(tmp_path / "all.jsonl")[1]
    assert (infra["status"], infra["score"], infra["passed"], infra["infra_error"]) == ("infra_error", None, None, "SandboxError: gone")
    assert infra["messages"] == [] and infra["components"] == [] and infra["patch"] == ""


def test_groups_whose_rewards_are_all_equal_are_dropped_on_request(tmp_path: Path) -> None:
    """Issue 14: a GRPO group whose rewards are all equal has advantage 0 for every member (no signal)."""
    results = [synthetic("a", "flat", k, 1.0, conversation=CONVERSATION) for k in range(3)]
    results += [synthetic("a", "mixed", k, r, conversation=CONVERSATION) for k, r in enumerate((0.0, 1.0))]
    results += [synthetic("a", "single", 0, 0.0, conversation=CONVERSATION),
                synthetic("b", "flat", 0, 0.0, conversation=CONVERSATION),  # another agent: its own group
                synthetic("b", "flat", 1, infra_error="SandboxError: gone")]
    run = write_run(tmp_path / "run", results)
    assert equal_reward_groups(results) == {("a", "flat")}
    assert export_jsonl(run, tmp_path / "all.jsonl") == 7  # 8 episodes; the infra error is left out either way
    assert write_jsonl(results, run, tmp_path / "kept.jsonl", drop_groups=equal_reward_groups(results)) == 4
    kept = {(line["agent"], line["task_id"]) for line in lines(tmp_path / "kept.jsonl")}
    assert kept == {("a", "mixed"), ("a", "single"), ("b", "flat")}


def test_lines_are_sorted_by_agent_task_and_sample_and_exports_are_identical(tmp_path: Path) -> None:
    results = [synthetic(agent, task, k, 1.0, conversation=CONVERSATION)
               for agent in ("zeta", "alpha") for task in ("t2", "t10", "t1") for k in (1, 0)]
    run = write_run(tmp_path / "run", results)
    export_jsonl(run, tmp_path / "a.jsonl")
    export_jsonl(run, tmp_path / "b.jsonl")
    keys = [(line["agent"], line["task_id"], line["sample"]) for line in lines(tmp_path / "a.jsonl")]
    assert keys == sorted(keys) and len(keys) == 12
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_non_ascii_text_is_written_as_utf8(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [synthetic("a", "t1", conversation=CONVERSATION)])
    export_jsonl(run, tmp_path / "ds.jsonl")
    assert "ünïcode ✓" in (tmp_path / "ds.jsonl").read_text(encoding="utf-8")


def test_a_stream_destination_receives_the_lines(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [synthetic("a", "t1", conversation=CONVERSATION)])
    stream = io.StringIO()
    assert export_jsonl(run, stream) == 1
    assert json.loads(stream.getvalue())["task_id"] == "t1"


def test_a_missing_trajectory_file_is_a_run_error_naming_it_and_leaves_no_partial_file(
        real_run: tuple[Path, list[RunResult]], tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(real_run[0], out)
    trajectory = out / real_run[1][1].trajectory  # noop's, the second line
    trajectory.unlink()
    with pytest.raises(RunError, match=trajectory.name):
        export_jsonl(out, tmp_path / "ds.jsonl")
    assert not (tmp_path / "ds.jsonl").exists()
    assert list(tmp_path.glob(".ds.jsonl*")) == []


def test_a_corrupt_trajectory_file_is_a_run_error_naming_it(real_run: tuple[Path, list[RunResult]], tmp_path: Path) -> None:
    out = tmp_path / "run"
    shutil.copytree(real_run[0], out)
    (out / real_run[1][0].trajectory).write_text('{"task_id": 3}')
    with pytest.raises(RunError, match=r"not a valid Trajectory") as info:
        export_jsonl(out, tmp_path / "ds.jsonl")
    assert Path(real_run[1][0].trajectory).name in str(info.value)


def test_a_graded_episode_without_conversation_or_trajectory_is_a_run_error(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [synthetic("a", "t1")])
    with pytest.raises(RunError, match=r"results/a/t1/0\.json: episode has neither a conversation nor a trajectory"):
        export_jsonl(run, tmp_path / "ds.jsonl")


def test_a_corrupt_result_file_is_a_run_error_naming_it(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [synthetic("a", "t1", conversation=CONVERSATION)])
    (run / "results" / "a" / "t1" / "0.json").write_text("{not json")
    with pytest.raises(RunError, match=r"0\.json: not a valid RunResult"):
        export_jsonl(run, tmp_path / "ds.jsonl")


@pytest.mark.parametrize("make", [lambda p: p / "missing", lambda p: p])
def test_a_missing_or_non_results_directory_is_a_run_error(tmp_path: Path, make: Any) -> None:
    with pytest.raises(RunError, match=r"no such results directory|not a results directory"):
        export_jsonl(make(tmp_path), tmp_path / "ds.jsonl")
