"""Expressions that give a truth value by their form (a comparison, ``not``, a predicate such
as ``isinstance``), read from their syntax alone: a truth value the issue calls wrong states the
other one, and one it expects is asserted as the expression itself."""

from __future__ import annotations

import ast

from reprobot.validation import UNPARSABLE

TRUTH_VALUES = ("True", "False")
# Calls that give a truth value whatever they are given.
_PREDICATES = frozenset({"isinstance", "issubclass", "hasattr", "callable", "bool"})


def _expression(text: str) -> ast.expr | None:
    try:
        return ast.parse(text, mode="eval").body
    except UNPARSABLE:
        return None


def _gives_a_truth_value(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _PREDICATES
    )


def is_boolean(expression: str) -> bool:
    """Whether ``expression`` gives a truth value by its form: a comparison, ``not``, or a
    predicate such as ``isinstance``; so that a shown ``True`` called wrong means ``False``."""
    return _gives_a_truth_value(_expression(expression))


def asserted_as_itself(expression: str) -> bool:
    """Whether a truth value the issue expects of ``expression`` is asserted as the expression
    itself: it gives one by its form, and is no ordering (``x < 1``), which a library may leave
    undecided as an object whose truth value raises (SymPy's relationals); compared with the
    literal, that fails as an assertion instead."""
    node = _expression(expression)
    orders = isinstance(node, ast.Compare) and any(
        isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in node.ops
    )
    return _gives_a_truth_value(node) and not orders
