"""Whether issue text is a Python literal or an expression, read without running it."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.values import is_expression, is_literal, literal


@pytest.mark.parametrize(
    ("text", "value"),
    [("(0, 4)", (0, 4)), ("'a'", "a"), ("-1.5", -1.5), ("{'k': [1, None]}", {"k": [1, None]})],
)
def test_a_literal_is_read_as_its_value(text: str, value: object) -> None:
    assert literal(text) == (True, value)
    assert is_literal(f"  {text}\n")


@pytest.mark.parametrize("text", ["f(x)", "x", "os.system('true')", "(1,", "1 +", "[" * 200])
def test_a_call_a_name_or_broken_text_is_no_literal(text: str) -> None:
    assert literal(text) == (False, None)
    assert not is_literal(text)


@pytest.mark.parametrize(
    ("text", "parses"), [("f(x) + 1", True), (" [1, 2] ", True), ("x =", False)]
)
def test_an_expression_parses_in_eval_mode(text: str, parses: bool) -> None:
    assert is_expression(text) is parses
