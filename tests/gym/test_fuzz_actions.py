"""Property-based fuzzing of actions through the real env (issue 13): whatever a policy sends,
``env.step`` returns an observation inside the space, valid UTF-8, and never raises or hangs.

Fixed seed (``derandomize``), no example database, so CI runs the same examples every time; each
test has a time budget (``pytest.mark.timeout``) and each step one of its own (a hang fails). The
bulk run sends 10,000 actions through ``RepoGym/Task-v0`` on the tiny task under the local sandbox;
a graded action (``test``, a well-formed ``submit``) costs a test run, so the bulk draws them only
malformed and a second, smaller run sends them whole.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repogym_gym.actions import ACTION_KINDS
from repogym_gym.gym.registration import register_bundled
from repogym_gym.task import Task, load_task
from tests.helpers import CALC_SOURCE, GOLDEN_PATCH, HIDDEN_TESTS, VISIBLE_TESTS, tiny_spec

#: Actions the bulk run sends (the issue's figure: at least 10,000 in CI).
BULK_ACTIONS = 10_000
#: Graded actions (test, submit) sent whole in the second run.
GRADED_ACTIONS = 40

_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)  # lone surrogates included
_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
                     st.floats(allow_nan=True, allow_infinity=True), _text,
                     st.sampled_from(["calc/__init__.py", "tests/test_calc.py", "../etc/passwd", "/etc/passwd",
                                      "calc", "", ".", "a/" * 1500, "\udcff.py", "x" * 5000]))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(_text, inner, max_size=4)), max_leaves=8)
_fields = st.dictionaries(st.sampled_from(["path", "content", "old", "new", "command", "timeout_s", "count", "extra", "kind"]),
                          _values, max_size=4)


def _kind(cheap: bool) -> st.SearchStrategy[Any]:
    kinds = [k for k in ACTION_KINDS if not cheap or k not in ("test", "submit")]
    return st.one_of(st.sampled_from(kinds), st.integers(-3, len(ACTION_KINDS) + 2), _scalars)


def _actions(cheap: bool) -> st.SearchStrategy[Any]:
    dicts = st.builds(lambda kind, fields: {**fields, "kind": kind}, _kind(cheap), _fields)
    as_text = dicts.map(lambda d: json.dumps(d, default=str, ensure_ascii=False))
    tool_calls = dicts.map(lambda d: f"<tool_call>{json.dumps({'name': str(d.get('kind')), 'arguments': d}, default=str)}</tool_call>")
    anything = st.one_of(_values, st.binary(max_size=40))
    if cheap:  # a string kind of test/submit with extra fields still parses: keep them malformed (a non-dict body)
        return st.one_of(dicts, as_text.filter(lambda t: '"test"' not in t and '"submit"' not in t), tool_calls.filter(
            lambda t: '"test"' not in t and '"submit"' not in t), anything.filter(lambda v: not _graded(v)))
    return st.one_of(st.fixed_dictionaries({"kind": st.sampled_from(["test", "submit"])}), dicts)


def _graded(value: Any) -> bool:
    return isinstance(value, dict) and value.get("kind") in ("test", "submit", 4, 6)


@pytest.fixture(scope="module")
def fuzz_task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    root: Path = tmp_path_factory.mktemp("fuzz-task")
    for rel, text in {"repo/calc/__init__.py": CALC_SOURCE, "repo/tests/test_calc.py": VISIBLE_TESTS,
                      "hidden/tests/test_calc_hidden.py": HIDDEN_TESTS, "solution.patch": GOLDEN_PATCH}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "task.yaml").write_text(yaml.safe_dump(tiny_spec(), sort_keys=False))
    return load_task(root)


@pytest.fixture(scope="module")
def env(fuzz_task: Task) -> Iterator[gym.Env]:
    task = fuzz_task
    register_bundled()
    environment = gym.make("RepoGym/Task-v0", task=str(task.root), sandbox="local", max_steps=1_000_000,
                           disable_env_checker=True)
    environment.reset(seed=0)
    yield environment
    environment.close()


#: Seconds one step may take (a graded one runs the tests): past it the action hung.
STEP_BUDGET_S = 60


def _check(env: gym.Env, action: Any) -> None:
    started = time.monotonic()
    observation, reward, terminated, truncated, info = env.step(action)
    assert time.monotonic() - started < STEP_BUDGET_S, f"a step took over {STEP_BUDGET_S} s: {action!r:.200}"
    assert env.observation_space.contains(observation), observation
    observation["text"].encode("utf-8")  # valid UTF-8: no lone surrogate reaches a trainer
    assert isinstance(reward, float) and reward == reward
    assert "action_error" in info
    if terminated or truncated:
        env.reset()


@pytest.mark.timeout(900)  # the run's budget (about 90 s here): a hang fails it instead of CI's whole timeout
def test_ten_thousand_actions_never_raise_and_stay_inside_the_space(env: gym.Env) -> None:
    sent = []

    @settings(max_examples=BULK_ACTIONS, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(_actions(cheap=True))
    def step(action: Any) -> None:
        if _graded(action):
            action = {**action, "kind": "nope"}
        sent.append(1)
        _check(env, action)

    step()
    assert len(sent) >= BULK_ACTIONS


@pytest.mark.timeout(900)  # the run's budget (about 90 s here): a hang fails it instead of CI's whole timeout
def test_graded_actions_with_fuzzed_fields_never_raise(env: gym.Env) -> None:
    sent = []

    @settings(max_examples=GRADED_ACTIONS, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(_actions(cheap=False))
    def step(action: Any) -> None:
        sent.append(1)
        _check(env, action)

    step()
    assert len(sent) >= GRADED_ACTIONS
