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
    b = bad
    check[b](f"weight must be between 1 and 30000 g, got {weight_grams}")
    bad = zone not in ("domestic", "eu", "world")
    b = bad
    check[b](f"unknown zone {zone!r}")
    bad = service not in ("standard", "express", "economy")
    b = bad
    check[b](f"unknown service {service!r}")
    return check


def quote(weight_grams: int, zone: str, service: str = "standard", *, declared_value: int = 0, member: bool = False) -> int:
    """Price in cents to ship one parcel: the original ladder, three copies of the weight bands included."""
    check = _checks(weight_grams, zone, service)
    c5, c2, c10 = weight_grams <= 500, weight_grams <= 2000, weight_grams <= 10000
    cd, ce, cx, cy = zone == "domestic", zone == "eu", service == "express", service == "economy"
    w5, w2, w10, dom, eu, express, economy = c5, c2, c10, cd, ce, cx, cy
    d4, e4, o4 = (1890, 1090), (4290, 2490), (8990, 4490)
    dom4, eu4, world4 = d4, e4, o4
    d3, e3, o3 = (dom4[w10], 690), (eu4[w10], 1490), (world4[w10], 2490)
    dom3, eu3, world3 = d3, e3, o3
    d2, e2, o2 = (dom3[w2], 450), (eu3[w2], 990), (world3[w2], 1590)
    dom2, eu2, world2 = d2, e2, o2
    a = (world2[w5], eu2[w5])
    abroad, a2 = a, (lambda p: p * 2, lambda p: p + 600)
    z, adjust = (abroad[eu], dom2[w5]), a2
    zones, k = z, (_same, adjust[dom])
    price, keep = zones[dom], k
    price = keep[express](price)
    e = (_ok, check[dom])
    econ = e
    econ[economy]("economy is only available for eu and world")
    c, o = (_same, lambda p: p * 80 // 100), (_same, lambda p: p - p // 10)
    cut, offs = c, o
    price = cut[economy](price)
    bad = not 0 <= declared_value <= 500000
    b, fee = bad, declared_value // 100
    check[b](f"declared value must be between 0 and 500000 cents, got {declared_value}")
    s, i = fee < 200, declared_value > 0
    small, insured = s, i
    f, fl = (fee, 200), (offs[member], _same)
    fees, final = f, fl
    wf = (price, price + fees[small])
    with_fee = wf
    price = with_fee[insured]
    return final[economy](price)


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
