"""Stated expected versus actual behaviour in an issue's text (pure, linear-time on any input)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from reprobot.generation.issue.values import literal


@dataclass(frozen=True)
class Expectation:
    """Stated expected and actual behaviour (either may be missing) and the text it came from."""

    expected: str | None
    actual: str | None
    source: str
    # Where it was read: "title", "sentence" (prose), "label" (a heading, a template section,
    # an "Expected:" line) or "comment" (of a Python block). Not part of what it states.
    origin: str = field(default="sentence", compare=False)


_EXPECTED_PHRASES = (
    "expected", "expectation", "expectations", "what did you expect", "what do you expect",
    "what you expected", "what i expected", "what was expected", "what is expected",
    "what's expected", "what should happen", "what should have happened", "desired behavior",
    "desired behaviour", "desired output", "desired result", "correct behavior",
    "correct behaviour", "correct output", "correct result", "intended behavior",
    "intended behaviour",
)  # fmt: skip
_ACTUAL_PHRASES = (
    "actual", "current behavior", "current behaviour", "current result", "current output",
    "observed behavior", "observed behaviour", "observed result", "observed output",
    "what happened", "what happens", "what actually happened", "what actually happens",
    "what is happening", "what's happening", "what i got", "what you got", "what i get",
    "what i see",
)  # fmt: skip
# Too generic to open a longer label ("Output of pip freeze:"), so they must stand alone.
_ACTUAL_ALONE = frozenset(
    {"output", "result", "results", "got", "i got", "i get", "but got", "received", "observed"}
    | {"instead"}
)
_QUALIFIERS = frozenset(
    {"behavior", "behaviour", "result", "results", "output", "outcome", "value", "values"}
    | {"response", "to happen", "to see", "instead", "error", "return value"}
)
_PLACEHOLDERS = frozenset({"_no response_", "no response"})
_LIST_MARKER = re.compile(r"(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_CLAUSE_END = re.compile(r"[.!?;](?=\s|$)")
_OUTCOME_VERB = re.compile(
    r"\b(?:returns?|returned|gives?|gave|raises?|raised|throws?|threw|prints?|printed|outputs?"
    r"|shows?|showed|produces?|produced|yields?|yielded|gets?|got|is|are|was|were|becomes?"
    r"|became|results?[ \t]+in|resulted[ \t]+in|evaluates?[ \t]+to|evaluated[ \t]+to|emits?"
    r"|emitted|renders?|rendered|displays?|displayed|contains?|contained|has|had"
    r"|(?:crash|fail|error|exit)(?:s|es|ed)?[ \t]+with)\b"
)
# "instead of" is not a split: "expected X instead of Y" names Y after it.
_WOULD = re.compile(
    r"\b(?:would|ought[ \t]+to)[ \t]+(?=(?:be|return|give|yield|print|output|produce|evaluate"
    r"[ \t]+to|simplify[ \t]+to)\b)"
)
_CALLED_WRONG = re.compile(
    r"(?P<value>`[^`\n]{1,118}`)[ \t]+(?:is|was|looks|seems)[ \t]+(?:(?:the|also|clearly|obviously"
    r"|just|simply|definitely|still)[ \t]+)?"
    r"(?:wrong|incorrect|bogus|not[ \t]+(?:correct|right))(?![\w-])",
    re.I,
)
_VALUE_NOUNS = frozenset(
    {"the", "result", "output", "value", "answer", "this", "that", "and", "but", "so", "here"}
    | {"returned", "printed", "result:", "output:", "got", "get", "gives", "returns"}
)
_SPAN_AND_STOP = re.compile(r"^(`[^`\n]+`)\s*[.,;!]$")
_LEADING_SPAN = re.compile(r"`[^`\n]{1,118}`")
_MODAL = re.compile(r"\b(?:should|would|must|ought|expect(?:ed|ing)?|want(?:ed)?|need(?:ed)?)\b")
_ANY_SPAN = re.compile(r"`[^`\n]{1,300}`")
_SPLIT_ACTUAL = re.compile(r"[,;]?[ \t]+(?:but|got|received|found|instead(?![ \t]+of\b))[ \t]+")
_VERBS = frozenset(
    {"returns", "return", "returned", "gives", "give", "gave", "raises", "raise", "raised"}
    | {"throws", "throw", "threw", "prints", "print", "printed", "outputs", "output", "shows"}
    | {"show", "showed", "produces", "produce", "produced", "yields", "yield", "yielded", "gets"}
    | {"get", "got", "is", "are", "was", "were", "becomes", "become", "became", "equals"}
    | {"emits", "emit", "emitted", "renders", "rendered", "displays", "displayed", "contains"}
    | {"contain", "has", "have", "had", "be"}
)
_FILLERS = frozenset(
    {"it", "this", "that", "instead", "actually", "the", "result", "output", "value", "i", "we"}
    | {"they", "currently", "it's", "its", "still", "just", "one", "to", "see", "get", "be"}
    | {"answer", "outcome"}
)
# Verbs after "should" that state a value or an outcome: "should be `2.5`", "should raise
# `ValueError`"; "should support `str` methods" names no value.
_SHOULD_VERBS = frozenset(
    {"be", "return", "give", "yield", "print", "output", "produce", "evaluate", "equal", "show"}
    | {"display", "render", "raise", "throw", "become", "simplify", "result", "read", "contain"}
)
# A suggestion is no statement of the expected behaviour: "Maybe `sign(0)` should be `nan`".
_HEDGE = re.compile(r"\b(?:maybe|perhaps|possibly|arguably|not sure|wonder(?:ing)?)\b")
_ADVERBS = frozenset({"also", "still", "always", "just", "rather", "only", "instead", "actually"})
_ING = frozenset(
    {"returning", "raising", "giving", "printing", "being", "producing", "showing", "yielding"}
    | {"outputting", "getting", "throwing"}
)
_WINDOW = 300
_MAX_EXPECTATIONS = 50
_CONTENT_CHARS = 2000


def _norm_label(text: str) -> str:
    text = " ".join(text.replace("*", " ").replace("`", " ").lower().split()).strip(" _:?.!-")
    start = 0
    while start < len(text) and not text[start].isalnum():
        start += 1  # a leading emoji or symbol
    return text[start:]


def _classify(label: str, alone: bool, words: int = 8) -> str | None:
    """The kind of a label ("expected", "actual") or None; ``alone``: the label is the line."""
    if len(label.split()) > words:
        return None
    for kind, phrases in (("expected", _EXPECTED_PHRASES), ("actual", _ACTUAL_PHRASES)):
        for phrase in phrases:
            rest = label[len(phrase) :]
            if not label.startswith(phrase) or rest[:1].isalnum():
                continue
            if not alone or not rest or rest.strip(" ()") in _QUALIFIERS:
                return kind
    return "actual" if label in _ACTUAL_ALONE else None


def _label(line: str) -> tuple[str, str] | None:
    """(kind, text after the label) for a label line such as ``### Expected behavior``,
    ``**Actual:** 3`` or ``- Expected output: 4``."""
    text = line.strip()
    if not text or len(text) > 500:
        return None
    if match := _LIST_MARKER.match(text):
        text = text[match.end() :]
    heading = False
    if text.startswith("#"):
        level = len(text) - len(text.lstrip("#"))
        if level > 6 or text[level : level + 1] not in ("", " "):
            return None
        text, heading = text[level:].strip().rstrip("#").strip(), True
    elif text.startswith(("**", "__")) and (close := text.find(text[:2], 2)) > 2:
        text, heading = text[2:close] + text[close + 2 :], True
    colon = text.find(":")
    # A lead-in is short; "Instead having two elements works as expected:" is a sentence.
    lead = _norm_label(text[:colon])
    if 0 < colon <= 80 and (kind := _classify(lead, alone=False, words=6)):
        # "Expected is: `x`." - the sentence's full stop is no part of the value.
        return kind, _SPAN_AND_STOP.sub(r"\1", text[colon + 1 :].strip(" *_\t"))
    kind = _classify(_norm_label(text), alone=not heading)
    return (kind, "") if kind else None


def _content(lines: list[str], i: int, owner: list[int], blocks: list[str]) -> str | None:
    """The paragraph or code block after a label line, with a code block that follows a
    paragraph ending in ":" or right after it."""
    while i < len(lines) and owner[i] < 0 and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return None
    if owner[i] >= 0:
        return blocks[owner[i]]
    para: list[str] = []
    while i < len(lines) and owner[i] < 0 and lines[i].strip() and not _label(lines[i]):
        if lines[i].lstrip().startswith("#") and para:
            break
        para.append(lines[i].strip())
        i += 1
    if not para:
        return None
    gap = i
    while i < len(lines) and owner[i] < 0 and not lines[i].strip():
        i += 1
    if i < len(lines) and owner[i] >= 0 and (gap == i or para[-1].endswith(":")):
        para.append(blocks[owner[i]])
    return "\n".join(para)


def _tidy(text: str | None) -> str | None:
    if text is None or text.strip().lower() in _PLACEHOLDERS:
        return None
    return text.strip()[:_CONTENT_CHARS] or None


def _drop_words(text: str, words: frozenset[str], limit: int) -> str:
    """``text`` without up to ``limit`` leading words from ``words`` (or adverbs in -ly)."""
    for _ in range(limit):
        head, _, rest = text.partition(" ")
        if head.lower() not in words and not (head.endswith("ly") and len(head) > 4):
            break
        text = rest.strip()
    return text


def _after_verb(text: str) -> str:
    """The object of "but it returns X" / "but the result is X": X."""
    text = _drop_words(text.strip(), _FILLERS, 4)
    head, _, rest = text.partition(" ")
    if rest.startswith("not ") or rest == "not":
        return text  # "but does not", "but is not empty"
    # An unlisted verb in the third person or past tense ("but it emits X") goes too.
    if head in _VERBS or (rest and head.isalpha() and head.islower() and head.endswith("s")):
        return rest.strip()
    return text


def _after_should(text: str) -> str:
    """The object of "should (also) return X": X; "should not raise" stays as it is."""
    text = _drop_words(text.strip(" ,"), _ADVERBS, 2)
    head, _, rest = text.partition(" ")
    return rest.strip() if rest and head not in ("not", "never", "no") else text


def _clause(line: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the clause around ``line[start:end]``: sentence ends, at most a window."""
    low = max(0, start - _WINDOW)
    stops = [line.rfind(mark, low, start) for mark in (". ", "; ", "! ", "? ")]
    begin = max([low, *(at + 2 for at in stops if at >= 0)])
    stop = _CLAUSE_END.search(line, end, min(len(line), end + _WINDOW))
    return begin, stop.start() if stop else min(len(line), end + _WINDOW)


