"""Snippets: an issue's code blocks and sessions repaired and split into runnable statements."""

from __future__ import annotations

import ast

import pytest

from reprobot.generation.drafter.snippets import (
    Program,
    Step,
    code_programs,
    raising_step,
    repair,
    session_programs,
    shown_value_step,
    split_statements,
)
from reprobot.generation.issue.report import parse_issue

# --- repair --------------------------------------------------------------------------------------


def test_repair_keeps_valid_code_as_it_is() -> None:
    source = "from kettle import boil\n\nboil(3)"
    assert repair(source) == source


def test_repair_comments_out_a_line_of_prose_between_statements() -> None:
    text = "from kettle import boil\nThen boil some water, and it blows up:\nboil(3)\n"
    fixed = repair(text)
    assert fixed == ("from kettle import boil\n# Then boil some water, and it blows up:\nboil(3)")
    ast.parse(fixed)


def test_repair_comments_prose_at_its_own_indentation() -> None:
    text = "def heat(k):\n    k.boil()\n    this line is what the docs say should happen\n"
    assert repair(text) == (
        "def heat(k):\n    k.boil()\n    # this line is what the docs say should happen"
    )


def test_repair_removes_prompt_leftovers_and_dedents() -> None:
    text = "    >>> import kettle\n    >>> k = kettle.Kettle(\n    ...     volume=2)\n"
    assert repair(text) == "import kettle\nk = kettle.Kettle(\n    volume=2)"
    ipython = "In [1]: import kettle\n   ...: kettle.boil(3)\n"
    assert repair(ipython) == "import kettle\nkettle.boil(3)"


def test_repair_normalises_crlf_and_tabs() -> None:
    assert repair("if True:\r\n\tx = 1\r\n") == "if True:\n    x = 1"


def test_repair_cuts_a_marker_comment_that_does_not_parse() -> None:
    text = "kettle.boil(3)  <--- this is not handled correctly\nkettle.pour()"
    assert repair(text) == "kettle.boil(3)\nkettle.pour()"
    assert repair("kettle.boil(3)  ← raises here\nkettle.pour()") == "kettle.boil(3)\nkettle.pour()"
    # A marker that is already a comment is valid Python and stays.
    assert repair("kettle.boil(3)  # <- the bug") == "kettle.boil(3)  # <- the bug"


def test_repair_cuts_a_one_word_marker_comment() -> None:
    assert repair("result = kettle.boil(3)  <--- wrong\nprint(result)") == (
        "result = kettle.boil(3)\nprint(result)"
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\n  ",
        # A syntax error inside a line that is already a comment cannot be repaired.
        "for item in items:\n# nothing here yet\n",
        # More lines of prose than repairs allowed: this is not code at all.
        "\n".join(f"step {k} of the install guide says to run it twice" for k in range(14)),
    ],
)
def test_repair_gives_up_on_text_that_is_not_code(text: str) -> None:
    assert repair(text) is None


# --- split_statements ----------------------------------------------------------------------------


def test_split_statements_hoists_imports_from_anywhere() -> None:
    source = (
        "from __future__ import annotations\n"
        "import os\n"
        "x = 1\n"
        "from kettle import (\n"
        "    boil,\n"
        "    pour,\n"
        ")\n"
        "boil(x)\n"
    )
    imports, body = split_statements(source)
    assert imports == ["import os", "from kettle import (\n    boil,\n    pour,\n)"]
    assert body == ["x = 1", "boil(x)"]


def test_split_statements_unwraps_the_main_guard() -> None:
    source = (
        "import sys\n"
        "\n"
        "def main():\n"
        "    return 1\n"
        "\n"
        'if __name__ == "__main__":\n'
        "    from kettle import boil\n"
        "    boil(main())\n"
        "    sys.exit(0)\n"
    )
    imports, body = split_statements(source)
    assert imports == ["import sys", "from kettle import boil"]
    assert body == ["def main():\n    return 1", "boil(main())", "sys.exit(0)"]


def test_split_statements_keeps_decorators_with_their_function_and_class() -> None:
    source = (
        "import functools\n"
        "@functools.lru_cache(maxsize=None)\n"
        "@staticmethod\n"
        "def cached(n):\n"
        "    return n\n"
        "@dataclass(frozen=True)\n"
        "class Point:\n"
        "    x: int\n"
    )
    _, body = split_statements(source)
    assert body == [
        "@functools.lru_cache(maxsize=None)\n@staticmethod\ndef cached(n):\n    return n",
        "@dataclass(frozen=True)\nclass Point:\n    x: int",
    ]


def test_split_statements_separates_statements_on_one_line() -> None:
    imports, body = split_statements("import kettle; kettle.boil(3)\n")
    assert imports == ["import kettle"]
    assert body == ["kettle.boil(3)"]


