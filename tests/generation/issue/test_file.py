"""Issues read from files: markdown with a title line, or GitHub's issue JSON."""

from __future__ import annotations

import json

import pytest

from reprobot.generation.errors import DraftingError
from reprobot.generation.issue.file import read_issue, split_issue_text

MARKDOWN = """\
# parse_duration("1h30m") raises ValueError

Parsing a combined duration fails:

```python
from durations import parse_duration
parse_duration("1h30m")
```
"""


def test_markdown_with_a_heading_title() -> None:
    title, body, reference = split_issue_text(MARKDOWN)
    assert reference == ""
    assert title == 'parse_duration("1h30m") raises ValueError'
    assert body.startswith("\nParsing a combined duration fails:")
    assert body.endswith('parse_duration("1h30m")\n```')


def test_first_line_is_the_title_as_swe_bench_writes_problem_statements() -> None:
    text = "\ufeff\n\n  Unit conversion loses precision  \nConverting 3 ft gives 0.9 m.\n"
    assert split_issue_text(text) == (
        "Unit conversion loses precision",
        "Converting 3 ft gives 0.9 m.",
        "",
    )
    assert split_issue_text("## Only a title") == ("Only a title", "", "")


def test_github_issue_json() -> None:
    payload = {
        "number": 1234,
        "title": "half_up rounds 2.5 down",
        "body": "```pycon\n>>> half_up(2.5)\n2\n```",
        "user": {"login": "someone"},
        "labels": [{"name": "bug"}],
    }
    text = json.dumps(payload, indent=2)
    assert split_issue_text(text) == (payload["title"], payload["body"], "#1234")
    # GitHub sends null for an issue opened without a description.
    assert split_issue_text(json.dumps({"title": "Empty", "body": None})) == ("Empty", "", "")
    # A number that is not one names nothing.
    odd = {"title": "Odd", "body": "", "number": "12; rm -rf /"}
    assert split_issue_text(json.dumps(odd)) == ("Odd", "", "")


def test_read_issue_parses_the_body() -> None:
    report = read_issue(MARKDOWN)
    assert report.title == 'parse_duration("1h30m") raises ValueError'
    (block,) = report.code_blocks
    assert block.language == "python" and block.is_python


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"title": "half_up rounds 2.5 down", "body": "oops', "looks like JSON"),
        ('{"body": "no title"}', '"title"'),
        ('{"title": 7, "body": "x"}', '"title"'),
        ("", "empty"),
        ("  \n\n\t\n", "empty"),
        ("#\nbody without a title", "empty"),
    ],
)
def test_bad_input_raises_drafting_error(text: str, message: str) -> None:
    with pytest.raises(DraftingError, match=message):
        split_issue_text(text)
