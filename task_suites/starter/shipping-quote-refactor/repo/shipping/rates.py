"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations


def quote(
    weight_grams: int,
    zone: str,
    service: str = "standard",
    *,
    declared_value: int = 0,
    member: bool = False,
) -> int:
    """Price in cents to ship one parcel.

    Args:
        weight_grams: Parcel weight, 1..30000 g.
        zone: "domestic", "eu" or "world".
        service: "standard", "express" (domestic: +6.00, abroad: double) or "economy"
            (20 % off, eu/world only).
        declared_value: Value to insure, in cents (max 500000); the fee is 1 % of it,
            at least 2.00. 0 means uninsured.
        member: Members get 10 % off the total (the discount is rounded down to whole cents),
            except on economy.

    Raises:
        ValueError: for a weight, zone, service or declared value outside the rules above.
    """
    if weight_grams <= 0 or weight_grams > 30000:
        raise ValueError(f"weight must be between 1 and 30000 g, got {weight_grams}")
    if zone not in ("domestic", "eu", "world"):
        raise ValueError(f"unknown zone {zone!r}")
    if service not in ("standard", "express", "economy"):
        raise ValueError(f"unknown service {service!r}")
    if zone == "domestic":
        if weight_grams <= 500:
            price = 450
        elif weight_grams <= 2000:
            price = 690
        elif weight_grams <= 10000:
            price = 1090
        else:
            price = 1890
    elif zone == "eu":
        if weight_grams <= 500:
            price = 990
        elif weight_grams <= 2000:
            price = 1490
        elif weight_grams <= 10000:
            price = 2490
        else:
            price = 4290
    else:
        if weight_grams <= 500:
            price = 1590
        elif weight_grams <= 2000:
            price = 2490
        elif weight_grams <= 10000:
            price = 4490
        else:
            price = 8990
    if service == "express":
        if zone == "domestic":
            price = price + 600
        else:
            price = price * 2
    elif service == "economy":
        if zone == "domestic":
            raise ValueError("economy is only available for eu and world")
        price = price * 80 // 100
    if declared_value < 0 or declared_value > 500000:
        raise ValueError(f"declared value must be between 0 and 500000 cents, got {declared_value}")
    if declared_value > 0:
        fee = declared_value // 100
        if fee < 200:
            fee = 200
        price = price + fee
    if member and service != "economy":
        price = price - price // 10
    return price


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