# --- code_programs -------------------------------------------------------------------------------

CODE_ISSUE = """\
### Describe the bug

`brew` fails for green tea.

```python
from teapot import brew
```

Then:

```python
cup = brew("green", minutes=3)
print(cup.strength)
```

```
Traceback (most recent call last):
  File "/home/me/repro.py", line 3, in <module>
    cup = brew("green", minutes=3)
  File "/home/me/.venv/lib/python3.11/site-packages/teapot/brewing.py", line 41, in brew
    raise ValueError(f"unknown tea {kind!r}")
ValueError: unknown tea 'green'
```

What I tried afterwards, which works:

```python
print(brew("black", minutes=3).strength)
```

```diff
-    KINDS = ("black",)
+    KINDS = ("black", "green")
```
"""


def test_code_programs_take_the_blocks_before_the_first_traceback() -> None:
    programs = code_programs(parse_issue("brew() fails for green tea", CODE_ISSUE))
    assert [p.origin for p in programs] == ["code", "code"]
    whole, last = programs
    assert whole.imports == ("from teapot import brew",)
    assert [s.source for s in whole.steps] == [
        'cup = brew("green", minutes=3)',
        "print(cup.strength)",
    ]
    # The last block before the traceback, alone, as a second try.
    assert last.imports == ()
    assert [s.source for s in last.steps] == [s.source for s in whole.steps]
    assert "black" not in whole.source and "KINDS" not in whole.source


def test_code_programs_use_every_block_without_a_traceback() -> None:
    body = (
        "Setup:\n\n```python\nimport teapot\npot = teapot.Pot(size=2)\n```\n\n"
        "Then this gives the wrong temperature:\n\n```python\nprint(pot.temperature())\n```\n"
    )
    whole, last = code_programs(parse_issue("wrong temperature", body))
    assert whole.source == "import teapot\npot = teapot.Pot(size=2)\nprint(pot.temperature())"
    assert last.source == "print(pot.temperature())"


def test_code_programs_single_block_gives_one_program() -> None:
    body = "```python\nimport teapot\nteapot.Pot(size=-1)\n```\n"
    (program,) = code_programs(parse_issue("negative sizes accepted", body))
    assert program == Program("code", ("import teapot",), (Step("teapot.Pot(size=-1)"),))


def test_code_programs_ignore_sessions_and_prose_only_issues() -> None:
    body = "```pycon\n>>> import teapot\n>>> teapot.Pot(size=-1)\nPot(size=-1)\n```\n"
    assert code_programs(parse_issue("t", body)) == []
    assert code_programs(parse_issue("t", "The docs page about pots has a typo.")) == []


# --- session_programs ----------------------------------------------------------------------------

SESSION_ISSUE = """\
Rounding is off for halves:

```pycon
>>> import roundy
>>> roundy.__version__
'2.3.1'
>>> roundy.half_up(0.5)
0
>>> roundy.half_up(1.5)  # <-- this one is wrong
1
>>> roundy.half_up(2.5)
3
>>> import sys
>>> sys.version
'3.11.4 (main, Jun  7 2023, 12:45:48) [GCC 11.3.0]'
```
"""


def test_session_programs_carry_outputs_and_hoist_imports() -> None:
    (program,) = session_programs(parse_issue("half_up rounds down", SESSION_ISSUE))
    assert program.origin == "session"
    assert program.imports == ("import roundy", "import sys")
    # An import-only statement is no step of its own.
    assert [(s.source, s.output) for s in program.steps] == [
        ("roundy.__version__", "'2.3.1'"),
        ("roundy.half_up(0.5)", "0"),
        ("roundy.half_up(1.5)", "1"),
        ("roundy.half_up(2.5)", "3"),
        ("sys.version", "'3.11.4 (main, Jun  7 2023, 12:45:48) [GCC 11.3.0]'"),
    ]
    # The reporter's marker is cut from the source and remembered.
    assert [s.marked for s in program.steps] == [False, False, True, False, False]


def test_session_programs_one_per_session() -> None:
    body = (
        "On 1.0:\n\n```\n>>> from roundy import half_up\n>>> half_up(2.5)\n3\n```\n\n"
        "On 2.0:\n\n```\n>>> from roundy import half_up\n>>> half_up(2.5)\n2\n```\n"
    )
    first, second = session_programs(parse_issue("regression in half_up", body))
    assert first.steps == (Step("half_up(2.5)", "3"),)
    assert second.steps == (Step("half_up(2.5)", "2"),)


