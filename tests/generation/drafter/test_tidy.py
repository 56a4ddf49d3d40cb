"""A chosen test tidied within the project's linter settings: each step on its own (pure), and
the whole with flake8 and Ruff from Reprobot's environment."""

from __future__ import annotations

import ast

from reprobot.generation.drafter.test_writer import (
    STAR_GUARD,
    assert_expected,
    module_text,
    plain_asserts,
)
from reprobot.generation.drafter.tidy import (
    explicit_star_imports,
    formatted,
    split_long_strings,
    tidy,
    without_unread_bindings,
    without_unread_imports,
    wrapped_comments,
)
from reprobot.generation.repo.linter import Linter, lint

FLAKE8 = Linter("flake8", "setup.cfg", "[flake8]\nmax-line-length = 79\n", 79)
GUARD = "\n".join(STAR_GUARD) + "\n"
EXPORTS = {
    "sympy": {"symbols", "Symbol", "MatrixSymbol", "sqrt", "test"},
    "sympy.physics.quantum": {"Operator", "Dagger"},
}


def star_names(module: str) -> set[str] | None:
    return EXPORTS.get(module)


def test_star_imports_become_the_names_the_test_reads() -> None:
    source = (
        "from sympy import *\nfrom sympy.physics.quantum import *\n" + GUARD + "\n\n"
        "def test_x():\n    x = symbols('x')\n    assert Dagger(Operator('A')) != sqrt(x)\n"
    )
    text = explicit_star_imports(source, star_names)
    assert text.startswith(
        "from sympy import sqrt, symbols\nfrom sympy.physics.quantum import Dagger, Operator\n"
    )
    # No star import is left to bring in a callable pytest would collect: the guard goes.
    assert "globals()" not in text
    # A name of an unknown star import, or bound by none: the imports stay as they are.
    unknown = "from numpy import *\n\ndef test_x():\n    assert array([1])\n"
    assert explicit_star_imports(unknown, star_names) == unknown
    unbound = "from sympy import *\n\ndef test_x():\n    assert nowhere(1)\n"
    assert explicit_star_imports(unbound, star_names) == unbound
    # A star import's name that shadows a builtin stays imported; code that reads names by
    # their text keeps its star import.
    shadowing = "from tools import *\n\ndef test_x():\n    assert open(1) and len([])\n"
    assert explicit_star_imports(shadowing, lambda m: {"open"}) == shadowing.replace(
        "import *", "import open"
    )
    # A name pytest would collect, imported by its name: the star imports and guard stay.
    collected = "from sympy import *\n" + GUARD + "\n\ndef test_x():\n    assert test\n"
    assert explicit_star_imports(collected, star_names) == collected
    dynamic = "from sympy import *\n\ndef test_x():\n    assert eval('sqrt(4)') == 2\n"
    assert explicit_star_imports(dynamic, star_names) == dynamic


def test_a_name_read_nowhere_keeps_its_call_alone() -> None:
    source = (
        "def test_x():\n    B = make(1)\n    é = make(2)\n    used = make(3)\n"
        "    n = 4\n    assert used\n"
    )
    assert without_unread_bindings(source) == (
        "def test_x():\n    make(1)\n    make(2)\n    used = make(3)\n    n = 4\n    assert used\n"
    )
    # A class body's bindings are its attributes, read by attribute: they stay.
    schema = (
        "def test_x():\n    class S(Schema):\n        times = fields.List(fields.Date())\n"
        "    s = S()\n"
    )
    assert without_unread_bindings(schema) == schema.replace("    s = S()", "    S()")
    # Code that reads names by their text keeps every binding.
    dynamic = "def test_x():\n    B = make(1)\n    assert 'B' in locals()\n"
    assert without_unread_bindings(dynamic) == dynamic


def test_an_unread_import_goes_only_when_its_package_stays_imported() -> None:
    source = (
        "import sympy as sm\nimport seaborn.objects\n"
        "from sympy.combinatorics import DihedralGroup, Permutation\n\n"
        "def test_x():\n    assert DihedralGroup(4)\n"
    )
    assert without_unread_imports(source) == (
        "import seaborn.objects\nfrom sympy.combinatorics import DihedralGroup\n\n"
        "def test_x():\n    assert DihedralGroup(4)\n"
    )


