"""What every variant of the no-LLM drafter is made of before it is placed in a file: a
``TestSource``, and the small readings of a reproducer's text they share (a printing statement,
a value a test can compare). Pure functions."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from reprobot.validation import UNPARSABLE

# The longest value, shown or expected, that a test compares.
MAX_SHOWN_CHARS = 300


@dataclass(frozen=True)
class TestSource:
    """One variant before it is placed in a file."""

    __test__ = False

    method: str
    imports: tuple[str, ...]
    body: str
    note: str
    wants_tmp_path: bool = False


def squash(text: str) -> str:
    return "".join(text.split())


def printed(statement: str) -> str | None:
    """``x`` of a statement ``print(x)`` or ``pprint(x)`` (one argument, no keywords), else
    None: what it shows is a printed form of ``x``."""
    node = print_call(statement)
    if (
        node is not None
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ):
        return ast.unparse(node.args[0])
    return None


def print_call(statement: str) -> ast.Call | None:
    """``statement`` as a call of a function that prints (``print``, ``pprint``,
    ``pretty_print``, ``print_tree``), else None."""
    try:
        node = ast.parse(statement.strip(), mode="eval").body
    except UNPARSABLE:
        return None
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    # "register_blueprint" ends in "print" too.
    prints = name in ("print", "pprint") or name.endswith("_print") or name.startswith("print_")
    return node if prints else None


def is_value_text(text: str) -> bool:
    """Whether an expected value the issue's words give reads as a value a test can compare:
    one short line that parses as a Python expression (``2.5``, ``'a-b'``, ``x**2 + 1``), not a
    sentence ("the empty string", "No error is thrown.")."""
    if not text or len(text) > MAX_SHOWN_CHARS or "\n" in text:
        return False
    try:
        ast.parse(text, mode="eval")
    except UNPARSABLE:
        return False
    return True
