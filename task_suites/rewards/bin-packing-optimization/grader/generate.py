"""Cases of the bin-packing task: a capacity and item sizes (the program's stdin)."""

import random


def generate(rng: random.Random, index: int) -> str:
    capacity = 100
    sizes = [rng.randint(5, 60) for _ in range(30 + 10 * index)]
    return f"{capacity} {len(sizes)}\n{' '.join(map(str, sizes))}\n"
