"""What a documentation issue says of its build (pure): the warnings it quotes (as Sphinx prints
them, "index.rst:4: WARNING: <message>", or located lines under "Warning, treated as error:"),
the builder it names ("-b latex", "make singlehtml") and the extensions it names
(``sphinx.ext.napoleon``)."""

from __future__ import annotations

import re

from reprobot.generation.issue.names import spans
from reprobot.generation.issue.report import IssueReport

# A warning as Sphinx prints it, after the location: "index.rst:4: WARNING: <message>", or
# "<path>:<line>:<message>" under "Warning, treated as error:".
_WARNING = re.compile(r"(?:^|\s)(?:WARNING|ERROR|CRITICAL|SEVERE):\s*(?P<message>\S.*)$")
_LOCATED = re.compile(r"^\s*\S+?:\d+:\s*(?P<message>[^\s:].*)$")
_TREATED = re.compile(r"warning,\s+treated\s+as\s+error", re.I)

_NAMED_EXTENSION = re.compile(r"\bsphinx(?:\.ext\.\w+|contrib\.\w+)\b")
# Builders a reporter names: "-b latex", "make singlehtml", "when we build either `singlehtml`".
_BUILDER = re.compile(
    r"(?:-b\s+|\bmake\s+|\bbuilder\s+|\bbuild(?:ing)?\s+(?:either\s+)?`?)"
    r"(?P<name>html|dirhtml|singlehtml|latex|epub|text|man|texinfo|xml|linkcheck|gettext)\b"
)
_MAX_WARNINGS = 3


def reported_warnings(issue: IssueReport) -> list[str]:
    """The messages of the build warnings the issue quotes, without their location."""
    found: list[str] = []
    for block in issue.code_blocks:
        if block.is_python or block.is_session:
            continue
        treated = False
        for line in block.text.split("\n"):
            if _TREATED.search(line):
                treated = True
                continue
            match = _WARNING.search(line) or (_LOCATED.match(line) if treated else None)
            if match:
                found.append(match.group("message").strip())
            treated = treated and not line.strip()
    for line in issue.body.split("\n"):
        for span in spans(line):
            match = _WARNING.search(span)
            if match:
                found.append(match.group("message").strip())
    messages = [m for m in dict.fromkeys(found) if 8 <= len(m) <= 300]
    return messages[:_MAX_WARNINGS]


def named_builder(issue: IssueReport) -> str | None:
    """The Sphinx builder the issue names, or None."""
    match = _BUILDER.search(issue.title + "\n" + issue.body)
    return match.group("name") if match else None


def named_extensions(issue: IssueReport) -> list[str]:
    """The Sphinx extensions the issue names (``sphinx.ext.autodoc``), in order, each once."""
    return list(dict.fromkeys(_NAMED_EXTENSION.findall(issue.title + "\n" + issue.body)))
