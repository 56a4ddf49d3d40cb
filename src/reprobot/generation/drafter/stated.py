"""Variants from values the issue states in its words rather than shows in a session: a value
stated after a code block for that block, "I expected `f(x)` to return `5`", "`f(x)` is `3`"
(called wrong), and the expected value that goes with such a wrong one. Pure functions."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from reprobot.generation.drafter.methods import Method
from reprobot.generation.drafter.reading import NOTHING, Produced, Reading
from reprobot.generation.drafter.snippets import Program, code_blocks, raising_step
from reprobot.generation.drafter.sources import (
    TestSource,
    is_value_text,
    printed,
    squash,
)
from reprobot.generation.drafter.test_writer import assert_expected, assert_not_shown
from reprobot.generation.issue.expectations import Expectation
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.issue.stated_calls import stated_outcomes, stated_returns


def about_block(issue: IssueReport, expectation: Expectation, line: int) -> bool:
    """Whether a value stated with no call of its own is about the block (code or session) at
    body ``line``: the nearest such block before the sentence, or the first after it when none
    comes before. "```f = ...; trigsimp(f)``` Ideally, this would yield `sin(k)` ...
    ```g = ...```" is about the first block, not the last. A sentence not found in the body (the
    title) says nothing of its place."""
    sentence = issue.line_of(expectation.source) if line else None
    if sentence is None:
        return True
    # Sessions count as blocks: a value stated after a session is about that session.
    lines = sorted({b.line for b in code_blocks(issue)} | {s.line for s in issue.sessions})
    before = [n for n in lines if n < sentence]
    after = [n for n in lines if n > sentence]
    nearest = before[-1] if before else (after[0] if after else line)
    return nearest == line


def code_expected_sources(program: Program, issue: IssueReport) -> list[TestSource]:
    """A code block ending in an expression, and an expected value the issue states with no
    call of its own ("Ideally, this would yield `sin(k)`"): that expression must give it. A
    final ``print(x)`` is about ``x``."""
    if not program.steps or not program.steps[-1].is_expression:
        return []
    expected = next(
        (
            value
            for e in issue.expectations
            if e.expected
            and e.actual is None
            and about_block(issue, e, program.last_block_line)
            and is_value_text(value := e.expected.strip().strip("`").strip())
        ),
        None,
    )
    if expected is None:
        return []
    last = program.steps[-1].source
    expression = printed(last) or last
    setup = [s.source for s in program.steps[:-1]]
    note = f"`{expression}` must give `{expected}`, as the issue expects"
    body = assert_expected(expression, expected, setup, shown=program.steps[-1].output.strip())
    return [TestSource(Method.ISSUE_EXPECTED, program.imports, body, note)]


def setup_before(program: Program, call: str) -> list[str]:
    """The reproducer's statements before ``call`` (all of them when it never makes it), the
    one that raised left out: the setup of a test about that call."""
    steps = [s.source for s in program.steps]
    at = next((k for k, s in enumerate(steps) if squash(s) == squash(call)), len(steps))
    raised = raising_step(program)
    return [s for k, s in enumerate(steps[:at]) if k != raised]


def expected_return_sources(programs: list[Program], stated: tuple[str, str]) -> list[TestSource]:
    """ "I expected `f(x)` to return `5`": the reproducer's statements up to that call, then the
    call must give the stated value. Without a reproducer, the call alone."""
    call, value = stated
    note = f"`{call}` must give `{value}`, as the issue expects"
    if not programs:
        return [TestSource(Method.ISSUE_EXPECTED, (), assert_expected(call, value), note)]
    return [
        TestSource(
            Method.ISSUE_EXPECTED,
            program.imports,
            assert_expected(call, value, setup_before(program, call)),
            note,
        )
        for program in programs[:2]
    ]


def expected_for(issue: IssueReport, wrong: str) -> str | None:
    """The value the issue expects in place of ``wrong``: an expectation with no stated actual
    value, or with that one."""
    for expectation in issue.expectations:
        if not expectation.expected or "\n" in expectation.expected:
            continue
        if expectation.actual is None or squash(expectation.actual.strip("`")) == squash(wrong):
            value = expectation.expected.strip().strip("`").strip()
            if is_value_text(value):
                return value
    return None


def stated_value_sources(programs: list[Program], call: str, value: str) -> list[TestSource]:
    """ "`f(x)` is `3`" (the issue calls it wrong): the call must no longer give that value, after
    the reproducer's statements before it. A weak oracle: any other value passes."""
    note = f"`{call}` must no longer give `{value}`, the value the issue reports"
    program = programs[0] if programs else None
    setup = setup_before(program, call) if program else []
    imports = program.imports if program else ()
    body = assert_not_shown(call, value, setup)
    return [TestSource(Method.ISSUE_WRONG_VALUE, imports, body, note)]


_CONSTANTS = frozenset({"None", "True", "False"})


def known_value(
    expected: str | None, exports: Mapping[str, Mapping[str, ast.stmt]] | None
) -> str | None:
    """``expected`` unless it is a bare name that is no value the project exports ("zoo" is
    SymPy's; "fast" in "f(x) is slow, should be fast" is a word)."""
    if expected is None or not expected.isidentifier() or expected in _CONSTANTS:
        return expected
    exported = any(expected in names for names in (exports or {}).values())
    return expected if exported else None


def expected_return_variant(reading: Reading) -> Produced:
    """A call the issue says should return a value ("I expected `f(x)` to return `5`"), or the
    expected value of the call it says gives a wrong one: the call must give it."""
    programs, issue = reading.programs, reading.issue
    returns = stated_returns(issue)
    if returns:
        return Produced(tuple(expected_return_sources(programs, returns[0])))
    for call, value, stated in stated_outcomes(issue)[:1]:
        expected = known_value(stated, reading.tree.exports) or expected_for(issue, value)
        if expected:
            return Produced(tuple(expected_return_sources(programs, (call, expected))))
    return NOTHING


def stated_value_variant(reading: Reading) -> Produced:
    """A call the issue says gives a wrong value ("`f(x)` is `3`"): the value must be gone."""
    for call, value, _ in stated_outcomes(reading.issue)[:1]:
        return Produced(tuple(stated_value_sources(reading.programs, call, value)), (value,))
    return NOTHING


def code_expected_variant(reading: Reading) -> Produced:
    """The first code block's last expression must give the value the issue expects of it."""
    if not reading.code:
        return NOTHING
    return Produced(tuple(code_expected_sources(reading.code[0], reading.issue)))
