"""What an issue's sentences say of its results as a whole (pure): that two results should
agree ("`simplify(e)` gives an inequivalent expression", "Inconsistency when simplifying"),
that an operation stops short of its result ("the expansion of a TensorProduct stops
incomplete", "repeat it until the term no longer changes"), and that what is wrong is an
exception's message, not that it is raised ("misleading exception when required column check
fails"), or a result ("Wrong result with apart")."""

from __future__ import annotations

import re

from reprobot.generation.issue.report import IssueReport
from reprobot.generation.issue.tracebacks import find_tracebacks
from reprobot.generation.issue.values import MAX_SHOWN_CHARS

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
# A title calling an exception's or a warning's message wrong: the raise itself may be right.
_JUDGED = (
    r"(?:misleading|confusing|unhelpful|uninformative|cryptic|unclear|wrong|incorrect|bad|poor"
    r"|inaccurate|better|improved?|clearer|more\s+(?:helpful|informative|useful|explicit))"
)
# Up to three words may stand between the judgement and the noun ("misleading attribute access
# message"), but none that starts another clause: "Wrong result when an error occurs" judges the
# result.
_FILLER = r"(?!(?:when|while|with|without|if|for|on|in|after|during|and|or|but|of)\b)[\w`.()-]+"
_MESSAGE_CALLED_WRONG = re.compile(
    rf"\b{_JUDGED}\s+(?:{_FILLER}\s+){{0,3}}?(?:error|exception|warning|message)s?\b"
    r"|\b(?:error|exception|warning)?\s*messages?\s+(?:is|are|was|seems?|looks?)\s+"
    rf"(?:(?:very|quite|a\s+bit|rather|somewhat)\s+)?{_JUDGED}\b",
    re.I,
)
# A message shorter than this ("0", "x") is part of any other message too.
_MIN_MESSAGE_CHARS = 8
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


# A title that calls a result wrong, not an error message or a warning about it ("Wrong
# error message", "incorrect warning" are about raising, not about a value).
_WRONG_TITLE = re.compile(
    r"(?:\b(?:wrong|incorrect(?:ly)?|erroneous|inaccurate|bad|break(?:s|ing)?)"
    # "does not compute separability correctly", "no longer seems to work correctly"
    r"|(?:\bnot|n't|\bno\s+longer)(?:\s+\w+){0,4}?\s+(?:correct(?:ly)?|properly|right))\b"
    r"(?!\s+(?:error|exception|warning|message|type\s?error))",
    re.I,
)


def title_calls_wrong(issue: IssueReport) -> bool:
    """Whether an issue's title calls a result wrong ("Wrong result with apart", "vectors break
    pretty printing"), not an error message or a warning."""
    return bool(_WRONG_TITLE.search(issue.title))


def calls_message_wrong(issue: IssueReport) -> bool:
    """Whether the title says an exception's or a warning's message is what is wrong
    ("Subclassed SkyCoord gives misleading attribute access message", "Confusing error when
    ..."): a fix changes the message and may still raise."""
    return _MESSAGE_CALLED_WRONG.search(issue.title) is not None


def message_called_wrong(issue: IssueReport) -> str | None:
    """The first line of the message of the exception the issue shows last (in a traceback, or
    as the actual behaviour it states), when its title calls that message wrong; None otherwise,
    or when the line is too short to tell apart from another message or too long to compare."""
    if not calls_message_wrong(issue):
        return None
    final = issue.final_traceback
    # Without a traceback, the exception line the issue states as what happens ("### Actual
    # behavior ... `ValueError: TimeSeries object is invalid - ...`").
    stated = (
        find_tracebacks(expectation.actual.replace("`", ""), bare=True)
        for expectation in issue.expectations
        if expectation.actual
    )
    shown = final or next((found[-1] for found in stated if found), None)
    if shown is None:
        return None
    first = shown.message.strip().split("\n", 1)[0].strip()
    return first if _MIN_MESSAGE_CHARS <= len(first) <= MAX_SHOWN_CHARS else None
