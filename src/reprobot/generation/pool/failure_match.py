"""Does a draft fail for the issue's reason? Pure judging of a run on R against the issue.

A draft reproduces the issue when at least one of its tests fails on R with what the issue
shows: the exception type (and enough of its message), or the wrong value the reporter saw, or,
for an issue that shows neither, an assertion of the test's own about what the issue names.
A failure that comes from the draft itself (syntax, its own names and imports, fixtures,
collection) makes it broken, whatever the issue says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reprobot.generation.drafter.any_order import HELPER as ANY_ORDER
from reprobot.generation.drafter.command_line import loose_pattern
from reprobot.generation.drafts import DraftOutcome
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.issue.tracebacks import is_exception_name
from reprobot.generation.issue.values import literal
from reprobot.generation.repo.test_layout import words
from reprobot.validation import Outcome, TestRun

# Exceptions that, raised by a test's own code, mean the test is wrong rather than the library.
_SELF_INFLICTED = frozenset(
    {"SyntaxError", "IndentationError", "NameError", "ImportError", "ModuleNotFoundError"}
    | {"UnboundLocalError", "TabError"}
)
_E_LINE = re.compile(r"^E\s+(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<msg>.*))?$", re.M)
_SUMMARY = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Warning|Interrupt))(?::\s?(?P<msg>.*))?$"
)
_LOCATION = re.compile(r"^(?P<path>[^\s:]+\.py):(?P<line>\d+):(?: in \S+| (?P<type>[\w.]+))?", re.M)
# A frame of a Python traceback, as the unittest family reports a failure. The text comes from
# code under test: one line per match, and a bounded path, keep the search linear.
_FRAME = re.compile(r'^[ \t]*File "(?P<path>[^"\n]{1,500}\.py)", line \d+', re.M)
_FIXTURE = re.compile(r"fixture '[^']+' not found")
_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?|/[\w./-]+")
_MIN_MESSAGE_SHARE = 0.5
_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")


# Why a failure on R is the issue's, in the words a candidate's reason starts with, and how much
# of the issue the failure shows: the exception or the wrong value the issue shows (3), the
# value the issue expects or its exception named in a test's own assertion (2), only words of
# the issue in a failing assertion (1). ``confidence`` reads them.
ISSUES_EXCEPTION = "fails with the issue's"
ANOTHER_TRACEBACK = "as another traceback of the issue shows"
ISSUES_WRONG_VALUE = "fails showing the wrong value the issue reports"
NOT_THE_EXPECTED_VALUE = "fails because the value is not the one the issue expects"
ASSERTION_REPORTS = "its assertion reports the issue's"
ASSERTION_ABOUT_WORDS = "its assertion about what the issue describes fails"


def shown_of_the_issue(reason: str) -> int:
    """How much of the issue a reproducing candidate's failure shows (3, 2 or 1; 0: its reason
    is none of a reproduction's)."""
    if reason.startswith(ISSUES_EXCEPTION) or reason.endswith(ANOTHER_TRACEBACK):
        return 3
    if reason.startswith(ISSUES_WRONG_VALUE):
        return 3
    if reason.startswith((NOT_THE_EXPECTED_VALUE, ASSERTION_REPORTS)):
        return 2
    if reason.startswith(ASSERTION_ABOUT_WORDS):
        return 1
    return 0


@dataclass(frozen=True)
class IssueReason:
    """What the issue shows going wrong, as a failure on R should show it."""

    exc_type: str | None
    message: str
    wrong_values: tuple[str, ...]
    frame_functions: tuple[str, ...]
    text_words: frozenset[str]
    # Values the issue states as expected ("Expected 2.5."), as its words give them.
    expected_values: tuple[str, ...] = ()
    # (exception, message) of the issue's other tracebacks, of other types than the final one:
    # a report listing its failing cases shows one per case.
    other_raises: tuple[tuple[str, str], ...] = ()


def mentioned_exception(issue: IssueReport) -> str | None:
    """The first exception name the issue's words mention ("fails with a ValueError")."""
    for match in _NAME.finditer(issue.title + "\n" + issue.body):
        if is_exception_name(match.group()):
            return match.group()
    return None


