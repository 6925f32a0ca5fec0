"""Tests for repogym_gym.sandbox.limits: merging task limits, and the prlimit argv."""

from __future__ import annotations

import doctest

import pytest
from pydantic import ValidationError

from repogym_gym.sandbox import limits as limits_module
from repogym_gym.sandbox.limits import SandboxLimits, prlimit_argv
from repogym_gym.spec import LimitsSpec


def test_task_limits_override_only_the_fields_they_set() -> None:
    merged = SandboxLimits().merged(LimitsSpec(memory_mb=512, max_processes=32))
    assert (merged.memory_mb, merged.max_processes) == (512, 32)
    assert (merged.cpu_s, merged.file_size_mb, merged.tmp_size_mb) == (600, 1024, 512)


def test_a_task_without_sandbox_limits_keeps_the_sandbox_defaults() -> None:
    base = SandboxLimits(cpu_s=5)
    assert base.merged(LimitsSpec()) is base


def test_an_out_of_range_override_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="max_processes"):
        SandboxLimits().merged({"max_processes": 0})


def test_the_spec_refuses_unknown_limit_fields() -> None:
    with pytest.raises(ValidationError, match="memory_gb"):
        LimitsSpec.model_validate({"memory_gb": 2})


def test_prlimit_argv_sets_every_limit_in_bytes_and_ends_with_a_separator() -> None:
    argv = prlimit_argv(SandboxLimits(cpu_s=7, memory_mb=100, max_processes=9, file_size_mb=2, open_files=64))
    assert argv == ["prlimit", "--cpu=7", "--nofile=64", f"--as={100 * 2**20}", "--nproc=9",
                    f"--fsize={2 * 2**20}", "--core=0", "--"]


def test_a_disabled_limit_is_left_out_of_the_prlimit_argv() -> None:
    argv = prlimit_argv(SandboxLimits(cpu_s=None, memory_mb=None, max_processes=None, file_size_mb=None))
    assert argv == ["prlimit", "--nofile=4096", "--core=0", "--"]


def test_limits_docstring_examples_run() -> None:
    assert doctest.testmod(limits_module).failed == 0
