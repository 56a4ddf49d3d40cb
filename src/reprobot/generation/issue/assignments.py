"""Constants an issue shows assigned (pure): "``DEFAULT_LOG_FORMAT = "%(filename)s ..."``", on a
line of its own, quoted or in a code block, or as an inline code span; each upper-case name with
the literal values it is shown with, in order."""

from __future__ import annotations

import re

from reprobot.generation.issue.report import IssueReport
from reprobot.generation.issue.values import MAX_SHOWN_CHARS, literal

# An assignment to an upper-case name, on a line of its own (quoted with ">" or not) or as an
# inline code span: the spelling of a constant, which a reporter's own variables rarely use.
# The value runs to the end of the line (stripped after): a lazy match followed by trailing
# whitespace would try every split of a long run of spaces.
_ASSIGNMENT = re.compile(r"^\s*(?:>\s*)*(?P<name>[A-Z][A-Z0-9_]*[A-Z0-9])\s*=\s*(?P<value>\S.*)$")
_SPAN = re.compile(r"`([^`\n]+)`")


def shown_assignments(issue: IssueReport) -> dict[str, list[object]]:
    """Each upper-case name the issue assigns a literal to, with the values in the order shown
    (lines of the body, quoted or in code blocks, and inline code spans)."""
    texts = [*issue.body.splitlines(), *_SPAN.findall(issue.body)]
    found: dict[str, list[object]] = {}
    for text in texts:
        match = _ASSIGNMENT.match(text)
        if match is None:
            continue
        shown = match.group("value").rstrip()
        ok, value = literal(shown) if len(shown) <= MAX_SHOWN_CHARS else (False, None)
        if ok and value not in found.setdefault(match.group("name"), []):
            found[match.group("name")].append(value)
    return {name: values for name, values in found.items() if values}
