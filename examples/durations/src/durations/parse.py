"""Parsing and formatting of durations."""

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> int:
    """Return the number of seconds in ``text``, e.g. ``"15m"`` -> 900."""
    text = text.strip().lower()
    if not text:
        raise ValueError("empty duration")
    if text.isdigit():
        return int(text)
    unit = text[-1]
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r} in {text!r}")
    return int(text[:-1]) * UNITS[unit]


def format_duration(seconds: int) -> str:
    """The shortest spelling of ``seconds`` with one unit per part, e.g. 5400 -> ``"1h30m"``."""
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in sorted(UNITS.items(), key=lambda kv: -kv[1]):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
