"""Variants from an interactive session the issue shows (or code whose comments show what a
line printed): the value it shows called wrong must not come back, the value the issue expects
must, a raise from an earlier release must happen again, a statement the reporter points at
must raise as the one before it, two computations said to agree must. Pure functions."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from reprobot.generation.drafter.consistency import assert_agree, find_disagreement
from reprobot.generation.drafter.methods import Method
from reprobot.generation.drafter.reading import NOTHING, Produced, Reading
from reprobot.generation.drafter.snippets import (
    Program,
    Step,
    raised_exception,
    raising_step,
    raising_steps,
    shown_value_step,
    shown_values,
)
from reprobot.generation.drafter.sources import (
    TestSource,
    is_value_text,
    only_displays,
    print_call,
    printed,
    same_kind,
    squash,
    stated_value,
)
from reprobot.generation.drafter.stated import about_block
from reprobot.generation.drafter.test_writer import (
    CAUGHT_OUTPUT,
    assert_expected,
    assert_message_gone,
    assert_not_shown,
    catch_output,
    indented,
)
from reprobot.generation.drafter.truth_values import is_boolean
from reprobot.generation.issue.prose import (
    called_right,
    earlier_release_before,
    introduced_as_wrong,
    under_expected_heading,
)
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.issue.sentences import message_called_wrong, title_calls_wrong
from reprobot.generation.issue.stated_calls import stated_returns
from reprobot.generation.issue.values import MAX_SHOWN_CHARS


def agreement_sources(program: Program, issue: IssueReport) -> list[TestSource]:
    """Two parallel computations the session shows disagreeing, where the issue says they
    should agree, must give equal values."""
    found = find_disagreement(issue, program)
    if found is None:
        return []
    steps = program.steps
    first, second = (
        printed(steps[k].source) or steps[k].source for k in (found.first, found.second)
    )
    setup = [
        s.source
        for k, s in enumerate(steps[: found.second])
        if k != found.first and k not in raising_steps(program)
    ]
    note = f"`{first}` and `{second}` must agree, as the issue expects"
    body = assert_agree(first, second, found.claim, setup)
    return [TestSource(Method.ISSUE_EXPECTED, program.imports, body, note)]


def _setup(program: Program, index: int, *, displays: bool = True) -> list[str]:
    """The statements before step ``index``, without those the session shows raising: they
    raised there, and would stop the test here before it gets to its point. Without
    ``displays``, also without those that only showed a value (``x``, ``print(x)``): a test of
    step ``index``'s value needs none of them."""
    failed = raising_steps(program)
    return [
        s.source
        for k, s in enumerate(program.steps[:index])
        if k not in failed and (displays or not only_displays(s.source))
    ]


def shown_expression(statement: str) -> tuple[list[str], str, bool]:
    """(lines to run first, the expression whose printed form is what ``statement`` showed,
    whether that form may be a pretty one): ``x`` of ``print(x)``; ``x`` of ``pprint(x)``,
    drawn in ASCII or Unicode; the caught output of a print of several things
    (``print('mean:', m)`` writes more than ``m``); the statement itself otherwise."""
    node = print_call(statement)
    if node is None:
        return [], statement, False
    inner = printed(statement)
    if inner is None:
        return catch_output(statement), CAUGHT_OUTPUT, False
    plain = isinstance(node.func, ast.Name) and node.func.id == "print"
    return [], inner, not plain


_BOOLEANS = {"True": "False", "False": "True"}


