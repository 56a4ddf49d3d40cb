"""Printed values whose items a project may print in any order: a set, a mapping, a sum.

An expected value the issue states as ``{x, y}`` or ``x**2 + 1`` says which items the value has,
not the order a printer lists them in: a set's order follows the hash seed, and a reporter
guesses the order of a sum's terms (``1 + x`` where SymPy prints ``x + 1``). A drafted test
compares such a value with its items sorted (``any_order``), so a fix that gives the right items
passes whatever order it prints them in.

``any_order``'s source is copied into the drafted test that uses it, as ``_any_order``: it runs
in the sandbox's Python (3.9 and later), with the standard library only, on both sides of the
comparison, so the two are read by one interpreter.
"""

from __future__ import annotations

import ast
import inspect

from reprobot.validation import UNPARSABLE

# Where a drafted test names the copied function; the failure matching reads the issue's
# expected value as its argument in pytest's report.
HELPER = "_any_order"


def any_order(text: str) -> str:
    """``text`` with a printed set's, mapping's or sum's items sorted."""
    import ast

    text = text.strip()
    if len(text) > 5000:  # a value this long is compared as printed
        return text
    # What parsing and unparsing text nobody vouches for may raise: the text is then compared
    # as printed.
    try:
        node = ast.parse(text, mode="eval").body
        if isinstance(node, ast.Set):
            return "{" + ", ".join(sorted(ast.unparse(e) for e in node.elts)) + "}"
        if isinstance(node, ast.Dict) and None not in node.keys:
            values = node.values
            items = [
                ast.unparse(k) + ": " + ast.unparse(values[i])
                for i, k in enumerate(node.keys)
                if k is not None
            ]
            return "{" + ", ".join(sorted(items)) + "}"
        terms: list[str] = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            terms.append(("-" if isinstance(node.op, ast.Sub) else "+") + ast.unparse(node.right))
            node = node.left
        if not terms:
            return text
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            terms.append("-" + ast.unparse(node.operand))
        else:
            terms.append("+" + ast.unparse(node))
        return " ".join(sorted(terms))
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return text


def helper_lines() -> list[str]:
    """``any_order``'s source as the drafted test defines it, named ``HELPER``."""
    source = inspect.getsource(any_order).replace("def any_order(", f"def {HELPER}(", 1)
    return source.rstrip("\n").split("\n")


def is_unordered(text: str) -> bool:
    """Whether ``text`` reads as a set or a mapping of two or more items, or a sum of two or
    more terms: a value whose items its printer may list in another order."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except UNPARSABLE:
        return False
    if isinstance(node, ast.Set):
        return len(node.elts) >= 2
    if isinstance(node, ast.Dict):
        return len(node.keys) >= 2 and None not in node.keys
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)


def order_is_the_claim(expected: str, shown: str) -> bool:
    """Whether the value the issue shows has the expected value's items in another order: then
    the order is what the issue calls wrong, and the comparison keeps it."""
    return (
        bool(shown)
        and "".join(shown.split()) != "".join(expected.split())
        and (any_order(shown) == any_order(expected))
    )
