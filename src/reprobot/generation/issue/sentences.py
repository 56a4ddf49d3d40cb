"""What an issue's sentences say of its results as a whole (pure): that two results should
agree ("`simplify(e)` gives an inequivalent expression", "Inconsistency when simplifying"), and
that an operation stops short of its result ("the expansion of a TensorProduct stops
incomplete", "repeat it until the term no longer changes")."""

from __future__ import annotations

import re

from reprobot.generation.issue.report import IssueReport

# Words that say two results should have been the same. The title may say it with a verb
# ("differ"); the body must say it about results, as "different" alone says little there.
_TITLE_CLAIM = re.compile(
    r"\b(?:inconsisten\w*|inequivalent|not\s+equivalent|differ(?:s|ent|ences?)?|disagree\w*"
    r"|not\s+the\s+same|mismatch\w*)\b",
    re.I,
)
_BODY_CLAIM = re.compile(
    r"\b(?:inconsisten\w*|inequivalent|not\s+equivalent|disagree\w*|different\s+(?:results?"
    r"|answers?|values?|outputs?)|should\s+(?:be|give|return)\s+the\s+same)\b",
    re.I,
)
_INCOMPLETE = re.compile(
    r"\b(?:incomplete(?:ly)?|not\s+(?:fully|completely|entirely)|only\s+partly|partially"
    r"|(?:does|do|did)\s+no\s+longer\s+change|until\b[^.\n]{0,60}\bno\s+longer\s+changes?)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")
# An operation is named in a sentence by its first letters ("expansion" for ``expand``).
_STEM_CHARS = 5
_MIN_NAME_CHARS = 4


def consistency_claim(issue: IssueReport) -> str | None:
    """The issue's word saying two results should agree, or None."""
    match = _TITLE_CLAIM.search(issue.title) or _BODY_CLAIM.search(issue.body)
    return match.group().lower() if match else None


def says_incomplete(issue: IssueReport, operation: str) -> bool:
    """Whether a sentence of the issue names ``operation`` and calls it incomplete."""
    stem = operation.strip("_").lower()[:_STEM_CHARS]
    if len(stem) < _MIN_NAME_CHARS:
        return False
    for sentence in _SENTENCE_END.split(f"{issue.title}\n{issue.body}"):
        if stem in sentence.lower() and _INCOMPLETE.search(sentence):
            return True
    return False
