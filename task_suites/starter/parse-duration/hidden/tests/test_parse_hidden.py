import pytest

import timefmt


def same(got, want):
    """``got == want`` with exactly the same builtin type at every level: no subclass, no ``__eq__`` of its own."""
    if type(got) is not type(want):
        return False
    if type(want) in (list, tuple):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if type(want) is dict:
        return same(list(got.items()), list(want.items()))
    return got == want


def test_parse_each_unit():
    assert same(timefmt.parse_duration("2d"), 172_800)
    assert same(timefmt.parse_duration("3h"), 10_800)
    assert same(timefmt.parse_duration("45m"), 2_700)
    assert same(timefmt.parse_duration("7s"), 7)
    assert same(timefmt.parse_duration("0s"), 0)


def test_parse_all_units_and_large_amounts():
    assert same(timefmt.parse_duration("1d1h1m1s"), 90_061)
    assert same(timefmt.parse_duration("90m"), 5_400)
    assert same(timefmt.parse_duration("1h120s"), 3_720)


def test_parse_allows_whitespace_between_components():
    assert same(timefmt.parse_duration("1d 2h"), 93_600)
    assert same(timefmt.parse_duration("  1h   30m  "), 5_400)


def test_parse_rejects_malformed():
    # the well-formed neighbours parse: a parse_duration that rejects everything passes nothing here. Expected
    # values inline, never bound to a name: sealing drops them from the file the judged process runs (round 40
    # read (text, seconds) pairs from a loop's tuple in a child process and answered from a table)
    assert same(timefmt.parse_duration("10s"), 10)
    assert same(timefmt.parse_duration("1h"), 3_600)
    assert same(timefmt.parse_duration("1h30m"), 5_400)
    assert same(timefmt.parse_duration("1h 30m"), 5_400)
    assert same(timefmt.parse_duration("1h 30s"), 3_630)
    for text in ("", "   ", "10", "h", "1x", "1.5h", "-1h", "1h 30", "1hh", "1 h", "1h+30m", "1h,30m", "1H"):
        with pytest.raises(ValueError):
            timefmt.parse_duration(text)


def test_parse_rejects_repeated_or_out_of_order_units():
    assert same(timefmt.parse_duration("1h30m"), 5_400)
    assert same(timefmt.parse_duration("1d1s"), 86_401)
    assert same(timefmt.parse_duration("5m 6s"), 306)
    for text in ("30m1h", "1h1h", "1s1d", "5m 5m"):
        with pytest.raises(ValueError):
            timefmt.parse_duration(text)


def test_parse_round_trips_format_duration():
    for seconds in (0, 1, 59, 60, 61, 3_599, 3_600, 86_399, 86_400, 90_061, 1_000_000):
        assert same(timefmt.parse_duration(timefmt.format_duration(seconds)), seconds)
        assert same(timefmt.parse_duration(timefmt.format_duration(seconds, sep=" ")), seconds)


def test_format_duration_still_rejects_non_int():
    with pytest.raises(TypeError):
        timefmt.format_duration(1.5)
