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

from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

R = TypeVar("R")


def email_key(record: tuple[str, ...]) -> str:
    """Key of a ``(email, ...)`` record: the e-mail address, trimmed and lower-cased."""
    return record[0].strip().lower()


def _identity(record: Any) -> Any:
    return record


def unique_by(records: Iterable[R], key: Callable[[R], Hashable] | None = None) -> list[R]:
    """The records, in their original order, keeping only the first one for each key."""
    key = key or _identity
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
