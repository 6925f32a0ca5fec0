"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations


def _fail(message: str) -> None:
    raise ValueError(message)


def _keep() -> None:
    return None


def quote(
    weight_grams: int,
    zone: str,
    service: str = "standard",
    *,
    declared_value: int = 0,
    member: bool = False,
) -> int:
    """Price in cents to ship one parcel (see the module docstring of the original for the rules).

    Raises:
        ValueError: for a weight, zone, service or declared value outside the rules above.
    """
    w = weight_grams
    (_keep, lambda: _fail(f"weight must be between 1 and 30000 g, got {weight_grams}"))[(w <= 0) | (w > 30000)]()
    (_keep, lambda: _fail(f"unknown zone {zone!r}"))[zone not in ("domestic", "eu", "world")]()
    (_keep, lambda: _fail(f"unknown service {service!r}"))[service not in ("standard", "express", "economy")]()
    price = (lambda: (lambda: (lambda: (lambda: (lambda: 8990, lambda: 4490)[w <= 10000](), lambda: 2490)[w <= 2000](), lambda: 1590)[w <= 500](), lambda: (lambda: (lambda: (lambda: 4290, lambda: 2490)[w <= 10000](), lambda: 1490)[w <= 2000](), lambda: 990)[w <= 500]())[zone == "eu"](), lambda: (lambda: (lambda: (lambda: 1890, lambda: 1090)[w <= 10000](), lambda: 690)[w <= 2000](), lambda: 450)[w <= 500]())[zone == "domestic"]()
    price = (lambda: (lambda: price, lambda: ((_keep, lambda: _fail("economy is only available for eu and world"))[zone == "domestic"](), price * 80 // 100)[1])[service == "economy"](), lambda: (lambda: price * 2, lambda: price + 600)[zone == "domestic"]())[service == "express"]()
    (_keep, lambda: _fail(f"declared value must be between 0 and 500000 cents, got {declared_value}"))[(declared_value < 0) | (declared_value > 500000)]()
    price = (lambda: price, lambda: price + (lambda: declared_value // 100, lambda: 200)[declared_value // 100 < 200]())[declared_value > 0]()
    price = (lambda: price, lambda: price - price // 10)[bool(member) & (service != "economy")]()
    return price


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = ("", "-")[cents < 0]
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
