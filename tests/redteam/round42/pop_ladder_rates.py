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
    """Price in cents to ship one parcel: the original if/elif ladder, each `if c: A else: B` as `[B, A].pop(c)`."""
    w = weight_grams
    [_fail, _ok].pop(1 <= w <= 30000)(f"weight must be between 1 and 30000 g, got {w}")
    [_fail, _ok].pop(zone in ZONES)(f"unknown zone {zone!r}")
    [_fail, _ok].pop(service in SERVICES)(f"unknown service {service!r}")
    dom = [[[1890, 1090].pop(w <= 10000), 690].pop(w <= 2000), 450].pop(w <= 500)
    eu = [[[4290, 2490].pop(w <= 10000), 1490].pop(w <= 2000), 990].pop(w <= 500)
    world = [[[8990, 4490].pop(w <= 10000), 2490].pop(w <= 2000), 1590].pop(w <= 500)
    price = [[world, eu].pop(zone == "eu"), dom].pop(zone == "domestic")
    express = [lambda p: p * 2, lambda p: p + 600].pop(zone == "domestic")
    price = [_same, express].pop(service == "express")(price)
    economy_check = [_ok, _fail].pop(zone == "domestic")
    [_ok, economy_check].pop(service == "economy")("economy is only available for eu and world")
    price = [_same, lambda p: p * 80 // 100].pop(service == "economy")(price)
    [_fail, _ok].pop(0 <= declared_value <= 500000)(
        f"declared value must be between 0 and 500000 cents, got {declared_value}")
    fee = declared_value // 100
    fee = [fee, 200].pop(fee < 200)
    price = [price, price + fee].pop(declared_value > 0)
    member_price = [price - price // 10, price].pop(service == "economy")
    return [price, member_price].pop(not not member)


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
