"""Test modules written from a reproducer: the text of a pytest file, as pure functions.

The issue's words only ever land in comments and string literals built with ``repr``, so no
text of the issue can break out of the test it is quoted in.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

_SLUG_WORD = re.compile(r"[a-z0-9]+")
_MAX_SLUG_WORDS = 6
_STOP = frozenset(
    {"the", "a", "an", "of", "to", "in", "on", "for", "and", "or", "is", "are", "be", "with"}
    | {"when", "does", "not", "no", "can", "cannot", "should", "it", "its", "by", "from", "as"}
    | {"bug", "issue", "error", "fails", "fail", "broken", "wrong"}
)


def slug(title: str) -> str:
    """A short identifier from an issue title (``Matrix.col_insert() is wrong`` gives
    ``matrix_col_insert``)."""
    words = [w for w in _SLUG_WORD.findall(title.lower()) if w not in _STOP]
    text = "_".join(words[:_MAX_SLUG_WORDS])[:60].strip("_")
    return text if text and not text[0].isdigit() else f"issue_{text}".strip("_")


def _comment(text: str, width: int = 96) -> list[str]:
    lines = textwrap.wrap(" ".join(text.split()), width=width - 2) or [""]
    return [f"# {line}" for line in lines[:3]]


def _indent(source: str, by: str = "    ") -> str:
    return textwrap.indent(source, by, lambda line: True).replace(by + "\n", "\n")


def module_text(
    title: str,
    imports: Sequence[str],
    prelude: Sequence[str],
    tests: Sequence[tuple[str, str]],
    params: str = "",
) -> str:
    """A test module: a comment naming the issue, module-level imports and bindings, and each
    (name, body) as ``def test_<name>(<params>):`` (``params`` names pytest fixtures)."""
    parts = [*_comment(f"Reproduces the reported issue: {title}"), ""]
    imports = list(dict.fromkeys(imports))
    if imports:
        parts.extend(imports)
        parts.append("")
    if prelude:
        parts.extend(prelude)
        parts.append("")
    for name, body in tests:
        parts.append("")
        parts.append(f"def test_{name}({params}):")
        parts.append(_indent(body.rstrip("\n")) if body.strip() else "    pass")
    return "\n".join(parts).rstrip("\n") + "\n"


def assert_not_shown(expression: str, shown: str, setup: Sequence[str] = ()) -> str:
    """Run ``setup``, evaluate ``expression``, and fail if it still prints what the issue shows."""
    lines = [*setup, f"result = {expression}"]
    lines.append(
        "assert " + f"{shown!r} not in (str(result), repr(result)), "
        f"'still gives the value the issue reports: ' + repr(result)"
    )
    return "\n".join(lines)


def assert_expected(expression: str, expected: str, setup: Sequence[str] = ()) -> str:
    """Run ``setup``, evaluate ``expression`` and require the value the issue expects."""
    lines = [*setup, f"result = {expression}"]
    lines.append(
        "assert " + f"{expected!r} in (str(result), repr(result)), "
        f"'expected ' + {expected!r} + ', got ' + repr(result)"
    )
    return "\n".join(lines)
