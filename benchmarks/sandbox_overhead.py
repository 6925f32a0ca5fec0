"""Per-command and per-episode cost of each sandbox, as ratios measured in the same run.

Per command: ``true`` run by a plain ``subprocess.run`` and by every available sandbox, the
backends interleaved round by round (so drift hits all alike); medians in milliseconds and the
ratio to the plain subprocess. Per episode: a golden episode of a starter task through
``RepoGymEnv(sandbox=...)`` (reset, the golden plan's actions, grading), interleaved likewise;
medians in seconds and the ratio to the local sandbox (a plain subprocess with a scrubbed
environment, the episode's floor).

Docker (when ``$REPOGYM_DOCKER_HOST`` answers and the base image is built) appears twice per
command: ``docker`` is an ``exec`` in a running episode container (what a Run action pays),
``docker-oneshot`` a fresh container per command (what each grading run and Test action pays;
it runs every fifth round only, it is slow).

    python benchmarks/sandbox_overhead.py [--commands 100] [--episodes 5] [--task pagination-off-by-one]

A backend is one entry of ``BACKENDS`` (name -> sandbox factory).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable

from repogym_gym.agents import GoldenAgent, run_episode
from repogym_gym.gym.env import RepoGymEnv
from repogym_gym.sandbox import LocalSandbox, Sandbox
from repogym_gym.sandbox.bwrap import BubblewrapSandbox
from repogym_gym.sandbox.docker import DockerSandbox

#: Sandbox name -> factory; the name is also what ``RepoGymEnv(sandbox=...)`` takes.
BACKENDS: dict[str, Callable[[], Sandbox]] = {
    "local": LocalSandbox,
    "bwrap": BubblewrapSandbox,
    "docker": DockerSandbox,
}
#: Launchers timed only every this many rounds (a fresh container per command is slow).
SPARSE = {"docker-oneshot": 5}


def available_backends() -> dict[str, Sandbox]:
    found = {}
    for name, factory in BACKENDS.items():
        sandbox = factory()
        if sandbox.available():
            found[name] = sandbox
        else:
            reason = getattr(sandbox, "unavailable_reason", lambda: None)()
            print(f"(skipping {name}: {reason or 'unavailable'})")
            sandbox.close()
    return found


def time_commands(sandboxes: dict[str, Sandbox], rounds: int) -> dict[str, list[float]]:
    """Seconds per ``true``, per launcher, rounds interleaved (the order rotates every round)."""
    with tempfile.TemporaryDirectory() as cwd, tempfile.TemporaryDirectory() as other:
        launchers: dict[str, Callable[[], object]] = {"subprocess": lambda: subprocess.run(["true"], cwd=cwd, check=True)}
        for name, sandbox in sandboxes.items():
            launchers[name] = lambda sb=sandbox: sb.run(["true"], cwd=cwd, timeout_s=30)
            opener = getattr(sandbox, "open", None)
            if opener is not None:  # an episode container on cwd: its commands are execs
                opener(cwd)
                launchers[f"{name}-oneshot"] = lambda sb=sandbox: sb.run(["true"], cwd=other, timeout_s=30)
        samples: dict[str, list[float]] = {name: [] for name in launchers}
        for launch in launchers.values():  # warm-up: imports, probes, page cache
            launch()
        names = list(launchers)
        for i in range(rounds):
            for name in names[i % len(names):] + names[: i % len(names)]:
                if i % SPARSE.get(name, 1):
                    continue
                start = time.perf_counter()
                launchers[name]()
                samples[name].append(time.perf_counter() - start)
        for sandbox in sandboxes.values():
            release = getattr(sandbox, "release", None)
            if release is not None:
                release(cwd)
    return samples


def time_episodes(names: list[str], task: str, rounds: int) -> dict[str, list[float]]:
    """Seconds per golden episode (reward checked to be 1), per sandbox, interleaved."""
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(rounds + 1):  # round 0 warms the baseline cache and the bytecode cache
        for name in names[i % len(names):] + names[: i % len(names)]:
            env = RepoGymEnv(task, sandbox=name)
            start = time.perf_counter()
            outcome = run_episode(env, GoldenAgent())
            elapsed = time.perf_counter() - start
            env.close()
            if outcome.total_reward != 1.0:
                raise SystemExit(f"the golden episode scored {outcome.total_reward} under {name}: {outcome.info}")
            if i:
                samples[name].append(elapsed)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=100, help="interleaved rounds of `true`")
    parser.add_argument("--episodes", type=int, default=5, help="interleaved rounds of golden episodes")
    parser.add_argument("--task", default="pagination-off-by-one", help="starter task of the episodes")
    args = parser.parse_args()
    sandboxes = available_backends()

    try:
        per_command = time_commands(sandboxes, args.commands)
    finally:
        for sandbox in sandboxes.values():
            sandbox.close()
    floor = statistics.median(per_command["subprocess"])
    print(f"\nper command (`true`, {args.commands} interleaved rounds; docker-oneshot every {SPARSE['docker-oneshot']}th)")
    print(f"{'launcher':15} {'median ms':>10} {'ratio':>7} {'overhead ms':>12}")
    for name, xs in per_command.items():
        median = statistics.median(xs)
        print(f"{name:15} {median * 1000:10.2f} {median / floor:7.2f} {(median - floor) * 1000:12.2f}")

    if args.episodes and "local" in sandboxes:
        per_episode = time_episodes(list(sandboxes), args.task, args.episodes)
        base = statistics.median(per_episode["local"])
        print(f"\nper episode (golden {args.task}, {args.episodes} interleaved rounds; ratio to local)")
        print(f"{'sandbox':15} {'median s':>10} {'ratio':>7}")
        for name, xs in per_episode.items():
            median = statistics.median(xs)
            print(f"{name:15} {median:10.3f} {median / base:7.2f}")


if __name__ == "__main__":
    main()
