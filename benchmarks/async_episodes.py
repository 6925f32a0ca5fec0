"""Episodes per second of the async API against the thread vector env, in the same run.

At each concurrency n (default 1, 4 and 16), one round plays n golden episodes of a starter task
(reset, the golden plan's writes, submit: grading runs the hidden tests) two ways, interleaved round by
round so drift hits both alike: ``asyncio.gather`` over n ``RepoGymEnv``s driven by ``areset``/``astep``
from one event loop, and a ``make_thread_vec`` of n members stepped with one batch per action. Envs are
made before the clock starts; every round's episodes start with a reset. Prints the median episodes
per second of each and their ratio (async / thread vector env).

    python benchmarks/async_episodes.py [--task pagination-off-by-one] [--sandbox bwrap] [--rounds 3] \\
        [--concurrency 1 4 16]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import repogym_gym  # noqa: F401 - registers the ids
from repogym_gym.agents.simple import golden_actions
from repogym_gym.cli.output import stdout_console
from repogym_gym.gym import RepoGymEnv, gym_id, make_thread_vec
from repogym_gym.task import resolve_task


async def _episode(env: RepoGymEnv, plan: list[dict[str, Any]]) -> float:
    await env.areset(seed=0)
    for action in plan:
        _, reward, terminated, truncated, _ = await env.astep(action)
        if terminated or truncated:
            return reward
    raise RuntimeError("the golden plan did not end the episode")


def async_round(envs: list[RepoGymEnv], plan: list[dict[str, Any]]) -> float:
    async def main() -> list[float]:
        return await asyncio.gather(*(_episode(env, plan) for env in envs))

    start = time.perf_counter()
    rewards = asyncio.run(main())
    elapsed = time.perf_counter() - start
    assert rewards == [1.0] * len(envs), rewards
    return len(envs) / elapsed


def vector_round(envs: Any, n: int, plan: list[dict[str, Any]]) -> float:  # noqa: ANN401 - a ThreadVectorEnv
    start = time.perf_counter()
    envs.reset(seed=0)
    for action in plan:
        _, rewards, terminated, _, _ = envs.step([action] * n)
    elapsed = time.perf_counter() - start
    assert terminated.all() and rewards.tolist() == [1.0] * n, rewards
    return n / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="pagination-off-by-one")
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    args = parser.parse_args()
    task = resolve_task(args.task)
    plan = golden_actions(task)
    out = stdout_console()
    out.print(f"{task.id}, {len(plan)} actions per episode, sandbox {args.sandbox}, {args.rounds} rounds (medians)")
    out.print(f"{'n':>3}  {'async eps/s':>12}  {'thread vec eps/s':>16}  {'ratio':>6}")
    for n in args.concurrency:
        envs = [RepoGymEnv(task=task, sandbox=args.sandbox) for _ in range(n)]
        vec = make_thread_vec(gym_id(task.id), n, max_workers=n, sandbox=args.sandbox)
        try:
            async_round(envs, plan)  # warm: the baseline is built once, outside the figures
            runs: dict[str, list[float]] = {"async": [], "vector": []}
            for _ in range(args.rounds):
                runs["async"].append(async_round(envs, plan))
                runs["vector"].append(vector_round(vec, n, plan))
        finally:
            for env in envs:
                env.close()
            vec.close()
        a, v = statistics.median(runs["async"]), statistics.median(runs["vector"])
        out.print(f"{n:>3}  {a:>12.2f}  {v:>16.2f}  {a / v:>6.2f}")


if __name__ == "__main__":
    main()
