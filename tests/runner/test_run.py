"""run_suite / run_task on real tasks: scores, files, retries, time limits, crashing agents, resume."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from repogym_gym.agents.registry import AGENTS, AgentSpec
from repogym_gym.errors import (
    AgentNotFoundError,
    RunError,
    SandboxUnavailableError,
    TaskNotFoundError,
    UnconfinedWarning,
)
from repogym_gym.runner import RunConfig, RunResult, RunSummary, load_results, result_path, run_suite, run_task
from repogym_gym.runner.store import reward_details_path
from repogym_gym.task import Task
from repogym_gym.trajectory import Trajectory
from tests.helpers import FIXED_SOURCE, STARTER, MakeTask
from tests.sandbox.helpers import require_bwrap

STARTER_IDS = sorted(p.name for p in STARTER.iterdir() if (p / "task.yaml").is_file())
#: (agent, task, sample, score, passed) of golden and noop on the starter suite, whatever the backend.
STARTER_OUTCOMES = ({("golden", t, 0, 1.0, True) for t in STARTER_IDS}
                    | {("noop", t, 0, 0.0, False) for t in STARTER_IDS})


def outcomes(out: Path) -> set[tuple[str, str, int, float | None, bool | None]]:
    return {(r.agent, r.task_id, r.sample, r.score, r.passed) for r in load_results(out)}


def mtimes(root: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in root.rglob("*.json")}


@pytest.fixture
def test_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the runner's test agents (tests/runner/agents.py) in the agent map."""
    for name, cls in {"sleepy": "SleepyAgent", "fix-then-crash": "FixThenCrashAgent", "flaky": "FlakyBackendAgent",
                      "fix": "FixAgent"}.items():
        monkeypatch.setitem(AGENTS, name, f"tests.runner.agents:{cls}")


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunSummary]:
    out = tmp_path_factory.mktemp("serial") / "run"
    return out, run_suite(STARTER, ["golden", "noop"], out=out, backend="serial", jobs=2)


# -- the starter suite, serial and threads ---------------------------------------------------------


@pytest.mark.slow
def test_golden_scores_one_and_noop_zero_on_every_starter_task(serial_run: tuple[Path, RunSummary]) -> None:
    out, summary = serial_run
    assert outcomes(out) == STARTER_OUTCOMES
    assert [(a.agent, a.episodes, a.mean_score, a.pass_at_1, a.tasks_solved, a.infra_errors) for a in summary.agents] == [
        ("golden", 4, 1.0, 1.0, 4, 0), ("noop", 4, 0.0, 0.0, 0, 0)]


@pytest.mark.slow
def test_every_episode_writes_its_result_its_trajectory_and_the_run_files(serial_run: tuple[Path, RunSummary]) -> None:
    out, summary = serial_run
    results = load_results(out)
    assert len(results) == summary.episodes == 8
    for r in results:
        assert result_path(out, r.agent, r.task_id, r.sample).is_file()
        assert r.trajectory is not None and r.trajectory.startswith(f"trajectories/{r.agent}/{r.task_id}-")
        trajectory = Trajectory.model_validate_json((out / r.trajectory).read_text())
        assert trajectory.grade is not None and trajectory.grade.score == r.score == r.grade.score
        assert (r.status, r.worker, r.attempts, r.terminated, r.seed) == ("graded", "serial", 1, True, 0)
        details = json.loads((out / reward_details_path(r.trajectory)).read_text())  # issue 15: beside the trajectory
        assert (details["reward"], details["kind"], details["passed"]) == (r.score, "tests", r.passed)
        assert details["parse_status"] == "parsed" and details["infra_error"] is None
        if r.agent == "golden" or r.task_id in ("pagination-off-by-one", "parse-duration"):  # bugfix: tests are the objective
            assert details["resolved"] is r.passed
    written = sorted((out / "trajectories").rglob("*.json"))
    assert written == sorted([out / r.trajectory for r in results] + [out / reward_details_path(r.trajectory) for r in results])
    assert RunSummary.model_validate_json((out / "summary.json").read_text()) == summary
    assert RunConfig.model_validate_json((out / "run.json").read_text()).task_ids == STARTER_IDS
    assert not list(out.rglob("*.tmp")), "atomic writes leave no temporary files"


