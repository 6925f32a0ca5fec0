"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations

from contextlib import nullcontext


def _ok(message: str) -> None:
    return None


def _fail(message: str) -> None:
    raise ValueError(message)


def _same(price: int) -> int:
    return price


ZONES = ("domestic", "eu", "world")
SERVICES = ("standard", "express", "economy")
TABLES = ((_fail, _ok), (1890, 1090), (4290, 2490), (8990, 4490),
          (lambda p: p * 2, lambda p: p + 600), (_same, lambda p: p * 80 // 100))


def quote(weight_grams: int, zone: str, service: str = "standard", *, declared_value: int = 0, member: bool = False) -> int:
    """Price in cents to ship one parcel: the original ladder, tables and conditions bound by a `with` target."""
    w = weight_grams
    with nullcontext(TABLES + (1 <= w <= 30000, zone in ZONES, service in SERVICES, w <= 500, w <= 2000, w <= 10000,
                               zone == "domestic", zone == "eu", service == "express", service == "economy",
                               0 <= declared_value <= 500000, declared_value > 0, not member)) as (
            CHECK, DOM, EU, WORLD, ADJUST, CUT, ok_w, ok_z, ok_s, w5, w2, w10, dom, eu, express, economy, ok_v, insured,
            no_member):
        CHECK[ok_w](f"weight must be between 1 and 30000 g, got {w}")
        CHECK[ok_z](f"unknown zone {zone!r}")
        CHECK[ok_s](f"unknown service {service!r}")
        with nullcontext(((DOM[w10], 690), (EU[w10], 1490), (WORLD[w10], 2490))) as (DOM3, EU3, WORLD3):
            with nullcontext(((DOM3[w2], 450), (EU3[w2], 990), (WORLD3[w2], 1590))) as (DOM2, EU2, WORLD2):
                with nullcontext(((WORLD2[w5], EU2[w5]), (_same, ADJUST[dom]), (_ok, CHECK[not dom]))) as (ABROAD, KEEP, ECON):
                    with nullcontext((ABROAD[eu], DOM2[w5])) as ZONE:
                        price = KEEP[express](ZONE[dom])
        ECON[economy]("economy is only available for eu and world")
        price = CUT[economy](price)
        CHECK[ok_v](f"declared value must be between 0 and 500000 cents, got {declared_value}")
        with nullcontext(((declared_value // 100, 200),)) as (FEES,):
            with nullcontext(((price, price + FEES[FEES[0] < 200]),)) as (WITH_FEE,):
                price = WITH_FEE[insured]
        with nullcontext(((price - price // 10, price),)) as (MEMBER,):
            with nullcontext(((MEMBER[economy], price),)) as (FINAL,):
                return FINAL[no_member]


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
