"""Tracebacks in issue text: found in code blocks, sessions and prose; frames and the exception."""

from __future__ import annotations

from reprobot.generation.issue.report import (
    IssueReport,
    parse_issue,
)
from reprobot.generation.issue.tracebacks import Frame, find_tracebacks, parse_exception_line


def parse(body: str, title: str = "A bug") -> IssueReport:
    return parse_issue(title, body)


# --- tracebacks ----------------------------------------------------------------------------------


TRACEBACK = """\
Traceback (most recent call last):
  File "/home/u/run.py", line 8, in <module>
    main()
  File "/venv/lib/python3.11/site-packages/kettle/core.py", line 41, in main
    raise kettle.errors.BoilError(
    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
kettle.errors.BoilError: could not boil
the water is frozen
  (temperature -4)

this line is not part of the message
"""


def test_traceback_with_frames_and_multiline_message() -> None:
    (traceback,) = find_tracebacks(TRACEBACK)
    assert traceback.exc_type == "kettle.errors.BoilError"
    assert traceback.message == "could not boil\nthe water is frozen\n  (temperature -4)"
    assert traceback.frames == (
        Frame("/home/u/run.py", 8, "<module>", "main()"),
        Frame(
            "/venv/lib/python3.11/site-packages/kettle/core.py",
            41,
            "main",
            "raise kettle.errors.BoilError(",
        ),
    )
    assert traceback.text.startswith("Traceback") and traceback.text.endswith("(temperature -4)")


def test_traceback_outside_code_blocks_is_found() -> None:
    report = parse("I ran it and got\n\n" + TRACEBACK + "\nAny idea?")
    assert report.final_exception == "kettle.errors.BoilError"
    assert report.code_blocks == ()


def test_chained_tracebacks() -> None:
    body = (
        "```\nTraceback (most recent call last):\n"
        '  File "k.py", line 3, in pour\n    return cup[0]\nIndexError: list index out of range\n\n'
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        '  File "k.py", line 5, in pour\n    raise EmptyError("no tea")\n'
        "kettle.EmptyError: no tea\n```"
    )
    report = parse(body)
    assert [t.exc_type for t in report.tracebacks] == ["IndexError", "kettle.EmptyError"]
    assert report.final_traceback is report.tracebacks[-1]
    assert report.final_exception == "kettle.EmptyError"
    assert report.tracebacks[1].frames[0].source == 'raise EmptyError("no tea")'


def test_exception_without_message_and_syntax_error() -> None:
    text = (
        'Traceback (most recent call last):\n  File "a.py", line 2, in <module>\n'
        "    time.sleep(9)\nKeyboardInterrupt\n\n"
        'Traceback (most recent call last):\n  File "b.py", line 1\n    def f(:\n'
        "          ^\nSyntaxError: invalid syntax\n"
    )
    interrupt, syntax = find_tracebacks(text)
    assert (interrupt.exc_type, interrupt.message) == ("KeyboardInterrupt", "")
    assert syntax.frames == (Frame("b.py", 1, None, "def f(:"),)
    assert syntax.exc_type == "SyntaxError"


def test_ipython_traceback() -> None:
    text = (
        "---------------------------------------------------------------------------\n"
        "ZeroDivisionError                         Traceback (most recent call last)\n"
        "Cell In[2], line 1\n----> 1 kettle.ratio(0)\n\n"
        "File ~/kettle/core.py:17, in ratio(x)\n     16 def ratio(x):\n---> 17     return 1 / x\n\n"
        "ZeroDivisionError: division by zero\n"
    )
    (traceback,) = find_tracebacks(text)
    assert traceback.exc_type == "ZeroDivisionError"
    assert traceback.frames == (
        Frame("Cell In[2]", 1, None, "kettle.ratio(0)"),
        Frame("~/kettle/core.py", 17, "ratio(x)", "return 1 / x"),
    )


