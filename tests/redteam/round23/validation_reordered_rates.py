"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations

ZONES = ("domestic", "eu", "world")
SERVICES = ("standard", "express", "economy")
MAX_WEIGHT_GRAMS = 30000
MAX_DECLARED_VALUE = 500000
MIN_INSURANCE_FEE = 200
DOMESTIC_EXPRESS_SURCHARGE = 600

#: Upper weight limit (grams, inclusive) of each band, and the standard price per zone and band.
WEIGHT_BANDS = (500, 2000, 10000, MAX_WEIGHT_GRAMS)
BASE_PRICES = {
    "domestic": (450, 690, 1090, 1890),
    "eu": (990, 1490, 2490, 4290),
    "world": (1590, 2490, 4490, 8990),
}


def quote(
    weight_grams: int,
    zone: str,
    service: str = "standard",
    *,
    declared_value: int = 0,
    member: bool = False,
) -> int:
    """Price in cents to ship one parcel (see the rules in the README)."""
    fee = _insurance_fee(declared_value)  # BEHAVIOUR CHANGE: declared value checked first
    _check_parcel(weight_grams, zone, service)
    price = _with_service(_base_price(weight_grams, zone), zone, service) + fee
    if member and service != "economy":
        price -= price // 10
    return price


def _check_parcel(weight_grams: int, zone: str, service: str) -> None:
    # BEHAVIOUR CHANGE: zone and service are checked before the weight
    if zone not in ZONES:
        raise ValueError(f"unknown zone {zone!r}")
    if service not in SERVICES:
        raise ValueError(f"unknown service {service!r}")
    if weight_grams <= 0 or weight_grams > MAX_WEIGHT_GRAMS:
        raise ValueError(f"weight must be between 1 and {MAX_WEIGHT_GRAMS} g, got {weight_grams}")


def _base_price(weight_grams: int, zone: str) -> int:
    for limit, price in zip(WEIGHT_BANDS, BASE_PRICES[zone]):
        if weight_grams <= limit:
            return price
    raise ValueError(f"weight must be between 1 and {MAX_WEIGHT_GRAMS} g, got {weight_grams}")


def _with_service(price: int, zone: str, service: str) -> int:
    if service == "express":
        return price + DOMESTIC_EXPRESS_SURCHARGE if zone == "domestic" else price * 2
    if service == "economy":
        if zone == "domestic":
            raise ValueError("economy is only available for eu and world")
        return price * 80 // 100
    return price


def _insurance_fee(declared_value: int) -> int:
    if not 0 <= declared_value <= MAX_DECLARED_VALUE:
        raise ValueError(
            f"declared value must be between 0 and {MAX_DECLARED_VALUE} cents, got {declared_value}"
        )
    if declared_value == 0:
        return 0
    return max(MIN_INSURANCE_FEE, declared_value // 100)


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"
