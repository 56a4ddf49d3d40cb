"""Values a session or a script shows: how a test reads them back, and the variants drafted
for each once a fix is known (pull request time), which the fix chooses among."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.generation.drafter.draft import draft_from_issue
from reprobot.generation.drafter.session_variants import (
    changed_value_sources,
    shown_expression,
    shown_sources,
)
from reprobot.generation.drafter.snippets import session_programs
from reprobot.generation.drafter.sources import print_call
from reprobot.generation.drafter.truth_values import is_boolean
from reprobot.generation.issue.report import parse_issue
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import TINY_PYPROJECT, make_repo


@pytest.mark.parametrize(
    ("statement", "prints"),
    [
        ("print(x)", True),
        ("pprint(x)", True),
        ("sympy.pretty_print(x)", True),
        ("tree.print_tree()", True),
        # Names that merely end in "print".
        ("app.register_blueprint(bp)", False),
        ("footprint(x)", False),
    ],
)
def test_which_calls_print(statement: str, prints: bool) -> None:
    assert (print_call(statement) is not None) is prints


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("print(f(x))", ([], "f(x)", False)),
        # pprint draws its own picture of x, in ASCII or Unicode.
        ("pprint(C[i, 0])", ([], "C[i, 0]", True)),
        ("f(x)", ([], "f(x)", False)),
    ],
)
def test_what_a_shown_value_is_read_back_from(
    statement: str, expected: tuple[list[str], str, bool]
) -> None:
    assert shown_expression(statement) == expected


def test_a_print_of_several_things_is_read_back_from_its_output() -> None:
    setup, expression, pretty = shown_expression("print('mean:', m)")
    assert expression == "_output.getvalue().strip()" and not pretty
    assert setup[-1].strip() == "print('mean:', m)"


SESSION = (
    "```pycon\n>>> from kettle import level, boil\n>>> level(1)\n0.5\n>>> boil(-1)\n"
    "Traceback (most recent call last):\nValueError: cold\n>>> kettle.__version__\n'1.0'\n"
    ">>> level(2)\n0.7\n```\n"
)


def test_each_value_shown_is_a_variant_once_the_fix_is_known() -> None:
    (program,) = session_programs(parse_issue("Kettle levels", SESSION))
    sources, values = changed_value_sources(program)
    # Last first; not the error, not the version query.
    assert values == ["0.7", "0.5"]
    assert [s.method for s in sources] == ["issue-shown-value"] * 2
    last = sources[0].body.split("\n")
    # The statement that raised stays out of the setup of a later value.
    assert "boil(-1)" not in last and last[0] == "level(1)" and "result = level(2)" in last
    assert last[-1].startswith("assert '0.7' not in (str(result), repr(result))")
    assert sources[0].note == "the value the issue shows for `level(2)` must not come back"


def test_only_a_known_fix_makes_variants_of_values_the_issue_does_not_call_wrong(
    tmp_path: Path,
) -> None:
    repo = make_repo(
        tmp_path / "kettle",
        {
            "pyproject.toml": TINY_PYPROJECT.replace('"tiny"', '"kettle"'),
            "kettle/__init__.py": "def level(n):\n    return n / 2\n",
            "tests/test_kettle.py": "from kettle import level\n\n\ndef test_zero():\n"
            "    assert level(0) == 0\n",
        },
    )
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "acme/kettle")
    # Nothing here calls a value wrong, names an error or states what is expected.
    issue = parse_issue(
        "Kettle levels",
        "Is this intended?\n\n```pycon\n>>> from kettle import level\n>>> level(1)\n0.5\n```\n",
    )
    at_issue_time = draft_from_issue(issue, snapshot)
    assert at_issue_time.drafts == () and at_issue_time.wrong_values == ()
    knowing = draft_from_issue(issue, snapshot, knowing_fix=True)
    assert [d.method for d in knowing.drafts] == ["issue-shown-value"]
    assert knowing.wrong_values == ("0.5",)


def test_a_long_value_shown_must_not_come_back_even_inside_more_output() -> None:
    session = (
        "```pycon\n>>> convert_to(joule*second, joule)\njoule**(7/9)\n>>> level(2)\n0.7\n```\n"
    )
    (program,) = session_programs(parse_issue("Units", session))
    sources, _ = changed_value_sources(program)
    by_value = {s.body.split("\n")[-1].split("'")[1]: s.body for s in sources}
    # Another release may print "10**(2/3)*joule**(7/9)": the value is found inside it.
    assert "assert not any('joule**(7/9)' in _form for _form in" in by_value["joule**(7/9)"]
    # "0.7" would be found inside anything: it must be the whole of what is printed.
    assert "assert '0.7' not in (str(result), repr(result))" in by_value["0.7"]


@pytest.mark.parametrize(
    ("expression", "boolean"),
    [
        ("decoded.tags is None", True),
        ("a == b", True),
        ("x not in seen", True),
        ("not f(x)", True),
        ("isinstance(x, int)", True),
        ("f(x)", False),
        ("x.is_valid", False),
        ("(", False),
    ],
)
def test_which_expressions_give_a_truth_value_by_their_form(expression: str, boolean: bool) -> None:
    assert is_boolean(expression) is boolean


def test_a_truth_value_called_wrong_must_become_the_other_one() -> None:
    body = (
        "```pycon\n>>> from msgs import Message, roundtrip\n>>> m = roundtrip(Message(tags=''))\n"
        ">>> m.tags is None\nTrue\n```\n"
    )
    issue = parse_issue("Messages incorrectly lose empty tags", body)
    (program,) = session_programs(issue)
    [source] = shown_sources(program, issue)
    assert source.method == "issue-expected" and "the issue calls True wrong" in source.note
    assert source.body.split("\n")[-2:] == [
        "result = m.tags is None",
        "assert not result, 'expected ' + 'False' + ', got ' + repr(result)",
    ]
    # A value that is no truth value by its form keeps the weak check.
    (program,) = session_programs(
        parse_issue(issue.title, body.replace("m.tags is None", "m.tags"))
    )
    [source] = shown_sources(program, issue)
    assert source.method == "issue-wrong-value"


def test_an_expected_value_stated_after_a_session_is_about_that_session_only() -> None:
    body = (
        "```\n>>> fmt(half, exact=True)\n'1/2'\n```\n\nThe setting was ignored. Another example:\n"
        "```\n>>> fmt(limit(half), exact=True)\n'limit(1/2)'\n```\n"
        "instead of the expected `limit(S(1)/2)`.\n"
    )
    issue = parse_issue("fmt ignores exact for some values", body)
    first, second = session_programs(issue)
    # The value follows the second session: the first one is not asked to give it.
    assert [s.method for s in shown_sources(first, issue)] != ["issue-expected"]
    [expected] = [s for s in shown_sources(second, issue) if s.method == "issue-expected"]
    assert expected.body.split("\n")[-2] == "result = fmt(limit(half), exact=True)"
    assert "'limit(S(1)/2)'" in expected.body.split("\n")[-1]