def issue_reason(issue: IssueReport, wrong_values: Sequence[str] = ()) -> IssueReason:
    """What a reproducing failure must show: the final traceback's exception and message, or,
    for an issue that only names an exception in its words, that exception with any message."""
    traceback = issue.final_traceback
    if traceback is None and (named := mentioned_exception(issue)):
        exc_type: str | None = named
    else:
        exc_type = traceback.exc_type if traceback else None
    actuals = [e.actual for e in issue.expectations if e.actual]
    functions = [
        f.function
        for t in issue.tracebacks
        for f in t.frames
        if f.function and not f.function.startswith("<")
    ]
    return IssueReason(
        exc_type=exc_type,
        message=traceback.message if traceback else "",
        wrong_values=tuple(dict.fromkeys([*wrong_values, *actuals])),
        frame_functions=tuple(dict.fromkeys(functions)),
        text_words=frozenset(words(issue.title + "\n" + issue.body)),
        expected_values=tuple(
            dict.fromkeys(
                e.expected.strip().strip("`").strip() for e in issue.expectations if e.expected
            )
        ),
        other_raises=tuple(
            dict.fromkeys(
                (t.exc_type, t.message)
                for t in issue.tracebacks
                if t.exc_type and short_name(t.exc_type) != short_name(exc_type or "")
            )
        ),
    )


# How pytest reports a rewritten assertion, by the side a value stands on: the value obtained
# ("got") left of the comparison, first in the tuple of printed forms, or after "Obtained:"
# (``approx``); the one expected right of it, tested for membership, or after "Expected:".
_SIDES = {
    "got": (
        r"\bassert (?:not )?Q{v}Q (?:==|!=|is|not in) ",
        r"\bin \(Q{v}Q, ",
        r"^\s*(?:E\s+)?Obtained: Q{v}Q\s*$",
        # A truth value asserted as itself: ``assert False``, ``assert not True``.
        r"\bassert (?:not )?Q{v}Q\s*$",
    ),
    "expected": (
        r" (?:==|is) Q{v}Q(?![\w.])",
        r"\bassert Q{v}Q in \(",
        r"^\s*(?:E\s+)?Expected: Q{v}Q(?: ±|\s*$)",
        # A value compared with its items in any order: "where '+1 +x' = _any_order('x + 1')".
        rf"^\s*(?:E\s+)?\+\s+where .* = {ANY_ORDER}\(Q{{v}}Q\)\s*$",
    ),
}


# A truth value asserted as itself fails showing the other one, Python's or NumPy's:
# ``assert result`` as ``assert False`` where True is expected, ``assert not result`` as
# ``assert not True`` where False is.
_TRUTH_REPORTS = {
    "True": r"\bassert (?:np\.|numpy\.)?False_?\s*$",
    "False": r"\bassert not (?:np\.|numpy\.)?True_?\s*$",
}


def _reports_value(text: str, lead: str, value: str) -> bool:
    """Whether a failed assertion shows ``value`` as the value it got (``lead`` "got") or the one
    it expected ("expected"): in a message that says so ("expected 2.5, got 3", the unittest
    family's), or where pytest's report of the rewritten assertion puts that side
    (``assert 3 == 2.5``). A short value such as "3" counts only there, never anywhere in the
    text."""
    value = value.strip()
    if not value or len(value) > 300:
        return False
    escaped = re.escape(value)
    if re.search(rf"\b{lead}\s*'?{escaped}'?(?![\w.])", text):
        return True
    quoted = [form.replace("Q{v}Q", rf"['\"]?{escaped}['\"]?") for form in _SIDES[lead]]
    if lead == "expected" and value in _TRUTH_REPORTS:
        quoted.append(_TRUTH_REPORTS[value])
    return any(re.search(form, text, re.MULTILINE) for form in quoted)


@dataclass(frozen=True)
class Failure:
    """The exception a failed test ended with, and where it was raised."""

    exc_type: str
    message: str
    raised_in: str | None  # the file of the last traceback entry
    text: str


def short_name(exc_type: str) -> str:
    return exc_type.rpartition(".")[2]


def parse_failure(detail: str) -> Failure:
    """The final exception of a JUnit failure detail (``message`` line, then pytest's text)."""
    exc_type, message = "", ""
    for match in _E_LINE.finditer(detail):
        name = match.group("type")
        if _SUMMARY.match(name) or name in ("AssertionError", "Failed", "assert"):
            exc_type, message = name, (match.group("msg") or "").strip()
    first = detail.split("\n", 1)[0].strip()
    if not exc_type and (summary := _SUMMARY.match(first)):
        exc_type, message = summary.group("type"), (summary.group("msg") or "").strip()
    if exc_type == "assert" or (not exc_type and first.startswith("assert ")):
        exc_type, message = "AssertionError", first
    # pytest's "path.py:12: in f" entries; the unittest family's "File "path.py", line 12".
    locations = list(_LOCATION.finditer(detail)) or list(_FRAME.finditer(detail))
    raised_in = locations[-1].group("path") if locations else None
    return Failure(short_name(exc_type) if exc_type else "", message, raised_in, detail)


_CHAINED = (
    "The above exception was the direct cause of the following exception",
    "During handling of the above exception, another exception occurred",
)