def shown_sources(program: Program, issue: IssueReport) -> list[TestSource]:
    """Tests about the value a session step printed: the wrong value the issue shows must not
    come back; the value it expects must. A shown ``print(x)`` is about ``x``. Only an
    expectation stated about the program's block counts, for a session as for code."""
    shown = shown_value_step(program)
    if shown is None:
        return []
    out: list[TestSource] = []
    setup = _setup(program, shown, displays=False)
    step = program.steps[shown]
    caught, expression, pretty = shown_expression(step.source)
    setup = [*setup, *caught]
    value = step.output.strip()
    if program.origin == "session" and under_expected_heading(issue, program.last_block_line):
        # A session under "Expected results" shows what the call should give.
        if value and len(value) <= MAX_SHOWN_CHARS and "\n" not in value:
            note = "the value the issue's expected results show"
            body = assert_expected(expression, value, setup)
            return [TestSource(Method.ISSUE_EXPECTED, program.imports, body, note)]
        return []
    wrong = bool(value) and len(value) <= MAX_SHOWN_CHARS and shown_is_wrong(issue, program, shown)
    if wrong and not caught and value in _BOOLEANS and is_boolean(expression):
        # A truth value called wrong has one right value: the other one.
        right = _BOOLEANS[value]
        note = f"`{expression}` must be {right}: the issue calls {value} wrong"
        body = assert_expected(expression, right, setup)
        out.append(TestSource(Method.ISSUE_EXPECTED, program.imports, body, note))
    elif wrong:
        out.append(
            TestSource(
                Method.ISSUE_WRONG_VALUE,
                program.imports,
                assert_not_shown(expression, value, setup, pretty),
                "the wrong value the session shows must not come back",
            )
        )
    for expectation in issue.expectations:
        # A stated value is about the block it follows, session or code: "```>>> f(a)```
        # ... ```>>> g(b)``` instead of the expected `c`" says nothing of ``f(a)``.
        if not about_block(issue, expectation, program.last_block_line):
            continue
        # An actual behaviour told in words ("`sqrt(...)` is being computed instead of
        # `sqrt(5)`") names no other value: the expected one is still about this step.
        told = expectation.actual is not None and stated_value(expectation.actual) is None
        if expectation.expected and (told or _ties(expectation.actual, step, value)):
            expected = stated_value(expectation.expected, value) or expectation.expected.strip(
                "` \n"
            )
            said = stated_value(expectation.actual or "") or ""
            if is_value_text(expected) or same_kind(expected, value):
                out.append(
                    TestSource(
                        Method.ISSUE_EXPECTED,
                        program.imports,
                        assert_expected(expression, expected, setup, shown=value or said),
                        "the value the issue expects",
                    )
                )
                break
    return out


def _ties(actual: str | None, step: Step, value: str) -> bool:
    """Whether a stated actual behaviour is what ``step`` showed: none stated, the value itself
    ("Actual: `{x, y}`"), or a section holding the step and its output ("What happened?" over
    the session that shows it)."""
    if not actual:
        return True
    said = squash(actual.strip().strip("`"))
    if said in squash(value):
        return True
    return bool(value) and squash(step.source) in said and squash(value) in said


# Values a program shows that become variants once the fix is known: the last few, as the
# reporter shows the surprise last.
_MAX_CHANGED = 4
_MIN_WITHIN_CHARS = 8


def changed_value_sources(program: Program) -> tuple[list[TestSource], list[str]]:
    """Knowing the fix (at pull request time): each value the session or script shows must not
    come back. The issue need not say which one is wrong: the fix decides, since only a test
    that fails on the base and passes with the fix is kept. Its assertion still comes from the
    issue alone, and it is a weak oracle: it never calls a fix correct by itself. Returns the
    variants and the values they keep out."""
    out: list[TestSource] = []
    values: list[str] = []
    for k in shown_values(program)[:_MAX_CHANGED]:
        step = program.steps[k]
        value = step.output.strip()
        if len(value) > MAX_SHOWN_CHARS:
            continue
        caught, expression, pretty = shown_expression(step.source)
        setup = _setup(program, k) + caught
        said = step.source.strip() if caught else expression
        note = f"the value the issue shows for `{said}` must not come back"
        # Issues are often written against a release that prints more around the same value
        # ("joule**(7/9)", now "10**(2/3)*joule**(7/9)"); the fix decides whether it is gone. A
        # short value would be found inside anything.
        within = len(value) >= _MIN_WITHIN_CHARS
        body = assert_not_shown(expression, value, setup, pretty, within)
        out.append(TestSource(Method.ISSUE_SHOWN_VALUE, program.imports, body, note))
        values.append(value)
    return out, values


