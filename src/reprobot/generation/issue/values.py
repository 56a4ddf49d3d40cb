"""Whether a piece of issue text is a Python literal (``(0, 4)``, ``'a'``, ``-1.5``), read with
``ast.literal_eval``: a value, never a call of the project, and never run."""

from __future__ import annotations

import ast

from reprobot.validation import UNPARSABLE

# The longest value, shown or expected, that a drafted test compares.
MAX_SHOWN_CHARS = 300

# What ``ast.literal_eval`` raises on text that parses but is no literal (a name, a call) or on
# text that does not parse at all.
_NOT_LITERAL: tuple[type[Exception], ...] = (*UNPARSABLE, TypeError)


def literal(text: str) -> tuple[bool, object]:
    """(True, value) when ``text`` is a Python literal; (False, None) otherwise."""
    try:
        return True, ast.literal_eval(text)
    except _NOT_LITERAL:
        return False, None


def is_literal(text: str) -> bool:
    """Whether ``text``, stripped, is a Python literal."""
    return literal(text.strip())[0]


def is_expression(text: str) -> bool:
    """Whether ``text``, stripped, parses as one Python expression."""
    try:
        ast.parse(text.strip(), mode="eval")
    except UNPARSABLE:
        return False
    return True
