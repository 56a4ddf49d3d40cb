"""What a documentation issue says of its build: warnings quoted, builder and extensions named."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.build_report import (
    named_builder,
    named_extensions,
    reported_warnings,
)
from reprobot.generation.issue.report import parse_issue


@pytest.mark.parametrize(
    ("title", "body", "builder"),
    [
        ("Broken table in LaTeX", "Running `sphinx-build -b latex . out` gives", "latex"),
        ("Index broken", "I run make singlehtml and the index is gone", "singlehtml"),
        ("Index broken", "when we build either `dirhtml` or not", "dirhtml"),
        ("Index broken", "The html output is fine", None),
    ],
)
def test_the_builder_an_issue_names(title: str, body: str, builder: str | None) -> None:
    assert named_builder(parse_issue(title, body)) == builder


def test_extensions_named_in_title_or_body_each_once_in_order() -> None:
    issue = parse_issue(
        "sphinx.ext.napoleon drops a section",
        "With sphinx.ext.autodoc and sphinx.ext.napoleon loaded (sphinxcontrib.bibtex too)",
    )
    assert named_extensions(issue) == [
        "sphinx.ext.napoleon",
        "sphinx.ext.autodoc",
        "sphinxcontrib.bibtex",
    ]


def test_warnings_from_a_log_block_and_a_span_without_their_location() -> None:
    body = (
        "```\n/doc/index.rst:4: WARNING: duplicate label intro\nbuild succeeded\n```\n\n"
        "and also `WARNING: undefined label: usage` in prose."
    )
    assert reported_warnings(parse_issue("Labels", body)) == [
        "duplicate label intro",
        "undefined label: usage",
    ]
