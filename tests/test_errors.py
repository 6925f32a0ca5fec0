"""validation_problems / validation_summary: the package's one formatter of pydantic errors."""

from __future__ import annotations

import pydantic
import pytest

from repogym_gym.actions import parse_action
from repogym_gym.errors import ActionError, validation_problems, validation_summary


class Inner(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    timeout_s: float = 1.0


class Outer(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    name: str
    limits: Inner | None = None

    @pydantic.model_validator(mode="after")
    def _named(self) -> Outer:
        if self.name == "bad":
            raise ValueError("name 'bad' is reserved; pick another")
        return self


def _error(data: object) -> pydantic.ValidationError:
    with pytest.raises(pydantic.ValidationError) as info:
        Outer.model_validate(data)
    return info.value


def test_an_unknown_nested_field_comes_first_with_the_closest_known_name() -> None:
    problems = validation_problems(_error({"limits": {"timeout": 3}}), model=Outer)
    assert problems == ["limits.timeout: unknown field (did you mean 'timeout_s'?)", "name: Field required"]
    far = validation_problems(_error({"name": "x", "zzz": 1}), model=Outer)
    assert far == ["zzz: unknown field (known fields: ['limits', 'name'])"]


def test_the_value_is_named_and_cut_and_a_whole_input_check_stands_alone() -> None:
    (line,) = validation_problems(_error({"name": ["y" * 200]}))
    assert line.startswith("name: Input should be a valid string (got ['yyy") and line.endswith("...)")
    assert len(line) < 140
    assert validation_problems(_error({"name": "bad"}), root="(top level)") == ["(top level): name 'bad' is reserved; pick another"]
    assert validation_problems(_error({"name": "bad"})) == ["name 'bad' is reserved; pick another"]


def test_the_summary_counts_the_rest_and_other_exceptions_give_their_own_words() -> None:
    assert validation_summary(_error({"limits": {"a": 1, "b": 2}})) == "limits.a: unknown field (and 2 more problems)"
    assert validation_summary(FileNotFoundError(2, "No such file or directory")) == "No such file or directory"


def test_an_action_s_problem_names_its_field_without_the_kind_tag() -> None:
    with pytest.raises(ActionError) as info:
        parse_action({"kind": "run", "command": 5})
    assert str(info.value) == "invalid 'run' action: command: Input should be a valid string (got 5)"
