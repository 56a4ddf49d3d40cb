"""Judging a draft's run on R against the issue, from failure details as pytest writes them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reprobot.generation.drafter.command_line import loose_pattern
from reprobot.generation.drafts import DraftOutcome
from reprobot.generation.issue.report import parse_issue
from reprobot.generation.pool.failure_match import (
    ISSUES_WRONG_VALUE,
    NOT_THE_EXPECTED_VALUE,
    IssueReason,
    issue_reason,
    judge_run,
    judge_test,
    message_share,
    parse_failure,
)
from reprobot.validation.results.testrun import Outcome, PatchResult, TestRun

DRAFT = "tests/test_parse_negative.py"
TEST_ID = f"{DRAFT}::test_parse_negative"

RAISING_ISSUE = """\
Negative numbers are rejected:

```python
from calc import parse_number
parse_number("-3")
```

```
Traceback (most recent call last):
  File "/home/me/repro.py", line 2, in <module>
    parse_number("-3")
  File "/home/me/.venv/lib/python3.12/site-packages/calc/core.py", line 9, in parse_number
    raise ValueError(f"not a number: {text!r}")
ValueError: not a number: '-3'
```
"""

# JUnit failure details as pytest --tb=short writes them (message attribute, newline, text).
SAME_EXCEPTION = """\
ValueError: not a number: '-7'
tests/test_parse_negative.py:6: in test_parse_negative
    parse_number("-7")
src/calc/core.py:9: in parse_number
    raise ValueError(f"not a number: {text!r}")
E   ValueError: not a number: '-7'"""

OTHER_MESSAGE = """\
ValueError: invalid literal for int() with base 10: 'x'
tests/test_parse_negative.py:6: in test_parse_negative
    parse_number("x")
src/calc/core.py:10: in parse_number
    return int(text)
E   ValueError: invalid literal for int() with base 10: 'x'"""

OWN_NAME_ERROR = """\
NameError: name 'parse_number' is not defined
tests/test_parse_negative.py:6: in test_parse_negative
    parse_number("-3")
    ^^^^^^^^^^^^
E   NameError: name 'parse_number' is not defined"""

FIXTURE_MISSING = """\
failed on setup with "file /sandbox/repo/tests/test_parse_negative.py, line 5
  def test_parse_negative(number_parser):
E       fixture 'number_parser' not found
[+4 more lines; full report in element text]
file /sandbox/repo/tests/test_parse_negative.py, line 5
  def test_parse_negative(number_parser):
E       fixture 'number_parser' not found
>       available fixtures: cache, capfd, capsys, monkeypatch, tmp_path, tmp_path_factory
>       use 'pytest --fixtures [testpath]' for help on them.