@pytest.mark.slow
def test_the_thread_backend_gives_the_serial_scores(serial_run: tuple[Path, RunSummary], tmp_path: Path) -> None:
    out = tmp_path / "run"
    summary = run_suite(STARTER, ["golden", "noop"], out=out, backend="thread", jobs=2)
    assert outcomes(out) == outcomes(serial_run[0]) == STARTER_OUTCOMES
    assert {r.worker for r in load_results(out)} == {"thread"}
    assert [a.model_dump(exclude={"mean_duration_s"}) for a in summary.agents] == [
        a.model_dump(exclude={"mean_duration_s"}) for a in serial_run[1].agents]


# -- samples, seeds, callbacks ---------------------------------------------------------------------


def test_samples_use_consecutive_seeds_and_pass_at_k_covers_them(tiny_task: Task, tmp_path: Path) -> None:
    summary = run_suite([tiny_task], ["golden"], out=tmp_path / "run", samples=2, seed=5)
    results = load_results(tmp_path / "run")
    assert [(r.sample, r.seed, r.score) for r in results] == [(0, 5, 1.0), (1, 6, 1.0)]
    assert summary.agents[0].pass_at_k == {1: 1.0, 2: 1.0}


def test_on_result_gets_each_new_result_in_the_calling_thread(tiny_task: Task, tmp_path: Path) -> None:
    seen: list[tuple[RunResult, int]] = []
    run_suite([tiny_task], ["golden", "noop"], out=tmp_path / "run", jobs=2,
              on_result=lambda r: seen.append((r, threading.get_ident())))
    assert sorted((r.agent, r.score) for r, _ in seen) == [("golden", 1.0), ("noop", 0.0)]
    assert {ident for _, ident in seen} == {threading.get_ident()}
    assert all(result_path(tmp_path / "run", r.agent, r.task_id, r.sample).is_file() for r, _ in seen)


def test_run_task_takes_a_bundled_task_id_and_returns_its_results_by_sample(tmp_path: Path) -> None:
    results = run_task("parse-duration", "noop", out=tmp_path / "run", samples=2, backend="serial")
    assert [(r.agent, r.task_id, r.sample, r.score) for r in results] == [
        ("noop", "parse-duration", 0, 0.0), ("noop", "parse-duration", 1, 0.0)]


# -- failures: infrastructure, time limits, crashing agents ----------------------------------------


def test_a_failing_setup_is_retried_then_recorded_as_an_unscored_infra_error(make_task: MakeTask, tmp_path: Path) -> None:
    counter = tmp_path / "setup-runs.log"
    task = make_task(repo={"setup": [f"echo run >> {counter}", "exit 3"]})
    summary = run_suite([task], ["noop"], out=tmp_path / "run", max_retries=2, retry_backoff_s=0.01)
    [result] = load_results(tmp_path / "run")
    assert (result.status, result.score, result.passed, result.reward, result.attempts) == ("infra_error", None, None, None, 3)
    assert "SetupError" in (result.infra_error or "")
    assert counter.read_text().splitlines() == ["run"] * 3
    [stats] = summary.agents
    assert (stats.episodes, stats.graded, stats.infra_errors, stats.mean_score, stats.pass_at_1) == (1, 0, 1, None, None)