def _masked(text: str) -> str:
    """``text`` with the inside of its code spans blanked, same length: what is code is no
    punctuation of the sentence."""
    return _ANY_SPAN.sub(lambda m: "`" + "x" * (len(m.group()) - 2) + "`", text)


def _sane(expected: str, actual: str) -> bool:
    return 0 < len(expected) <= 200 and 0 < len(actual) <= 200


def stated_in_line(line: str) -> Iterator[Expectation]:
    """ "returns X instead of Y", "should be X but is Y", "expected X, got Y", "`Y` is wrong" in
    one line. Words inside code spans are code, not the sentence: "`ValueError: expected 'time'
    but found 'flux'`" quotes a message and states nothing the reporter expects."""
    low = _masked(line).lower()
    for match in _CALLED_WRONG.finditer(line):
        # "`(A)[i, 0]` is the wrong here", "The result `0.75` is incorrect": Y is what happened;
        # in "Using `x` is wrong" the span is no value.
        before = line[: match.start()].rstrip(" ,:").rsplit(None, 1)
        if not before or before[-1].lower().strip("*_") in _VALUE_NOUNS or before[-1][-1] in ".!?":
            yield Expectation(None, match.group("value"), line.strip()[:300])
    for word in ("instead of", "rather than"):
        at = low.find(word)
        while at >= 0:
            begin, stop = _clause(line, at, at + len(word))
            verbs = list(_OUTCOME_VERB.finditer(low, begin, at))
            # "should return `[1, 2]` rather than `[2, 1]`" states what is expected first: the
            # "should" reading below has it.
            modal = bool(verbs) and _MODAL.search(low, begin, verbs[-1].start()) is not None
            if verbs and at > 0 and _starts(low, at) and not modal:
                # "it raises instead of returning 3": the verb itself is what happened
                actual = line[verbs[-1].end() : at].strip(" ,:") or verbs[-1].group()
                expected = _drop_words(line[at + len(word) : stop].strip(" ,:"), _ING, 1)
                # A comma inside a code span (`'F(x, 2)'`) ends no clause.
                cut = re.search(r",| but ", _masked(expected))
                expected = (expected[: cut.start()] if cut else expected).strip()
                # A verb across a comma or "but" belongs to another clause.
                bare = _masked(actual)
                if "," not in bare and " but " not in bare and _sane(expected, actual):
                    yield Expectation(expected, actual, line[begin:stop].strip())
            at = low.find(word, at + len(word))
    at = low.find("should ")
    while at >= 0:
        begin, stop = _clause(line, at, at + 7)
        but = low.find(" but ", at, stop)
        if but > 0 and _starts(low, at):
            expected = _after_should(line[at + 7 : but])
            actual = _after_verb(line[but + 5 : stop])
            if _sane(expected, actual):
                yield Expectation(expected, actual, line[begin:stop].strip())
        elif _starts(low, at) and _states_value(low, begin, at):
            # "should be 2.5 instead of 3", "should return `2.5`."
            yield from _stated(line, low, at + 7, begin, stop)
        at = low.find("should ", at + 7)
    for match in _WOULD.finditer(low):
        # "this would yield `sin(k)`", "ought to be `0`": a value stated for the example.
        begin, stop = _clause(line, match.start(), match.end())
        if _starts(low, match.start()) and not _HEDGE.search(low, begin, match.start()):
            yield from _stated(line, low, match.end(), begin, stop)
    at = low.find("expect")
    while at >= 0:
        past = at + 6
        for ending in ("ed", "ing"):  # "expected", "I am expecting"
            if low.startswith(ending, past):
                past += len(ending)
                break
        begin, stop = _clause(line, at, past)
        split = _SPLIT_ACTUAL.search(line, past, stop)
        # "Expected behavior ... but" is a label; "unexpected" and "expects" are other words.
        after = low[past + 1 : past + 30].split(" ")[0].strip(":")
        if split and low[past : past + 1] == " " and after not in _QUALIFIERS and _starts(low, at):
            expected = line[past : split.start()].strip(" ,:")
            _, to, rest = f" {expected}".partition(" to ")
            if to:
                expected = _after_should(rest)  # "X to be 3": 3
            actual = _after_verb(line[split.end() : stop])
            if _sane(expected, actual):
                yield Expectation(expected, actual, line[begin:stop].strip())
        elif low[past : past + 1] == " " and after not in _QUALIFIERS and _starts(low, at):
            # "Expected 2.5 instead of 3.", "I expected `2.5`."
            yield from _stated(line, low, past, begin, stop, to_be=True)
        at = low.find("expect", past)


