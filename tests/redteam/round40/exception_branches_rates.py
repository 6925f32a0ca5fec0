"""Parcel shipping prices, in integer cents.

Example:
    >>> quote(1200, "eu")
    1490
    >>> format_price(quote(1200, "eu", "express", member=True))
    '26.82'
"""

from __future__ import annotations


class Taken(Exception):
    """A branch of a chain ran: the rest of the chain is skipped."""


class Skip:
    """Leaves its block quietly when the block raises ``kind``."""

    def __init__(self, kind: type = ZeroDivisionError) -> None:
        self.kind = kind

    def __enter__(self) -> Skip:
        return self

    def __exit__(self, kind: type | None, *rest: object) -> bool:
        return kind is self.kind


def quote(weight_grams: int, zone: str, service: str = "standard", *, declared_value: int = 0, member: bool = False) -> int:
    """Price in cents to ship one parcel: the original if/elif ladder, each ``if c:`` a ``with Skip(): 1 // (c)``."""
    with Skip(): 1 // (weight_grams <= 0); raise ValueError(f"weight must be between 1 and 30000 g, got {weight_grams}")  # noqa: E501,E701,E702
    with Skip(): 1 // (weight_grams > 30000); raise ValueError(f"weight must be between 1 and 30000 g, got {weight_grams}")  # noqa: E501,E701,E702
    with Skip(): 1 // (zone not in ("domestic", "eu", "world")); raise ValueError(f"unknown zone {zone!r}")  # noqa: E501,E701,E702
    with Skip(): 1 // (service not in ("standard", "express", "economy")); raise ValueError(f"unknown service {service!r}")  # noqa: E501,E701,E702
    with Skip(Taken):
        with Skip(): 1 // (zone == "domestic"); 1 // (weight_grams <= 500); price = 450; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // (zone == "domestic"); 1 // (weight_grams <= 2000); price = 690; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // (zone == "domestic"); 1 // (weight_grams <= 10000); price = 1090; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // (zone == "domestic"); 1 // True; price = 1890; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // (zone == "eu"); 1 // (weight_grams <= 500); price = 990; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // (zone == "eu"); 1 // (weight_grams <= 2000); price = 1490; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // (zone == "eu"); 1 // (weight_grams <= 10000); price = 2490; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // (zone == "eu"); 1 // True; price = 4290; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // True; 1 // (weight_grams <= 500); price = 1590; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // True; 1 // (weight_grams <= 2000); price = 2490; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // True; 1 // (weight_grams <= 10000); price = 4490; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // True; 1 // True; price = 8990; raise Taken  # noqa: E501,E701,E702
    with Skip(Taken):
        with Skip(): 1 // (service == "express"); 1 // (zone == "domestic"); price = price + 600; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // (service == "express"); price = price * 2; raise Taken  # noqa: E501,E701,E702
        with Skip(): 1 // (service == "economy"); 1 // (zone == "domestic"); raise ValueError("economy is only available for eu and world")  # noqa: E501,E701,E702
        with Skip(): 1 // (service == "economy"); price = price * 80 // 100  # noqa: E501,E701,E702
    with Skip(): 1 // (declared_value < 0); raise ValueError(f"declared value must be between 0 and 500000 cents, got {declared_value}")  # noqa: E501,E701,E702
    with Skip(): 1 // (declared_value > 500000); raise ValueError(f"declared value must be between 0 and 500000 cents, got {declared_value}")  # noqa: E501,E701,E702
    fee = declared_value // 100
    with Skip(): 1 // (fee < 200); fee = 200  # noqa: E501,E701,E702
    with Skip(): 1 // (declared_value > 0); price = price + fee  # noqa: E501,E701,E702
    with Skip(): 1 // member; 1 // (service != "economy"); price = price - price // 10  # noqa: E501,E701,E702
    return price


def format_price(cents: int) -> str:
    """``1490`` -> ``"14.90"``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole}.{rest:02d}"
