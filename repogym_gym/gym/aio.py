"""The async side of the gym layer: blocking env calls run on a shared thread pool.

An episode's steps wait on subprocesses (tests, commands, grading), so one event loop drives many
episodes when each call runs in a thread: ``await env.astep(action)`` (see
:meth:`~repogym_gym.gym.env.RepoGymEnv.astep`). The pool is shared by every env of the process and
sized for concurrent episodes, not for cores (asyncio's default pool has ``min(32, cores + 4)``
threads: 6 on 2 cores, which would run 16 concurrent episodes 6 at a time).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["ASYNC_THREADS", "run_blocking"]

T = TypeVar("T")

#: Threads of the shared pool: ``$REPOGYM_ASYNC_THREADS``, default 64 (concurrent episode calls).
ASYNC_THREADS = int(os.environ.get("REPOGYM_ASYNC_THREADS", "64"))

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool  # noqa: PLW0603 - one pool per process, made on first use
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(1, ASYNC_THREADS), thread_name_prefix="repogym-async")
        return _pool


async def run_blocking(call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)`` on the shared pool, awaited from the running event loop."""
    return await asyncio.get_running_loop().run_in_executor(_executor(), functools.partial(call, *args, **kwargs))