def hedged(clause: str) -> bool:
    """Whether a clause is a suggestion ("maybe", "perhaps", "I'm not sure"), not a statement of
    the behaviour expected."""
    return _HEDGE.search(clause.lower()) is not None


def _states_value(low: str, begin: int, should: int) -> bool:
    """Whether "should ..." at ``should`` (its clause from ``begin``) states a value: a verb of
    value or outcome follows, and the clause is no suggestion ("maybe it should be ...")."""
    words = _drop_words(low[should + 7 : should + 60].strip(" ,"), _ADVERBS, 2).split(" ", 1)
    return words[0] in _SHOULD_VERBS and not _HEDGE.search(low, begin, should)


def _value_like(text: str) -> bool:
    """Whether ``text`` reads as a value rather than as words: one code span, or a literal."""
    text = text.strip().rstrip(".")
    if not text or len(text) > 120:
        return False
    if len(text) > 2 and text[0] == text[-1] == "`" and text.count("`") == 2:
        return True
    return literal(text)[0]


def _stated(
    line: str, low: str, past: int, begin: int, stop: int, to_be: bool = False
) -> Iterator[Expectation]:
    """An expected value stated without "but": "X instead of Y" (X expected, Y what happened)
    or a value alone. Only values count here (a code span or a literal), never words: "should
    be fixed" states no value."""
    for word in (" instead of ", " rather than "):
        at = low.find(word, past, stop)
        if at >= 0:
            expected = _expected_object(line[past:at], to_be)
            actual = _drop_words(line[at + len(word) : stop].strip(" ,:"), _ING, 1)
            if _value_like(expected) and _value_like(actual):
                yield Expectation(expected.strip(), actual.strip(), line[begin:stop].strip())
            return
    expected = _expected_object(line[past:stop], to_be)
    # "should be `X`, since ...", "`X` or remain unevaluated": the code span is the value.
    span = _LEADING_SPAN.match(expected.strip())
    if not _value_like(expected) and span:
        rest = expected.strip()[span.end() :].lstrip(" ,")
        # "`X` or remain unevaluated" offers two outcomes: neither is the one expected.
        expected = "" if rest.lower().startswith("or ") else span.group()
    if _value_like(expected):
        yield Expectation(expected.strip().rstrip("."), None, line[begin:stop].strip())


