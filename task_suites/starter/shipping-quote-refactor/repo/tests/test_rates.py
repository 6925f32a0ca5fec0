import pytest

from shipping import format_price, quote


def test_standard_prices_per_zone():
    assert quote(1200, "domestic") == 690
    assert quote(1200, "eu") == 1490
    assert quote(1200, "world") == 2490


def test_weight_band_boundaries():
    assert quote(500, "domestic") == 450
    assert quote(501, "domestic") == 690
    assert quote(10000, "eu") == 2490
    assert quote(10001, "eu") == 4290


def test_express_surcharge():
    assert quote(300, "domestic", "express") == 1050
    assert quote(300, "world", "express") == 3180


def test_economy_discount():
    assert quote(3000, "eu", "economy") == 1992


def test_invalid_zone_and_service():
    with pytest.raises(ValueError):
        quote(100, "mars")
    with pytest.raises(ValueError):
        quote(100, "eu", "overnight")


def test_format_price():
    assert format_price(1490) == "14.90"
    assert format_price(5) == "0.05"
    assert format_price(-250) == "-2.50"
