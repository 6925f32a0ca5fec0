import pytest

from timefmt import format_duration


def test_format_zero():
    assert format_duration(0) == "0s"


def test_format_hours_and_minutes():
    assert format_duration(5400) == "1h30m"


def test_format_all_units_with_separator():
    assert format_duration(90061, sep=" ") == "1d 1h 1m 1s"


def test_format_rejects_negative():
    with pytest.raises(ValueError):
        format_duration(-1)
