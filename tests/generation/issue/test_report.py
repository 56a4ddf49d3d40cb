"""Parsing issue text into an IssueReport: code blocks, sessions, tracebacks, expectations."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.expectations import Expectation
from reprobot.generation.issue.report import (
    MAX_BODY_CHARS,
    CodeBlock,
    IssueReport,
    parse_issue,
)


def parse(body: str, title: str = "A bug") -> IssueReport:
    return parse_issue(title, body)


def pair(report: IssueReport) -> set[tuple[str | None, str | None]]:
    return {(item.expected, item.actual) for item in report.expectations}


# --- code blocks ---------------------------------------------------------------------------------


def test_fenced_blocks_with_and_without_language() -> None:
    body = (
        "Run this:\n\n```Python title='demo.py'\nimport kettle\nkettle.boil(3)\n```\n\n"
        "It prints:\n\n```\nwater is cold\n```\n"
    )
    code, output = parse(body).code_blocks
    assert code == CodeBlock("import kettle\nkettle.boil(3)", "python", "fenced", 3)
    assert code.is_python and not code.is_output
    assert output.language is None and output.text == "water is cold"
    assert output.is_output and not output.is_python


def test_tilde_fence_and_longer_backtick_fence() -> None:
    body = "~~~~yaml\nkey: 1\n~~~~\n\n````md\n```python\nnot closed here\n```\n````\n"
    yaml, markdown = parse(body).code_blocks
    assert (yaml.language, yaml.text) == ("yaml", "key: 1")
    assert not yaml.is_output and not yaml.is_python
    assert markdown.text == "```python\nnot closed here\n```"


def test_unclosed_fence_runs_to_the_end() -> None:
    (block,) = parse("Steps:\n```py\nx = compute()\nprint(x)\n").code_blocks
    assert block.text == "x = compute()\nprint(x)\n"
    assert block.language == "py" and block.is_python


def test_fence_indented_in_a_list_item_is_dedented() -> None:
    body = "1. Save this:\n   ```python\n   def f():\n       return 1\n   ```\n2. Run it"
    (block,) = parse(body).code_blocks
    assert block.text == "def f():\n    return 1"


def test_indented_block_after_blank_line() -> None:
    body = "Reproduce with\n\n    import kettle\n    kettle.boil(-1)\n\n\tprint('tab')\n\nDone."
    (block,) = parse(body).code_blocks
    assert block.kind == "indented" and block.line == 3
    assert block.text == "import kettle\nkettle.boil(-1)\n\nprint('tab')"
    assert block.is_python


def test_indented_lines_in_a_list_continue_the_item() -> None:
    body = "- first item\n\n    more text for the first item\n\nA paragraph.\n\n    real_code()\n"
    (block,) = parse(body).code_blocks
    assert block.text == "real_code()"


def test_untagged_python_is_recognized_by_parsing_or_signals() -> None:
    body = (
        "```\nfrom kettle import Pot\nPot().heat()\n```\n"
        "```\nimport kettle\nprint 'python two'\n```\n"
        "```\n[1, 2, 3]\nTrue\n```\n"
        "```\nKeyError: 'spout'\n```\n"
    )
    parses, signals, values, error = parse(body).code_blocks
    assert parses.is_python and signals.is_python
    assert not values.is_python and values.is_output
    assert not error.is_python and error.is_traceback


def test_traceback_tagged_python_is_output() -> None:
    body = '```python\nTraceback (most recent call last):\n  File "a.py", line 1\nOSError\n```'
    (block,) = parse(body).code_blocks
    assert not block.is_python and block.is_output and block.is_traceback


def test_code_followed_by_its_traceback_in_one_block() -> None:
    body = (
        "```\nimport kettle\nkettle.pour()\n"
        'Traceback (most recent call last):\n  File "x.py", line 2, in <module>\n'
        "RuntimeError: empty\n```"
    )
    (block,) = parse(body).code_blocks
    assert block.is_python and block.is_traceback
    assert parse(body).final_exception == "RuntimeError"


def test_shell_blocks_are_output_and_config_blocks_are_neither() -> None:
    body = "```console\n$ kettle --boil\nerror: no water\n```\n```toml\n[tool.kettle]\nx = 1\n```"
    console, toml = parse(body).code_blocks
    assert console.is_output and not console.is_python
    assert not toml.is_output and not toml.is_python
    assert parse(body).output_blocks == (console,)


# --- sessions ------------------------------------------------------------------------------------


def test_session_with_continuation_and_output() -> None:
    body = (
        "```pycon\n>>> import kettle\n>>> def f(x):\n...     return kettle.boil(x)\n...\n"
        ">>> f(3)\n'hot'\n'still hot'\n>>> f(-1)\nTraceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\nValueError: negative\n>>>\n```'
    )
    report = parse(body)
    (session,) = report.sessions
    assert [step.source for step in session.statements] == [
        "import kettle",
        "def f(x):\n    return kettle.boil(x)",
        "f(3)",
        "f(-1)",
    ]
    assert session.statements[2].output == "'hot'\n'still hot'"
    assert session.statements[3].output.endswith("ValueError: negative")
    assert report.code_blocks[0].is_session and report.code_blocks[0].is_python
    assert report.final_exception == "ValueError"


def test_ipython_session() -> None:
    body = (
        "```\nIn [1]: import kettle\n\nIn [2]: for i in range(2):\n   ...:     print(i)\n"
        "   ...: \n0\n1\n\nIn [3]: kettle.level()\nOut[3]: 0.5\n```"
    )
    (session,) = parse(body).sessions
    steps = session.statements
    assert steps[0].source == "import kettle" and steps[0].output == ""
    assert steps[1].source == "for i in range(2):\n    print(i)"
    assert steps[1].output == "0\n1"
    assert (steps[2].source, steps[2].output) == ("kettle.level()", "0.5")


def test_session_in_prose_ends_at_the_next_paragraph() -> None:
    body = "Look:\n>>> kettle.level()\n0.5\n\n>>> kettle.fill()\n\nThen it broke."
    (session,) = parse(body).sessions
    assert [(s.source, s.output) for s in session.statements] == [
        ("kettle.level()", "0.5"),
        ("kettle.fill()", ""),
    ]


def test_session_in_prose_ends_at_a_sentence_run_on_after_its_output() -> None:
    # Tickets that lose their blank lines run the words straight on after the output.
    body = (
        "To replicate:\n>>> decoded.tags is None\nTrue\nEffect of the bug in the application\n"
        '>>> print(query)\nSELECT "a"."id" FROM "a" ORDER BY "a"."id" ASC\n'
        "The query is ordered ASC but I expect DESC.\n"
    )
    sessions = parse(body).sessions
    assert [[(s.source, s.output) for s in x.statements] for x in sessions] == [
        [("decoded.tags is None", "True")],
        [("print(query)", 'SELECT "a"."id" FROM "a" ORDER BY "a"."id" ASC')],
    ]
    # The first output line is output whatever it reads like, and so is a line with code in it.
    (session,) = parse(">>> greet()\nHello there my friend\nand more of it\n").sessions
    assert session.statements[0].output == "Hello there my friend\nand more of it"


def test_a_prompt_typed_without_its_space() -> None:
    body = "```\n>>>convert_to(joule*second,joule)\n    joule**(7/9)\n>>>\n```"
    (session,) = parse(body).sessions
    assert [(s.source, s.output.strip()) for s in session.statements] == [
        ("convert_to(joule*second,joule)", "joule**(7/9)")
    ]
    # A run of four or more is a merge marker or a quote, not a prompt.
    assert parse("```\n>>>>>>> main\nx = 1\n```").sessions == ()


def test_ellipsis_after_output_is_output() -> None:
    (session,) = parse("```\n>>> list(range(100))\n[0, 1,\n...\n```").sessions
    assert session.statements[0].output == "[0, 1,\n..."


# --- expected versus actual ----------------------------------------------------------------------


def test_expected_and_actual_sections_are_paired() -> None:
    body = (
        "### Expected behavior\n\nThe kettle reports 100.\n\n"
        "### Actual behavior\n\nIt printed:\n\n```\n99.5\n```\n"
    )
    (item,) = parse(body).expectations
    assert item.expected == "The kettle reports 100."
    assert item.actual == "It printed:\n99.5"
    assert "### Expected behavior" in item.source


def test_issue_form_questions_and_placeholders() -> None:
    body = (
        "### What happened?\n\nThe pot overflowed.\n\n"
        "### What did you expect to happen?\n\n_No response_\n\n"
        "**Current behaviour**\nNothing boils\n"
    )
    assert pair(parse(body)) == {(None, "The pot overflowed."), (None, "Nothing boils")}


def test_lead_in_lines() -> None:
    body = "Expected output: `[1, 2]`\nActual output: `[2, 1]`\n\n- Expected: 3\n- Got: 4\n"
    assert pair(parse(body)) == {("`[1, 2]`", "`[2, 1]`"), ("3", "4")}


def test_label_followed_by_a_code_block() -> None:
    body = "Expected result:\n```\nok\n```\nOutput:\n```\nfailed\n```"
    assert pair(parse(body)) == {("ok", "failed")}


def test_a_labelled_code_span_ends_before_the_full_stop() -> None:
    body = "Expected is: `((a + b)/c)/(1/c)`.\n\nActual: `a/c`,\n"
    assert pair(parse(body)) == {("`((a + b)/c)/(1/c)`", "`a/c`")}


def test_instead_of_means_actual_first() -> None:
    body = "Calling `pot.size()` returns `None` instead of `0`.\nIt raises instead of returning 3."
    assert pair(parse(body)) == {("`0`", "`None`"), ("3", "raises")}


def test_a_comma_inside_a_code_span_ends_no_clause() -> None:
    body = (
        "The result is `'F(2, x)'` instead of `'F(x, 2)'`.\n"
        "`span(s)` gives `(0, 4)` instead of `(0, 8)`, which breaks slicing.\n"
    )
    assert pair(parse(body)) == {("`'F(x, 2)'`", "`'F(2, x)'`"), ("`(0, 8)`", "`(0, 4)`")}


def test_title_phrasings() -> None:
    report = parse_issue("to_celsius(212) gives 99.9 rather than 100", "")
    assert report.expectations == (
        Expectation("100", "99.9", "to_celsius(212) gives 99.9 rather than 100"),
    )


def test_should_but_phrasing() -> None:
    body = "`boil(3)` should return 100, but it actually returns 99. Odd."
    assert pair(parse(body)) == {("100", "99")}


def test_expected_got_phrasings() -> None:
    body = (
        "Expected `list`, got `tuple`.\nI expected 3 but the result was 4.\nAs expected, nothing."
    )
    assert pair(parse(body)) == {("`list`", "`tuple`"), ("3", "4")}


def test_comments_in_python_blocks() -> None:
    body = "```python\nprint(pot.level())  # prints 2 instead of 3\nx = pot.x  # Expected: 7\n```"
    assert pair(parse(body)) == {("3", "2"), ("7", None)}


def test_expect_to_phrasing() -> None:
    body = "I'd expect `pot.size()` to return 1 but it returns 2."
    assert pair(parse(body)) == {("1", "2")}


def test_actual_section_before_expected_section() -> None:
    body = "**Actual result**\n\nIt hangs.\n\n**Expected result**\n\nIt returns.\n"
    assert pair(parse(body)) == {("It returns.", "It hangs.")}


def test_unrelated_instead_of_and_should_are_ignored() -> None:
    body = (
        "I use tea instead of coffee.\nThis should be fixed soon.\n"
        "Instead having two pots works as expected:\n\n```\nok\n```\n"
        "It is hot, but then instead of tea I think we want coffee."
    )
    assert parse(body).expectations == ()


def test_words_quoted_inside_a_code_span_state_nothing_the_reporter_expects() -> None:
    body = (
        "The message is confusing:\n`ValueError: table is invalid - expected 'time' as the first "
        "column but found 'flux'`\n"
        "`kettle.boil(3)` should return `'hot'`.\n"
    )
    # The message's own "expected ... but found ..." is no expectation; the sentence after is.
    assert pair(parse(body)) == {("`'hot'`", None)}


# --- cleaning ------------------------------------------------------------------------------------


def test_html_comments_are_stripped() -> None:
    body = (
        "<!-- Thanks for reporting!\n```python\n# an example in the template\n```\n-->\n"
        "Real text <!-- inline --> here.\n```html\n<!-- kept inside code -->\n```\n"
        "A lone <!-- stays"
    )
    report = parse(body)
    lines = report.body.split("\n")
    assert lines[:5] == ["", "", "", "", ""]  # line numbers are kept
    assert lines[5] == "Real text  here."
    assert report.code_blocks[0].text == "<!-- kept inside code -->"
    assert report.body.endswith("A lone <!-- stays")


def test_details_blocks_keep_their_content() -> None:
    body = "<details><summary>Log</summary>\n\n```\nOSError: disk full\n```\n</details>"
    report = parse(body)
    assert report.body.startswith("Log\n")
    assert report.final_exception == "OSError"


def test_crlf_line_endings() -> None:
    report = parse("Steps:\r\n\r\n```python\r\nimport kettle\r\n```\r\nExpected: 1\r\nActual: 2")
    assert report.code_blocks[0].text == "import kettle"
    assert "\r" not in report.body
    assert pair(report) == {("1", "2")}


def test_quoted_lines() -> None:
    body = (
        "> Reported by a user:\n> > nested reply\n> ```\n> Traceback (most recent call last):\n"
        '>   File "t.py", line 1, in <module>\n>     go()\n> TypeError: nope\n> ```\n'
        "> ```\n> > kept\n> ```\n```\n> not a quote inside code\n```"
    )
    report = parse(body)
    assert report.body.split("\n")[:2] == ["Reported by a user:", "nested reply"]
    quoted, inner, literal = report.code_blocks
    assert quoted.text.startswith("Traceback") and report.final_exception == "TypeError"
    assert quoted.tracebacks[0].frames[0].source == "go()"
    assert inner.text == "> kept"  # the fence sits one quote deep; the second marker is content
    assert literal.text == "> not a quote inside code"


# --- names and paths -----------------------------------------------------------------------------


def test_identifiers() -> None:
    body = (
        "Calling `kettle.Pot.pour()` or `Strainer` breaks; `pip install kettle` works; `pot.py`"
        " is a file.\n\n"
        "```python\nfrom kettle.core import Pot, Lid as L\nimport numpy as np\n"
        "p = Pot(np.zeros(3))  # not.this\ns = 'not.this.either'\nself.helper.run()\nlen(p)\n```"
    )
    names = parse(body, title="`brew()` fails").identifiers
    assert names == (
        "kettle.core",
        "kettle.core.Pot",
        "kettle.core.Lid",
        "numpy",
        "Pot",
        "np.zeros",
        "helper.run",
        "brew",
        "kettle.Pot.pour",
        "Strainer",
    )


def test_mentioned_paths() -> None:
    body = (
        "See src/kettle/core.py:41, `kettle/io.py` and setup.py.\n"
        "https://github.com/o/kettle/blob/main/kettle/lid.py#L10 and C:\\work\\kettle\\pot.py.\n"
        "Not paths: e.g. numpy.linalg, v1.2, README, http://example.com/a.py\n"
        "DEBUG kettle.pot:pot.py:88 boiling\n--- a/kettle/io.py\n+++ b/kettle/io.py\n"
        '```\n  File "/usr/lib/python3.11/kettle/x.py", line 3, in f\n```'
    )
    assert parse(body, title="Bug in ./kettle/spout.py").mentioned_paths == (
        "kettle/spout.py",
        "src/kettle/core.py",
        "kettle/io.py",
        "setup.py",
        "kettle/lid.py",
        "C:/work/kettle/pot.py",
        "pot.py",
        "/usr/lib/python3.11/kettle/x.py",
    )


# --- edge cases ----------------------------------------------------------------------------------


def test_empty_body() -> None:
    report = parse_issue("", "")
    assert report == IssueReport("", "", (), (), (), (), truncated=False)
    assert report.identifiers == () and report.mentioned_paths == ()
    assert report.final_exception is None and report.final_traceback is None


def test_long_body_is_cut_and_flagged() -> None:
    report = parse("x" * (MAX_BODY_CHARS + 10))
    assert report.truncated and len(report.body) == MAX_BODY_CHARS
    assert not parse("short").truncated


ADVERSARIAL = [
    "```" * 400_000,
    "```\n" * 300_000,
    "a" * 1_000_000,
    "Traceback (most recent call last):\n" * 30_000,
    '  File "x", line 1, in f\n' * 40_000,
    "E   assert " * 100_000,
    "<!--" * 300_000,
    "<!-- -->" * 150_000,
    "<details" * 150_000,
    "> " * 500_000,
    ">>> x\n... " * 100_000,
    "instead of " * 100_000,
    "should be 1 but " * 60_000,
    "expected " * 110_000,
    "`" + "a." * 500_000,
    "``` " * 250_000,
    "```python\n" + "'''" + "a\n" * 400_000,
    "```python\n" + "(" * 300_000 + "\n```",
    "a/" * 500_000 + ".py",
    "ValueError: x\n" * 70_000,
    "    \n" * 200_000,
    "- a\n\n    b\n" * 100_000,
    "### Expected\n" * 80_000,
]


@pytest.mark.parametrize("body", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_input_is_parsed(body: str) -> None:
    report = parse(body, title="t" * 5000)
    assert report.truncated
    assert len(report.body) <= MAX_BODY_CHARS
    # Touch every derived property: each must finish on hostile text too.
    for block in report.code_blocks[:2000]:
        assert isinstance(block.is_python, bool) and isinstance(block.is_output, bool)
    assert isinstance(report.identifiers, tuple) and isinstance(report.mentioned_paths, tuple)
    assert len(report.expectations) <= 50


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Expected `2.5`.", {("`2.5`", None)}),
        ("I expected 2.5.", {("2.5", None)}),
        ("Expected 2.5 instead of 3.", {("2.5", "3")}),
        ("I expected the result to be 2.5 instead of 3", {("2.5", "3")}),
        ("It should be 2.5 instead of 3.", {("2.5", "3")}),
        ("It should return `[1, 2]` rather than `[2, 1]`.", {("`[1, 2]`", "`[2, 1]`")}),
        ("It should return `2.5`.", {("`2.5`", None)}),
        ("It returns 3 instead of 2.5", {("2.5", "3")}),
        ("expected 5, instead got 6", {("5", "6")}),
        ("It is expected to be 'n' but the answer is 0!", {("'n'", "0")}),
        ("Ideally, this would yield `sin(k)`. Is there a way?", {("`sin(k)`", None)}),
        ("It ought to be `0`.", {("`0`", None)}),
        # The value is the code span; what follows it is the reporter's reasoning.
        (
            "The output should be `[[2, 2], [3, 5]]`, since I add the identity.",
            {("`[[2, 2], [3, 5]]`", None)},
        ),
        ("It should be `P(x)` or remain unevaluated.", set()),
        # A value called wrong: what happened, with nothing stated in its place.
        ("`(A)[i, 0]` is the wrong here.", {(None, "`(A)[i, 0]`")}),
        ("The result `0.75` is incorrect.", {(None, "`0.75`")}),
        ("Using `eval` is wrong.", set()),
        ("`x` is wrong-headed.", set()),
        ("It would be nice if `x` worked.", set()),
        ("I would like `f` to accept lists.", set()),
        # Words are not values: nothing stated.
        ("This should be fixed.", set()),
        ("It works as expected.", set()),
        ("I would expect this to work.", set()),
        ("It should be fast instead of slow.", set()),
        # "should" with a verb that states no value, and suggestions, state nothing.
        ("Elements should support `str` methods.", set()),
        ("Maybe `sign(0)` should be `nan` as well.", set()),
        ("Perhaps this would be `0`.", set()),
        ("I'm not sure, but it should return `2`.", set()),
        ("It should also return `2`.", {("`2`", None)}),
        ("Calling it should raise `ValueError`.", {("`ValueError`", None)}),
    ],
)
def test_expected_values_in_the_usual_phrasings(
    body: str, expected: set[tuple[str | None, str | None]]
) -> None:
    assert pair(parse(body)) == expected


# --- unfenced code (trackers that lost the markup) ------------------------------------------------

TRAC_STYLE = (
    "Description\n\t\n"
    "I am trying to write a field into a response, and the content comes out wrong:\n"
    "from widgets.http import Response\t\t\t \n"
    "# bytes content\n"
    'response = Response(memoryview(b"My Content"))\n'
    "response.content\n"
    "# Out: b'<memory at 0x7fcc47ab2648>'\n"
    "# This is not correct, I am expecting b'My Content'\n"
    "It works with bytes, though.\n"
    "A method that would fix it:\n"
    "def render(self, context):\n"
    "\turl = self.url(context)\n"
    "\tif self.varname is None:\n"
    "\t\treturn url\n"
    "I think that is all.\n"
)


def test_code_written_straight_into_the_prose_is_a_block() -> None:
    report = parse(TRAC_STYLE)
    unfenced = [b for b in report.code_blocks if b.kind == "unfenced"]
    assert [b.text.split("\n")[0] for b in unfenced] == [
        "from widgets.http import Response",
        "def render(self, context):",
    ]
    assert all(b.is_python for b in unfenced)
    assert unfenced[0].text.endswith("# This is not correct, I am expecting b'My Content'")
    assert unfenced[1].text.endswith("\t\treturn url")
    # Its comments are read like those of any Python block.
    assert ("b'My Content'", None) in pair(report)


def test_an_output_line_under_code_in_the_prose_is_its_output() -> None:
    body = 'Bug:\nfrom widgets import text\ntext.slug("a b")\noutput: 3\nwhich is wrong.\n'
    (block,) = [b for b in parse(body).code_blocks if b.kind == "unfenced"]
    assert block.text.endswith('text.slug("a b")\n# output: 3')


@pytest.mark.parametrize(
    "body",
    [
        "This should be fixed.\nSee the docs for details.\n",
        "Description\n\nfoo\nbar.baz\n1 + 1\n",  # bare names and values do nothing
        "- f(1)\n- g(2)\n",  # a list of calls is a list
        "Use foo(x) when x: is set, and then bar(y).\n",
    ],
)
def test_prose_is_not_taken_for_unfenced_code(body: str) -> None:
    assert [b for b in parse(body).code_blocks if b.kind == "unfenced"] == []


def test_each_expectation_records_where_it_was_read() -> None:
    body = (
        "Expected: 1\nActual: 2\n\n```python\nx = f()  # Expected: 7\ny = g()  # Actual: 8\n```\n"
        "It returns `None` instead of `0`.\n"
    )
    report = parse_issue("f(1) gives 2 rather than 3", body)
    assert {(e.expected, e.origin) for e in report.expectations} == {
        ("3", "title"),
        ("`0`", "sentence"),
        ("1", "label"),
        ("7", "comment"),
    }


def test_an_issue_reference_is_a_number_or_nothing() -> None:
    assert parse_issue("t", "", "#123").reference == "#123"
    assert parse_issue("t", "", "#12 and more").reference == ""
    assert parse_issue("t", "").reference == ""
