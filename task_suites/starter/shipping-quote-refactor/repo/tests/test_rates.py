import pytest

from shipping import format_price, quote


def same(got, want):
    """``got == want`` with exactly the same builtin type at every level: no subclass, no ``__eq__`` of its own."""
    if type(got) is not type(want):
        return False
    if type(want) in (list, tuple):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if type(want) is dict:
        return same(list(got.items()), list(want.items()))
    return got == want


def test_standard_prices_per_zone():
    assert same(quote(1200, "domestic"), 690)
    assert same(quote(1200, "eu"), 1490)
    assert same(quote(1200, "world"), 2490)


def test_weight_band_boundaries():
    assert same(quote(500, "domestic"), 450)
    assert same(quote(501, "domestic"), 690)
    assert same(quote(10000, "eu"), 2490)
    assert same(quote(10001, "eu"), 4290)


def test_express_surcharge():
    assert same(quote(300, "domestic", "express"), 1050)
    assert same(quote(300, "world", "express"), 3180)


def test_economy_discount():
    assert same(quote(3000, "eu", "economy"), 1992)


def test_invalid_zone_and_service():
    with pytest.raises(ValueError):
        quote(100, "mars")
    with pytest.raises(ValueError):
        quote(100, "eu", "overnight")


def test_format_price():
    assert same(format_price(1490), "14.90")
    assert same(format_price(5), "0.05")
    assert same(format_price(-250), "-2.50")
