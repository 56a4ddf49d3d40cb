"""What an issue's sentences say of its results: two that should agree, an operation that
stops short."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.report import parse_issue
from reprobot.generation.issue.sentences import consistency_claim, says_incomplete


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
