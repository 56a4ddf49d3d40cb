"""Safe markdown pieces for text Reprobot echoes from untrusted sources (logs, test output)."""

from __future__ import annotations

import re

from reprobot.console import printable

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
    body = neutralize_mentions(printable(text).rstrip("\n"))
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
    flat = neutralize_mentions(" ".join(printable(text).split()))
    longest = max((len(m) for m in _BACKTICKS.findall(flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def table_cell(text: str, limit: int = 300) -> str:
    """``text`` as plain text for one markdown table cell: one line of at most ``limit``
    characters, with ``|`` escaped, HTML tags shown as text and mentions neutralised."""
    flat = " ".join(printable(text).split())
    if len(flat) > limit:
        flat = flat[: max(0, limit - 1)] + "…"
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return neutralize_mentions(flat).replace("|", "\\|")


def fit_lengths(lengths: list[int], budget: int) -> list[int]:
    """New lengths for texts of ``lengths`` characters so that they add up to at most
    ``budget``: the longest texts are cut first, to one common cap; shorter ones stay whole."""
    if sum(lengths) <= budget:
        return list(lengths)
    remaining = max(0, budget)
    ordered = sorted(lengths)
    cap = 0
    for count_left, length in zip(range(len(ordered), 0, -1), ordered, strict=True):
        share = remaining // count_left
        if length <= share:
            remaining -= length
            continue
        cap = share
        break
    return [min(length, cap) for length in lengths]


def verbatim_fence(text: str, language: str = "") -> str:
    """A fenced code block holding ``text`` exactly, which ``text`` cannot close early.

    For code meant to be copied and run (a patch to ``git apply``): inserting anything after an
    ``@`` would break its decorators and change its strings. GitHub turns no ``@name`` inside
    a code block into a mention, so the block notifies nobody as it stands.
    """
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text.rstrip(chr(10))}\n{ticks}"


def cap(text: str, limit: int, keep: str = "head") -> str:
    """``text`` cut like ``trim`` does, but at most ``limit`` characters including the note
    saying how much was cut."""
    if len(text) <= limit:
        return text
    note = len(f"\n[... {len(text)} characters cut ...]")
    return trim(text, max(1, limit - note), keep=keep)
