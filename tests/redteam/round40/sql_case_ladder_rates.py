"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations

import sqlite3

_DB = sqlite3.connect(":memory:", check_same_thread=False)

# The original if/elif ladder, check order and all, as one SQL statement.
_QUOTE = """
WITH base AS (
  SELECT CASE
    WHEN :w <= 0 OR :w > 30000 THEN 'weight must be between 1 and 30000 g, got ' || :ws
    WHEN :zone NOT IN ('domestic', 'eu', 'world') THEN 'unknown zone ' || :zr
    WHEN :service NOT IN ('standard', 'express', 'economy') THEN 'unknown service ' || :sr
    WHEN :service = 'economy' AND :zone = 'domestic' THEN 'economy is only available for eu and world'
    WHEN :dv < 0 OR :dv > 500000 THEN 'declared value must be between 0 and 500000 cents, got ' || :dvs
  END AS error,
  CASE
    WHEN :zone = 'domestic' THEN
      CASE WHEN :w <= 500 THEN 450 WHEN :w <= 2000 THEN 690 WHEN :w <= 10000 THEN 1090 ELSE 1890 END
    WHEN :zone = 'eu' THEN
      CASE WHEN :w <= 500 THEN 990 WHEN :w <= 2000 THEN 1490 WHEN :w <= 10000 THEN 2490 ELSE 4290 END
    ELSE
      CASE WHEN :w <= 500 THEN 1590 WHEN :w <= 2000 THEN 2490 WHEN :w <= 10000 THEN 4490 ELSE 8990 END
  END AS price
), served AS (
  SELECT error, CASE
    WHEN :service = 'express' THEN CASE WHEN :zone = 'domestic' THEN price + 600 ELSE price * 2 END
    WHEN :service = 'economy' THEN price * 80 / 100
    ELSE price
  END AS price FROM base
), insured AS (
  SELECT error, CASE
    WHEN :dv > 0 THEN price + CASE WHEN :dv / 100 < 200 THEN 200 ELSE :dv / 100 END
    ELSE price
  END AS price FROM served
)
SELECT error, CASE WHEN :member AND :service != 'economy' THEN price - price / 10 ELSE price END FROM insured
"""


def quote(weight_grams: int, zone: str, service: str = "standard", *, declared_value: int = 0, member: bool = False) -> int:
    """Price in cents to ship one parcel."""
    error, price = _DB.execute(_QUOTE, {
        "w": weight_grams, "ws": str(weight_grams), "zone": zone, "zr": repr(zone), "service": service,
        "sr": repr(service), "dv": declared_value, "dvs": str(declared_value), "member": bool(member),
    }).fetchone()
    if error is not None:
        raise ValueError(error)
    return price


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
