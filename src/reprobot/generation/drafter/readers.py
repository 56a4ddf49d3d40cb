"""The readers of an issue's text, one row each: what each finds in an issue and the variants it
feeds. The table is what the rule-coverage benchmark counts, so a reader that fires on too few
issues of too few repositories shows as no class, like a variant. A reader fires on an issue
when it finds at least one thing there."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reprobot.generation.drafter.reading import Reading
from reprobot.generation.drafter.snippets import code_blocks, shown_value_step
from reprobot.generation.issue.prose import (
    called_right,
    earlier_release_before,
    introduced_as_wrong,
    under_expected_heading,
)
from reprobot.generation.issue.sentences import calls_message_wrong, title_calls_wrong
from reprobot.generation.issue.shown_output import output_after
from reprobot.generation.issue.stated_calls import stated_outcomes, stated_returns


@dataclass(frozen=True)
class Reader:
    """One way the drafter reads an issue."""

    name: str
    finds: str
    fires: Callable[[Reading], bool]


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
    Reader("code-blocks", "blocks of Python code", lambda r: bool(code_blocks(r.issue))),
    Reader("sessions", "interactive sessions and what they printed", lambda r: bool(r.sessions)),
    Reader(
        "unfenced-code",
        "Python written into the prose",
        lambda r: any(b.kind == "unfenced" for b in r.issue.code_blocks),
    ),
    Reader("tracebacks", "tracebacks and the exception raised", lambda r: bool(r.issue.tracebacks)),
    Reader(
        "output-after-code",
        "an output block right after a code block",
        lambda r: any(output_after(r.issue, b) is not None for b in code_blocks(r.issue)),
    ),
    Reader("code-shown-value", "a value the code shows (output, comment, section)", _shown("code")),
    Reader("session-shown-value", "a value a session shows", _shown("session")),
    Reader(
        "expected-in-words",
        "an expected value stated in words (a sentence, the title, a code comment), or a call "
        "a sentence says gives or should give a value",
        _any(
            _expectations("sentence", "title", "comment"),
            lambda r: bool(stated_returns(r.issue) or stated_outcomes(r.issue)),
        ),
    ),
    Reader(
        "expected-and-actual-in-words",
        "expected and actual values one sentence states",
        _expectations("sentence", "title", "comment", both=True),
    ),
    Reader(
        "expected-under-label",
        "an expected value or session under a heading, template section or label line",
        _any(_expectations("label"), _sessions_near(under_expected_heading)),
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
    ),
)
