"""Every reader of the table fires on an issue that says what it reads, and none fires on an
issue that says nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.generation.drafter.readers import READERS, Reader, readers_markdown
from reprobot.generation.drafter.reading import Reading
from reprobot.generation.issue.report import parse_issue
from tests.generation.drafter.conftest import empty_tree

SESSION = "```pycon\n>>> from calc import mean\n>>> mean([1, 2])\n1\n```\n"
CODE = "```python\nfrom calc import mean\nmean([1, 2])\n```\n"
FIRES = {
    "code-blocks": [("mean", CODE)],
    "written-tests": [
        (
            "mean",
            "```python\nfrom calc import mean\n\ndef test_mean():\n"
            "    assert mean([1, 2]) == 1.5\n```\n",
        )
    ],
    "sessions": [("mean", SESSION)],
    "unfenced-code": [("mean", "Run this:\n\nfrom calc import mean\nmean([1, 2])\n\nThanks.")],
    "tracebacks": [
        (
            "mean",
            '```\nTraceback (most recent call last):\n  File "a.py", line 1, in <module>\n'
            "ZeroDivisionError: division by zero\n```\n",
        )
    ],
    "output-after-code": [("mean", CODE + "Output:\n```\n1\n```\n")],
    "code-shown-value": [("mean", "```python\nfrom calc import mean\nmean([1, 2])  # 1\n```\n")],
    "session-shown-value": [("mean", SESSION)],
    "expected-in-words": [
        ("mean", "It should return `1.5`."),
        ("mean([1, 2]) gives 1 rather than 1.5", ""),
        ("mean", "```python\nx = mean([1, 2])  # Expected: 1.5\n```\n"),
        ("mean", "I expected `mean([1, 2])` to return `1.5`."),
        ("mean", "`mean([1, 2])` returns `1`."),
    ],
    "expected-and-actual-in-words": [("mean", "It returns `1` instead of `1.5`.")],
    "expected-under-label": [
        ("mean", "### Expected behavior\n\n1.5\n"),
        ("mean", "### Expected behavior\n\n" + SESSION),
    ],
    "judgement-in-words": [
        ("Wrong result from mean", ""),
        ("mean", "The mean is odd:\n\n" + SESSION),
        ("mean", "This works as expected:\n\n" + SESSION),
        ("mean", "In earlier versions this gave:\n\n" + SESSION),
    ],
}


def test_every_reader_has_an_example_here() -> None:
    assert [r.name for r in READERS] == list(FIRES)
    assert len({r.name for r in READERS}) == len(READERS)


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_a_reader_fires_on_each_thing_it_reads(reader: Reader) -> None:
    for title, body in FIRES[reader.name]:
        assert reader.fires(Reading(parse_issue(title, body), empty_tree())), (title, body)


def test_no_reader_fires_on_an_issue_that_says_nothing() -> None:
    reading = Reading(parse_issue("Add a median", "It would be nice to have one."), empty_tree())
    assert [r.name for r in READERS if r.fires(reading)] == []


def test_the_readme_shows_each_reader_as_the_table_says_how_it_reads() -> None:
    assert all(reader.details for reader in READERS)
    readme = Path(__file__).resolve().parents[3] / "README.md"
    assert readers_markdown() in readme.read_text(encoding="utf-8")
