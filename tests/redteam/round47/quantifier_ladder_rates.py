"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations

import re

# Weight band: "x" * weight, each band a greedy optional group; the last one reached names the band.
_BAND = re.compile(r"(?P<b1>x{1,500}+)(?P<b2>x{1,1500}+)?+(?P<b3>x{1,8000}+)?+(?P<b4>x{1,20000}+)?+")
_ZONE = re.compile(r"(?:\Adomestic\x00)?(?:\Aeu\x00)?(?:\Aworld\x00)?")
_SERVICE = re.compile(r"(?:\Astandard\x00)?(?:\Aexpress\x00)?(?:\Aeconomy\x00)?")
# One row per zone and service, its four band prices in its name (no row: economy at home).
_ROW = re.compile(r"(?P<r450_690_1090_1890_domestic_standard>\Adomestic\x00standard\Z)?(?P<r1050_1290_1690_2490_domestic_express>\Adomestic\x00express\Z)?(?P<r990_1490_2490_4290_eu_standard>\Aeu\x00standard\Z)?(?P<r1980_2980_4980_8580_eu_express>\Aeu\x00express\Z)?(?P<r792_1192_1992_3432_eu_economy>\Aeu\x00economy\Z)?(?P<r1590_2490_4490_8990_world_standard>\Aworld\x00standard\Z)?(?P<r3180_4980_8980_17980_world_express>\Aworld\x00express\Z)?(?P<r1272_1992_3592_7192_world_economy>\Aworld\x00economy\Z)?")
_FEE = re.compile(r"(?P<f0_0>)(?P<f1_200>x{1,500000}+)?+")
_MEMBER = re.compile(r"(?P<d0>)(?P<d1_a>True\x00standard)?(?P<d1_b>True\x00express)?.*", re.S)


def _rule(pattern, key, message):
    """The name of the last group of ``pattern`` that ``key`` reaches; no match raises ``ValueError(message)``."""
    try:
        return pattern.fullmatch(key).lastgroup or ""
    except AttributeError:
        raise ValueError(message) from None


def quote(
    weight_grams: int,
    zone: str,
    service: str = "standard",
    *,
    declared_value: int = 0,
    member: bool = False,
) -> int:
    """Price in cents to ship one parcel (see the module's price rules)."""
    heavy = "x" * min(weight_grams, 30001)
    band = _rule(_BAND, heavy, f"weight must be between 1 and 30000 g, got {weight_grams}")
    _rule(_ZONE, f"{zone}\x00", f"unknown zone {zone!r}")
    _rule(_SERVICE, f"{service}\x00", f"unknown service {service!r}")
    row = _rule(_ROW, f"{zone}\x00{service}", "economy is only available for eu and world")
    price = int(row[1:].split("_")[int(band[1]) - 1])
    value = "-" * -min(declared_value, 0) + "x" * min(declared_value, 500001)
    fee = _rule(_FEE, value, f"declared value must be between 0 and 500000 cents, got {declared_value}")
    share, floor = int(fee[1]), int(fee.split("_")[1])
    price = price + share * max(declared_value // 100, floor)
    off = int(_rule(_MEMBER, f"{bool(member)}\x00{service}", "")[1])
    return price - off * (price // 10)


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
