"""Benchmark: de-duplicate a seeded list of contacts by e-mail address.

Run from the repository root: ``python benchmarks/bench_dedupe.py``. It prints a digest of the
results; the grader compares it with the original code's digest for the same seed. The digest
is the grader's canonical form (``REPOGYM_PERF_CANON``, set by the grader): it accepts plain
builtin data only, so results must be exactly lists, tuples and strings, and the benchmark
exits 1 on anything else. No reference answer is computed here.
"""

from __future__ import annotations

import os
import random
import runpy
import sys
import time
from pathlib import Path

# The grader's canonical form, loaded before any code under test runs; unset outside grading.
_CANON = os.environ.get("REPOGYM_PERF_CANON")
digest = runpy.run_path(_CANON)["digest"] if _CANON else None

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from contacts import duplicate_keys, email_key, unique_by  # noqa: E402

N_RECORDS = 12_000
N_ADDRESSES = 6_000


def make_records(seed: int = 1234) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    addresses = [f"user{i:05d}@example{i % 7}.org" for i in range(N_ADDRESSES)]
    records = []
    for n in range(N_RECORDS):
        address = addresses[rng.randrange(N_ADDRESSES)]
        if rng.random() < 0.3:
            address = address.upper()
        if rng.random() < 0.1:
            address = f" {address} "
        records.append((address, f"name{n}"))
    return records


def main() -> int:
    seed = int(os.environ.get("REPOGYM_PERF_SEED", "1234"))
    start = time.perf_counter()
    # each call gets inputs of its own: work done for one call cannot be handed to the next (red-team
    # round 38 reused unique_by's scan of the very same list in duplicate_keys)
    records, others, addresses = make_records(seed), make_records(seed + 1), make_records(seed + 2)
    got_unique = unique_by(records, key=email_key)
    got_dups = duplicate_keys(others, key=email_key)
    got_identity = unique_by([r[0] for r in addresses])
    elapsed = time.perf_counter() - start
    if digest is None:
        print("result not digested: REPOGYM_PERF_CANON is unset (the grader sets it)")
    else:
        try:
            line = digest((got_unique, got_dups, got_identity))
        except TypeError as exc:  # the canonical form's NotPlainData
            print(f"wrong result: {exc}", file=sys.stderr)
            return 1
        print(f"result {line}: {len(records)} records, {len(got_unique)} unique, {len(got_dups)} duplicated")
    print(f"{elapsed:.3f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
