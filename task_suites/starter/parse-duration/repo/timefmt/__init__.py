"""timefmt: human-friendly durations."""

from timefmt.durations import UNITS, format_duration

__all__ = ["UNITS", "format_duration"]
