"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations


def _ok(message: str) -> None:
    return None


def _fail(message: str) -> None:
    raise ValueError(message)


def _same(price: int) -> int:
    return price


def _checks(weight_grams: int, zone: str, service: str) -> tuple:
    check = (_ok, _fail)
    bad = not 0 < weight_grams <= 30000
    check[bad](f"weight must be between 1 and 30000 g, got {weight_grams}")
    bad = zone not in ("domestic", "eu", "world")
    check[bad](f"unknown zone {zone!r}")
    bad = service not in ("standard", "express", "economy")
    check[bad](f"unknown service {service!r}")
    return check


def quote(weight_grams: int, zone: str, service: str = "standard", *, declared_value: int = 0, member: bool = False) -> int:
    """Price in cents to ship one parcel: the original ladder, three copies of the weight bands included."""
    check = _checks(weight_grams, zone, service)
    w5, w2, w10 = weight_grams <= 500, weight_grams <= 2000, weight_grams <= 10000
    dom, eu, express, economy = zone == "domestic", zone == "eu", service == "express", service == "economy"
    dom4 = (1890, 1090)
    dom3 = (dom4[w10], 690)
    dom2 = (dom3[w2], 450)
    eu4 = (4290, 2490)
    eu3 = (eu4[w10], 1490)
    eu2 = (eu3[w2], 990)
    world4 = (8990, 4490)
    world3 = (world4[w10], 2490)
    world2 = (world3[w2], 1590)
    abroad = (world2[w5], eu2[w5])
    zones = (abroad[eu], dom2[w5])
    price = zones[dom]
    adjust = (lambda p: p * 2, lambda p: p + 600)
    keep = (_same, adjust[dom])
    price = keep[express](price)
    econ = (_ok, check[dom])
    econ[economy]("economy is only available for eu and world")
    cut = (_same, lambda p: p * 80 // 100)
    price = cut[economy](price)
    bad = not 0 <= declared_value <= 500000
    check[bad](f"declared value must be between 0 and 500000 cents, got {declared_value}")
    fee = declared_value // 100
    small, insured = fee < 200, declared_value > 0
    fees = (fee, 200)
    with_fee = (price, price + fees[small])
    price = with_fee[insured]
    offs = (_same, lambda p: p - p // 10)
    final = (offs[member], _same)
    return final[economy](price)


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