def test_pytest_e_lines() -> None:
    body = (
        "```\n    def test_boil():\n>       assert kettle.boil(1) == 2\n"
        "E       assert 1 == 2\nE        +  where 1 = boil(1)\n\n"
        "tests/test_k.py:4: AssertionError\n"
        "____ test_pour ____\nE   ValueError: bad cup\nE   size 3\n```"
    )
    first, second = parse(body).tracebacks
    assert (first.exc_type, first.message) == (
        "AssertionError",
        "assert 1 == 2\n +  where 1 = boil(1)",
    )
    assert (second.exc_type, second.message) == ("ValueError", "bad cup\nsize 3")
    assert first.frames == () and second.frames == ()


def test_pytest_explicit_exception_lines() -> None:
    text = "E   AssertionError: assert 1 == 2\nx\nE       ValueError: bad\nkettle.py:3: ValueError"
    first, second = find_tracebacks(text)
    assert (first.exc_type, first.message) == ("AssertionError", "assert 1 == 2")
    assert (second.exc_type, second.message) == ("ValueError", "bad")


def test_native_pytest_traceback_ends_at_the_section_rule() -> None:
    text = (
        'Traceback (most recent call last):\n  File "t.py", line 2, in test_pour\n'
        "    pour()\nOSError: spill\n______ test_boil ______\n"
    )
    (traceback,) = find_tracebacks(text)
    assert traceback.message == "spill"


def test_exception_group() -> None:
    text = (
        "  + Exception Group Traceback (most recent call last):\n"
        '  |   File "k.py", line 9, in <module>\n  |     brew()\n'
        "  | ExceptionGroup: two failures (2 sub-exceptions)\n"
        "  +-+---------------- 1 ----------------\n"
        "    | Traceback (most recent call last):\n"
        '    |   File "k.py", line 3, in boil\n    |     raise TooHotError(t)\n'
        "    | TooHotError: 120\n"
        "    +---------------- 2 ----------------\n"
        "    | OSError: lid\n"
        "    +------------------------------------\n"
    )
    group, hot = find_tracebacks(text)
    assert (group.exc_type, group.message) == ("ExceptionGroup", "two failures (2 sub-exceptions)")
    assert group.frames == (Frame("k.py", 9, "<module>", "brew()"),)
    assert (hot.exc_type, hot.message) == ("TooHotError", "120")
    assert hot.frames == (Frame("k.py", 3, "boil", "raise TooHotError(t)"),)


def test_bare_exception_line_in_an_output_block() -> None:
    body = (
        "```\n$ kettle --time 1h30\nValueError: invalid literal for int() with base 10: '1h30'\n```"
    )
    report = parse(body)
    (traceback,) = report.tracebacks
    assert traceback.exc_type == "ValueError"
    assert traceback.message == "invalid literal for int() with base 10: '1h30'"


def test_bare_lines_need_an_exception_like_name_and_an_output_block() -> None:
    assert parse("```\nNote: this is fine\nError: vague\n```").tracebacks == ()
    assert parse("ValueError: in prose this is only a mention").tracebacks == ()
    assert parse("```python\nx: int = 1\nTypeError: int\n```").tracebacks == ()
    (warning,) = parse("```text\nkettle.HotWarning: careful\n```").tracebacks
    assert warning.exc_type == "kettle.HotWarning"


def test_parse_exception_line() -> None:
    assert parse_exception_line("a.b.CError: x: y") == ("a.b.CError", "x: y")
    assert parse_exception_line("__main__.f.<locals>.Oops: no") == (
        "__main__.f.<locals>.Oops",
        "no",
    )
    assert parse_exception_line("StopIteration") == ("StopIteration", "")
    assert parse_exception_line("not an exception line") is None


def test_traceback_cut_before_the_exception_keeps_its_frames() -> None:
    text = 'Traceback (most recent call last):\n  File "k.py", line 3, in pour\n    go()\n\nNote: x'
    (traceback,) = find_tracebacks(text)
    assert traceback.exc_type == "" and traceback.frames[0].line == 3
    assert parse("```\n" + text + "\n```").final_exception is None