# What IPython and Jupyter do with the value of a block's last expression: show it. Showing is
# where a lazy object (a seaborn Plot, a styled table) does its work, and where it fails: its
# repr, and the display methods the issue's traceback went through, no others.
_DISPLAY = ("_shown = {expression}", "repr(_shown)")
_DISPLAY_METHODS = (
    "for _method in {methods!r}:",
    "    if callable(getattr(type(_shown), _method, None)):",
    "        getattr(_shown, _method)()",
)


def displayed(step: Step, methods: Sequence[str] = ()) -> list[str]:
    """The last statement of a code block, its value shown as the issue showed it when it is an
    expression other than a call of ``print``: its repr, and ``methods`` (the display methods
    the issue's traceback names)."""
    source = step.source
    if not step.is_expression or print_call(source) is not None or "\n" in source.strip():
        return [source]
    lines = [line.format(expression=source.strip()) for line in _DISPLAY]
    if methods:
        lines += [line.format(methods=tuple(methods)) for line in _DISPLAY_METHODS]
    return lines


# Statements a session shows raising that each become a test: a report listing its failing
# cases ("doesn't support Eq, and it also doesn't support f(x)") shows one per case.
_MAX_RAISES = 3


def raises_sources(program: Program) -> list[TestSource]:
    """The session up to each statement it shows raising (the first few), without the others
    that raised before it: each is a failure the issue reports."""
    return [
        TestSource(
            Method.ISSUE_SESSION_RAISES,
            program.imports,
            "\n".join([*_setup(program, k), program.steps[k].source]),
            "the session up to the statement that raised",
        )
        for k in raising_steps(program)[:_MAX_RAISES]
    ]


def raised_before_sources(program: Program, raised: int) -> list[TestSource]:
    """A session showing a statement raise in an earlier release, which the issue misses now:
    the statement must raise that exception again."""
    exception = raised_exception(program.steps[raised])
    if exception is None:
        return []
    setup = [s.source for s in program.steps[:raised]]
    statement = program.steps[raised].source
    body = "\n".join([*setup, f"with pytest.raises({exception}):", indented(statement.strip())])
    note = f"`{statement.strip()}` must raise `{exception}`, as the earlier release the issue shows"
    return [TestSource(Method.ISSUE_EXPECTED, program.imports, body, note)]


def raises_like_sources(program: Program, raised: int) -> list[TestSource]:
    """A session where one call raises (as it should) and the reporter points at a later one
    that does not: the later one must raise the same exception. ``solve(a)`` raises
    ``NotImplementedError``; ``solve(b)  <--- not handled correctly`` returns a value."""
    exception = raised_exception(program.steps[raised])
    marked = next(
        (k for k, s in enumerate(program.steps) if k > raised and s.marked and s.is_expression),
        None,
    )
    if exception is None or marked is None:
        return []
    setup = _setup(program, marked)
    statement = program.steps[marked].source
    body = "\n".join([*setup, f"with pytest.raises({exception}):", f"    {statement}"])
    note = f"`{statement}` must raise `{exception}`, as the statement before it does"
    return [TestSource(Method.ISSUE_EXPECTED, program.imports, body, note)]


def shown_is_wrong(issue: IssueReport, program: Program, index: int) -> bool:
    """Whether the issue says the value a session step printed is wrong: the reporter marked
    the line, a stated actual value is that output, or a stated expected value for that call
    differs from it. A session printing a value is otherwise just a session."""
    step = program.steps[index]
    if step.marked:
        return True
    # "Wrong result with apart": the value the session shows last is the one called wrong,
    # unless the words next to the session call it right ("as expected", "str is not fooled").
    if (
        title_calls_wrong(issue)
        and index == shown_value_step(program)
        and not (program.origin == "session" and called_right(issue, program.last_block_line))
    ):
        return True
    # "The convert_to behavior is odd:" just above the session: its shown value is the odd one.
    if (
        program.origin == "session"
        and index == shown_value_step(program)
        and introduced_as_wrong(issue, program.last_block_line)
    ):
        return True
    for expectation in issue.expectations:
        if expectation.actual and _ties(expectation.actual, step, step.output.strip()):
            return True
    output = squash(step.output)
    return any(
        squash(call) == squash(step.source) and squash(value) != output
        for call, value in stated_returns(issue)
    )


