"""Issue 15: diff similarity as a pure function of two diffs made by real git."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import repogym_gym
from repogym_gym.diffsim import DEFAULT_WEIGHTS, SIZE_CAP, diff_similarity, openai_judge
from repogym_gym.spec import GradingSpec
from repogym_gym.testing import ChatServer, Reply
from tests.helpers import git

ORIGINAL = {"my file.py": "a\nb\nc\n", "old.py": "".join(f"x{i}\n" for i in range(40)), "other.py": "k\n" * 5}


def _diff(tmp_path: Path, name: str, edit: dict[str, str | None], renames: dict[str, str] | None = None) -> str:
    """``git diff -M`` of ORIGINAL after ``renames`` and ``edit`` (path -> new text, None deletes)."""
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q")
    for rel, text in ORIGINAL.items():
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    for old, new in (renames or {}).items():
        git(repo, "mv", old, new)
    for rel, new_text in edit.items():
        if new_text is None:
            (repo / rel).unlink()
        else:
            (repo / rel).write_text(new_text)
    git(repo, "add", "-A")
    return git(repo, "diff", "--cached", "-M") + "\n"


@pytest.fixture
def oracle(tmp_path: Path) -> str:
    """A change to a path with a space and a rename with an edit."""
    return _diff(tmp_path, "oracle", {"my file.py": "a\nB\nc\n", "new.py": ORIGINAL["old.py"].replace("x30\n", "y30\n")},
                 renames={"old.py": "new.py"})


def test_the_golden_patch_scores_exactly_1_and_repeats(oracle: str) -> None:
    assert "a/my file.py" in oracle and "rename from old.py" in oracle
    runs = [diff_similarity(oracle, oracle) for _ in range(5)]
    assert all(run == runs[0] for run in runs)
    score, details = runs[0]
    assert score == 1.0 and details["components"] == {"format": 1.0, "size": 1.0, "file": 1.0, "region": 1.0, "sim": 1.0}
    assert repogym_gym.diff_similarity is diff_similarity


def test_an_empty_or_unparseable_diff_scores_0(oracle: str) -> None:
    assert diff_similarity(oracle, "")[0] == 0.0 and diff_similarity(oracle, "")[1]["reason"] == "empty diff"
    score, details = diff_similarity(oracle, "I fixed it, trust me.\n")
    assert score == 0.0 and details["reason"] == "not a unified diff"
    score, details = diff_similarity(oracle, "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-only one line\n")
    assert score == 0.0 and details["reason"] == "not a unified diff"


def test_a_partial_fix_scores_between_and_the_components_say_why(oracle: str, tmp_path: Path) -> None:
    half = _diff(tmp_path, "half", {"my file.py": "a\nB\nc\n"})  # the same first hunk, no rename
    score, details = diff_similarity(oracle, half)
    parts = details["components"]
    assert 0.0 < score < 1.0 and parts["format"] == 1.0
    assert parts["file"] == pytest.approx(2 * (1 / 1) * (1 / 3) / (1 + 1 / 3))  # 1 of 3 paths, precision 1
    assert parts["region"] == pytest.approx(2 / 4) and parts["size"] == pytest.approx(2 / 4)
    wrong_place = _diff(tmp_path, "wrong", {"other.py": "k\n" * 4 + "K\n"})
    assert diff_similarity(oracle, wrong_place)[0] < score


def test_size_sanity_below_a_tenth_caps_the_score(oracle: str, tmp_path: Path) -> None:
    bloated = _diff(tmp_path, "bloated", {"my file.py": "a\nB\nc\n" + "pad\n" * 200,
                                           "new.py": ORIGINAL["old.py"].replace("x30\n", "y30\n")}, renames={"old.py": "new.py"})
    weights = {"format": 1.0, "file": 1.0, "size": 0.0, "region": 0.0, "sim": 0.0}  # uncapped this would be 1.0
    score, details = diff_similarity(oracle, bloated, weights=weights)
    assert details["components"]["size"] < SIZE_CAP[0] and details["capped"] is True and score == SIZE_CAP[1]


def test_a_judge_is_weighted_and_without_it_its_weight_is_spread(oracle: str, tmp_path: Path) -> None:
    half = _diff(tmp_path, "half", {"my file.py": "a\nB\nc\n"})
    without, details = diff_similarity(oracle, half)
    parts = details["components"]
    assert "judge" not in parts
    assert without == pytest.approx(sum(DEFAULT_WEIGHTS[n] * v for n, v in parts.items()) / sum(DEFAULT_WEIGHTS[n] for n in parts))
    with_judge, details = diff_similarity(oracle, half, judge=lambda o, p: 1.0)
    assert details["components"]["judge"] == 1.0 and with_judge > without
    assert diff_similarity(oracle, oracle, judge=lambda o, p: 0.5)[0] < 1.0  # a judge can rate the oracle below 1

    def broken(o: str, p: str) -> float:
        raise TimeoutError("the judge's server did not answer")

    failed, details = diff_similarity(oracle, half, judge=broken)
    assert failed == without and "TimeoutError" in details["judge_error"]
    nan, details = diff_similarity(oracle, half, judge=lambda o, p: float("nan"))
    assert nan == without and "nan" in details["judge_error"]


def test_bad_weights_and_oracles_are_named(oracle: str) -> None:
    with pytest.raises(ValueError, match="unknown component 'siz'"):
        diff_similarity(oracle, oracle, weights={"siz": 1.0})
    with pytest.raises(ValueError, match="sim must be a finite number >= 0, got -1"):
        diff_similarity(oracle, oracle, weights={"sim": -1})
    with pytest.raises(ValueError, match=r"weights give every deterministic component \(format, size, file, region, sim\) weight 0"):
        diff_similarity(oracle, oracle, weights=dict.fromkeys(("format", "size", "file", "region", "sim"), 0.0))
    with pytest.raises(ValueError, match="oracle_diff: not a unified diff"):
        diff_similarity("", oracle)


def test_the_task_yaml_weights_name_the_same_components() -> None:
    field = GradingSpec.model_fields["diff_weights"].annotation
    assert set(field.__args__[0].__args__) == set(DEFAULT_WEIGHTS)  # type: ignore[union-attr]


def test_the_readme_block_runs(oracle: str, tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Choosing a reward\n", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    half = _diff(tmp_path, "half", {"my file.py": "a\nB\nc\n"})
    scope: dict[str, object] = {"oracle_diff": oracle, "predicted_diff": half}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    assert scope["score"] == diff_similarity(oracle, half)[0] and 0.0 < float(scope["score"]) < 1.0  # type: ignore[arg-type]
    assert scope["env"].unwrapped._reward == "graded"  # type: ignore[attr-defined]


def test_an_llm_judge_behind_an_openai_compatible_endpoint(oracle: str, tmp_path: Path) -> None:
    half = _diff(tmp_path, "half", {"my file.py": "a\nB\nc\n"})
    with ChatServer([Reply(text="The candidate fixes one of two places.\nRATING: 7"), Reply(text="Looks fine to me."),
                     Reply(status=500)]) as server:
        judge = openai_judge("judge-model", base_url=server.base_url, api_key="k", timeout_s=10)
        rated, details = diff_similarity(oracle, half, judge=judge)
        assert details["components"]["judge"] == 0.7 and "judge_error" not in details
        sent = server.requests[0].body
        assert sent["model"] == "judge-model" and sent["temperature"] == 0
        assert "Reference patch:\n" + oracle[:100] in sent["messages"][1]["content"]
        without, _ = diff_similarity(oracle, half)
        no_rating, details = diff_similarity(oracle, half, judge=judge)
        assert no_rating == without and "no 'RATING: <0-10>' line" in details["judge_error"]
        failed, details = diff_similarity(oracle, half, judge=judge)
        assert failed == without and "judge_error" in details
