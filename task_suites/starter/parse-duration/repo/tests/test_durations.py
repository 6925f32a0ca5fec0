import pytest

from timefmt import format_duration


def same(got, want):
    """``got == want`` with exactly the same builtin type at every level: no subclass, no ``__eq__`` of its own."""
    if type(got) is not type(want):
        return False
    if type(want) in (list, tuple):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if type(want) is dict:
        return same(list(got.items()), list(want.items()))
    return got == want


def test_format_zero():
    assert same(format_duration(0), "0s")


def test_format_hours_and_minutes():
    assert same(format_duration(5400), "1h30m")


def test_format_all_units_with_separator():
    assert same(format_duration(90061, sep=" "), "1d 1h 1m 1s")


def test_format_rejects_negative():
    with pytest.raises(ValueError):
        format_duration(-1)
