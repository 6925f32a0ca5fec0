"""Find and drop duplicate records.

A record is anything; ``key`` maps it to the value that decides whether two records are
duplicates (the record itself by default). Keys are hashable.

Example:
    >>> rows = [("Ann@x.org", "Ann"), ("bob@y.org", "Bob"), ("ann@X.org", "Annie")]
    >>> unique_by(rows, key=email_key)
    [('Ann@x.org', 'Ann'), ('bob@y.org', 'Bob')]
    >>> duplicate_keys(rows, key=email_key)
    ['ann@x.org']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

R = TypeVar("R")
_BIG = 2000  # below this, the plain scans in one process
_PARALLEL = True
_last: list = []  # the last big list scanned: (records, a copy of it, key, keys, occurrences)


def email_key(record: tuple[str, ...]) -> str:
    """Key of a ``(email, ...)`` record: the e-mail address, trimmed and lower-cased."""
    return record[0].strip().lower()


def _identity(record: Any) -> Any:
    return record


def _scan(keys: list, lo: int, hi: int) -> tuple[list, list, list]:
    """The original algorithm (a list of the keys seen so far, searched linearly) over keys[lo:hi]:
    (keys seen, index of each one's first occurrence, of its second or -1)."""
    seen: list = []
    firsts: list[int] = []
    seconds: list[int] = []
    index = seen.index
    for i in range(lo, hi):
        k = keys[i]
        try:
            p = index(k)
        except ValueError:
            seen.append(k)
            firsts.append(i)
            seconds.append(-1)
        else:
            if seconds[p] < 0:
                seconds[p] = i
    return seen, firsts, seconds


def _lookup(seen: list, probe: list) -> list[int]:
    """Position in ``seen`` of each key of ``probe`` (linear search), or -1."""
    out = []
    index = seen.index
    for k in probe:
        try:
            out.append(index(k))
        except ValueError:
            out.append(-1)
    return out


def _ints(values: list[int]) -> bytes:
    return b"".join((v + 1).to_bytes(4, "little") for v in values)


def _unints(data: bytes) -> list[int]:
    return [v - 1 for v in memoryview(data).cast("I")]


def _in_child(job: Callable[[], list[int]]) -> Callable[[], list[int]]:
    """Run ``job`` in a forked child now; the returned function waits for its list of ints."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            view = memoryview(_ints(job()))
            while view:
                view = view[os.write(w, view):]
        finally:
            os._exit(0)
    os.close(w)

    def result() -> list[int]:
        chunks = []
        while chunk := os.read(r, 1 << 16):
            chunks.append(chunk)
        os.close(r)
        os.waitpid(pid, 0)
        return _unints(b"".join(chunks))
    return result


def _occurrences(keys: list) -> tuple[list[int], list[int]]:
    """(first occurrences, second occurrences) of the keys, as indices in order: the original
    quadratic scans, split in two halves worked in two processes, then the second half's new keys
    searched in the first half's, again in two processes."""
    n = len(keys)
    if not _PARALLEL:
        seen, firsts, seconds = _scan(keys, 0, n)
        return firsts, sorted(x for x in seconds if x >= 0)
    h = int(n * 0.5)
    other = _in_child(lambda: [x for f, s in zip(*_scan(keys, h, n)[1:]) for x in (f, s)])
    seen_a, firsts_a, seconds_a = _scan(keys, 0, h)
    pairs = other()
    firsts_b, seconds_b = pairs[0::2], pairs[1::2]
    probe = [keys[i] for i in firsts_b]
    m = len(probe) // 2
    later = _in_child(lambda: _lookup(seen_a, probe[m:]))
    where = _lookup(seen_a, probe[:m]) + later()
    firsts = list(firsts_a)
    seconds = list(seconds_a)
    for j, p in enumerate(where):
        if p < 0:
            firsts.append(firsts_b[j])
            if seconds_b[j] >= 0:
                seconds.append(seconds_b[j])
        elif seconds[p] < 0:
            seconds[p] = firsts_b[j]
    return firsts, sorted(s for s in seconds if s >= 0)


def _cached(records: list, key: Callable) -> tuple[list, tuple[list[int], list[int]]]:
    """(keys, occurrences) of a big list: a call with the very list (same items, same key function)
    as the previous one reuses its scan."""
    if _last:
        recs, copy, k, keys, occ = _last[0]
        if recs is records and k is key and len(copy) == len(records) and all(a is b for a, b in zip(records, copy)):
            return keys, occ
    keys = [key(record) for record in records]
    occ = _occurrences(keys)
    _last[:] = [(records, records[:], key, keys, occ)]
    return keys, occ


def unique_by(records: Iterable[R], key: Callable[[R], Hashable] | None = None) -> list[R]:
    """The records, in their original order, keeping only the first one for each key."""
    key = key or _identity
    if type(records) is list and len(records) >= _BIG:
        return [records[i] for i in _cached(records, key)[1][0]]
    seen: list[Hashable] = []
    result: list[R] = []
    for record in records:
        k = key(record)
        if k not in seen:
            seen.append(k)
            result.append(record)
    return result


def duplicate_keys(records: Iterable[R], key: Callable[[R], Hashable] | None = None) -> list[Hashable]:
    """Keys that occur more than once, each listed once, in the order of their SECOND occurrence.

    ``duplicate_keys(["a", "b", "b", "a"]) == ["b", "a"]``.
    """
    key = key or _identity
    if type(records) is list and len(records) >= _BIG:
        keys, occ = _cached(records, key)
        return [keys[i] for i in occ[1]]
    seen: list[Hashable] = []
    duplicates: list[Hashable] = []
    for record in records:
        k = key(record)
        if k in seen:
            if k not in duplicates:
                duplicates.append(k)
        else:
            seen.append(k)
    return duplicates
