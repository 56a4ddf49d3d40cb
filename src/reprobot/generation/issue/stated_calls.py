"""What an issue's words state a call gives or should give, read from its title and from
prose lines with code spans (pure): "median([7, 8, 9, 10]) is 9", "`f(x)` returns `3` instead of
`2.5`", "bell(n).limit(n, oo) should be oo rather than bell(oo)", "I expected `f(x)` to return
`5`". The call must parse as a call or an operation, the value as an expression; a suggestion
("maybe it should be `nan`") states nothing.
"""

from __future__ import annotations

import ast
import itertools
import re

from reprobot.generation.issue.expectations import hedged
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.issue.values import is_expression, is_literal
from reprobot.validation import UNPARSABLE

_SPAN = re.compile(r"`([^`\n]+)`")
_RETURN_VERBS = re.compile(
    r"\bto\s+(?:return|be|give|equal|produce|evaluate\s+to|yield)\b|\bshould\s+(?:return|be|give"
    r"|equal|produce|evaluate\s+to|yield)\b",
    re.I,
)


def stated_returns(issue: IssueReport) -> list[tuple[str, str]]:
    """(call, value) pairs the issue states as expected: "I expected `f(x)` to return `5`",
    "`f(x)` should be `5`". Both must be code spans; the call must parse as an expression."""
    found: list[tuple[str, str]] = []
    in_title = title_should_give(issue)
    if in_title is not None and in_title[2] is None:
        found.append(in_title[:2])
    for line in issue.body.split("\n"):
        spans = list(_SPAN.finditer(line))
        for left, right in itertools.pairwise(spans):
            between = line[left.end() : right.start()]
            if not _RETURN_VERBS.search(between) or len(between) > 40:
                continue
            call, value = left.group(1).strip(), right.group(1).strip()
            # The sentence up to the value: "Maybe `sign(0)` should be `nan`" suggests.
            sentence = re.split(r"[.!?]\s", line[: right.start()])[-1]
            if hedged(sentence):
                continue
            # "```...``` returns `(0, 4)`, but it should return `(0, 8)`": a literal is the
            # value shown, not a call.
            if (
                "(" in call
                and is_expression(call)
                and not is_literal(call)
                and value
                and len(value) <= 200
            ):
                found.append((call, value))
    return found


_OUTCOME_VERBS = (
    r"(?:is|are|returns|returned|gives|gave|yields|produces|produced|evaluates\s+to|equals"
    r"|results\s+in|==)"
)
# "median([7, 8, 9, 10]) is 9", "`f(x)` returns `3` instead of `2.5`", "0**-oo produces 0, the
# documentation says it should produce zoo" (a title, or a line).
_STATED_OUTCOME = re.compile(
    # "is not 0" says what it should not give, or should: no value either way.
    rf"^\s*`?(?P<call>[^`]+?)`?\s+{_OUTCOME_VERBS}\s+(?!not\b)`?(?P<value>[^`]+?)`?"
    r"(?:(?:\s*,?\s+(?:instead\s+of|rather\s+than|but\s+should\s+be|not)\s+"
    r"|\s*[,;]\s+(?:but\s+)?(?:[\w']+\s+){0,5}?should\s+"
    r"(?:be|give|return|produce|yield|equal|evaluate\s+to)\s+)"
    r"`?(?P<expected>[^`]+?)`?)?"
    r"\s*[.!]?\s*$",
    re.I,
)


