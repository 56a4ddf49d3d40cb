"""What a pull request body or a comment asks of Reprobot: the issues it closes, a command."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

# An HTML comment hides its text on GitHub; an unterminated one hides the rest of the body.
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# A code span: a run of backticks up to the next run of exactly as many.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_NAME = r"[A-Za-z0-9_.-]+"
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?:[ \t]*:[ \t]*|[ \t]+)"
    r"(?:"
    rf"(?:(?P<owner>{_NAME})/(?P<name>{_NAME}))?#(?P<number>\d+)"
    rf"|https?://[^/\s]+/(?P<url_owner>{_NAME})/(?P<url_name>{_NAME})/issues/(?P<url_number>\d+)"
    r")(?![\w-])",
    re.IGNORECASE,
)
_COMMAND = re.compile(r"^/reprobot[ \t]+(reproduce|verify)$", re.IGNORECASE)


def _outside_code_blocks(text: str) -> list[str]:
    """The lines of ``text`` outside fenced code blocks (an unclosed fence runs to the end)."""
    lines: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        if fence is None:
            opened = _FENCE_OPEN.match(line)
            # A backtick fence's info string may not hold backticks (CommonMark).
            if opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
                fence = opened.group(1)
                continue
            lines.append(line)
        else:
            closing = line.strip()
            if (
                len(line) - len(line.lstrip(" ")) <= 3
                and closing
                and set(closing) == {fence[0]}
                and len(closing) >= len(fence)
            ):
                fence = None
    return lines


def _prose(body: str) -> list[str]:
    """The lines of ``body`` a reader sees as prose: no HTML comment, no code block."""
    return _outside_code_blocks(_HTML_COMMENT.sub("", body))


def closing_references(body: str | None, repo: str) -> list[int]:
    """The numbers of the issues of ``repo`` (``owner/name``) that ``body`` closes, in order of
    first mention, without repeats.

    A reference counts when a closing keyword (close, closes, closed, fix, fixes, fixed,
    resolve, resolves, resolved, in any case, optionally followed by a colon) stands right
    before ``#N``, ``owner/name#N`` or an issue URL of ``repo``. References to other
    repositories, and text in code blocks, code spans and HTML comments, do not count.
    """
    if not body:
        return []
    text = _CODE_SPAN.sub(" ", "\n".join(_prose(body)))
    wanted = repo.lower()
    numbers: list[int] = []
    for match in _CLOSING.finditer(text):
        if match.group("number"):
            owner, name, number = match.group("owner", "name", "number")
        else:
            owner, name, number = match.group("url_owner", "url_name", "url_number")
        if owner is not None and f"{owner}/{name}".lower() != wanted:
            continue
        issue = int(number)
        if issue > 0 and issue not in numbers:
            numbers.append(issue)
    return numbers


@dataclass(frozen=True)
class Command:
    """A Reprobot command given in a comment."""

    name: Literal["reproduce", "verify"]


def parse_command(body: str | None) -> Command | None:
    """The first command in ``body``: a line that is exactly ``/reprobot reproduce`` or
    ``/reprobot verify`` (any case, surrounding blanks allowed). Quoted lines (``>``), code
    blocks and HTML comments do not count; None when there is no command."""
    if not body:
        return None
    for line in _prose(body):
        stripped = line.strip()
        if stripped.startswith(">"):
            continue
        match = _COMMAND.match(stripped)
        if match:
            name: Literal["reproduce", "verify"] = (
                "reproduce" if match.group(1).lower() == "reproduce" else "verify"
            )
            return Command(name=name)
    return None