def test_an_agent_backend_failure_is_retried_with_exponential_backoff(test_agents: None, tiny_task: Task, tmp_path: Path) -> None:
    log = tmp_path / "attempts.log"
    spec = AgentSpec(type="flaky", options={"log": str(log), "failures": 99})
    run_suite([tiny_task], [spec], out=tmp_path / "run", max_retries=2, retry_backoff_s=0.3)
    [result] = load_results(tmp_path / "run")
    assert (result.status, result.score, result.attempts) == ("infra_error", None, 3)
    assert result.infra_error == "AgentInfraError: model server at http://127.0.0.1:9 refused the connection"
    t0, t1, t2 = (float(line) for line in log.read_text().splitlines())
    assert t1 - t0 >= 0.3 and t2 - t1 >= 0.6


def test_a_retry_that_succeeds_is_graded_and_counts_its_attempts(test_agents: None, tiny_task: Task, tmp_path: Path) -> None:
    spec = AgentSpec(type="flaky", options={"log": str(tmp_path / "attempts.log"), "failures": 1})
    [result] = run_task(tiny_task, spec, out=tmp_path / "run", retry_backoff_s=0.0)
    assert (result.status, result.score, result.passed, result.attempts, result.infra_error) == ("graded", 0.0, False, 2, None)


def test_the_time_limit_truncates_a_slow_agent_and_grades_the_workspace(test_agents: None, tiny_task: Task, tmp_path: Path) -> None:
    spec = AgentSpec(type="sleepy", options={"sleep_s": 0.5})
    [result] = run_task(tiny_task, spec, out=tmp_path / "run", time_limit_s=0.2)
    assert (result.status, result.timed_out, result.truncated, result.terminated) == ("graded", True, True, False)
    assert (result.score, result.steps) == (0.0, 2)
    assert result.grade is not None and result.grade.fail_to_pass


def test_an_agent_that_raises_is_graded_as_it_stood(test_agents: None, tiny_task: Task, tmp_path: Path) -> None:
    closed = tmp_path / "closed.log"
    spec = AgentSpec(type="fix-then-crash", label="crashy", options={"closed": str(closed)})
    [result] = run_task(tiny_task, spec, out=tmp_path / "run")
    assert (result.status, result.agent, result.score, result.passed) == ("graded", "crashy", 1.0, True)
    assert result.agent_error == "RuntimeError: the policy fell over"
    assert result.grade is not None and FIXED_SOURCE.splitlines()[1].strip() in result.grade.patch
    assert result.conversation == [{"role": "user", "content": "fix add"}, {"role": "assistant", "content": "acted 2 times"}]
    assert closed.read_text().count("closed") == 2, "closed after the up-front build and after the episode"


# -- resume ----------------------------------------------------------------------------------------


