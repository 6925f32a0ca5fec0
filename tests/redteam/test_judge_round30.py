"""Red-team round 30 (a source review of f3a05a6): the hook's own frame carried out of it with its locals.

``sys.audit("object.__getattr__")`` with no arguments made the hook's first line raise ``IndexError``
(``args[1]``) before it deleted its locals; its frame, kept by the exception's traceback and taken from
``gc.garbage`` (``gc.DEBUG_SAVEALL`` raises no audit event), held ``_guarded``, whose closure is the policy's
state (1.0 with the bug left in, by the shared forge of round 28). The property: the hook's frame holds
nothing of the policy when any exception leaves it, its own or one passing through; a forged event of the
wrong arity is a violation like any forged event.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HOOK_FRAME = '''
import gc
import sys

from repogym_gym.graders import judge_policy

judge_policy.install({"nonce": "n", "key": "00" * 32, "tree": "/nonexistent-tree", "grader_files": {},
                      "scored_files": [], "scored_ids": [], "runner_files": {}})
caught = []
for args in ((), (len,)):
    try:
        sys.audit("object.__getattr__", *args)
    except BaseException as exc:  # noqa: BLE001 - whatever leaves the hook is kept, as an attacker would
        caught.append(exc)
        print("raised", type(exc).__name__, exc)
for exc in caught:
    exc.args = ([exc],)  # a cycle: the collector's garbage, kept under DEBUG_SAVEALL
del caught, exc
gc.set_debug(gc.DEBUG_SAVEALL)
gc.collect()
gc.set_debug(0)
hooks = [o for o in gc.garbage if type(o).__name__ == "frame" and o.f_code.co_name == "hook"]
print("hook frames", len(hooks), "holding", sorted({k for f in hooks for k in f.f_locals}))
'''


def test_no_exception_carries_the_hook_s_locals_out_and_a_forged_arity_is_refused() -> None:
    """White-box, the policy installed in a fresh interpreter: forged attribute events of the wrong arity are
    refused as forged, and the hook frames their exceptions carry hold only the event's name."""
    done = subprocess.run([sys.executable, "-c", HOOK_FRAME], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines.count("raised RuntimeError a forged object.__getattr__ event: its arguments are not what the "
                       "interpreter passes") == 2, done.stdout
    holding = next(line for line in lines if line.startswith("hook frames"))
    assert holding.endswith("holding ['error', 'event']") or holding.endswith("holding ['event']"), holding
