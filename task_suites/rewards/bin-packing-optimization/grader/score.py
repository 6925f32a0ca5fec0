"""Score of a packing: the lower bound ceil(sum / capacity) over the bins used; infeasible packings raise."""

import math


def score(case: str, output: str) -> float:
    head, sizes_line = case.strip().split("\n")
    capacity, count = map(int, head.split())
    sizes = list(map(int, sizes_line.split()))
    bins = [line.split() for line in output.strip().splitlines() if line.strip()]
    seen = []
    for items in bins:
        indices = [int(i) for i in items]  # a token that is not an integer raises: malformed
        if any(not 0 <= i < count for i in indices):
            raise ValueError("an item index out of range")
        if sum(sizes[i] for i in indices) > capacity:
            raise ValueError("a bin over capacity")
        seen.extend(indices)
    if sorted(seen) != list(range(count)):
        raise ValueError("every item must be packed exactly once")
    return math.ceil(sum(sizes) / capacity) / len(bins)