# A title that says what a call should give: "bell(n).limit(n, oo) should be oo rather than
# bell(oo)", "f(x) should return 2".
_SHOULD_GIVE = re.compile(
    r"^\s*`?(?P<call>[^`]+?)`?\s+should\s+(?:be|return|give|yield|equal|evaluate\s+to)\s+"
    r"`?(?P<expected>[^`]+?)`?(?:\s*,?\s+(?:instead\s+of|rather\s+than|not)\s+"
    r"`?(?P<value>[^`]+?)`?)?\s*[.!]?\s*$",
    re.I,
)
# A title saying what a call should not give, which is then what it gives: "f(x) should not
# return None", "Mod(x**2, x) is not (always) 0". A bare "f(x) is not 0" may as well mean that
# it should be.
_TITLE_NOT = re.compile(
    r"^\s*`?(?P<call>[^`]+?)`?\s+(?:(?:should\s+not|shouldn't|must\s+not|mustn't)\s+"
    r"(?:be|return|give|yield|equal|evaluate\s+to)"
    r"|is\s+not\s+(?:\(\s*(?:always|necessarily)\s*\)|always|necessarily))"
    r"\s+`?(?P<value>[^`]+?)`?\s*[.!]?\s*$",
    re.I,
)
_STATED_IN_PROSE = re.compile(
    rf"`(?P<call>[^`]+)`\s+{_OUTCOME_VERBS}\s+`(?P<value>[^`]+)`"
    r"(?:\s*,?\s+(?:instead\s+of|rather\s+than|but\s+should\s+be)\s+`(?P<expected>[^`]+)`)?",
    re.I,
)


def _is_call(text: str) -> bool:
    try:
        tree = ast.parse(text, mode="eval")
    except UNPARSABLE:
        return False
    return isinstance(tree.body, ast.Call | ast.Subscript | ast.Attribute | ast.BinOp)


def _is_value(text: str) -> bool:
    return (
        is_expression(text)
        and bool(text)
        and len(text) <= 200
        and not text.replace("_", "").isalpha()
    )


def _is_name(text: str) -> bool:
    return text.isidentifier() and len(text) <= 40


def title_should_give(issue: IssueReport) -> tuple[str, str, str | None] | None:
    """(call, expected, wrong value or None) of a title "<call> should be <value> [rather than
    <value>]". The expected value may be a bare name (``oo``, ``None``) only when the title
    also names the wrong value as code: "should be fast" is no value."""
    match = _SHOULD_GIVE.match(issue.title)
    if not match:
        return None
    call, expected = match.group("call").strip(), match.group("expected").strip()
    value = (match.group("value") or "").strip() or None
    if not _is_call(call) or (value is not None and not _is_value(value)):
        return None
    if _is_value(expected) or (value is not None and _is_name(expected)):
        return call, expected, value
    return None


def stated_outcomes(issue: IssueReport) -> list[tuple[str, str, str | None]]:
    """(call, value, expected or None) where the issue states what a call gives: the title
    "median([7, 8, 9, 10]) is 9" (or "... should not be 9"), a line "`f(x)` returns `3`
    instead of `2.5`". The call must
    parse as a call (or an operation) and the value as an expression that is not a bare word."""
    found: list[tuple[str, str, str | None]] = []
    in_title = title_should_give(issue)
    if in_title is not None and in_title[2] is not None:
        found.append((in_title[0], in_title[2], in_title[1]))
    negated = _TITLE_NOT.match(issue.title)
    if negated and _is_call(negated.group("call").strip()) and _is_value(negated.group("value")):
        found.append((negated.group("call").strip(), negated.group("value").strip(), None))
    lines = [issue.title, *(line for line in issue.body.split("\n") if line.count("`") >= 4)]
    for k, line in enumerate(lines[:500]):
        if len(line) > 300:
            continue
        # The title may say it plainly; a line of prose only with both in code spans, anywhere.
        match = _STATED_OUTCOME.match(line) if k == 0 else _STATED_IN_PROSE.search(line)
        if not match:
            continue
        call, value = match.group("call").strip(), match.group("value").strip()
        expected = (match.group("expected") or "").strip() or None
        # A title may name the expected value by a bare name ("should produce zoo"); whether
        # that name is a value of the project is for the drafter, which knows the tree.
        named = k == 0 and expected is not None and _is_name(expected)
        if (
            _is_call(call)
            and _is_value(value)
            and (expected is None or _is_value(expected) or named)
        ):
            found.append((call, value, expected))
    return found