def chained_cause(text: str, exc_type: str) -> str | None:
    """The message of an ``exc_type`` that a failure's final exception was raised from or while
    handling (pytest prints the chain, each link's ``E`` line before the next), or None."""
    cut = max((text.rfind(marker) for marker in _CHAINED), default=-1)
    if cut < 0:
        return None
    for match in _E_LINE.finditer(text, 0, cut):
        if short_name(match.group("type")) == exc_type:
            return (match.group("msg") or "").strip()
    return None


def _normal(text: str) -> str:
    return " ".join(_VOLATILE.sub(" ", text.lower()).split())


def message_share(expected: str, got: str) -> float:
    """The share of the words of ``expected`` found in ``got`` (numbers and addresses aside)."""
    want = set(_normal(expected).split())
    if not want:
        return 1.0
    have = set(_normal(got).split())
    return len(want & have) / len(want)


# pytest's report of a failing ``assert not re.search(PATTERN, output)``: the match, then the
# call that found it with its pattern in full ("where <re.Match object; span=(0, 22),
# match='***...'> = <function search at 0x7f...>('\\*\\*...', '...')"). The match itself is cut
# at 50 characters; the pattern is not.
_FOUND_BY = re.compile(
    r"where <re\.Match object; [^\n]*?> = <function search at 0x[0-9a-f]+>\("
    r"(?P<pattern>'(?:[^'\\\n]|\\.){0,2000}'|\"(?:[^\"\\\n]|\\.){0,2000}\")"
)


def _matches_a_wrong_line(text: str, reason: IssueReason) -> bool:
    """Whether a failed assertion found a line the issue reports as wrong in a command's output:
    its regex is the one a drafted command's test writes for that line (``command_line.
    loose_pattern``: numbers, spacing and path prefixes aside), and pytest's report shows that
    it matched."""
    wanted = {loose_pattern(v) for v in reason.wrong_values if v.strip()}
    for found in _FOUND_BY.finditer(text):
        ok, pattern = literal(found.group("pattern"))
        if ok and isinstance(pattern, str) and pattern.removeprefix("(?m)^") in wanted:
            return True
    return False


def _squash(text: str) -> str:
    return "".join(text.split())


@dataclass(frozen=True)
class JudgedRun:
    outcome: DraftOutcome
    reason: str
    failing_tests: tuple[str, ...]
    relevance: float
    excerpt: str


def _is_own(failure: Failure, test_files: Sequence[str]) -> bool:
    raised = failure.raised_in
    if raised is None:
        return False
    # Whole path components only: a failure in the library's six.py is not in test_six.py.
    return any(
        raised == path or raised.endswith("/" + path) or path.endswith("/" + raised)
        for path in test_files
    )


def judge_test(
    failure: Failure, reason: IssueReason, test_files: Sequence[str]
) -> tuple[DraftOutcome, str, float]:
    """What one failing test says: reproduces (with a relevance), broken, or unrelated."""
    own = _is_own(failure, test_files)
    exc = failure.exc_type
    summary = f"{exc}: {failure.message}"[:200] if exc else failure.text.split("\n", 1)[0][:200]
    if _FIXTURE.search(failure.text):
        return DraftOutcome.BROKEN, f"a fixture the test asks for does not exist ({summary})", 0.0
    self_inflicted = exc in _SELF_INFLICTED and (own or exc in ("SyntaxError", "IndentationError"))
    raised = {short_name(t) for t, _ in reason.other_raises} | {short_name(reason.exc_type or "")}
    if self_inflicted and exc not in raised:
        return DraftOutcome.BROKEN, f"the test's own code fails: {summary}", 0.0
    # A command's output still showing the line the issue reports, crash line or not.
    if exc == "AssertionError" and own and _matches_a_wrong_line(failure.text, reason):
        return DraftOutcome.REPRODUCES, ISSUES_WRONG_VALUE, 3.0
    frames = sum(1 for f in reason.frame_functions if f in failure.text)
    frame_share = frames / len(reason.frame_functions) if reason.frame_functions else 0.0
    if reason.exc_type:
        wanted = short_name(reason.exc_type)
        if exc == wanted:
            share = message_share(reason.message, failure.message or failure.text)
            if share >= _MIN_MESSAGE_SHARE:
                return (
                    DraftOutcome.REPRODUCES,
                    f"{ISSUES_EXCEPTION} {wanted}",
                    3.0 + 2.0 * share + frame_share,
                )
            return (
                DraftOutcome.UNRELATED,
                f"fails with {wanted} but another message: {failure.message[:160]!r}",
                0.0,
            )
        if exc != wanted and (cause := chained_cause(failure.text, wanted)) is not None:
            # A library that wraps the error ("PlotSpecError: Scale setup failed", raised from
            # the TypeError the issue shows) fails for the issue's reason all the same.
            share = message_share(reason.message, cause)
            if share >= _MIN_MESSAGE_SHARE:
                return (
                    DraftOutcome.REPRODUCES,
                    f"{ISSUES_EXCEPTION} {wanted}, raised again as {exc}",
                    2.8 + 2.0 * share + frame_share,
                )
        for other, message in reason.other_raises:
            share = message_share(message, failure.message or failure.text)
            if exc == short_name(other) and share >= _MIN_MESSAGE_SHARE:
                return (
                    DraftOutcome.REPRODUCES,
                    f"fails with {exc}, {ANOTHER_TRACEBACK}",
                    2.9 + 2.0 * share + frame_share,
                )
        if exc in ("AssertionError", "Failed") and own and wanted in failure.text:
            return (
                DraftOutcome.REPRODUCES,
                f"{ASSERTION_REPORTS} {wanted}",
                2.5 + frame_share,
            )
    squashed = _squash(failure.text)
    for value in reason.wrong_values:
        if len(_squash(value)) >= 2 and _squash(value) in squashed:
            return DraftOutcome.REPRODUCES, ISSUES_WRONG_VALUE, 3.0
    if not reason.exc_type and exc in ("AssertionError", "Failed") and own:
        # Reprobot's own assertions show "expected X, got Y" (pytest's report of the rewritten
        # assertion, or their message): X the issue's expected value, or Y the wrong value it
        # reports, however short.
        if any(_reports_value(failure.text, "got", v) for v in reason.wrong_values):
            return DraftOutcome.REPRODUCES, ISSUES_WRONG_VALUE, 3.0
        if any(_reports_value(failure.text, "expected", v) for v in reason.expected_values):
            return (
                DraftOutcome.REPRODUCES,
                NOT_THE_EXPECTED_VALUE,
                3.0,
            )
    if not reason.exc_type and exc in ("AssertionError", "Failed") and own:
        overlap = len(words(failure.text) & reason.text_words)
        if overlap >= 2:
            return (
                DraftOutcome.REPRODUCES,
                ASSERTION_ABOUT_WORDS,
                1.0 + min(overlap, 10) / 10,
            )
    shown = (
        f"the issue shows {reason.exc_type}"
        if reason.exc_type
        else "the issue shows no such failure"
    )
    return DraftOutcome.UNRELATED, f"fails with {summary or 'an error'}, but {shown}", 0.0


