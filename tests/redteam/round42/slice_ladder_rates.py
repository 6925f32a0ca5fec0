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


ZONES = ("domestic", "eu", "world")
SERVICES = ("standard", "express", "economy")


def quote(weight_grams: int, zone: str, service: str = "standard", *, declared_value: int = 0, member: bool = False) -> int:
    """Price in cents to ship one parcel: the original if/elif ladder, each `if c: A else: B` as `(B, A)[c:][0]`."""
    w = weight_grams
    (_fail, _ok)[1 <= w <= 30000:][0](f"weight must be between 1 and 30000 g, got {w}")
    (_fail, _ok)[zone in ZONES:][0](f"unknown zone {zone!r}")
    (_fail, _ok)[service in SERVICES:][0](f"unknown service {service!r}")
    dom = (((1890, 1090)[w <= 10000:][0], 690)[w <= 2000:][0], 450)[w <= 500:][0]
    eu = (((4290, 2490)[w <= 10000:][0], 1490)[w <= 2000:][0], 990)[w <= 500:][0]
    world = (((8990, 4490)[w <= 10000:][0], 2490)[w <= 2000:][0], 1590)[w <= 500:][0]
    price = ((world, eu)[zone == "eu":][0], dom)[zone == "domestic":][0]
    express = (lambda p: p * 2, lambda p: p + 600)[zone == "domestic":][0]
    price = (_same, express)[service == "express":][0](price)
    economy_check = (_ok, _fail)[zone == "domestic":][0]
    (_ok, economy_check)[service == "economy":][0]("economy is only available for eu and world")
    price = (_same, lambda p: p * 80 // 100)[service == "economy":][0](price)
    (_fail, _ok)[0 <= declared_value <= 500000:][0](
        f"declared value must be between 0 and 500000 cents, got {declared_value}")
    fee = declared_value // 100
    fee = (fee, 200)[fee < 200:][0]
    price = (price, price + fee)[declared_value > 0:][0]
    member_price = (price - price // 10, price)[service == "economy":][0]
    return (price, member_price)[not not member:][0]


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
