"""The readers of an issue's text, one row each: what each finds in an issue and the variants it
feeds. The table is what the rule-coverage benchmark counts, so a reader that fires on too few
issues of too few repositories shows as no class, like a variant. A reader fires on an issue
when it finds at least one thing there."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reprobot.generation.drafter.issue_code import written_tests
from reprobot.generation.drafter.reading import Reading
from reprobot.generation.drafter.snippets import code_blocks, shown_value_step
from reprobot.generation.issue.prose import (
    called_right,
    earlier_release_before,
    introduced_as_wrong,
    under_expected_heading,
)
from reprobot.generation.issue.runner_session import shows_runner_session
from reprobot.generation.issue.sentences import calls_message_wrong, title_calls_wrong
from reprobot.generation.issue.shown_output import output_after
from reprobot.generation.issue.stated_calls import stated_outcomes, stated_returns


@dataclass(frozen=True)
class Reader:
    """One way the drafter reads an issue."""

    name: str
    finds: str
    fires: Callable[[Reading], bool]
    # How it reads them, in the README's words (rendered there by ``readers_markdown``).
    details: str = ""


def _expectations(*origins: str, both: bool = False) -> Callable[[Reading], bool]:
    def fires(reading: Reading) -> bool:
        return any(
            e.origin in origins and e.expected and (e.actual or not both)
            for e in reading.issue.expectations
        )

    return fires


def _any(*checks: Callable[[Reading], bool]) -> Callable[[Reading], bool]:
    return lambda reading: any(check(reading) for check in checks)


def _sessions_near(check: Callable[..., bool]) -> Callable[[Reading], bool]:
    def fires(reading: Reading) -> bool:
        return any(check(reading.issue, s.last_block_line) for s in reading.sessions)

    return fires


def _shown(origin: str) -> Callable[[Reading], bool]:
    def fires(reading: Reading) -> bool:
        return any(
            (k := shown_value_step(p)) is not None and p.steps[k].output.strip()
            for p in (reading.code if origin == "code" else reading.sessions)
        )

    return fires


READERS: tuple[Reader, ...] = (
    Reader(
        "code-blocks",
        "blocks of Python code",
        lambda r: bool(code_blocks(r.issue)),
        "an example that calls nothing of the project (only the standard library or another "
        'package, "a bug in LooseVersion") is no reproduction, as no change of the project can '
        "fix it",
    ),
    Reader(
        "written-tests",
        "tests the issue writes out",
        lambda r: any(written_tests(p) for p in r.code) and not shows_runner_session(r.issue),
        "top-level `test*` functions, as a reporter proposes a regression test, with no "
        "runner's session shown for them",
    ),
    Reader(
        "sessions",
        "interactive sessions and what they printed",
        lambda r: bool(r.sessions),
        "`>>>` and IPython sessions, a hand-typed `>>>f(x)` without the space too; a session "
        "starts with the issue's earlier code when it uses names that code defines; in a ticket "
        "that lost its blank lines, a sentence after the output ends it",
    ),
    Reader(
        "unfenced-code",
        "Python written into the prose",
        lambda r: any(b.kind == "unfenced" for b in r.issue.code_blocks),
        "code a tracker wrote straight into the prose, an `output: 3` line under it read as "
        "that code's output",
    ),
    Reader(
        "tracebacks",
        "tracebacks and the exception raised",
        lambda r: bool(r.issue.tracebacks),
        "the exception type and message a drafted test must fail with: the last traceback's or, "
        "for a report listing several failing cases, another's",
    ),
    Reader(
        "output-after-code",
        "an output block right after a code block",
        lambda r: any(output_after(r.issue, b) is not None for b in code_blocks(r.issue)),
        'code followed closely ("I get this output:", "returns") by a block of what it printed '
        "(a block of one value that also reads as Python, `OrderedDict()`, included: it is not "
        'more code), by an "Actual result" section, or by words giving it as one code span '
        '("The output is `x + 1`"), with the value an "Expected" section right after the block '
        "states for its last statement (`<class 'Function'>` where it printed `<class "
        "'Symbol'>`, or a display over a few lines: that statement must show it); each `print` "
        "is given its lines (string labels it prints and `print()` anchor the values between "
        "them; anything that does not pair up exactly pairs nothing, nor does a block of what "
        "should be printed, a version report, or a warning), and Python 2's `print x` is read "
        "as `print(x)`",
    ),
    Reader(
        "code-shown-value",
        "a value the code shows (output, comment, section)",
        _shown("code"),
        "code whose comments show what a line printed (`d.kind  # UndefinedKind`, or `# Out: 3` "
        'on the line below), a comment under it such as "# This is not correct" calling it '
        'wrong, or a comment above it setting it against the expected value ("# expected to be '
        "'n' but the answer is 0\")",
    ),
    Reader(
        "session-shown-value",
        "a value a session shows",
        _shown("session"),
        "the last value a session shows; a value shown over several lines is a display, "
        "compared with the package's pretty form too, as IPython shows it; `pprint(x)` shows a "
        "printed form of `x`, and another printing call what it wrote",
    ),
    Reader(
        "expected-in-words",
        "an expected value stated in words (a sentence, the title, a code comment), or a call "
        "a sentence says gives or should give a value",
        _any(
            _expectations("sentence", "title", "comment"),
            lambda r: bool(stated_returns(r.issue) or stated_outcomes(r.issue)),
        ),
        '"I expected `f(x)` to return `5`", a title "f(x) should be 0 rather than 0.75", where a '
        "bare name counts only when the project exports it; a value stated after a code block "
        'is for that block; a suggestion, "maybe it should be `nan`", states none, nor does a '
        'sentence, "Expected: the empty string"',
    ),
    Reader(
        "expected-and-actual-in-words",
        "expected and actual values one sentence states",
        _expectations("sentence", "title", "comment", both=True),
        '"0**-oo produces 0, ... it should produce zoo", "should return A rather than B"',
    ),
    Reader(
        "expected-under-label",
        "an expected value or session under a heading, template section or label line",
        _any(_expectations("label"), _sessions_near(under_expected_heading)),
        'a session under an "Expected results" heading states the expected value',
    ),
    Reader(
        "judgement-in-words",
        "words judging what is shown: a title calling a result or an exception's message "
        "wrong, words before a session calling it wrong or right, or placing it in an earlier "
        "release",
        _any(
            lambda r: title_calls_wrong(r.issue),
            lambda r: calls_message_wrong(r.issue),
            _sessions_near(introduced_as_wrong),
            _sessions_near(called_right),
            _sessions_near(earlier_release_before),
        ),
        'a title "Wrong result of f", "Bad centering", "x breaks pretty printing" or "f does not '
        'compute x correctly" calls the last value a session shows wrong, unless the words next '
        'to it call it right, "as expected", or the line introducing the session, "The '
        'convert_to behavior is odd:"; a truth value called wrong, shown for a comparison or a '
        "predicate (`m.tags is None` giving `True`), states the other one; a session placed in "
        'an earlier release, "In version 1.6.2 it had no `__dict__`", shows the raise that '
        "should happen",
    ),
)


def readers_markdown() -> str:
    """The table as the README shows it (a test holds the README to it)."""
    return "".join(
        f"- `{r.name}`, {r.finds}" + (f": {r.details}" if r.details else "") + ".\n"
        for r in READERS
    )
