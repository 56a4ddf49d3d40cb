"""The no-LLM drafter on sessions and code with shown output, on a real git repository: which
value a session shows is wrong, expected, or a raise that should happen."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.calc_project import (
    EARLIER_ISSUE,
    PRINTED_ISSUE,
    SESSION_ISSUE,
    assert_applies,
    by_method,
    draft,
    module_of,
)


def test_a_session_with_a_wrong_value(repo: Path, snapshot: RepoSnapshot) -> None:
    out = draft(SESSION_ISSUE, snapshot)
    drafts = by_method(out)
    assert list(drafts) == ["issue-wrong-value", "issue-expected"]
    assert out.wrong_values == ("1",)
    value = module_of(drafts["issue-wrong-value"])
    assert "from calc import mean\n" in value
    assert "    result = mean([1, 2])\n    assert '1' not in (str(result), repr(result))" in value
    expected = module_of(drafts["issue-expected"])
    # A float is compared numerically, with pytest's tolerance, and the module imports pytest.
    assert "    assert result == pytest.approx(1.5)\n" in expected
    assert expected.index("import pytest\n") < expected.index("def test_")
    # Two modules of one issue never share a path.
    assert [d.test_files for d in out.drafts] == [
        ("tests/test_mean_truncates.py",),
        ("tests/test_mean_truncates_2.py",),
    ]
    for d in out.drafts:
        compile(module_of(d), d.test_files[0], "exec")
        assert_applies(repo, d)


def test_a_title_calling_the_result_wrong_makes_the_last_shown_value_the_wrong_one(
    snapshot: RepoSnapshot,
) -> None:
    session = "```pycon\n>>> from calc import mean\n>>> mean([2, 2])\n2\n>>> mean([1, 2])\n1\n```\n"
    out = draft(("Wrong result of mean", session), snapshot)
    (d,) = out.drafts
    assert d.method == "issue-wrong-value"
    assert out.wrong_values == ("1",)
    text = module_of(d)
    assert "result = mean([1, 2])\n    assert '1' not in (str(result), repr(result))" in text
    # A title about a wrong error message says nothing of the values shown.
    assert draft(("Wrong error message from mean", session), snapshot).drafts == ()


@pytest.mark.parametrize(
    "title",
    [
        "mean does not compute the average correctly for pairs",
        "mean() no longer seems to work correctly",
        "inaccurate mean of pairs",
        "mean isn't right for two numbers",
        "Bad mean of pairs",
        "pairs break mean",
    ],
)
def test_of_several_sessions_under_a_title_calling_a_result_wrong_the_last_shows_it(
    title: str, snapshot: RepoSnapshot
) -> None:
    body = (
        "```python\nfrom calc import mean\npair = [1, 2]\n```\n\n"
        "As expected:\n\n```\n>>> mean([2, 4])\n3\n```\n\n"
        "But:\n\n```\n>>> mean(pair)\n1\n```\n\nSurely a bug?\n"
    )
    out = draft((title, body), snapshot)
    drafts = by_method(out)
    # Only the last session's value is called wrong, with the code it needs before it.
    assert out.wrong_values == ("1",)
    value = module_of(drafts["issue-wrong-value"])
    assert "    pair = [1, 2]\n    mean([2, 4])\n    result = mean(pair)\n" in value
    assert "    assert '1' not in (str(result), repr(result))" in value
    assert "'3' not in" not in "".join(module_of(d) for d in out.drafts)


def test_a_session_the_words_next_to_it_call_right_shows_no_wrong_value(
    snapshot: RepoSnapshot,
) -> None:
    body = (
        "I noticed this among others:\n\n```\n>>> from calc import mean\n>>> mean([1, 2])\n1\n```"
        "\n\nThe string form is not fooled:\n\n```\n>>> from calc import mean\n"
        ">>> str(mean([1, 2]))\n'1.5'\n```\n"
    )
    out = draft(("inaccurate mean of pairs", body), snapshot)
    # The first session is the wrong one; the sentence ending in a colon introduces the second.
    assert out.wrong_values == ("1",)
    assert {d.method for d in out.drafts} == {"issue-wrong-value"}


def test_a_session_under_an_expected_results_heading_states_the_expected_value(
    repo: Path, snapshot: RepoSnapshot
) -> None:
    body = (
        "#### Steps/Code to Reproduce\n\n```python\n>>> from calc import mean\n"
        ">>> mean([1, 2])\n```\n\n#### Expected Results\n\n```python\n>>> from calc import mean\n"
        ">>> mean([1, 2])\n1.5\n```\n\n#### Actual Results\n\n```python\n"
        ">>> from calc import mean\n>>> mean([1, 2])\n1\n```\n"
    )
    out = draft(("mean of two numbers does not show the correct value", body), snapshot)
    drafts = by_method(out)
    assert out.wrong_values == ("1",)
    expected = module_of(drafts["issue-expected"])
    assert "    result = mean([1, 2])\n    assert result == pytest.approx(1.5)\n" in expected
    value = module_of(drafts["issue-wrong-value"])
    assert "assert '1' not in (str(result), repr(result))" in value
    assert "'1.5' not in" not in "".join(module_of(d) for d in out.drafts)
    for d in out.drafts:
        assert_applies(repo, d)


def test_a_session_pasted_twice_is_one_session_under_a_wrong_title(snapshot: RepoSnapshot) -> None:
    session = "```\n>>> from calc import mean\n>>> mean([1, 2])\n1\n```\n"
    out = draft(("Wrong result of mean", session + "\nAgain:\n\n" + session), snapshot)
    assert {d.method for d in out.drafts} == {"issue-wrong-value"}
    assert out.wrong_values == ("1",)


def test_code_whose_comments_show_the_printed_values_is_read_as_a_session(
    repo: Path, snapshot: RepoSnapshot
) -> None:
    body = (
        "This one is right:\n\n```python\nfrom calc import mean\nmean([2, 4])\n# 3\n```\n\n"
        "This one is not:\n\n```python\nmean([1, 2])  # 1\n```\n\nExpected `1.5`, got `1`.\n"
    )
    out = draft(("Wrong mean of two numbers", body), snapshot)
    drafts = by_method(out)
    assert {"issue-code", "issue-wrong-value", "issue-expected"} <= set(drafts)
    assert out.wrong_values == ("1",)
    value = module_of(drafts["issue-wrong-value"])
    # The setup is every statement before the one shown wrong, both blocks included.
    assert "    mean([2, 4])\n    result = mean([1, 2])\n" in value
    assert "    assert '1' not in (str(result), repr(result))" in value
    expected = module_of(drafts["issue-expected"])
    assert "    result = mean([1, 2])\n    assert result == pytest.approx(1.5)\n" in expected
    for d in out.drafts:
        compile(module_of(d), d.test_files[0], "exec")
        assert_applies(repo, d)


def test_a_comment_below_the_output_that_calls_it_wrong_marks_it(snapshot: RepoSnapshot) -> None:
    body = (
        "```python\nfrom calc import mean\nprint(mean([1, 2]))\n# Out: 1\n"
        "# This is not correct\nprint(mean([2, 4]))\n# Out: 3\n# This is correct\n```\n"
    )
    out = draft(("mean() and two numbers", body), snapshot)
    text = module_of(by_method(out)["issue-wrong-value"])
    # The marked line is the one asserted on, and a printed value is about what is printed.
    assert "    result = mean([1, 2])\n    assert '1' not in (str(result), repr(result))" in text
    assert "mean([2, 4])" not in text
    # Comments that read as words show no output: only the code itself is drafted.
    prose = "```python\nfrom calc import mean\nmean([1, 2])  # works\nmean([])  # TODO\n```\n"
    assert [d.method for d in draft(("Wrong mean", prose), snapshot).drafts] == ["issue-code"]


def test_a_printing_statement_shows_what_it_wrote(snapshot: RepoSnapshot) -> None:
    out = draft(PRINTED_ISSUE, snapshot)
    (d,) = out.drafts
    assert d.method == "issue-wrong-value"
    assert out.wrong_values == ("mean: 1",)
    text = module_of(d)
    assert "import contextlib as _contextlib\nimport io as _io\n" in text
    assert (
        "    with _contextlib.redirect_stdout(_io.StringIO()) as _output:\n"
        "        print('mean:', mean([1, 2]))\n"
        "    result = _output.getvalue().strip()\n"
    ) in text


def test_a_session_from_an_earlier_release_shows_the_raise_that_should_happen(
    snapshot: RepoSnapshot,
) -> None:
    out = draft(EARLIER_ISSUE, snapshot)
    (d,) = out.drafts
    assert d.method == "issue-expected"
    assert '    with pytest.raises(ValueError):\n        parse_number("007")\n' in module_of(d)
    # Types "that were used to fit it" speak of no earlier release: the raise is the bug.
    other = EARLIER_ISSUE[1].replace(
        "In version 0.1 leading zeros were refused", "Types used to fit"
    )
    assert [d.method for d in draft((EARLIER_ISSUE[0], other), snapshot).drafts] == [
        "issue-session-raises"
    ]


RAISES_LIKE_ISSUE = (
    "parse_number accepts blanks",
    """\
