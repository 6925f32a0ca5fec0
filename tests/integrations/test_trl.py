"""TRL 1.16: RepoGym as a GRPOTrainer ``environment_factory``, one real ``train()`` step on the CPU with a
tiny randomly initialised model (built from a config and an in-process tokenizer: nothing downloaded)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

import repogym_gym
from repogym_gym.gym import register_suite
from repogym_gym.task import Task
from tests.helpers import FIXED_SOURCE, MakeTask
from tests.integrations.helpers import require_library


@pytest.fixture
def trl() -> Any:
    return require_library("trl", "trl")


def _row(task: Task) -> dict[str, Any]:
    return next(r for r in repogym_gym.dataset(task.root.parent, as_hf=False) if r["task_id"] == task.id)


def test_golden_tools_score_1_a_reading_rollout_0_and_an_infra_failure_is_masked(trl: Any, tiny_task: Task,
                                                                                  make_task: MakeTask) -> None:
    from gymnasium import error as gym_error
    from transformers.utils import get_json_schema

    from repogym_gym.integrations.trl import trl_environment

    with pytest.raises(ValueError, match="chroot"):
        trl_environment("chroot")
    env = trl_environment("local")()
    tools = [name for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
             if name not in ("reset", "get_reward") and not name.startswith("_")]
    assert sorted(tools) == sorted(["read", "write", "edit", "run", "test", "list_files", "submit", "bash"])
    assert get_json_schema(env.write)["function"]["parameters"]["required"] == ["path", "content"]
    row = _row(tiny_task)
    appended = env.reset(**row)
    assert appended.startswith("\n\nRepository files:") and row["prompt"][-1]["content"] not in appended
    env.write(path="calc/__init__.py", content=FIXED_SOURCE)
    assert "Grade:" in env.submit() and env.get_reward() == 1.0
    assert env.read(path="calc/__init__.py").startswith("The episode has ended")

    env.reset(**row)  # TRL reuses pooled instances through reset
    assert "return a - b" in env.read(path="calc/__init__.py")
    assert env.get_reward() == 0.0  # the trainer ended the rollout: graded as it stands

    with pytest.raises(gym_error.Error, match="Seed must be"):
        env.reset(**{**row, "seed": -1})  # a failed reset leaves no episode running: no tool acts, no reward
    assert env.read(path="calc/__init__.py").startswith("No episode is running") and env.get_reward() is None
    env.reset(**row)
    assert "return a - b" in env.read(path="calc/__init__.py")  # the env is not broken by it

    broken = make_task(id="broken-setup", repo={"setup": ["exit 3"]})
    register_suite(broken.root.parent)
    env.reset(**_row(broken))
    env.submit()
    assert env.get_reward() is None  # TRL makes it NaN and drops it


def _tiny_model_and_tokenizer(trl: Any, tmp_path: Path) -> tuple[Any, Any]:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>",
                "<tool_response>", "</tool_response>"]
    raw = Tokenizer(models.BPE(unk_token="<|endoftext|>"))
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    corpus = [FIXED_SOURCE, "system user assistant tool read write submit path content", repogym_gym.conversation.SYSTEM_PROMPT]
    raw.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                                                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    template = Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja"
    tokenizer.chat_template = template.read_text()
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=4096,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return Qwen3ForCausalLM(config), tokenizer


def _readme_trainer_block() -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    return readme.split("### TRL\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning", "ignore::DeprecationWarning")  # TRL's and transformers' own
def test_one_real_grpo_step_grades_every_rollout(trl: Any, tiny_task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch

    from repogym_gym.integrations.trl import trl_environment

    torch.manual_seed(0)
    model, tokenizer = _tiny_model_and_tokenizer(trl, tmp_path)
    rewards: list[float | None] = []
    base = trl_environment("local")

    class Recorded(base):  # type: ignore[valid-type,misc]
        def get_reward(self) -> float | None:
            reward = super().get_reward()
            rewards.append(reward)
            return reward

    config = {"output_dir": str(tmp_path / "out"), "per_device_train_batch_size": 2, "num_generations": 2,
              "max_completion_length": 24, "max_steps": 1, "use_cpu": True, "report_to": [], "logging_steps": 1,
              "save_strategy": "no", "bf16": False, "fp16": False, "dataloader_num_workers": 0}
    # the README's block as written, with the tiny model, the tiny task's suite and the recording class
    code = _readme_trainer_block().replace('repogym_gym.dataset("starter")', "repogym_gym.dataset(suite, repeats=2)")
    code = code.replace('trl_environment(sandbox="bwrap")', "Recorded")
    assert "dataset(suite, repeats=2)" in code and "environment_factory=Recorded" in code, code
    scope: dict[str, Any] = {"model": model, "tokenizer": tokenizer, "config": config, "suite": tiny_task.root.parent,
                             "Recorded": Recorded}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - the README's own code
    trainer = scope["trainer"]
    assert rewards == [0.0] * len(rewards) and len(rewards) >= 2  # random text submits nothing: graded 0, never None
    assert trainer.state.global_step == 1
