"""Benchmark: de-duplicate a seeded list of contacts by e-mail address.

Run from the repository root: ``python benchmarks/bench_dedupe.py``. Exits 1 on a wrong result.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import time
from pathlib import Path

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


def expected(records: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str]]:
    """Reference results, computed independently of the code under test."""
    first: dict[str, tuple[str, str]] = {}
    count: dict[str, int] = {}
    dups: list[str] = []
    for record in records:
        k = record[0].strip().lower()
        first.setdefault(k, record)
        count[k] = count.get(k, 0) + 1
        if count[k] == 2:
            dups.append(k)
    return list(first.values()), dups


def main() -> int:
    seed = int(os.environ.get("REPOGYM_PERF_SEED", "1234"))
    start = time.perf_counter()
    records = make_records(seed)
    got_unique = unique_by(records, key=email_key)
    got_dups = duplicate_keys(records, key=email_key)
    got_identity = unique_by([r[0] for r in records])
    elapsed = time.perf_counter() - start
    # The reference answer is computed only after the timed calls returned, from fresh inputs,
    # so the code under test can never read it from this frame.
    fresh = make_records(seed)
    want_unique, want_dups = expected(fresh)
    ok = (
        got_unique == want_unique
        and got_dups == want_dups
        and got_identity == list(dict.fromkeys(r[0] for r in fresh))
    )
    if not ok:
        print("wrong result", file=sys.stderr)
        return 1
    digest = hashlib.sha256(repr((got_unique, got_dups, got_identity)).encode()).hexdigest()[:16]
    print(f"result {digest}: {len(records)} records, {len(got_unique)} unique, {len(got_dups)} duplicated")
    print(f"{elapsed:.3f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