def test_formatting_keeps_quotes_and_wraps_long_comments() -> None:
    assert formatted("x = {'a':1}\ny=f( x )\n", 79) == "x = {'a': 1}\ny = f(x)\n"
    comment = "# " + " ".join(["word"] * 30) + "\n"
    wrapped = wrapped_comments("def f():\n    " + comment, 40)
    assert all(len(line) <= 40 for line in wrapped.splitlines())
    assert wrapped.splitlines()[1].startswith("    # word")
    # A comment already spread over lines is wrapped again as one paragraph.
    header = "# Reproduces the reported issue: one two three\n# four five\n\nx = 1\n"
    assert wrapped_comments(header, 30) == (
        "# Reproduces the reported\n# issue: one two three four\n# five\n\nx = 1\n"
    )


def test_tidy_keeps_the_draft_unless_the_linter_says_less_of_it() -> None:
    draft = (
        "# Reproduces the reported issue: " + "a long title " * 6 + "\n\n"
        "from sympy import *\n" + GUARD + "\n\n"
        "def test_x():\n    x=symbols( 'x' )\n    y = sqrt(x)\n    assert sqrt(x**2) == x\n"
    )
    before = lint(FLAKE8, "tests/test_x.py", draft)
    assert {f.code for f in before} >= {"E501", "F403", "F405", "E225", "F841"}
    neat = tidy(draft, "tests/test_x.py", FLAKE8, star_names)
    assert lint(FLAKE8, "tests/test_x.py", neat) == ()
    assert "from sympy import sqrt, symbols\n" in neat and "    sqrt(x)\n" in neat
    # Already clean, or no better: as it is.
    assert tidy(neat, "tests/test_x.py", FLAKE8, star_names) == neat
    long_string = "def test_x():\n    assert f() == '" + "z" * 90 + "'\n"
    assert tidy(long_string, "tests/test_x.py", FLAKE8, star_names) == long_string


def test_a_long_string_is_cut_after_spaces_into_literals_python_joins_again() -> None:
    words = "the issue's message " * 6
    draft = f"def test_x():\n    assert str(1) == {words!r}\n"
    assert [f.code for f in lint(FLAKE8, "tests/test_x.py", draft)] == ["E501"]
    neat = tidy(draft, "tests/test_x.py", FLAKE8, star_names)
    assert lint(FLAKE8, "tests/test_x.py", neat) == ()
    assert ast.dump(ast.parse(neat)) == ast.dump(ast.parse(draft))
    assert neat.count('"the issue') == 2, neat


def test_a_string_that_cannot_be_cut_alike_stays_whole() -> None:
    def draft(literal: str) -> str:
        return f"def test_x():\n    assert f() == {literal}\n"

    spaces = "word " * 20
    kept = [
        draft("'" + "z" * 90 + "'"),  # no space to cut after
        draft("f'{x} " + spaces + "'"),  # a replacement field may hold the space
        draft("'x' '" + spaces + "'"),  # beside another literal
        draft("'''" + spaces + "'''"),  # triple-quoted
        # A named escape cut in two would be another value, or none.
        draft("'" + "w" * 52 + " \\N{LATIN SMALL LETTER A} " + "v" * 30 + "'"),
    ]
    for text in kept:
        assert split_long_strings(text, 79) == text, text
    short = draft("'" + spaces + "'")
    assert split_long_strings(short, 200) == short


def test_a_module_comparing_in_any_order_passes_a_79_column_flake8_once_tidied() -> None:
    body = plain_asserts(assert_expected("square_of_sum('x', 3)", "9 + 6*x + x**2"))
    draft = module_text("t", ["from algebra import square_of_sum"], [], [("sum", body)])
    assert "def _any_order(" in draft and lint(FLAKE8, "tests/test_x.py", draft)
    assert lint(FLAKE8, "tests/test_x.py", tidy(draft, "tests/test_x.py", FLAKE8, star_names)) == ()


def test_rows_are_counted_as_the_tokenizer_counts_them() -> None:
    # A form feed inside an earlier literal is a line boundary to ``splitlines``, not to Python.
    draft = "def test_x():\n    a = 'x\fy'\n    assert a != '" + "word " * 20 + "'\n"
    split = split_long_strings(draft, 79)
    assert split != draft and ast.dump(ast.parse(split)) == ast.dump(ast.parse(draft))
