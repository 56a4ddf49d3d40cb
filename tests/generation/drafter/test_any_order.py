"""Printed sets, mappings and sums read with their items in any order."""

from __future__ import annotations

import ast

import pytest

from reprobot.generation.drafter.any_order import (
    HELPER,
    any_order,
    helper_lines,
    is_unordered,
    order_is_the_claim,
)


@pytest.mark.parametrize(
    ("text", "unordered"),
    [
        ("x + 1", True),
        ("x - y", True),
        ("{x, y}", True),
        ("{a: 1, b: 2}", True),
        ("{x}", False),
        ("{a: 1}", False),
        ("{**a, b: 1}", False),
        ("f(x, y)", False),
        ("2*x", False),
        ("[x, y]", False),
        ("not python at all", False),
    ],
)
def test_which_values_are_unordered(text: str, unordered: bool) -> None:
    assert is_unordered(text) is unordered


def test_the_same_items_read_the_same_whatever_their_order() -> None:
    assert any_order("x**2 + 2*x + 1") == any_order("1 + 2 * x + x**2")
    assert any_order("-x + y") == any_order("y - x")
    assert any_order("x - y") != any_order("y - x")
    assert any_order("{b: 2, a: 1}") == any_order("{a: 1, b: 2}")
    assert any_order("{a: 1, b: 2}") != any_order("{a: 2, b: 1}")
    # Text that is no Python value is compared as it is.
    assert any_order(" <Poly of degree 2> ") == "<Poly of degree 2>"


def test_the_order_is_the_claim_only_when_the_items_are_the_same() -> None:
    assert order_is_the_claim("x + 1", "1 + x")
    assert not order_is_the_claim("x + 1", "x + 2")
    assert not order_is_the_claim("x + 1", "x+1")
    assert not order_is_the_claim("x + 1", "")


def test_the_copy_a_drafted_test_defines_runs_on_the_sandboxs_oldest_python() -> None:
    source = "\n".join(helper_lines())
    tree = ast.parse(source, feature_version=(3, 9))
    assert [node.name for node in tree.body if isinstance(node, ast.FunctionDef)] == [HELPER]
    namespace: dict[str, object] = {}
    exec(compile(tree, "<drafted test>", "exec"), namespace)
    copy = namespace[HELPER]
    assert callable(copy)
    # Text too deep to parse or unparse is compared as printed, never an error of the test's.
    deep = ["a*" * 2400 + "b + c", "-" * 4000 + "x + 1", "(" * 300 + "x" + ")" * 300]
    for text in ("x + 1", "{y, x}", "{b: 2, a: 1}", "f(x)", "(", "a" * 6000, *deep):
        assert copy(text) == any_order(text)
