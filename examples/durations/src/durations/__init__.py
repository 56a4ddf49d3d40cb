"""Parse human-written durations such as ``"90s"``, ``"15m"`` or ``"2h"`` into seconds."""

from durations.parse import format_duration, parse_duration

__all__ = ["format_duration", "parse_duration"]
