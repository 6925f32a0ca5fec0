"""shipping: parcel price quotes."""

from shipping.rates import format_price, quote

__all__ = ["format_price", "quote"]
