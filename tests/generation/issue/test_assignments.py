"""Constants an issue shows assigned, with their literal values in order."""

from __future__ import annotations

from reprobot.generation.issue.assignments import shown_assignments
from reprobot.generation.issue.report import parse_issue


def test_assignments_read_are_upper_case_literals_only() -> None:
    issue = parse_issue(
        "t",
        "```python\nwidth = 3\nMAX = len(x)\nMAX_SIZE = 10\n```\n"
        "and `LIMIT = 'a'`, then `LIMIT='b'`, again `LIMIT = 'a'`.\n",
    )
    assert shown_assignments(issue) == {"MAX_SIZE": [10], "LIMIT": ["a", "b"]}
