"""What an issue's sentences say of its results: two that should agree, an operation that
stops short."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.report import parse_issue
from reprobot.generation.issue.sentences import (
    calls_message_wrong,
    consistency_claim,
    message_called_wrong,
    says_incomplete,
    title_calls_wrong,
)


@pytest.mark.parametrize(
    ("title", "body", "claim"),
    [
        ("Inconsistency when simplifying", "", "inconsistency"),
        ("KernelPCA results differ between runs", "", "differ"),
        ("simplify bug", "Both should give the same value.", "should give the same"),
        ("simplify bug", "They give different results on Windows.", "different results"),
        ("simplify bug", "A different approach would be faster.", None),
        ("Support different backends", "", "different"),
    ],
)
def test_what_the_issue_says_should_agree(title: str, body: str, claim: str | None) -> None:
    assert consistency_claim(parse_issue(title, body)) == claim


@pytest.mark.parametrize(
    ("title", "body", "operation", "said"),
    [
        (
            "Bug in expand",
            "The expansion of a product stops incomplete if a factor...",
            "expand",
            True,
        ),
        ("t", "The result is not fully simplified.", "simplify", True),
        ("t", "Repeat .expand() until the expanded term does no longer change.", "expand", True),
        ("t", "It was only partly normalized", "normalize", True),
        # Incomplete, but of something else; the operation, but not called incomplete.
        ("t", "The docs are incomplete. expand gives a wrong sign.", "expand", False),
        ("t", "expand gives a wrong sign", "expand", False),
        # "partial fractions" are no partial result; a name too short to stand for its operation.
        ("apart is wrong", "The partial fraction decomposition is wrong.", "apart", False),
        ("t", "N is incomplete", "N", False),
    ],
)
def test_says_incomplete_needs_the_operation_and_the_words_in_one_sentence(
    title: str, body: str, operation: str, said: bool
) -> None:
    assert says_incomplete(parse_issue(title, body), operation) is said


@pytest.mark.parametrize(
    ("title", "called"),
    [
        ("Subclassed SkyCoord gives misleading attribute access message", True),
        ("TimeSeries: misleading exception when required column check fails.", True),
        ("Confusing assertion rewriting message with byte strings", True),
        ("Error message is misleading for empty input", True),
        ("Better error for empty input", True),
        ("Exception raised for empty input", False),
        ("Wrong result with apart", False),
        ("Wrong result when an error is ignored", False),
        ("Incorrect value with warnings enabled", False),
    ],
)
def test_a_title_calling_a_message_wrong(title: str, called: bool) -> None:
    assert calls_message_wrong(parse_issue(title, "")) is called


TRACEBACK = (
    '```\nTraceback (most recent call last):\n  File "x.py", line 1, in <module>\n'
    "AttributeError: 'custom' object has no attribute 'prop'\n```\n"
)


def test_the_message_called_wrong_is_the_shown_exceptions_first_line() -> None:
    issue = parse_issue("Misleading attribute access message", TRACEBACK)
    assert message_called_wrong(issue) == "'custom' object has no attribute 'prop'"
    # The same traceback under a title that calls nothing wrong is a crash, not a message.
    assert message_called_wrong(parse_issue("Attribute access fails", TRACEBACK)) is None


def test_without_a_traceback_the_stated_actual_exception_line_gives_the_message() -> None:
    body = (
        "### Expected behavior\nAn exception saying which columns are missing.\n\n"
        "### Actual behavior\nThe message is confusing:\n"
        "`ValueError: TimeSeries object is invalid - expected 'time' as the first columns`\n"
    )
    issue = parse_issue("TimeSeries: misleading exception when a column is removed", body)
    assert message_called_wrong(issue) == (
        "TimeSeries object is invalid - expected 'time' as the first columns"
    )


def test_a_message_too_short_to_tell_apart_is_none() -> None:
    body = "```\nTraceback (most recent call last):\nKeyError: 'a'\n```\n"
    assert message_called_wrong(parse_issue("Unhelpful error message", body)) is None


@pytest.mark.parametrize(
    ("title", "wrong"),
    [
        ("Wrong result with apart", True),
        ("vectors break pretty printing", True),
        ("Matrix.col_insert() no longer seems to work correctly.", True),
        ("Wrong error message when parsing", False),
        ("Incorrect warning when importing", False),
        ("Add a rewrite of sign as abs", False),
    ],
)
def test_a_title_calling_a_result_wrong(title: str, wrong: bool) -> None:
    assert title_calls_wrong(parse_issue(title, "")) is wrong
