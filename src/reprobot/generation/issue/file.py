"""An issue read from a file: GitHub's issue JSON, or markdown with the title on its first line."""

from __future__ import annotations

import json

from reprobot.generation.errors import DraftingError
from reprobot.generation.issue.report import IssueReport, parse_issue


def split_issue_text(text: str) -> tuple[str, str, str]:
    """(title, body, reference) of an issue given as text: GitHub's issue JSON (``title``,
    ``body`` and ``number``, named "#123"), or markdown whose first non-empty line is the title
    (a leading ``#`` heading mark is dropped), as SWE-bench's problem statements are written,
    with no reference."""
    stripped = text.lstrip("\ufeff").strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise DraftingError(f"the issue looks like JSON but is not: {exc}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("title"), str):
            raise DraftingError('issue JSON needs a string "title" (and a "body")')
        body = data.get("body")
        number = data.get("number")
        reference = f"#{number}" if isinstance(number, int) and number > 0 else ""
        return data["title"], body if isinstance(body, str) else "", reference
    first, _, rest = stripped.partition("\n")
    title = first.strip().lstrip("#").strip()
    if not title:
        raise DraftingError("the issue is empty")
    return title, rest, ""


def read_issue(text: str) -> IssueReport:
    title, body, reference = split_issue_text(text)
    return parse_issue(title, body, reference)
