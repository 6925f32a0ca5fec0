import pytest

from shipping import quote


def same(got, want):
    """``got == want`` with exactly the same builtin type at every level: no subclass, no ``__eq__`` of its own."""
    if type(got) is not type(want):
        return False
    if type(want) in (list, tuple):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if type(want) is dict:
        return same(list(got.items()), list(want.items()))
    return got == want


WEIGHTS = (1, 500, 501, 2000, 2001, 10000, 10001, 30000)

# (standard, express, economy) for each weight in WEIGHTS; None where the service is unavailable.
EXPECTED = {
    "domestic": [(450, 1050, None), (450, 1050, None), (690, 1290, None), (690, 1290, None),
                 (1090, 1690, None), (1090, 1690, None), (1890, 2490, None), (1890, 2490, None)],
    "eu": [(990, 1980, 792), (990, 1980, 792), (1490, 2980, 1192), (1490, 2980, 1192),
           (2490, 4980, 1992), (2490, 4980, 1992), (4290, 8580, 3432), (4290, 8580, 3432)],
    "world": [(1590, 3180, 1272), (1590, 3180, 1272), (2490, 4980, 1992), (2490, 4980, 1992),
              (4490, 8980, 3592), (4490, 8980, 3592), (8990, 17980, 7192), (8990, 17980, 7192)],
}


def test_full_price_grid():
    for zone, rows in EXPECTED.items():
        for weight, prices in zip(WEIGHTS, rows):
            for service, expected in zip(("standard", "express", "economy"), prices):
                if expected is None:
                    with pytest.raises(ValueError):
                        quote(weight, zone, service)
                else:
                    assert same(quote(weight, zone, service), expected), (weight, zone, service)


def test_weight_limits():
    for weight in (0, -5, 30001):
        with pytest.raises(ValueError):
            quote(weight, "domestic")


def test_insurance_fee():
    assert same(quote(1200, "eu", declared_value=10000), 1690)  # 1 % is 1.00 -> minimum 2.00
    assert same(quote(1200, "eu", declared_value=50000), 1990)
    assert same(quote(1200, "eu", declared_value=500000), 6490)
    assert same(quote(1200, "eu", declared_value=12345), 1490 + 200)
    assert same(quote(1200, "eu", declared_value=45678), 1490 + 456)
    for bad in (-1, 500001):
        with pytest.raises(ValueError):
            quote(1200, "eu", declared_value=bad)


def test_member_discount():
    assert same(quote(1200, "eu", member=True), 1341)
    assert same(quote(1200, "eu", "economy", member=True), 1192)  # no member discount on economy
    assert same(quote(1200, "world", "express", declared_value=123456, member=True), 5593)
    assert same(quote(450, "domestic", "express", member=True), 945)


def test_economy_domestic_error_comes_before_insurance_check():
    with pytest.raises(ValueError, match="economy"):
        quote(1200, "domestic", "economy", declared_value=-1)


def test_validation_order():
    with pytest.raises(ValueError, match="weight"):
        quote(0, "mars", "overnight")
    with pytest.raises(ValueError, match="zone"):
        quote(100, "mars", "overnight")