def test_a_resumed_run_skips_graded_episodes(tiny_task: Task, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_suite([tiny_task], ["golden", "noop"], out=out, samples=2)
    before = mtimes(out / "results") | mtimes(out / "trajectories")
    seen: list[RunResult] = []
    summary = run_suite([tiny_task], ["golden", "noop"], out=out, samples=2, backend="serial", jobs=3, on_result=seen.append)
    assert (summary.resumed, summary.episodes, seen) == (4, 4, [])
    assert mtimes(out / "results") | mtimes(out / "trajectories") == before
    assert [(a.agent, a.mean_score) for a in summary.agents] == [("golden", 1.0), ("noop", 0.0)]
    assert RunConfig.model_validate_json((out / "run.json").read_text()).backend == "serial"


def test_a_resumed_run_reruns_infra_error_episodes(test_agents: None, tiny_task: Task, tmp_path: Path) -> None:
    out = tmp_path / "run"
    flaky = AgentSpec(type="flaky", options={"log": str(tmp_path / "attempts.log"), "failures": 1})
    run_suite([tiny_task], [flaky, "noop"], out=out, max_retries=0)
    assert [(r.agent, r.status) for r in load_results(out)] == [("flaky", "infra_error"), ("noop", "graded")]
    noop_file = result_path(out, "noop", tiny_task.id, 0)
    noop_mtime = noop_file.stat().st_mtime_ns
    seen: list[RunResult] = []
    summary = run_suite([tiny_task], [flaky, "noop"], out=out, max_retries=0, on_result=seen.append)
    assert [(r.agent, r.status, r.attempts) for r in seen] == [("flaky", "graded", 1)]
    assert summary.resumed == 1 and noop_file.stat().st_mtime_ns == noop_mtime
    assert [(r.agent, r.status) for r in load_results(out)] == [("flaky", "graded"), ("noop", "graded")]


def test_resuming_with_other_agents_or_samples_raises_naming_them(tiny_task: Task, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_suite([tiny_task], ["noop"], out=out)
    before = mtimes(out)
    with pytest.raises(RunError, match=r"\(agents, samples differ: .*use a new --out"):
        run_suite([tiny_task], ["golden"], out=out, samples=2)
    assert mtimes(out) == before


# -- bad input fails before anything is written ----------------------------------------------------


def test_an_unknown_agent_raises_before_the_run_starts(tiny_task: Task, tmp_path: Path) -> None:
    with pytest.raises(AgentNotFoundError, match="no agent 'nope'"):
        run_suite([tiny_task], ["golden", "nope"], out=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_missing_suite_raises_naming_the_bundled_suites(tmp_path: Path) -> None:
    with pytest.raises(TaskNotFoundError, match=r"no suite 'no-such-suite'.*starter.*nor is it the id of a bundled task"):
        run_suite("no-such-suite", ["noop"], out=tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("agents", "options", "message"), [
    (["noop", "noop"], {}, "agent labels must be unique"),
    (["noop"], {"samples": 0}, "samples"),
    (["noop"], {"time_limit_s": 0}, "time_limit_s"),
    (["noop"], {"backend": "slurm"}, "backend must be"),
    ([], {}, "no agents given"),
])
def test_bad_run_options_raise_run_error(tiny_task: Task, tmp_path: Path, agents: list[str],
                                          options: dict[str, object], message: str) -> None:
    with pytest.raises(RunError, match=message):
        run_suite([tiny_task], agents, out=tmp_path / "run", **options)  # type: ignore[arg-type]
    assert not (tmp_path / "run").exists()


def test_auto_confines_untrusted_agents_in_bubblewrap_and_runs_trusted_ones_locally(
        test_agents: None, tiny_task: Task, tmp_path: Path) -> None:
    require_bwrap()
    run_suite([tiny_task], ["golden", "fix"], out=tmp_path / "run", backend="serial")
    by_agent = {r.agent: r for r in load_results(tmp_path / "run")}
    assert (by_agent["golden"].sandbox, by_agent["golden"].score) == ("local", 1.0)
    assert (by_agent["fix"].sandbox, by_agent["fix"].score) == ("bwrap", 1.0)


def test_local_warns_once_per_untrusted_agent_and_records_local(test_agents: None, tiny_task: Task, tmp_path: Path) -> None:
    with pytest.warns(UnconfinedWarning) as caught:
        run_suite([tiny_task], ["golden", "fix"], out=tmp_path / "run", backend="serial", sandbox="local")
    messages = [str(w.message) for w in caught if issubclass(w.category, UnconfinedWarning)]
    assert len(messages) == 1 and "agent 'fix' runs with sandbox='local'" in messages[0], messages
    assert {r.agent: r.sandbox for r in load_results(tmp_path / "run")} == {"golden": "local", "fix": "local"}


def test_an_unknown_sandbox_fails_before_the_run_starts_naming_the_valid_ones(tiny_task: Task, tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailableError, match="unknown sandbox 'vm'; valid sandboxes are"):
        run_suite([tiny_task], ["golden"], out=tmp_path / "run", sandbox="vm")
    assert not (tmp_path / "run").exists()


def test_a_model_whose_replies_hold_lone_surrogates_is_graded_and_recorded_as_utf8(tiny_task: Task, tmp_path: Path) -> None:
    """JSON's "\\ud800" escape decodes to a lone surrogate: a reply's text and a tool call's
    arguments can hold one. The tool call is a bad action (an error observation, not an agent
    crash) and every file the run writes is valid UTF-8."""
    from repogym_gym.testing import ChatServer, Reply

    script = [Reply.say("thinking \ud800"), Reply.call("write", path="x.py", content="\udcff"), Reply.call("submit")]
    with ChatServer(script) as server:
        agent = AgentSpec(type="openai", label="fake-llm", options={"model": "m", "base_url": server.base_url})
        [result] = run_task(tiny_task.root, agent, out=tmp_path / "out")
    assert result.status == "graded" and result.agent_error is None and result.score == 0.0
    assert any("lone surrogate" in str(m.get("content")) for m in result.conversation or [])
    for path in (tmp_path / "out").rglob("*.json"):
        path.read_text(encoding="utf-8")


def test_an_llm_agents_sampling_settings_are_recorded_and_no_temperature_is_set_unasked(tiny_task: Task, tmp_path: Path) -> None:
    """Issue 14: the sampling settings go into every result (and export line); an agent given no temperature
    sends none, so the server's default applies (a silent 0 gave pass@k over near-identical samples)."""
    from repogym_gym.export import export_jsonl
    from repogym_gym.testing import ChatServer, Reply

    with ChatServer([Reply.call("submit")]) as server:
        agent = AgentSpec(type="openai", label="fake-llm", options={"model": "m", "base_url": server.base_url})
        [result] = run_task(tiny_task.root, agent, out=tmp_path / "out")
        requests = list(server.requests)
    assert result.sampling is not None and (result.sampling["model"], result.sampling["temperature"]) == ("m", None)
    assert requests and all(isinstance(r.body, dict) and "temperature" not in r.body for r in requests)
    assert export_jsonl(tmp_path / "out", tmp_path / "ds.jsonl") == 1
    assert json.loads((tmp_path / "ds.jsonl").read_text())["sampling"] == result.sampling
    [noop] = run_task(tiny_task.root, AgentSpec(type="noop"), out=tmp_path / "noop")
    assert noop.sampling is None


# -- one run per --out; a result cut short is set aside (issue 13) ---------------------------------


def test_a_second_run_on_the_same_out_is_refused_while_the_first_holds_it(tiny_task: Task, tmp_path: Path) -> None:
    """The first run is a real second process holding the lock; once it is killed, the lock is gone with it."""
    import subprocess
    import sys

    out = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from repogym_gym.runner.store import run_lock\n"
        "with run_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(120)\n"), str(out)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RunError, match=r"is in use by another run; wait for it to end, or use a new --out"):
            run_suite([tiny_task], ["noop"], out=out)
        assert not (out / "results").exists() and not (out / "run.json").exists()
    finally:
        holder.kill()
        holder.communicate()
    summary = run_suite([tiny_task], ["noop"], out=out)  # a killed holder leaves no lock behind
    assert summary.episodes == 1


def test_a_truncated_result_is_quarantined_and_its_episode_rerun(tiny_task: Task, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_suite([tiny_task], ["golden", "noop"], out=out)
    cut = result_path(out, "golden", tiny_task.id, 0)
    text = cut.read_text()
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(RunError, match=r"0\.json: not a valid RunResult.*moves it to .*quarantine"):
        load_results(out)
    seen: list[RunResult] = []
    summary = run_suite([tiny_task], ["golden", "noop"], out=out, on_result=seen.append)
    assert [(r.agent, r.score) for r in seen] == [("golden", 1.0)] and summary.resumed == 1
    quarantined = out / "quarantine" / cut.relative_to(out / "results")
    assert quarantined.read_text() == text[: len(text) // 2]
    assert [(r.agent, r.status) for r in load_results(out)] == [("golden", "graded"), ("noop", "graded")]