def judge_run(run: TestRun, test_files: Sequence[str], reason: IssueReason) -> JudgedRun:
    """What a draft's run on R says of it: the tests of ``test_files`` are the draft's."""
    # Only the sandbox's own word says a patch did not apply: a run that died before it
    # reported (its deadline, a crash) said nothing of its patches, and is an error.
    if any(not p.applied for p in run.patches):
        return JudgedRun(
            DraftOutcome.NOT_APPLIED, "the test patch does not apply to R", (), 0.0, ""
        )
    if run.error or not run.install_ok or run.limits_hit or not run.patches_applied:
        what = run.error or (
            f"limits hit: {', '.join(sorted(run.limits_hit))}"
            if run.limits_hit
            else "install failed"
            if not run.install_ok
            else "the sandbox did not say whether the test patch applied"
        )
        return JudgedRun(
            DraftOutcome.ERROR, f"the sandbox run failed: {what}", (), 0.0, run.log_excerpt[-500:]
        )
    own = {
        test_id: outcome
        for test_id, outcome in run.outcomes.items()
        if test_id.split("::", 1)[0] in test_files
    }
    if not own:
        return JudgedRun(
            DraftOutcome.BROKEN, "pytest collected no test from the draft", (), 0.0, ""
        )
    failed = {t: o for t, o in own.items() if o in (Outcome.FAILED, Outcome.ERROR)}
    if not failed:
        return JudgedRun(DraftOutcome.PASSES, "every test of the draft passes on R", (), 0.0, "")
    best: tuple[float, str, str] | None = None
    reproducing: list[str] = []
    worst: tuple[DraftOutcome, str, str] | None = None
    for test_id in sorted(failed):
        failure = parse_failure(run.failures.get(test_id, ""))
        outcome, why, relevance = judge_test(failure, reason, test_files)
        if outcome is DraftOutcome.REPRODUCES:
            reproducing.append(test_id)
            if best is None or relevance > best[0]:
                best = (relevance, why, _excerpt(failure))
        elif worst is None or outcome is DraftOutcome.BROKEN:
            worst = (outcome, f"{test_id}: {why}", _excerpt(failure))
    if best is not None:
        return JudgedRun(DraftOutcome.REPRODUCES, best[1], tuple(reproducing), best[0], best[2])
    assert worst is not None
    return JudgedRun(worst[0], worst[1], (), 0.0, worst[2])


def _excerpt(failure: Failure) -> str:
    if failure.exc_type:
        return f"{failure.exc_type}: {failure.message}".strip().rstrip(":")[:500]
    return failure.text.strip().split("\n", 1)[0][:500]
