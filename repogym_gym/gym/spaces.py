"""Gymnasium spaces of every repogym environment: constants, the same for every task.

``spaces.Text`` only accepts characters of its charset (alphanumeric by default, so spaces,
newlines, punctuation and unicode are outside it) and a full-Unicode charset costs ~200 MB per
async worker (measured with Gymnasium 1.4). :class:`UnicodeText` accepts any ``str`` up to a documented
length; its shared-memory handlers store code points, so ``AsyncVectorEnv`` works with
``shared_memory=True`` (a live view, never stale) as well as ``False``.

Action (a ``Dict``): ``kind`` is ``Discrete(8)`` indexing :data:`~repogym_gym.actions.ACTION_KINDS`
(read, write, edit, run, test, list_files, submit); the text fields ``path``, ``content``,
``old``, ``new`` and ``command`` are read as the kind needs them and ignored otherwise.
Observation (a ``Dict``): ``text`` plus int64 scalars ``step``, ``steps_left`` and
``exit_code`` (:data:`NO_EXIT_CODE` when the step ran no command).
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import concatenate, create_empty_array
from gymnasium.vector.utils.shared_memory import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from repogym_gym.actions import ACTION_KINDS, TEXT_LIMITS
from repogym_gym.episode import MAX_OBSERVATION_CHARS, MAX_STEPS

__all__ = ["ACTION_SPACE", "NO_EXIT_CODE", "OBSERVATION_SPACE", "TEXT_LIMITS", "UnicodeText", "action_space", "batch_actions",
           "chat_observation_space", "json_data",
           "observation_space"]

#: ``exit_code`` when the step ran no command.
NO_EXIT_CODE = -(2**31)
_SAMPLE_CHARS = string.ascii_letters + string.digits + " ._-/"
_SAMPLE_MAX = 32
_INT = np.int64


class UnicodeText(spaces.Text):
    """Any ``str`` of ``min_length`` to ``max_length`` characters (unicode, newlines included).

    ``sample()`` draws short strings (at most 32 characters) from letters, digits and ``" ._-/"``.

    Example:
        >>> UnicodeText(10).contains("é\\n x")
        True
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(max_length=max_length, min_length=min_length, charset=_SAMPLE_CHARS, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        length = int(self.np_random.integers(self.min_length, min(self.max_length, _SAMPLE_MAX) + 1))
        return "".join(self.np_random.choice(list(_SAMPLE_CHARS), size=length))

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and (self.min_length, self.max_length) == (other.min_length, other.max_length)

    __hash__ = None  # type: ignore[assignment]


def action_space() -> spaces.Dict:
    """A fresh copy of the action space."""
    return spaces.Dict({"kind": spaces.Discrete(len(ACTION_KINDS)), **{k: UnicodeText(n) for k, n in TEXT_LIMITS.items()}})


def observation_space() -> spaces.Dict:
    """A fresh copy of the observation space."""
    return spaces.Dict({
        "text": UnicodeText(MAX_OBSERVATION_CHARS + 200),
        "step": spaces.Box(0, MAX_STEPS, shape=(), dtype=_INT),
        "steps_left": spaces.Box(0, MAX_STEPS, shape=(), dtype=_INT),
        "exit_code": spaces.Box(NO_EXIT_CODE, 2**31 - 1, shape=(), dtype=_INT),
    })


def chat_observation_space() -> spaces.Sequence:
    """Chat mode's observation (``observation_mode="chat"``): a tuple of messages, each
    ``{"role", "content", "tool_call_id"}`` (``""`` where a message has no call id)."""
    return spaces.Sequence(spaces.Dict({
        "role": UnicodeText(16),
        "content": UnicodeText(MAX_OBSERVATION_CHARS + 200),
        "tool_call_id": UnicodeText(256),
    }), stack=False)


ACTION_SPACE = action_space()
OBSERVATION_SPACE = observation_space()


# -- shared memory for AsyncVectorEnv(shared_memory=True) ------------------------------------

class _LiveTexts(Sequence[str]):
    """The texts of ``n`` environments in shared memory, decoded when read (never stale)."""

    def __init__(self, buffer: Any, n: int, max_length: int) -> None:
        self._buffer, self._n, self._width = buffer, n, max_length + 1

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._n)))
        if not -self._n <= index < self._n:
            raise IndexError(index)
        data = np.frombuffer(self._buffer.get_obj(), dtype=np.int32)[(index % self._n) * self._width :][: self._width]
        return "".join(map(chr, data[1 : 1 + int(data[0])]))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: Any) -> bool:
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return repr(tuple(self))


