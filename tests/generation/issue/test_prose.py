"""What the prose around an issue's code block says of it, and what a title says of a result."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.file import read_issue
from reprobot.generation.issue.prose import (
    called_right,
    earlier_release_before,
    introduced_as_wrong,
    prose_around,
    under_expected_heading,
)


def _block_line(text: str) -> int:
    issue = read_issue(text)
    (block,) = issue.code_blocks
    return block.line


def _issue(before: str, after: str = "") -> str:
    return f"Title\n\n{before}\n\n```python\n>>> f(1)\n3\n```\n\n{after}\n"


def test_the_lines_around_a_block_are_the_nearest_non_blank_ones() -> None:
    text = _issue("Look at this:", "That is odd.")
    issue = read_issue(text)
    assert prose_around(issue, _block_line(text)) == ("Look at this:", "That is odd.")
    assert prose_around(issue, 999) is None


@pytest.mark.parametrize(
    ("before", "after", "right"),
    [
        ("It works fine here:", "", True),
        ("", "Which is as expected.", True),
        ("#### Expected Results", "", True),
        ("It works, but not as expected:", "", False),
        ("This is wrong:", "", False),
        # The line after a block that introduces the next one says nothing of this one.
        ("", "This works fine:", False),
    ],
)
def test_words_calling_a_block_right(before: str, after: str, right: bool) -> None:
    text = _issue(before, after)
    assert called_right(read_issue(text), _block_line(text)) is right


def test_a_block_under_an_expected_heading() -> None:
    text = _issue("Expected output:")
    assert under_expected_heading(read_issue(text), _block_line(text))
    text = _issue("Actual output:")
    assert not under_expected_heading(read_issue(text), _block_line(text))


@pytest.mark.parametrize(
    ("before", "earlier"),
    [
        ("In version 1.6.2 Symbol instances had no `__dict__`:", True),
        ("This used to raise:", True),
        ("In older versions:", True),
        ("The types that were used to fit it:", False),
        ("In version 1.7 it does this:", False),
    ],
)
def test_words_placing_a_block_in_an_earlier_release(before: str, earlier: bool) -> None:
    text = _issue(before)
    assert earlier_release_before(read_issue(text), _block_line(text)) is earlier


@pytest.mark.parametrize(
    ("before", "wrong"),
    [
        ("Consider `J*s`. The convert_to behavior is odd:", True),
        ("Using lambdify on it gives us an unexpected result:", True),
        ("This one is wrong:", True),
        # Not introducing the block, taken back, or a label of what should happen.
        ("The convert_to behavior is odd.", False),
        ("This one is not wrong:", False),
        ("Expected:", False),
        ("Here is what I ran:", False),
    ],
)
def test_the_line_introducing_a_block_calls_it_wrong(before: str, wrong: bool) -> None:
    text = _issue(before)
    assert introduced_as_wrong(read_issue(text), _block_line(text)) is wrong
