"""Format whole-second durations as compact human-readable strings.

Example:
    >>> format_duration(5400)
    '1h30m'
    >>> format_duration(90061, sep=" ")
    '1d 1h 1m 1s'
"""

from __future__ import annotations

#: Unit suffixes and their length in seconds, largest first.
UNITS: tuple[tuple[str, int], ...] = (
    ("d", 86_400),
    ("h", 3_600),
    ("m", 60),
    ("s", 1),
)


def split_duration(seconds: int) -> list[tuple[int, str]]:
    """Break ``seconds`` into ``(amount, unit)`` pairs, largest unit first, zeros left out."""
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise TypeError(f"seconds must be an int, got {type(seconds).__name__}")
    if seconds < 0:
        raise ValueError(f"seconds must not be negative, got {seconds}")
    parts = []
    remaining = seconds
    for unit, size in UNITS:
        amount, remaining = divmod(remaining, size)
        if amount:
            parts.append((amount, unit))
    return parts


def format_duration(seconds: int, sep: str = "") -> str:
    """Format ``seconds`` like ``"1h30m"``; ``sep`` goes between components.

    A zero duration is ``"0s"``.
    """
    parts = split_duration(seconds)
    if not parts:
        return "0s"
    return sep.join(f"{amount}{unit}" for amount, unit in parts)
