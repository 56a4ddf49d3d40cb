"""What the prose around an issue's code block says of it: the line just before and just after
a block (its caption), read for a heading over expected results, words calling what it shows
right or wrong, words placing it in an earlier release.

Pure functions of the issue text; the drafter decides what each reading makes of a block.
"""

from __future__ import annotations

import re

from reprobot.generation.issue.report import CodeBlock, IssueReport

# Words before a session saying it shows an earlier release: "In version 1.6.2 Symbol instances
# had no `__dict__`", "This used to raise", "In older versions".
_EARLIER_RELEASE = re.compile(
    r"\b(?:in|with|on|under|using)\s+(?:version\s+|v)?\d+(?:\.\d+)+\b(?=.*\b(?:had|was|were|did"
    r"|worked|raised|gave|returned|threw)\b)"
    # "This used to raise", not "the types that were used to fit it".
    r"|\bused\s+to\s+(?:raise|throw|fail|error|work|return|give|be|have|print|show)\b"
    r"|\bpreviously\b|\b(?:older|earlier|previous)\s+(?:versions?|releases?)\b",
    re.I,
)


def earlier_release_before(issue: IssueReport, line: int) -> bool:
    """Whether the words just before the code block at ``line`` say it shows how an earlier
    release behaved."""
    prose = prose_around(issue, line)
    return prose is not None and bool(_EARLIER_RELEASE.search(prose[0]))


# Words saying a shown result is the right one ("as expected", "works fine", "str is not
# affected"), and words that take that back.
_CALLED_RIGHT = re.compile(
    r"\bas\s+(?:\w+\s+){0,3}?expect(?:ed)?\b"
    r"|\b(?:not|isn't|aren't)\s+(?:fooled|affected|broken|impacted)\b|\bunaffected\b"
    r"|\bworks?(?:\s+\w+){0,2}?\s+(?:fine|correctly|as\s+expected)\b"
    r"|\b(?:is|are|looks?)\s+(?:fine|right|good|correct)\b",
    re.I,
)
_TAKEN_BACK = re.compile(
    r"\b(?:not|never|no\s+longer|however|but|instead|wrong|incorrect\w*|bug)\b|n't\b", re.I
)
# A heading or label over a block of what should happen: "#### Expected Results", "Expected:".
_EXPECTED_HEADING = re.compile(
    r"^[#*_\s]*expected(?:\s+(?:results?|outputs?|behaviou?r|outcome|values?))?[\s:*_]*$", re.I
)


def prose_around(issue: IssueReport, line: int) -> tuple[str, str] | None:
    """The prose line just before the code block at ``line`` and the one just after it (empty
    when a fence comes first); None when no block starts there."""
    block = next((b for b in issue.code_blocks if b.line == line), None)
    if block is None:
        return None
    lines = issue.body.split("\n")
    return (
        caption(issue, block, within=2),
        _neighbour(lines, range(block.after, min(len(lines), block.after + 2))),
    )


def caption(issue: IssueReport, block: CodeBlock, within: int = 3) -> str:
    """The prose line nearest above ``block``, stripped, among the ``within`` lines before it:
    the words that name or introduce it; empty when a fence comes first."""
    lines = issue.body.split("\n")
    start = block.line - 2
    return _neighbour(lines, range(start, max(-1, start - within), -1))


_GOOD_WORDS = re.compile(r"\b(?:expect\w*|should|correct|desired|intended|works?)\b", re.I)
_BAD_WORDS = re.compile(
    r"\b(?:actual\w*|instead|however|but|wrong|incorrect\w*|breaks?|broken|got|currently|fails?)\b",
    re.I,
)


def output_label(issue: IssueReport, block: CodeBlock) -> str | None:
    """ "good" or "bad" by the prose just before an output block ("Expected output:",
    "However, adding -x breaks this:"), the nearest line deciding; None when it says neither."""
    lines = issue.body.split("\n")[: max(0, block.line - 1)]
    prose = [line for line in lines[-4:] if line.strip() and not line.lstrip().startswith("```")]
    for line in reversed(prose[-2:]):
        bad, good = _BAD_WORDS.search(line), _GOOD_WORDS.search(line)
        if bad and not good:
            return "bad"
        if good and not bad:
            return "good"
    return None


def under_expected_heading(issue: IssueReport, line: int) -> bool:
    """Whether the code block at ``line`` sits under an "Expected results" heading or label."""
    prose = prose_around(issue, line)
    return prose is not None and bool(_EXPECTED_HEADING.match(prose[0]))


def called_right(issue: IssueReport, line: int) -> bool:
    """Whether the prose next to the code block at ``line`` calls what it shows right: the line
    just before it (an "Expected results" heading included), or the line just after it unless
    that one introduces the next block (ends with a colon)."""
    prose = prose_around(issue, line)
    if prose is None:
        return False
    before, following = prose
    if _EXPECTED_HEADING.match(before):
        return True
    for text in (before, "" if following.endswith(":") else following):
        match = _CALLED_RIGHT.search(text)
        if match and not _TAKEN_BACK.search(text[: match.start()] + " " + text[match.end() :]):
            return True
    return False


# Words in the line that introduces a block calling what it shows wrong: "The convert_to
# behavior is odd:", "gives us an unexpected result:", "This one is wrong:".
_INTRODUCED_WRONG = re.compile(
    r"\b(?:wrong|incorrect(?:ly)?|odd|strange|weird|unexpected(?:ly)?|surprising(?:ly)?|bogus"
    r"|nonsensical|buggy)\b",
    re.I,
)
_NEGATED = re.compile(r"\b(?:not|never|no)\s+(?:\w+\s+)?$|n't\s+(?:\w+\s+)?$", re.I)


def introduced_as_wrong(issue: IssueReport, line: int) -> bool:
    """Whether the prose line just before the code block at ``line`` introduces it (ends with a
    colon) as showing something wrong, and is not an "Expected" label."""
    prose = prose_around(issue, line)
    if prose is None or not prose[0].rstrip().endswith(":"):
        return False
    before = prose[0]
    if _EXPECTED_HEADING.match(before):
        return False
    match = _INTRODUCED_WRONG.search(before)
    return match is not None and _NEGATED.search(before[: match.start()]) is None


def _neighbour(lines: list[str], indices: range) -> str:
    """The first non-blank line at ``indices``, unless a fence comes first."""
    for k in indices:
        text = lines[k].strip()
        if text.startswith(("```", "~~~")):
            return ""
        if text:
            return text
    return ""
