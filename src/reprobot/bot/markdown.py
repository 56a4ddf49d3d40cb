"""Safe markdown pieces for text Reprobot echoes from untrusted sources (logs, test output)."""

from __future__ import annotations

import re

# GitHub rejects comment bodies over 65,536 characters; stay well below it.
COMMENT_LIMIT = 60000
_MENTION = re.compile(r"@(?=[A-Za-z0-9-])")
_BACKTICKS = re.compile(r"`+")


def neutralize_mentions(text: str) -> str:
    """Stop ``@user`` and ``@org/team`` in echoed text from notifying anyone."""
    return _MENTION.sub("@\u200b", text)


def fence(text: str, language: str = "") -> str:
    """A fenced code block that ``text`` cannot close early, whatever backticks it holds."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    body = neutralize_mentions(text.rstrip("\n"))
    return f"{ticks}{language}\n{body}\n{ticks}"


def trim(text: str, limit: int, keep: str = "tail") -> str:
    """At most ``limit`` characters of ``text``, saying how much was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    if keep == "tail":
        return f"[... {cut} characters cut ...]\n" + text[-limit:]
    return text[:limit] + f"\n[... {cut} characters cut ...]"


def inline_code(text: str) -> str:
    """``text`` as inline code, safe against backticks and line breaks inside it."""
    flat = neutralize_mentions(" ".join(text.split()))
    longest = max((len(m) for m in _BACKTICKS.findall(flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"