@create_shared_memory.register(UnicodeText)
def _create(space: UnicodeText, n: int = 1, ctx: Any = None) -> Any:
    import multiprocessing as mp

    return (ctx or mp).Array(np.dtype(np.int32).char, n * (space.max_length + 1))


@read_from_shared_memory.register(UnicodeText)
def _read(space: UnicodeText, shared_memory: Any, n: int = 1) -> _LiveTexts:
    return _LiveTexts(shared_memory, n, space.max_length)


@write_to_shared_memory.register(UnicodeText)
def _write(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    width = space.max_length + 1
    codes = np.fromiter(map(ord, value[: space.max_length]), dtype=np.int32, count=min(len(value), space.max_length))
    dest = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * width : (index + 1) * width]
    dest[0] = len(codes)
    dest[1 : 1 + len(codes)] = codes


def batch_actions(actions: Sequence[Mapping[str, Any] | str]) -> dict[str, Any]:
    """Per-member actions as one step of a vector env takes them.

    Gymnasium batches the ``Dict`` action space as a dict of arrays (``kind`` an int64 array of shape
    ``(n,)``, each text field a tuple of ``n`` str), not as a list of per-member dicts.

    Args:
        actions: One per member: a dict with ``kind`` (a name of :data:`~repogym_gym.actions.ACTION_KINDS` or
            its index) and the text fields its kind needs (the others default to ``""``), or the same as JSON.

    Returns:
        ``{"kind": ndarray, "path": tuple, "content": tuple, "old": tuple, "new": tuple, "command": tuple}``.

    Raises:
        ValueError: naming the member and the field: an unknown kind or field, a field that is not text,
            JSON that is not an object.

    Example:
        >>> batch_actions([{"kind": "run", "command": "ls"}, '{"kind": "submit"}'])["kind"].tolist()
        [3, 6]
    """
    members = []
    for i, action in enumerate(actions):
        if isinstance(action, str):
            try:
                action = json.loads(action)
            except json.JSONDecodeError as exc:
                raise ValueError(f"action {i}: not JSON ({exc.msg} at character {exc.pos})") from None
            except RecursionError:
                raise ValueError(f"action {i}: JSON nested too deep") from None
        if not isinstance(action, Mapping):
            raise ValueError(f"action {i}: a dict or a JSON object, not {type(action).__name__}")
        kind = action.get("kind")
        if isinstance(kind, str) and kind in ACTION_KINDS:
            kind = ACTION_KINDS.index(kind)
        if isinstance(kind, bool) or not isinstance(kind, int | np.integer) or not 0 <= kind < len(ACTION_KINDS):
            raise ValueError(f"action {i}: kind {action.get('kind')!r} is none of {list(ACTION_KINDS)}")
        unknown = sorted(set(action) - {"kind", *TEXT_LIMITS})
        if unknown:
            raise ValueError(f"action {i}: unknown field {unknown[0]!r}; the fields are {['kind', *TEXT_LIMITS]}")
        member: dict[str, Any] = {"kind": int(kind)}
        for field in TEXT_LIMITS:
            value = action.get(field, "")
            if not isinstance(value, str):
                raise ValueError(f"action {i}: {field} must be text, not {type(value).__name__}")
            member[field] = value
        members.append(member)
    batched = concatenate(ACTION_SPACE, members, create_empty_array(ACTION_SPACE, len(members)))  # type: ignore[arg-type]
    assert isinstance(batched, dict)
    return batched


def json_data(value: Any) -> Any:
    """``value`` as JSON can carry it: numpy scalars and arrays as plain numbers and lists, tuples as
    lists, pydantic models (an Action) as their JSON dicts (what ``repogym serve`` and its client send)."""
    if isinstance(value, dict):
        return {str(k): json_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_data(v) for v in value]
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value