/sandbox/repo/tests/test_parse_negative.py:5"""

SYNTAX_ERROR = """\
collection failure
/usr/local/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule
    mod = import_path(
/usr/local/lib/python3.11/site-packages/_pytest/assertion/rewrite.py:339: in _rewrite_test
    tree = ast.parse(source, filename=strfn)
/usr/local/lib/python3.11/ast.py:50: in parse
    return compile(source, filename, mode, flags,
E     File "/sandbox/repo/tests/test_parse_negative.py", line 7
E       parse_number("-3"
E                   ^
E   SyntaxError: '(' was never closed"""

IMPORT_ERROR = """\
collection failure
ImportError while importing test module '/sandbox/repo/tests/test_parse_negative.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/local/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_parse_negative.py:1: in <module>
    from calc import parse_num
E   ImportError: cannot import name 'parse_num' from 'calc' (/sandbox/repo/src/calc/__init__.py)"""

CHAINED = """\
calc.errors.ParseError: not a number: '-3'
tests/test_parse_negative.py:6: in test_parse_negative
    parse_number("-3")
src/calc/core.py:12: in parse_number
    raise ParseError(str(exc)) from exc
E   calc.errors.ParseError: not a number: '-3'"""


def reason_of(title: str, body: str, wrong_values: tuple[str, ...] = ()) -> IssueReason:
    return issue_reason(parse_issue(title, body), wrong_values)


RAISING = reason_of("parse_number rejects negative numbers", RAISING_ISSUE)


def judge(detail: str, reason: IssueReason = RAISING) -> DraftOutcome:
    return judge_test(parse_failure(detail), reason, [DRAFT])[0]


# --- parse_failure -------------------------------------------------------------------------------


def test_parse_failure_reads_the_final_exception_and_where_it_was_raised() -> None:
    failure = parse_failure(SAME_EXCEPTION)
    assert (failure.exc_type, failure.message, failure.raised_in) == (
        "ValueError",
        "not a number: '-7'",
        "src/calc/core.py",
    )
    assert failure.text == SAME_EXCEPTION


def test_parse_failure_of_a_plain_assert() -> None:
    detail = (
        "assert 1 == 1.5\n"
        " +  where 1 = mean([1, 2])\n"
        "tests/test_mean.py:6: in test_mean\n"
        "    assert mean([1, 2]) == 1.5\n"
        "E   assert 1 == 1.5\n"
        "E    +  where 1 = mean([1, 2])"
    )
    failure = parse_failure(detail)
    assert (failure.exc_type, failure.message, failure.raised_in) == (
        "AssertionError",
        "assert 1 == 1.5",
        "tests/test_mean.py",
    )


def test_parse_failure_of_an_assert_with_a_message() -> None:
    detail = (
        "AssertionError: expected 1.5, got 1\n"
        "assert '1.5' in ('1', '1')\n"
        " +  where '1' = str(1)\n"
        "tests/test_mean.py:8: in test_mean\n"
        "    assert '1.5' in (str(result), repr(result)), 'expected ' + '1.5' + ', got ' + "
        "repr(result)\n"
        "E   AssertionError: expected 1.5, got 1\n"
        "E   assert '1.5' in ('1', '1')\n"
        "E    +  where '1' = str(1)"
    )
    failure = parse_failure(detail)
    assert (failure.exc_type, failure.message) == ("AssertionError", "expected 1.5, got 1")


def test_parse_failure_short_names_of_dotted_types_and_pytest_fail() -> None:
    assert parse_failure(CHAINED).exc_type == "ParseError"
    failed = parse_failure(
        "Failed: DID NOT RAISE <class 'ValueError'>\n"
        "tests/test_parse_negative.py:7: in test_parse_negative\n"
        "    with pytest.raises(ValueError):\n"
        "E   Failed: DID NOT RAISE <class 'ValueError'>"
    )
    assert (failed.exc_type, failed.message) == ("Failed", "DID NOT RAISE <class 'ValueError'>")


def test_parse_failure_of_a_collection_syntax_error() -> None:
    failure = parse_failure(SYNTAX_ERROR)
    assert (failure.exc_type, failure.message) == ("SyntaxError", "'(' was never closed")
    assert failure.raised_in == "/usr/local/lib/python3.11/ast.py"


def test_parse_failure_without_an_exception() -> None:
    failure = parse_failure(FIXTURE_MISSING)
    assert (failure.exc_type, failure.message) == ("", "")


def test_message_share_ignores_numbers_addresses_and_paths() -> None:
    assert message_share("not a number: '-3'", "not a number: '-7'") == 1.0
    assert message_share("<Pot object at 0x7f3a2c>", "<Pot object at 0x10ab>") == 1.0
    assert message_share("no such file /home/me/a.txt", "no such file /tmp/b.txt") == 1.0
    assert message_share("", "anything") == 1.0
    assert message_share("not a number", "invalid literal") == 0.0


# --- judge_test ----------------------------------------------------------------------------------


def test_same_exception_and_message_reproduces() -> None:
    verdict, why, relevance = judge_test(parse_failure(SAME_EXCEPTION), RAISING, [DRAFT])
    assert verdict is DraftOutcome.REPRODUCES
    assert "ValueError" in why
    # Type, the whole message and the issue's frame function (parse_number) all match.
    assert relevance == 3.0 + 2.0 + 1.0


def test_a_dotted_exception_matches_the_issue_short_name() -> None:
    reason = reason_of(
        "ParseError on negatives",
        "```\nTraceback (most recent call last):\n"
        '  File "x.py", line 1, in <module>\n'
        "calc.errors.ParseError: not a number: '-3'\n```\n",
    )
    assert judge(CHAINED, reason) is DraftOutcome.REPRODUCES


# pytest --tb=short's JUnit text for an exception raised from another (a library wrapping it).
WRAPPED = """\
calc.errors.ParseError: parsing failed, see the traceback above
tests/test_parse_negative.py:6: in test_parse_negative
    parse_number("-3")
src/calc/core.py:9: in parse_number
    raise ValueError(f"not a number: {text!r}")
E   ValueError: not a number: '-3'

The above exception was the direct cause of the following exception:
tests/test_parse_negative.py:6: in test_parse_negative
    parse_number("-3")
src/calc/core.py:12: in parse_number
    raise ParseError("parsing failed, see the traceback above") from exc
E   calc.errors.ParseError: parsing failed, see the traceback above"""


def test_the_issues_exception_wrapped_by_another_reproduces() -> None:
    verdict, why, relevance = judge_test(parse_failure(WRAPPED), RAISING, [DRAFT])
    assert verdict is DraftOutcome.REPRODUCES
    assert why == "fails with the issue's ValueError, raised again as ParseError"
    assert relevance == 2.8 + 2.0 + 1.0
    # Chained to another message, or not chained at all: not the issue's reason.
    other = WRAPPED.replace("E   ValueError: not a number: '-3'", "E   ValueError: bad width 9")
    assert judge(other) is DraftOutcome.UNRELATED
    assert judge(WRAPPED.replace("The above exception was the direct cause", "Later")) is (
        DraftOutcome.UNRELATED
    )


def test_same_type_with_another_message_is_unrelated() -> None:
    verdict, why, relevance = judge_test(parse_failure(OTHER_MESSAGE), RAISING, [DRAFT])
    assert verdict is DraftOutcome.UNRELATED
    assert "another message" in why and relevance == 0.0


# A report listing two failing cases, one traceback each: the last is not the only reason.
TWO_CASES = (
    "Some issues with parse_number",
    "```pycon\n>>> parse_number('-3')\nTraceback (most recent call last):\n"
    '  File "<stdin>", line 1, in <module>\nIndexError: list index out of range\n'
    ">>> parse_number('x')\nTraceback (most recent call last):\n"
    "  File \"<stdin>\", line 1, in <module>\nValueError: not a number: 'x'\n```\n",
)
INDEX_ERROR = """\
IndexError: list index out of range
src/calc/core.py:9: in parse_number
    return digits[0]
E   IndexError: list index out of range"""


def test_an_earlier_traceback_of_the_issue_is_a_reason_too() -> None:
    reason = reason_of(*TWO_CASES)
    assert reason.exc_type == "ValueError"
    assert reason.other_raises == (("IndexError", "list index out of range"),)
    verdict, why, _ = judge_test(parse_failure(INDEX_ERROR), reason, [DRAFT])
    assert verdict is DraftOutcome.REPRODUCES
    assert why == "fails with IndexError, as another traceback of the issue shows"
    # Its message must match as the final one's must.
    other = INDEX_ERROR.replace("list index out of range", "pop from empty deque")
    assert judge(other, reason) is DraftOutcome.UNRELATED


def test_another_exception_type_is_unrelated() -> None:
    detail = (
        "TypeError: unsupported operand type(s) for +: 'int' and 'str'\n"
        "src/calc/core.py:3: in mean\n"
        "    return sum(values) // len(values)\n"
        "E   TypeError: unsupported operand type(s) for +: 'int' and 'str'"
    )
    assert judge(detail) is DraftOutcome.UNRELATED


def test_name_error_in_the_test_file_is_broken() -> None:
    verdict, why, _ = judge_test(parse_failure(OWN_NAME_ERROR), RAISING, [DRAFT])
    assert verdict is DraftOutcome.BROKEN
    assert "NameError" in why


def test_name_error_in_the_library_is_not_the_tests_fault() -> None:
    detail = (
        "NameError: name 'unit' is not defined\n"
        "tests/test_parse_negative.py:6: in test_parse_negative\n"
        '    parse_number("-3")\n'
        "src/calc/core.py:9: in parse_number\n"
        '    raise ValueError(f"not a number: {unit!r}")\n'
        "E   NameError: name 'unit' is not defined"
    )
    assert judge(detail) is DraftOutcome.UNRELATED


def test_name_error_the_issue_itself_reports_is_no_sign_of_a_broken_test() -> None:
    reason = reason_of(
        "NameError when parsing",
        "```\nTraceback (most recent call last):\n"
        '  File "repro.py", line 2, in <module>\n'
        "NameError: name 'parse_number' is not defined\n```\n",
    )
    assert judge(OWN_NAME_ERROR, reason) is DraftOutcome.REPRODUCES


def test_import_error_of_the_test_module_is_broken() -> None:
    assert judge(IMPORT_ERROR) is DraftOutcome.BROKEN


def test_fixture_not_found_is_broken() -> None:
    verdict, why, _ = judge_test(parse_failure(FIXTURE_MISSING), RAISING, [DRAFT])
    assert verdict is DraftOutcome.BROKEN
    assert "fixture" in why


def test_syntax_error_is_broken_wherever_it_is_reported() -> None:
    assert judge(SYNTAX_ERROR) is DraftOutcome.BROKEN


def test_an_assertion_naming_the_issue_exception_reproduces() -> None:
    detail = (
        "AssertionError: parse_number raised ValueError: not a number: '-3'\n"
        "tests/test_parse_negative.py:9: in test_parse_negative\n"
        "    assert error is None, f'parse_number raised {error!r}'\n"
        "E   AssertionError: parse_number raised ValueError: not a number: '-3'"
    )
    verdict, why, _ = judge_test(parse_failure(detail), RAISING, [DRAFT])
    assert verdict is DraftOutcome.REPRODUCES
    assert "assertion" in why


VALUE_ISSUE = """\
```pycon
>>> from calc import dedupe
>>> dedupe([3, 1, 3])
[3, 1, 3]
```

The duplicates are kept.
"""
VALUE_FAILURE = """\
AssertionError: still gives the value the issue reports: [3, 1, 3]
assert '[3, 1, 3]' not in ('[3, 1, 3]', '[3, 1, 3]')
tests/test_dedupe_keeps.py:7: in test_dedupe_keeps
    assert '[3, 1, 3]' not in (str(result), repr(result)), 'still gives the value ...'
E   AssertionError: still gives the value the issue reports: [3, 1, 3]
E   assert '[3, 1, 3]' not in ('[3, 1, 3]', '[3, 1, 3]')"""


def test_showing_the_wrong_value_the_issue_shows_reproduces() -> None:
    reason = reason_of("dedupe keeps duplicates", VALUE_ISSUE, ("[3, 1, 3]",))
    verdict, why, relevance = judge_test(
        parse_failure(VALUE_FAILURE), reason, ["tests/test_dedupe_keeps.py"]
    )
    assert verdict is DraftOutcome.REPRODUCES
    assert "wrong value" in why and relevance == 3.0


def test_own_assertion_about_the_issue_words_reproduces_when_no_exception_is_shown() -> None:
    reason = reason_of(
        "Rounding of halves goes down",
        "`half_up` rounds 2.5 down to 2, halves should round up.",
    )
    detail = (
        "AssertionError: halves should round up\n"
        "assert 2 == 3\n"
        "tests/test_rounding_halves.py:5: in test_rounding_halves\n"
        "    assert half_up(2.5) == 3, 'halves should round up'\n"
        "E   AssertionError: halves should round up\n"
        "E   assert 2 == 3"
    )
    verdict, why, relevance = judge_test(
        parse_failure(detail), reason, ["tests/test_rounding_halves.py"]
    )
    assert verdict is DraftOutcome.REPRODUCES
    assert "describes" in why and 1.0 < relevance <= 2.0
    # The same assertion raised outside the draft's files is no assertion of its own.
    assert judge_test(parse_failure(detail), reason, ["tests/test_other.py"])[0] is (
        DraftOutcome.UNRELATED
    )


def test_own_assertion_is_not_enough_when_the_issue_shows_an_exception() -> None:
    detail = (
        "assert 2 == 3\n"
        "tests/test_parse_negative.py:5: in test_parse_negative\n"
        "    assert parse_number('-3') + 5 == 3\n"
        "E   assert 2 == 3"
    )
    assert judge(detail) is DraftOutcome.UNRELATED


def test_a_library_module_whose_name_ends_the_test_file_name_is_not_the_test() -> None:
    detail = (
        "NameError: name 'PY2' is not defined\n"
        "test_six.py:6: in test_parse_negative\n"
        "    six.ensure_text(parse_number('-3'))\n"
        "six.py:88: in ensure_text\n"
        "    if PY2:\n"
        "E   NameError: name 'PY2' is not defined"
    )
    failure = parse_failure(detail)
    assert failure.raised_in == "six.py"
    verdict, _, _ = judge_test(failure, RAISING, ["test_six.py"])
    assert verdict is DraftOutcome.UNRELATED


# --- judge_run -----------------------------------------------------------------------------------


def run(outcomes: dict[str, Outcome], failures: dict[str, str] | None = None) -> TestRun:
    return TestRun(outcomes=outcomes, failures=failures or {})


def test_run_reproduces_with_its_failing_tests() -> None:
    second = f"{DRAFT}::test_parse_negative_zero"
    result = judge_run(
        run(
            {TEST_ID: Outcome.FAILED, second: Outcome.FAILED, f"{DRAFT}::test_ok": Outcome.PASSED},
            {TEST_ID: SAME_EXCEPTION, second: OTHER_MESSAGE},
        ),
        [DRAFT],
        RAISING,
    )
    assert result.outcome is DraftOutcome.REPRODUCES
    assert result.failing_tests == (TEST_ID,)
    assert result.excerpt == "ValueError: not a number: '-7'"
    assert result.relevance > 3.0


def test_run_where_every_test_passes() -> None:
    result = judge_run(run({TEST_ID: Outcome.PASSED}), [DRAFT], RAISING)
    assert (result.outcome, result.failing_tests) == (DraftOutcome.PASSES, ())


def test_run_broken_wins_over_unrelated() -> None:
    other = f"{DRAFT}::test_other"
    result = judge_run(
        run(
            {TEST_ID: Outcome.FAILED, other: Outcome.ERROR},
            {TEST_ID: OTHER_MESSAGE, other: FIXTURE_MISSING},
        ),
        [DRAFT],
        RAISING,
    )
    assert result.outcome is DraftOutcome.BROKEN
    assert result.reason.startswith(other)


def test_run_unrelated_failure() -> None:
    result = judge_run(run({TEST_ID: Outcome.FAILED}, {TEST_ID: OTHER_MESSAGE}), [DRAFT], RAISING)
    assert result.outcome is DraftOutcome.UNRELATED
    assert result.excerpt.startswith("ValueError: invalid literal")


def test_run_collection_error_of_the_draft_module() -> None:
    result = judge_run(run({DRAFT: Outcome.ERROR}, {DRAFT: SYNTAX_ERROR}), [DRAFT], RAISING)
    assert result.outcome is DraftOutcome.BROKEN


def test_run_patch_not_applied() -> None:
    refused = (PatchResult("draft.diff", applied=False),)
    result = judge_run(TestRun({}, patches_applied=False, patches=refused), [DRAFT], RAISING)
    assert result.outcome is DraftOutcome.NOT_APPLIED


def test_a_run_that_died_before_reporting_is_an_error_not_a_patch_that_did_not_apply() -> None:
    # Stopped at its deadline: the sandbox said nothing of its patches.
    dead = TestRun(
        {},
        patches_applied=False,
        install_ok=False,
        limits_hit=frozenset({"timeout"}),
        error="the run passed its deadline (120 s) and was stopped",
    )
    result = judge_run(dead, [DRAFT], RAISING)
    assert result.outcome is DraftOutcome.ERROR
    assert "deadline" in result.reason


def test_run_limits_hit_install_failure_and_sandbox_error() -> None:
    limited = replace(
        run({TEST_ID: Outcome.FAILED}, {TEST_ID: SAME_EXCEPTION}),
        limits_hit=frozenset({"timeout", "memory"}),
        log_excerpt="Killed",
    )
    result = judge_run(limited, [DRAFT], RAISING)
    assert result.outcome is DraftOutcome.ERROR
    assert "memory, timeout" in result.reason and result.excerpt == "Killed"
    assert judge_run(TestRun({}, install_ok=False), [DRAFT], RAISING).outcome is DraftOutcome.ERROR
    errored = judge_run(TestRun({}, error="container vanished"), [DRAFT], RAISING)
    assert errored.outcome is DraftOutcome.ERROR and "container vanished" in errored.reason


def test_run_only_the_drafts_own_test_files_count() -> None:
    existing = "tests/test_calc.py::test_mean"
    outcomes = {existing: Outcome.FAILED, TEST_ID: Outcome.PASSED}
    failures = {existing: SAME_EXCEPTION}
    assert judge_run(run(outcomes, failures), [DRAFT], RAISING).outcome is DraftOutcome.PASSES
    # A draft none of whose tests ran is broken, whatever else failed.
    result = judge_run(run({existing: Outcome.FAILED}, failures), [DRAFT], RAISING)
    assert result.outcome is DraftOutcome.BROKEN
    assert "collected no test" in result.reason


def _plain_failure(test_line: str, report: str) -> str:
    # pytest's report of a rewritten assertion without a message, as JUnit carries it.
    lines = report.split("\n")
    return "\n".join(
        [
            lines[0],
            "def test_mean():",
            "        result = mean([1, 2])",
            f">       {test_line}",
            *(f"E       {line}" for line in lines),
            "",
            "tests/test_mean.py:5: AssertionError",
        ]
    )


@pytest.mark.parametrize(
    ("test_line", "report", "wrong", "expected", "why"),
    [
        # Numbers with a tolerance: the obtained side, and pytest's Obtained/Expected lines.
        (
            "assert result == pytest.approx(1.5)",
            "assert 1 == 1.5 ± 1.5e-06\n\ncomparison failed\nObtained: 1\nExpected: 1.5 ± 1.5e-06",
            "1",
            "",
            ISSUES_WRONG_VALUE,
        ),
        ("assert result == 2", "assert 1 == 2", "", "2", NOT_THE_EXPECTED_VALUE),
        ("assert result is None", "assert 1 is None", "1", "", ISSUES_WRONG_VALUE),
        # A printed form the issue expects: the expected side is tested for membership.
        (
            "assert 'x + 1' in (str(result), repr(result))",
            "assert 'x + 1' in ('x', \"'x'\")",
            "",
            "x + 1",
            NOT_THE_EXPECTED_VALUE,
        ),
        # A sum the issue expects, compared with its terms in any order: pytest's report names
        # the issue's value as the argument of the sorting on the expected side.
        (
            "assert _any_order('x + 1') in (_any_order(str(result)), _any_order(repr(result)))",
            "assert '+1 +x' in ('+x', '+x')\n +  where '+1 +x' = _any_order('x + 1')",
            "",
            "x + 1",
            NOT_THE_EXPECTED_VALUE,
        ),
        # A truth value asserted as itself: pytest shows the value got, the other one.
        ("assert result", "assert False", "", "True", NOT_THE_EXPECTED_VALUE),
        ("assert result", "assert False", "False", "", ISSUES_WRONG_VALUE),
        ("assert not result", "assert not True", "True", "", ISSUES_WRONG_VALUE),
        ("assert not result", "assert not True", "", "False", NOT_THE_EXPECTED_VALUE),
        ("assert result", "assert np.False_", "", "True", NOT_THE_EXPECTED_VALUE),
        # The value the issue calls wrong, still printed.
        (
            "assert '1' not in (str(result), repr(result))",
            "assert '1' not in ('1', '1')",
            "1",
            "",
            ISSUES_WRONG_VALUE,
        ),
    ],
)
def test_a_plain_assertion_shows_its_sides_in_pytests_report(
    test_line: str, report: str, wrong: str, expected: str, why: str
) -> None:
    """Drafted pytest tests carry no message: pytest's report of the rewritten assertion shows
    the value obtained and the one expected, and a short value counts only on its side."""
    statement = f"`mean([1, 2])` gives `{wrong or 'a wrong value'}`" + (
        f", it should give `{expected}`." if expected else "."
    )
    reason = replace(
        reason_of("mean is wrong", statement, (wrong,) if wrong else ()),
        expected_values=(expected,) if expected else (),
    )
    detail = _plain_failure(test_line, report)
    verdict, said, _ = judge_test(parse_failure(detail), reason, ["tests/test_mean.py"])
    assert verdict is DraftOutcome.REPRODUCES and said == why
    # The same report names neither side when the issue's values are other ones.
    other = replace(reason, wrong_values=("7",), expected_values=("8",), text_words=frozenset())
    assert judge_test(parse_failure(detail), other, ["tests/test_mean.py"])[0] is not (
        DraftOutcome.REPRODUCES
    )


def test_a_commands_output_still_showing_the_reported_line_reproduces() -> None:
    """A drafted command's test searches its output for the line the issue reports as wrong;
    pytest's report shows the match (cut at 50 characters) and the pattern that found it."""
    reported = "SKIPPED [1] /home/me/pytest/skipping.py:238: unconditional skip"
    pattern = loose_pattern(reported)
    match = (
        "<re.Match object; span=(5, 86), match='SKIPPED [1] ../../src/_pytest/skipping.py:239: u>"
    )
    report = (
        f"assert not {match}\n +  where {match} = <function search at 0x7f49>"
        f"({pattern!r}, '...')\n +    where <function search at 0x7f49> = re.search"
    )
    detail = _plain_failure(f"assert not re.search({pattern!r}, output)", report)
    reason = reason_of("skip location", "It shows the wrong location.", (reported,))
    verdict, said, _ = judge_test(parse_failure(detail), reason, ["tests/test_mean.py"])
    assert verdict is DraftOutcome.REPRODUCES and said == ISSUES_WRONG_VALUE
    # Another line's pattern, a search that found nothing, or a file not the test's: not so.
    other = replace(
        reason, wrong_values=("SKIPPED [1] conftest.py:3: other",), text_words=frozenset()
    )
    assert judge_test(parse_failure(detail), other, ["tests/test_mean.py"])[0] is not (
        DraftOutcome.REPRODUCES
    )
    nothing = _plain_failure(
        f"assert re.search({pattern!r}, output)",
        f"assert None\n +  where None = <function search at 0x7f49>({pattern!r}, '...')",
    )
    quiet = replace(reason, text_words=frozenset())
    assert judge_test(parse_failure(nothing), quiet, ["tests/test_mean.py"])[0] is not (
        DraftOutcome.REPRODUCES
    )
    assert judge_test(parse_failure(detail), quiet, ["x.py"])[0] is not DraftOutcome.REPRODUCES