def test_a_session_starts_with_the_earlier_code_that_defines_its_names() -> None:
    body = (
        "```python\nfrom calc import mean, Series\ns = Series([1, 2])\n```\n\n"
        "This works:\n\n```\n>>> mean(s)\n1.5\n```\n\n"
        "Nested, it does not:\n\n```\n>>> t = Series([s])\n>>> mean(t)\n1\n```\n\n"
        "Alone, it needs nothing:\n\n```\n>>> import calc\n>>> calc.mean([1])\n1\n```\n"
    )
    first, second, alone = session_programs(parse_issue("mean of a nested Series", body))
    assert first.imports == ("from calc import mean, Series",)
    assert first.steps == (Step("s = Series([1, 2])"), Step("mean(s)", "1.5"))
    # Earlier sessions come in once each, without the values they showed.
    assert second.steps == (
        Step("s = Series([1, 2])"),
        Step("mean(s)"),
        Step("t = Series([s])"),
        Step("mean(t)", "1"),
    )
    assert alone.imports == ("import calc",)
    assert alone.steps == (Step("calc.mean([1])", "1"),)


def test_a_session_uses_no_earlier_code_that_defines_nothing_it_needs() -> None:
    body = (
        "```python\nfrom calc import mean\nx = mean([1, 2])\n```\n\n"
        "```\n>>> y = 3\n>>> y + 1\n5\n```\n"
    )
    (program,) = session_programs(parse_issue("t", body))
    assert program.steps == (Step("y = 3"), Step("y + 1", "5"))


def test_session_programs_skip_a_session_of_imports_only() -> None:
    body = "```\n>>> import roundy\n>>> from roundy import half_up\n```\n"
    assert session_programs(parse_issue("t", body)) == []


# --- raising_step --------------------------------------------------------------------------------


def session(body: str) -> Program:
    (program,) = session_programs(parse_issue("an issue", body))
    return program


def test_raising_step_finds_the_statement_with_a_traceback() -> None:
    program = session(
        "```\n"
        ">>> from roundy import half_up\n"
        ">>> x = half_up(0.5)\n"
        '>>> half_up("a")\n'
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        "TypeError: must be real number, not str\n"
        ">>> x\n"
        "0\n"
        "```\n"
    )
    assert raising_step(program) == 1
    assert program.steps[1].source == 'half_up("a")'


def test_raising_step_accepts_a_bare_exception_line() -> None:
    program = session(
        "```\n>>> from roundy import half_up\n>>> half_up(None)\n"
        "roundy.errors.RoundingError: cannot round None\n```\n"
    )
    assert raising_step(program) == 0


def test_raising_step_none_when_nothing_raised() -> None:
    assert raising_step(session(SESSION_ISSUE)) is None


# --- shown_value_step ----------------------------------------------------------------------------


def test_shown_value_step_the_marked_step_wins() -> None:
    program = session(SESSION_ISSUE)
    assert shown_value_step(program) == 2
    assert program.steps[2].source == "roundy.half_up(1.5)"


def test_shown_value_step_skips_trailing_version_queries() -> None:
    program = session(
        "```\n>>> from roundy import half_up\n>>> half_up(0.5)\n0\n>>> half_up(2.5)\n2\n"
        ">>> import roundy; roundy.__version__\n'2.3.1'\n>>> import platform\n"
        ">>> platform.python_version()\n'3.12.1'\n```\n"
    )
    assert shown_value_step(program) == 1
    assert program.steps[1] == Step("half_up(2.5)", "2")


def test_shown_value_step_earlier_values_are_context() -> None:
    program = session(
        "```\n>>> from roundy import half_up\n>>> half_up(0.5)\n0\n>>> half_up(1.5)\n2\n"
        ">>> half_up(2.5)\n2\n```\n"
    )
    assert shown_value_step(program) == 2


def test_shown_value_step_none_when_the_last_statement_shows_nothing() -> None:
    # The values printed before are context; the last step (an assignment) prints nothing.
    program = session(
        "```\n>>> from roundy import half_up\n>>> half_up(0.5)\n0\n>>> r = half_up(1.5)\n```\n"
    )
    assert shown_value_step(program) is None


def test_shown_value_step_none_when_the_last_statement_raised() -> None:
    program = session(
        "```\n>>> from roundy import half_up\n>>> half_up(0.5)\n0\n>>> half_up([])\n"
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        "TypeError: must be real number, not list\n```\n"
    )
    assert shown_value_step(program) is None


def test_shown_value_step_marked_statement_needs_a_value() -> None:
    program = session(
        "```\n>>> from roundy import half_up\n>>> r = half_up(0.5)  # <-- here\n>>> r\n0\n```\n"
    )
    assert program.steps[0].marked
    assert shown_value_step(program) == 1


def test_repair_reads_python_2_print_statements_as_calls() -> None:
    assert (
        repair("res = f()\nprint res\nprint 'a', res") == "res = f()\nprint(res)\nprint('a', res)"
    )
    # Already a call, or valid Python 3 as it stands ("print >>f, x" is a tuple).
    assert repair("print(res)\nprint >>f, res") == "print(res)\nprint >>f, res"