```python
>>> parse_number("")
Traceback (most recent call last):
...
ValueError: empty input
>>> parse_number("   ")  <--- this is not handled correctly
0
```
""",
)


def test_a_sibling_that_raises_sets_what_the_pointed_statement_must_do(
    repo: Path, snapshot: RepoSnapshot
) -> None:
    out = draft(RAISES_LIKE_ISSUE, snapshot)
    drafts = by_method(out)
    assert "issue-expected" in drafts
    d = drafts["issue-expected"]
    assert '`parse_number("   ")` must raise `ValueError`' in d.note
    text = module_of(d)
    compile(text, d.test_files[0], "exec")
    assert text.index("import pytest\n") < text.index("def test_")
    assert "from calc import parse_number\n" in text
    # The statement that raised is the comparison, not the setup.
    assert '    with pytest.raises(ValueError):\n        parse_number("   ")\n' in text
    assert 'parse_number("")' not in text
    assert_applies(repo, d)


# A report listing its failing cases: two statements, each raising.
TWO_CASES_ISSUE = (
    "Some issues with parse_number",
    "parse_number doesn't support negatives, and it also doesn't support spaces.\n\n"
    "```pycon\n>>> from calc import parse_number\n>>> parse_number('-3')\n"
    'Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
    "ValueError: not a number: '-3'\n>>> parse_number(' 4')\nTraceback (most recent call last):\n"
    "  File \"<stdin>\", line 1, in <module>\nValueError: not a number: ' 4'\n"
    ">>> parse_number('12')\n12\n```\n",
)


def test_each_statement_a_session_shows_raising_is_a_test_of_its_own(
    snapshot: RepoSnapshot,
) -> None:
    out = draft(TWO_CASES_ISSUE, snapshot)
    raises = [module_of(d) for d in out.drafts if d.method == "issue-session-raises"]
    assert len(raises) == 2
    assert raises[0].rstrip().endswith("parse_number('-3')")
    # The second starts without the first: it raised there, and would stop the test here.
    assert raises[1].rstrip().endswith("parse_number(' 4')")
    assert "parse_number('-3')" not in raises[1]


# A template's "what happened" section holds the session that shows the wrong value; the
# "expected" section states the right one, in words around a code span or bare.
_WHAT_HAPPENED = (
    "### What happened?\n\n```pycon\n>>> from calc import mean\n>>> mean([1, 2])\n1\n```\n\n"
    "### What did you expect to happen?\n\n{expected}\n"
)


@pytest.mark.parametrize(
    "expected", ["1.5", "The mean of the values: `1.5`.", "**Expected behaviour**: `1.5`"]
)
def test_a_template_section_holding_the_session_ties_its_expected_value_to_it(
    snapshot: RepoSnapshot, expected: str
) -> None:
    out = draft(("mean truncates", _WHAT_HAPPENED.format(expected=expected)), snapshot)
    drafts = by_method(out)
    assert list(drafts) == ["issue-wrong-value", "issue-expected"]
    assert "assert result == pytest.approx(1.5)\n" in module_of(drafts["issue-expected"])
    assert out.wrong_values == ("1",)


def test_a_section_of_words_alone_gives_no_expected_value(snapshot: RepoSnapshot) -> None:
    text = _WHAT_HAPPENED.format(expected="The mean, not the floor of it.")
    assert list(by_method(draft(("mean truncates", text), snapshot))) == ["issue-wrong-value"]


def test_a_sentence_after_code_states_what_it_gave_and_what_it_should(
    snapshot: RepoSnapshot,
) -> None:
    body = (
        "```python\nfrom calc import mean\nmean([1, 2])\n```\n\n"
        "I would expect the output `1.5` but instead I get `1`.\n"
    )
    drafts = by_method(draft(("mean truncates", body), snapshot))
    assert "issue-expected" in drafts
    text = module_of(drafts["issue-expected"])
    assert "result = mean([1, 2])\n    assert result == pytest.approx(1.5)\n" in text


def test_a_sentence_saying_instead_of_after_the_session_gives_the_expected_value(
    snapshot: RepoSnapshot,
) -> None:
    body = (
        "```pycon\n>>> from calc import mean\n>>> mean([1, 2])\n1\n```\n"
        "The result is `1` instead of `1.5`, as in numpy.\n"
    )
    drafts = by_method(draft(("mean truncates", body), snapshot))
    assert list(drafts) == ["issue-wrong-value", "issue-expected"]
    assert "assert result == pytest.approx(1.5)\n" in module_of(drafts["issue-expected"])


def test_an_ipython_output_under_expected_behaviour_is_the_expected_value_not_code(
    snapshot: RepoSnapshot,
) -> None:
    body = (
        "### To Reproduce\n```python\nIn [1]: from calc import mean\n\nIn [2]: mean([1, 2])\n"
        "Out[2]: 1\n```\n\n### Expected behavior\n```python\nOut[2]: 1.5\n```\n"
    )
    drafts = by_method(draft(("mean truncates", body), snapshot))
    assert "issue-code" not in drafts
    assert "assert result == pytest.approx(1.5)\n" in module_of(drafts["issue-expected"])


def test_a_value_test_keeps_only_the_statements_it_needs(snapshot: RepoSnapshot) -> None:
    session = (
        "```pycon\n>>> from calc import mean\n>>> v = [1, 2]\n>>> v\n[1, 2]\n>>> print(v)\n"
        "[1, 2]\n>>> mean(v)\n1\n```\n"
    )
    (d,) = draft(("Wrong result from mean", session), snapshot).drafts
    body = module_of(d).split("def test_", 1)[1]
    assert "    v = [1, 2]\n    result = mean(v)\n" in body
    assert "print(v)" not in body and "    v\n" not in body


def test_an_actual_behaviour_told_in_words_leaves_the_expected_value_about_the_session(
    snapshot: RepoSnapshot,
) -> None:
    body = (
        "Wrong result:\n\n```pycon\n>>> from calc import mean\n>>> mean([1, 2])\n1\n```\n"
        "The sum is being floored instead of `1.5`.\n"
    )
    drafts = by_method(draft(("mean truncates", body), snapshot))
    assert "assert result == pytest.approx(1.5)\n" in module_of(drafts["issue-expected"])