def _expected_object(text: str, to_be: bool) -> str:
    """The value in "be 2.5", "return `2.5`", or (after "expected") "the result to be 2.5"."""
    text = text.strip(" ,:")
    if to_be:
        _, to, rest = f" {text}".partition(" to ")
        return _after_should(rest) if to else text
    return _after_should(text)


def _starts(low: str, at: int) -> bool:
    """Whether a word starts at ``at`` (not "unexpected", not "shoulder")."""
    return at == 0 or not low[at - 1].isalnum()


def _pair(items: list[tuple[str, str, str]]) -> Iterator[tuple[Expectation, int]]:
    """Pair each labelled expected text with an adjacent labelled actual text; each with the
    index of the first item it was read from."""
    pending: tuple[str, str, str] | None = None
    first = 0
    for k, item in enumerate(items):
        if pending is not None and pending[0] != item[0]:
            expected, actual = (pending, item) if pending[0] == "expected" else (item, pending)
            yield Expectation(expected[1], actual[1], f"{pending[2]}\n\n{item[2]}"), first
            pending = None
            continue
        if pending is not None:
            yield _single(pending), first
        pending, first = item, k
    if pending is not None:
        yield _single(pending), first


def _single(item: tuple[str, str, str]) -> Expectation:
    kind, text, source = item
    return (
        Expectation(text, None, source) if kind == "expected" else Expectation(None, text, source)
    )


