"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations

from operator import contains, eq, gt, le, lt, ne, not_, or_


def _ok(message: str) -> None:
    return None


def _fail(message: str) -> None:
    raise ValueError(message)


def _same(price: int) -> int:
    return price


CHECK = (_ok, _fail)
DOM4, EU4, WORLD4 = (1890, 1090), (4290, 2490), (8990, 4490)
ADJUST = (lambda p: p * 2, lambda p: p + 600)
CUT = (_same, lambda p: p * 80 // 100)
OFF = (_same, lambda p: p - p // 10)
ZONES = ("domestic", "eu", "world")
SERVICES = ("standard", "express", "economy")


def quote(weight_grams: int, zone: str, service: str = "standard", *, declared_value: int = 0, member: bool = False) -> int:
    """Price in cents to ship one parcel: the original if/elif ladder, three copies of the weight bands included."""
    CHECK[or_(le(weight_grams, 0), gt(weight_grams, 30000))](f"weight must be between 1 and 30000 g, got {weight_grams}")
    CHECK[not_(contains(ZONES, zone))](f"unknown zone {zone!r}")
    CHECK[not_(contains(SERVICES, service))](f"unknown service {service!r}")
    w5, w2, w10 = le(weight_grams, 500), le(weight_grams, 2000), le(weight_grams, 10000)
    dom, eu, express, economy = eq(zone, "domestic"), eq(zone, "eu"), eq(service, "express"), eq(service, "economy")
    dom3, eu3, world3 = (DOM4[w10], 690), (EU4[w10], 1490), (WORLD4[w10], 2490)
    DOM3, EU3, WORLD3 = dom3, eu3, world3
    dom2, eu2, world2 = (DOM3[w2], 450), (EU3[w2], 990), (WORLD3[w2], 1590)
    DOM2, EU2, WORLD2 = dom2, eu2, world2
    abroad = (WORLD2[w5], EU2[w5])
    ABROAD = abroad
    zones = (ABROAD[eu], DOM2[w5])
    ZONES_ = zones
    price = ZONES_[dom]
    keep = (_same, ADJUST[dom])
    KEEP = keep
    price = KEEP[express](price)
    econ = (_ok, CHECK[dom])
    ECON = econ
    ECON[economy]("economy is only available for eu and world")
    price = CUT[economy](price)
    CHECK[or_(lt(declared_value, 0), gt(declared_value, 500000))](
        f"declared value must be between 0 and 500000 cents, got {declared_value}")
    fee = declared_value // 100
    fees = (fee, 200)
    FEES = fees
    with_fee = (price, price + FEES[lt(fee, 200)])
    WITH_FEE = with_fee
    price = WITH_FEE[gt(declared_value, 0)]
    final = (OFF[member], _same)
    FINAL = final
    return FINAL[economy](price)


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