def session_raise_variants(reading: Reading) -> Produced:
    """Per session, the statement it shows raising: the same raise as the statement before it
    for one the reporter points at, or the raise again where the issue places the session in an
    earlier release (both ``issue-expected``), else the session up to each raise
    (``issue-session-raises``)."""
    out: list[TestSource] = []
    wrong: list[str] = []
    for program in reading.sessions:
        raised = raising_step(program)
        if raised is None:
            continue
        # A statement the reporter points at after the one that raised is the issue; the raise
        # before it is the behaviour they compare it with.
        if any(s.marked for s in program.steps[raised + 1 :]):
            out.extend(raises_like_sources(program, raised))
        elif earlier_release_before(reading.issue, program.last_block_line):
            # "In version 1.6.2 Symbol instances had no __dict__": the raise is what should
            # happen.
            out.extend(raised_before_sources(program, raised))
        elif (message := message_called_wrong(reading.issue)) is not None:
            # "Misleading exception when ...": the raise may stay; its message must go.
            statement = "\n".join([*_setup(program, raised), program.steps[raised].source])
            note = f"the session must no longer raise the message it calls wrong: {message}"
            body = assert_message_gone(statement, message)
            out.append(TestSource(Method.ISSUE_WRONG_VALUE, program.imports, body, note))
            wrong.append(message)
        else:
            out.extend(raises_sources(program))
    return Produced(tuple(out), tuple(wrong))


def shown_variants(reading: Reading) -> Produced:
    """Per program, the value its step showed: expected, negated or only gone; and, in the
    issue's code, each statement that showed a value an "Expected" section right after its
    block corrects."""
    found = [s for p in reading.programs for s in shown_sources(p, reading.issue)]
    for program in reading.code[:1]:
        found.extend(expected_output_sources(program))
    return Produced(tuple(found))


def expected_output_sources(program: Program) -> list[TestSource]:
    """A statement of the issue's code that showed a value (an output block after it, an
    "Actual" section) and the different value of the same kind an "Expected" section right after
    its block states: the statement must show that one ("```...da.quantile(...).attrs```
    returns ```OrderedDict()``` #### Expected Output ```OrderedDict([('units', 'K')])```")."""
    out: list[TestSource] = []
    for k, step in enumerate(program.steps):
        expected, shown = step.expected, step.output.strip()
        if not expected or not shown or not step.is_expression or squash(expected) == squash(shown):
            continue
        if "Traceback" in shown or not (is_value_text(expected) or same_kind(expected, shown)):
            continue
        caught, expression, _ = shown_expression(step.source)
        setup = [*_setup(program, k, displays=False), *caught]
        note = "the value the issue's expected section shows in place of the one the code showed"
        body = assert_expected(expression, expected, setup, shown=shown)
        out.append(TestSource(Method.ISSUE_EXPECTED, program.imports, body, note))
    return out


def agreement_variants(reading: Reading) -> Produced:
    """Per program, two computations it shows disagreeing that the issue says should agree."""
    found = (s for p in reading.programs for s in agreement_sources(p, reading.issue))
    return Produced(tuple(found))


def changed_value_variants(reading: Reading) -> Produced:
    """Knowing the fix: each value a program shows must not come back (the fix picks)."""
    if not reading.knowing_fix:
        return NOTHING
    sources: list[TestSource] = []
    wrong: list[str] = []
    for program in reading.programs:
        changed, values = changed_value_sources(program)
        sources.extend(changed)
        wrong.extend(values)
    return Produced(tuple(sources), tuple(wrong))