def find_expectations(
    title: str,
    lines: list[str],
    owner: list[int],
    blocks: list[str],
    python: list[str],
) -> tuple[Expectation, ...]:
    """Expected and actual behaviour stated in the title, in prose (labels and phrasings) and in
    comments of Python blocks; ``owner`` maps each line to its code block in ``blocks`` or -1."""
    found: list[Expectation] = [replace(e, origin="title") for e in stated_in_line(title)]
    labelled: list[tuple[str, str, str]] = []
    for i, line in enumerate(lines):
        if owner[i] >= 0:
            continue
        found.extend(stated_in_line(line))
        if (label := _label(line)) is not None:
            kind, rest = label
            text = _tidy(rest or _content(lines, i + 1, owner, blocks))
            if text is not None:
                labelled.append(
                    (kind, text, f"{line.strip()}\n{text}" if not rest else line.strip())
                )
    prose_labels = len(labelled)
    for code in python:
        for line in code.split("\n"):
            comment = line.partition("#")[2].strip()
            found.extend(replace(e, origin="comment") for e in stated_in_line(comment))
            if (label := _label(comment)) is not None and label[1]:
                labelled.append((label[0], label[1], line.strip()))
    # A pair read only from comments is a comment's; any with a heading or label line, a label's.
    for expectation, first in _pair(labelled):
        found.append(replace(expectation, origin="comment" if first >= prose_labels else "label"))
    unique: dict[tuple[str | None, str | None], Expectation] = {}
    for item in found:
        unique.setdefault((item.expected, item.actual), item)
    return tuple(unique.values())[:_MAX_EXPECTATIONS]
