"""What an issue shows a code block printed: the output block right after it, or a code span
ending the words after it."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.report import parse_issue
from reprobot.generation.issue.shown_output import output_after, shown_output

SCRIPT = "```python\nfrom kettle import level\nprint(level(1))\nprint(level(2))\n```\n"


@pytest.mark.parametrize(
    ("between", "after"),
    [
        ("Then:", "```console\n$ kettle --level\n0.5\n```"),
        ("Then:", "```python\nprint(2)\n```"),
        # The environment it ran in, under its heading or recognisable by itself.
        ("#### Versions", "```\n0.5\n0.7\n```"),
        # What it should print is not what it printed.
        ("Expected output:", "```\n0.5\n0.7\n```"),
        ("I get:", "```\nkettle, version 0.6.6\nPython 3.9.5\n```"),
    ],
)
def test_a_transcript_code_or_a_version_report_after_the_script_is_no_output(
    between: str, after: str
) -> None:
    issue = parse_issue("Level is off", f"{SCRIPT}\n{between}\n\n{after}\n")
    assert output_after(issue, issue.code_blocks[0]) is None


@pytest.mark.parametrize(
    ("between", "introduced"), [("I get this output:", True), ("", False), ("Then:", False)]
)
def test_an_output_block_says_whether_the_words_before_it_call_it_output(
    between: str, introduced: bool
) -> None:
    issue = parse_issue("Level is off", f"{SCRIPT}\n{between}\n\n```\n0.5\n0.7\n```\n")
    shown = shown_output(issue, issue.code_blocks[0])
    assert shown is not None
    assert (shown.text, shown.block, shown.introduced) == (
        "0.5\n0.7",
        issue.code_blocks[1],
        introduced,
    )


def test_a_span_ending_the_words_after_a_script_is_its_output_and_no_block() -> None:
    issue = parse_issue("Level is off", f"{SCRIPT}\nIt prints `0.5`.\n")
    shown = shown_output(issue, issue.code_blocks[0])
    assert shown is not None and (shown.text, shown.block, shown.introduced) == ("0.5", None, True)


def test_a_script_with_nothing_after_it_shows_no_output() -> None:
    issue = parse_issue("Level is off", SCRIPT)
    assert shown_output(issue, issue.code_blocks[0]) is None
