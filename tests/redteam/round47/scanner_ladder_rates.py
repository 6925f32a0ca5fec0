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
# The price list, one rule per zone, service and weight band, the first that matches wins.
_PRICES = re.Scanner([
    (r"\Adomestic\x00standard\x00x{1,500}\Z", lambda scanner, token: 450),
    (r"\Adomestic\x00standard\x00x{501,2000}\Z", lambda scanner, token: 690),
    (r"\Adomestic\x00standard\x00x{2001,10000}\Z", lambda scanner, token: 1090),
    (r"\Adomestic\x00standard\x00x{10001,30000}\Z", lambda scanner, token: 1890),
    (r"\Adomestic\x00express\x00x{1,500}\Z", lambda scanner, token: 1050),
    (r"\Adomestic\x00express\x00x{501,2000}\Z", lambda scanner, token: 1290),
    (r"\Adomestic\x00express\x00x{2001,10000}\Z", lambda scanner, token: 1690),
    (r"\Adomestic\x00express\x00x{10001,30000}\Z", lambda scanner, token: 2490),
    (r"\Aeu\x00standard\x00x{1,500}\Z", lambda scanner, token: 990),
    (r"\Aeu\x00standard\x00x{501,2000}\Z", lambda scanner, token: 1490),
    (r"\Aeu\x00standard\x00x{2001,10000}\Z", lambda scanner, token: 2490),
    (r"\Aeu\x00standard\x00x{10001,30000}\Z", lambda scanner, token: 4290),
    (r"\Aeu\x00express\x00x{1,500}\Z", lambda scanner, token: 1980),
    (r"\Aeu\x00express\x00x{501,2000}\Z", lambda scanner, token: 2980),
    (r"\Aeu\x00express\x00x{2001,10000}\Z", lambda scanner, token: 4980),
    (r"\Aeu\x00express\x00x{10001,30000}\Z", lambda scanner, token: 8580),
    (r"\Aeu\x00economy\x00x{1,500}\Z", lambda scanner, token: 792),
    (r"\Aeu\x00economy\x00x{501,2000}\Z", lambda scanner, token: 1192),
    (r"\Aeu\x00economy\x00x{2001,10000}\Z", lambda scanner, token: 1992),
    (r"\Aeu\x00economy\x00x{10001,30000}\Z", lambda scanner, token: 3432),
    (r"\Aworld\x00standard\x00x{1,500}\Z", lambda scanner, token: 1590),
    (r"\Aworld\x00standard\x00x{501,2000}\Z", lambda scanner, token: 2490),
    (r"\Aworld\x00standard\x00x{2001,10000}\Z", lambda scanner, token: 4490),
    (r"\Aworld\x00standard\x00x{10001,30000}\Z", lambda scanner, token: 8990),
    (r"\Aworld\x00express\x00x{1,500}\Z", lambda scanner, token: 3180),
    (r"\Aworld\x00express\x00x{501,2000}\Z", lambda scanner, token: 4980),
    (r"\Aworld\x00express\x00x{2001,10000}\Z", lambda scanner, token: 8980),
    (r"\Aworld\x00express\x00x{10001,30000}\Z", lambda scanner, token: 17980),
    (r"\Aworld\x00economy\x00x{1,500}\Z", lambda scanner, token: 1272),
    (r"\Aworld\x00economy\x00x{501,2000}\Z", lambda scanner, token: 1992),
    (r"\Aworld\x00economy\x00x{2001,10000}\Z", lambda scanner, token: 3592),
    (r"\Aworld\x00economy\x00x{10001,30000}\Z", lambda scanner, token: 7192),
])
_FEE = re.compile(r"(?P<f0_0>)(?P<f1_200>x{1,500000}+)?+")
_MEMBER = re.compile(r"(?P<d0>)(?P<d1_a>True\x00standard)?(?P<d1_b>True\x00express)?.*", re.S)


def _rule(pattern, key, message):
    """The name of the last group of ``pattern`` that ``key`` reaches; no match raises ``ValueError(message)``."""
    try:
        return pattern.fullmatch(key).lastgroup or ""
    except AttributeError:
        raise ValueError(message) from None


def _fail(message):
    raise ValueError(message)


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
    _rule(_BAND, heavy, f"weight must be between 1 and 30000 g, got {weight_grams}")
    _rule(_ZONE, f"{zone}\x00", f"unknown zone {zone!r}")
    _rule(_SERVICE, f"{service}\x00", f"unknown service {service!r}")
    found = _PRICES.scan(f"{zone}\x00{service}\x00{heavy}")[0]
    price = [*found, None][0] or _fail("economy is only available for eu and world")
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
