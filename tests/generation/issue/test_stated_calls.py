"""What an issue's words state a call gives or should give: titles and prose lines."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.report import parse_issue
from reprobot.generation.issue.stated_calls import stated_outcomes, stated_returns

# --- stated_returns ------------------------------------------------------------------------------


def test_stated_returns_reads_a_title_that_says_what_a_call_should_give() -> None:
    assert stated_returns(parse_issue("median([1, 2]) should be 1.5.", "")) == [
        ("median([1, 2])", "1.5")
    ]
    assert stated_returns(parse_issue("f(x) should return None", "")) == []
    assert stated_returns(parse_issue("parse() should be faster", "")) == []


def test_stated_returns_leaves_out_suggestions() -> None:
    body = "We have `f(0)` giving `0`. Maybe `f(0)` should be `nan` as well.\n"
    assert stated_returns(parse_issue("t", body)) == []
    body = "I'm sure of it. `f(0)` should be `nan`, as `0 / abs(0)` is.\n"
    assert stated_returns(parse_issue("t", body)) == [("f(0)", "nan")]


def test_stated_returns_reads_expected_calls_and_values() -> None:
    body = (
        "I expected `half_up(2.5)` to return `3`, and `half_up(0.5)` should be `1`.\n"
        "Also `round_all([0.5, 1.5])` should equal `[1, 2]` but I get `[0, 2]`.\n"
    )
    assert stated_returns(parse_issue("half_up rounds halves down", body)) == [
        ("half_up(2.5)", "3"),
        ("half_up(0.5)", "1"),
        ("round_all([0.5, 1.5])", "[1, 2]"),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "`half_up` is `broken` for halves",  # no verb between the spans
        "`x + 1` should be `2`",  # not a call
        "`half_up(` should return `1`",  # not an expression
        "`half_up(2.5)` and then, after a lot of unrelated words here, should be `3`",  # too far
        "I expected half_up(2.5) to return 3",  # not code spans
        # The value a code block showed, then the one expected: no call in either span.
        "returns `(0, 4)`, but it should return `(0, 8)`.",
    ],
)
def test_stated_returns_ignores_lines_that_state_no_call(line: str) -> None:
    assert stated_returns(parse_issue("t", line)) == []


@pytest.mark.parametrize(
    ("title", "body", "found"),
    [
        ("median([7, 8, 9, 10]) is 9", "", [("median([7, 8, 9, 10])", "9", None)]),
        (
            "median([7, 8, 9, 10]) returns 9 instead of 8.5",
            "",
            [("median([7, 8, 9, 10])", "9", "8.5")],
        ),
        ("A bug", "Calling `f([[0, 1], [0, 1]])` gives `3`.", [("f([[0, 1], [0, 1]])", "3", None)]),
        (
            "A bug",
            "So `g(h(x))` yields `[2, 1]` instead of `[1, 2]` here.",
            [("g(h(x))", "[2, 1]", "[1, 2]")],
        ),
        ("A bug", "`f(x)` is `slow`", []),
        ("A bug", "`f([[0, 1], [0, 1]])` gives `3`", [("f([[0, 1], [0, 1]])", "3", None)]),
        ("x.sum() is 0 but should be 3", "", [("x.sum()", "0", "3")]),
        ("Matrix.col_insert() is wrong", "", []),
        ("f(x) is broken", "", []),
        ("Bug in foo", "", []),
        # A title saying what the call should give instead: a bare name is a value only there.
        (
            "bell(n).limit(n, oo) should be oo rather than bell(oo)",
            "",
            [("bell(n).limit(n, oo)", "bell(oo)", "oo")],
        ),
        ("f(x) should be 0 instead of 0.75", "", [("f(x)", "0.75", "0")]),
        ("f(x) should be fast rather than slow", "", []),
        # "produces", and the value it should give in a clause of its own after a comma.
        (
            "0**-oo produces 0, the documentation says it should produce zoo",
            "",
            [("0**-oo", "0", "zoo")],
        ),
        ("f(x) gives 3, but should be 2.5", "", [("f(x)", "3", "2.5")]),
        # A bare name there is kept for the drafter to weigh; a word as the value is not.
        ("len(x) is 0; it should be positive", "", [("len(x)", "0", "positive")]),
        ("Matrix(x) is slow, should be fast", "", []),
        # What a call should not give is what it gives; a bare "is not 0" may mean "should be".
        ("Mod(x**2, x) is not (always) 0", "", [("Mod(x**2, x)", "0", None)]),
        ("f(x) should not return -1", "", [("f(x)", "-1", None)]),
        ("simplify(a - a) is not 0", "", []),
        ("Abstract model field should not be equal across models", "", []),
    ],
)
def test_stated_outcomes(title: str, body: str, found: list[tuple[str, str, str | None]]) -> None:
    assert stated_outcomes(parse_issue(title, body)) == found
