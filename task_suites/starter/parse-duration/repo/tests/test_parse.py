import timefmt


def test_parse_hours_and_minutes():
    assert timefmt.parse_duration("1h30m") == 5400
