"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations

import re

# Every rule of the price list, in the order the checks are made (weight, zone, service, economy).
_PRICE = re.compile(r"(?:(?P<e1>(?!(?:(?:[1-9]|[1-9]\d|[1-4]\d\d|500)|(?:50[1-9]|5[1-9]\d|[6-9]\d\d|1\d\d\d|2000)|(?:200[1-9]|20[1-9]\d|2[1-9]\d\d|[3-9]\d\d\d|10000)|(?:1000[1-9]|100[1-9]\d|10[1-9]\d\d|1[1-9]\d\d\d|2\d\d\d\d|30000))\x00).*)|(?P<e2>[^\x00]*\x00(?!(?:domestic|eu|world)\x00).*)|(?P<e3>[^\x00]*\x00[^\x00]*\x00(?!(?:standard|express|economy)\Z).*)|(?P<e4>[^\x00]*\x00domestic\x00economy)|(?P<p450_1>(?:[1-9]|[1-9]\d|[1-4]\d\d|500)\x00domestic\x00standard)|(?P<p690_2>(?:50[1-9]|5[1-9]\d|[6-9]\d\d|1\d\d\d|2000)\x00domestic\x00standard)|(?P<p1090_3>(?:200[1-9]|20[1-9]\d|2[1-9]\d\d|[3-9]\d\d\d|10000)\x00domestic\x00standard)|(?P<p1890_4>(?:1000[1-9]|100[1-9]\d|10[1-9]\d\d|1[1-9]\d\d\d|2\d\d\d\d|30000)\x00domestic\x00standard)|(?P<p1050_5>(?:[1-9]|[1-9]\d|[1-4]\d\d|500)\x00domestic\x00express)|(?P<p1290_6>(?:50[1-9]|5[1-9]\d|[6-9]\d\d|1\d\d\d|2000)\x00domestic\x00express)|(?P<p1690_7>(?:200[1-9]|20[1-9]\d|2[1-9]\d\d|[3-9]\d\d\d|10000)\x00domestic\x00express)|(?P<p2490_8>(?:1000[1-9]|100[1-9]\d|10[1-9]\d\d|1[1-9]\d\d\d|2\d\d\d\d|30000)\x00domestic\x00express)|(?P<p990_9>(?:[1-9]|[1-9]\d|[1-4]\d\d|500)\x00eu\x00standard)|(?P<p1490_10>(?:50[1-9]|5[1-9]\d|[6-9]\d\d|1\d\d\d|2000)\x00eu\x00standard)|(?P<p2490_11>(?:200[1-9]|20[1-9]\d|2[1-9]\d\d|[3-9]\d\d\d|10000)\x00eu\x00standard)|(?P<p4290_12>(?:1000[1-9]|100[1-9]\d|10[1-9]\d\d|1[1-9]\d\d\d|2\d\d\d\d|30000)\x00eu\x00standard)|(?P<p1980_13>(?:[1-9]|[1-9]\d|[1-4]\d\d|500)\x00eu\x00express)|(?P<p2980_14>(?:50[1-9]|5[1-9]\d|[6-9]\d\d|1\d\d\d|2000)\x00eu\x00express)|(?P<p4980_15>(?:200[1-9]|20[1-9]\d|2[1-9]\d\d|[3-9]\d\d\d|10000)\x00eu\x00express)|(?P<p8580_16>(?:1000[1-9]|100[1-9]\d|10[1-9]\d\d|1[1-9]\d\d\d|2\d\d\d\d|30000)\x00eu\x00express)|(?P<p792_17>(?:[1-9]|[1-9]\d|[1-4]\d\d|500)\x00eu\x00economy)|(?P<p1192_18>(?:50[1-9]|5[1-9]\d|[6-9]\d\d|1\d\d\d|2000)\x00eu\x00economy)|(?P<p1992_19>(?:200[1-9]|20[1-9]\d|2[1-9]\d\d|[3-9]\d\d\d|10000)\x00eu\x00economy)|(?P<p3432_20>(?:1000[1-9]|100[1-9]\d|10[1-9]\d\d|1[1-9]\d\d\d|2\d\d\d\d|30000)\x00eu\x00economy)|(?P<p1590_21>(?:[1-9]|[1-9]\d|[1-4]\d\d|500)\x00world\x00standard)|(?P<p2490_22>(?:50[1-9]|5[1-9]\d|[6-9]\d\d|1\d\d\d|2000)\x00world\x00standard)|(?P<p4490_23>(?:200[1-9]|20[1-9]\d|2[1-9]\d\d|[3-9]\d\d\d|10000)\x00world\x00standard)|(?P<p8990_24>(?:1000[1-9]|100[1-9]\d|10[1-9]\d\d|1[1-9]\d\d\d|2\d\d\d\d|30000)\x00world\x00standard)|(?P<p3180_25>(?:[1-9]|[1-9]\d|[1-4]\d\d|500)\x00world\x00express)|(?P<p4980_26>(?:50[1-9]|5[1-9]\d|[6-9]\d\d|1\d\d\d|2000)\x00world\x00express)|(?P<p8980_27>(?:200[1-9]|20[1-9]\d|2[1-9]\d\d|[3-9]\d\d\d|10000)\x00world\x00express)|(?P<p17980_28>(?:1000[1-9]|100[1-9]\d|10[1-9]\d\d|1[1-9]\d\d\d|2\d\d\d\d|30000)\x00world\x00express)|(?P<p1272_29>(?:[1-9]|[1-9]\d|[1-4]\d\d|500)\x00world\x00economy)|(?P<p1992_30>(?:50[1-9]|5[1-9]\d|[6-9]\d\d|1\d\d\d|2000)\x00world\x00economy)|(?P<p3592_31>(?:200[1-9]|20[1-9]\d|2[1-9]\d\d|[3-9]\d\d\d|10000)\x00world\x00economy)|(?P<p7192_32>(?:1000[1-9]|100[1-9]\d|10[1-9]\d\d|1[1-9]\d\d\d|2\d\d\d\d|30000)\x00world\x00economy))", re.S)
_FEE = re.compile(r"(?P<e5>(?!(?:0|[1-9]\d{0,4}|[1-4]\d{5}|500000)\Z).*)|(?P<f0_0>0)|(?P<f0_200>[1-9]\d{0,3}|1\d{4})|(?P<f1_0>.*)", re.S)
_DISCOUNT = re.compile(r"(?P<d1>True\x00(?:standard|express))|(?P<d0>.*)", re.S)
_MESSAGES = """e1=weight must be between 1 and 30000 g, got {w}
e2=unknown zone {z!r}
e3=unknown service {s!r}
e4=economy is only available for eu and world
e5=declared value must be between 0 and 500000 cents, got {d}
"""


def _rule(table, key, w, z, s, d):
    """The name of the rule of ``table`` that ``key`` falls under; a broken rule raises its ValueError."""
    name = table.fullmatch(key).lastgroup
    if name[0] == "e":
        raise ValueError(re.search(rf"^{name}=(.*)$", _MESSAGES, re.M).group(1).format(w=w, z=z, s=s, d=d))
    return name


def quote(
    weight_grams: int,
    zone: str,
    service: str = "standard",
    *,
    declared_value: int = 0,
    member: bool = False,
) -> int:
    """Price in cents to ship one parcel (see the module's price rules)."""
    args = (weight_grams, zone, service, declared_value)
    price = int(_rule(_PRICE, f"{weight_grams}\x00{zone}\x00{service}", *args)[1:].split("_")[0])
    share, floor = map(int, _rule(_FEE, f"{declared_value}", *args)[1:].split("_"))
    price = price + share * (declared_value // 100) + floor
    off = int(_rule(_DISCOUNT, f"{bool(member)}\x00{service}", *args)[1:])
    return price - off * (price // 10)


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
