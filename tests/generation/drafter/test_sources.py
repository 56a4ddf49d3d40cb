"""The small readings of values the drafter's variants share."""

from __future__ import annotations

import pytest

from reprobot.generation.drafter.sources import only_displays, stated_value


@pytest.mark.parametrize(
    ("text", "shown", "value"),
    [
        ("5", "", "5"),
        ("`<class 'sympy.Symbol'>`", "", "<class 'sympy.Symbol'>"),
        ("the output `'F(x, 2)'`", "", "'F(x, 2)'"),
        ("The arguments in order: `'F(x, 2)'`.", "", "'F(x, 2)'"),
        # Of two spans, the one of the kind the statement showed.
        ("`fmt` should give `'F(x, 2)'`", "'F(2, x)'", "'F(x, 2)'"),
        ("`<Box 2>`, as `Box.size` says", "<Box 3>", "<Box 2>"),
    ],
)
def test_stated_value_is_the_value_in_the_words(text: str, shown: str, value: str) -> None:
    assert stated_value(text, shown) == value


@pytest.mark.parametrize(
    "text",
    [
        "All coordinates stay coordinates afterwards.",
        "a list of the names",
        "either `[1, 2]` or `(1, 2)`",  # two values: no one of them is stated
        "",
    ],
)
def test_words_alone_state_no_value(text: str) -> None:
    assert stated_value(text) is None


def test_a_span_naming_an_api_is_no_value() -> None:
    assert stated_value("Being able to create any valid FITS Card via `io.fits.Card`.") is None
    assert stated_value("via `io.fits.Card`", "'HIERARCH ESO'") is None
    # A number is a number, whole or not.
    assert stated_value("the mean, `1.5`", "1") == "1.5"


def test_an_ipython_output_line_states_the_value_after_its_prompt() -> None:
    assert stated_value("Out[2]: 'F(x, 2)'") == "'F(x, 2)'"
    assert stated_value("Out[]: 1.5") == "1.5"


@pytest.mark.parametrize("statement", ["r", "m.is_finite", "print(r)", "pprint(a + b)", "x[0]"])
def test_a_statement_that_only_shows_a_value(statement: str) -> None:
    assert only_displays(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "x = 1",
        "init_printing()",
        "print(f(r))",  # the call may do more than show
        "print(r, file=log)",
        "items.append(1)",
        "del x",
        "(y := 2)",
    ],
)
def test_a_statement_that_does_more_than_show(statement: str) -> None:
    assert not only_displays(statement)
