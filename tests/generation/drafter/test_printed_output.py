"""A script's prints paired with the output block the issue shows after it."""

from __future__ import annotations

import pytest

from reprobot.generation.drafter.printed_output import pair_outputs
from reprobot.generation.drafter.snippets import code_programs
from reprobot.generation.issue.report import parse_issue
from reprobot.generation.issue.shown_output import inline_output_after, output_after

LABELLED = [
    "C = BlockMatrix([[A], [B]])",
    "print('C is')",
    "pprint(C)",
    "print('C[i, 0] is')",
    "pprint(C[i, 0])",
]


def test_labels_the_script_prints_anchor_the_values_between_them() -> None:
    output = "C is\n⎡A⎤\n⎢ ⎥\n⎣B⎦\nC[i, 0] is\n(A)[i, 0]\n"
    assert pair_outputs(LABELLED, output) == {2: "⎡A⎤\n⎢ ⎥\n⎣B⎦", 4: "(A)[i, 0]"}


def test_empty_prints_separate_values_and_the_last_ones_may_be_cut() -> None:
    statements = ["r = f()", "print(r)", "print(r.simplify())", "print()", "print(g(r))", "print()"]
    assert pair_outputs(statements, "a + b\nc\n\nd") == {1: "a + b", 2: "c", 4: "d"}


def test_values_printed_in_a_row_take_a_line_each() -> None:
    assert pair_outputs(["print(f(1))", "print(f(2))"], "1\n4\n") == {0: "1", 1: "4"}


@pytest.mark.parametrize(
    ("statements", "output"),
    [
        # Lines left over, or missing.
        (["print(f(1))", "print(f(2))"], "1\n4\n9"),
        (["print(f(1))", "print(f(2))"], "1"),
        # A label that is not where the script prints it.
        (LABELLED, "C[i, 0] is\n(A)[i, 0]"),
        # A print in a loop: its lines cannot be told apart.
        (["for k in range(3):\n    print(k)", "print(f(2))"], "0\n1\n2\n4"),
        # No print, and the last statement is no expression.
        (["x = f(1)"], "1"),
    ],
)
def test_what_does_not_pair_up_exactly_pairs_nothing(statements: list[str], output: str) -> None:
    assert pair_outputs(statements, output) == {}


def test_a_notebook_cell_shows_the_value_of_its_last_expression_when_introduced() -> None:
    assert pair_outputs(["x = f(1)", "g(x)"], "\n[1, 2]\n") == {1: "[1, 2]"}
    assert pair_outputs(["x = f(1)", "g(x)"], "[1, 2]", introduced=False) == {}
    cell = "```python\nfrom kettle import level\nlevel(1)\n```\n"
    for between, shown in (("Output:", "0.5"), ("This works", "")):
        (program,) = code_programs(parse_issue("Level", f"{cell}\n{between}\n\n```\n0.5\n```\n"))
        assert program.steps[-1].output == shown


SCRIPT = "```python\nfrom kettle import level\nprint(level(1))\nprint(level(2))\n```\n"


@pytest.mark.parametrize(
    ("between", "paired"),
    [
        ("I get this output:", True),
        ("", True),
        ("It ran.\nThen I looked.\nAnd this came out:", False),
    ],
)
def test_the_output_block_must_follow_the_script_closely(between: str, paired: bool) -> None:
    issue = parse_issue("Level is off", f"{SCRIPT}\n{between}\n\n```\n0.5\n0.7\n```\n")
    script = issue.code_blocks[0]
    assert (output_after(issue, script) is not None) is paired
    (program,) = code_programs(issue)
    shown = [step.output for step in program.steps]
    assert shown == (["0.5", "0.7"] if paired else ["", ""])


def test_a_warning_or_an_error_after_a_cell_is_not_the_value_it_shows() -> None:
    cell = "```python\nfrom kettle import level\nlevel(1)\n```\n"
    warned = "kettle/core.py:73: DeprecationWarning: level() is deprecated"
    (program,) = code_programs(parse_issue("Level", f"{cell}\nOutput:\n\n```\n{warned}\n```\n"))
    assert program.steps[-1].output == ""


@pytest.mark.parametrize(
    ("after", "value"),
    [
        (
            "The output is\n`-0.5*x**2.5 + 0.5*x**2.5`\nHow do I simplify it to 0?",
            "-0.5*x**2.5 + 0.5*x**2.5",
        ),
        ("It prints `0.5`.", "0.5"),
        # What should happen, an error raised somewhere, or a span inside a sentence.
        ("#### Expected Results\nNo error is thrown and `level = 0`", None),
        ("I'd want `0.25` here.", None),
        ("It prints `0.5` and then stops.", None),
    ],
)
def test_the_words_after_a_script_may_give_its_output_as_a_code_span(
    after: str, value: str | None
) -> None:
    script = "```python\nfrom kettle import level\nprint level(1)\n```\n"
    issue = parse_issue("Level is off", f"{script}\n{after}\n")
    assert inline_output_after(issue, issue.code_blocks[0]) == value
    (program,) = code_programs(issue)
    # Python 2's print statement is read as the call it is in Python 3.
    assert program.steps[-1].source == "print(level(1))"
    assert program.steps[-1].output == (value or "")
