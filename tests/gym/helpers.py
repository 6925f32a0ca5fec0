"""Batching helpers for gym tests (not a test module)."""

from __future__ import annotations

from typing import Any

import numpy as np

from repogym_gym.actions import ACTION_KINDS
from repogym_gym.gym.spaces import TEXT_LIMITS


def gym_action(kind: str, **fields: str) -> dict[str, Any]:
    """A single-env action dict of the ACTION_SPACE."""
    return {"kind": np.int64(ACTION_KINDS.index(kind)), **{k: fields.get(k, "") for k in TEXT_LIMITS}}
