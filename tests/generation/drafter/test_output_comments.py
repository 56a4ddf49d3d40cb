"""What a comment in an issue's code says a line printed."""

from __future__ import annotations

import ast

import pytest

from reprobot.generation.drafter.output_comments import comment_output, statement_output


@pytest.mark.parametrize(
    ("comment", "found"),
    [
        ("# UndefinedKind", ("UndefinedKind", False)),
        ("# MatrixKind(NumberKind)", ("MatrixKind(NumberKind)", False)),
        ("# -> 3", ("3", False)),
        ("# Out[3]: 0.75", ("0.75", False)),
        ("# returns [1, 2]", ("[1, 2]", False)),
        ("# Out: b'<memory at 0x7fcc47ab2648>'", ("b'<memory at 0x7fcc47ab2648>'", False)),
        ("# nan", ("nan", False)),
        ("# x", ("x", False)),
        ("# (1, a)", ("(1, a)", False)),
        # The reporter's words after the value are cut off, and may call it wrong.
        ("# 3, should be 2.5", ("3", True)),
        ("# 3 (wrong!)", ("3", True)),
        ("# 3 <-- bug", ("3", True)),
        ("# 3 -- as documented", ("3", False)),
        # A second "#" is the reporter's, and " - " inside the value is no cut.
        (
            "#result: 2*Ux(U + V) - Vx(U + V) #expansion has missed 2nd",
            ("2*Ux(U + V) - Vx(U + V)", True),
        ),
    ],
)
def test_a_comment_showing_a_value(comment: str, found: tuple[str, bool]) -> None:
    assert comment_output(comment) == found


@pytest.mark.parametrize(
    "comment",
    ["# works", "# TODO", "# Fails", "# not working", "# x is y", "# a or b", "# maybe 3",
     "# perhaps `2.5`", "# 2.5 expected", "#", "# " + "1 + " * 80 + "1"],
)  # fmt: skip
def test_a_comment_in_words_shows_no_value(comment: str) -> None:
    assert comment_output(comment) is None


def _outputs(source: str) -> list[tuple[str, bool]]:
    lines = source.split("\n")
    return [statement_output(lines, node) for node in ast.parse(source).body]


def test_a_comment_above_setting_the_value_against_the_expected_one() -> None:
    source = (
        "print(f(1))\n"
        "# Correct: the output is 1\n"  # no expected value: says nothing of the next line
        "print(f(2))\n"
        "\n"
        "# So far so good\n"
        "# Total is expected to be 'n' but the answer is 0!\n"
        "print(total(e))\n"
        "# should be `2.5`, got `3`\n"  # the line below's own comment wins over this one
        "g(4)  # 7\n"
        "# expected 2 but got a wrong answer\n"  # words, not a value
        "g(5)\n"
    )
    assert _outputs(source) == [("", False), ("", False), ("0", True), ("7", False), ("", False)]


def test_the_output_of_each_statement_comes_from_its_own_comments() -> None:
    source = (
        "x = f(1)  # 3\n"  # an assignment shows no value
        "f(2)  # 4\n"
        "f(3)\n"
        "# -> 9\n"
        "# This is not correct\n"
        "f(4)\n"
        "# -> 16\n"
        "# should also work for lists\n"  # a remark about what follows, not about 16
        "f('é')  # 'éé'\n"  # the parser counts bytes; the comment is found all the same
        "f(5)\n"
        "\n"
        "# 25\n"  # a comment after a blank line is not the line's output
    )
    assert _outputs(source) == [
        ("", False),
        ("4", False),
        ("9", True),
        ("16", False),
        ("'éé'", False),
        ("", False),
    ]
