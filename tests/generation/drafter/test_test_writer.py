"""Test module text written from a reproducer: names, quoting, and assertion bodies that run."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from reprobot.generation.drafter.test_writer import (
    CAUGHT_OUTPUT,
    assert_expected,
    assert_message_gone,
    assert_not_shown,
    catch_output,
    generated_messages,
    merged_imports,
    module_text,
    needed_imports,
    needs_pytest,
    plain_asserts,
    slug,
)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Matrix.col_insert() is wrong", "matrix_col_insert"),
        ("BUG: parse_duration fails with an error on '1h30m'", "parse_duration_1h30m"),
        ("3D plots crash", "issue_3d_plots_crash"),
        ("Bug: the error", "issue"),
        ("", "issue"),
        ("Ünïcode — only", "n_code_only"),
        ("one two three four five six seven eight", "one_two_three_four_five_six"),
        (
            "Modeling's `separability_matrix` doesn't nest",
            "modeling_separability_matrix_doesn_nest",
        ),
        ("The writer’s header rows", "writer_header_rows"),
    ],
)
def test_slug(title: str, expected: str) -> None:
    assert slug(title) == expected


def test_slug_is_an_identifier_of_bounded_length() -> None:
    long = slug("x" * 200 + " and more")
    assert long.isidentifier() and len(long) <= 60
    for title in ("42", "[BUG] 500 on /api/v2", "!!!", "__init__ breaks"):
        assert slug(title).isidentifier(), title


def module(title: str) -> str:
    return module_text(
        title,
        ["import kettle", "from kettle import boil", "import kettle"],
        ["x, y = kettle.sizes('small large')"],
        [("boil_twice", "boil(x)\nboil(y)\n"), ("empty", "  \n")],
    )


def test_module_text_layout() -> None:
    assert module("boil() twice fails") == (
        "# Reproduces the reported issue: boil() twice fails\n"
        "\n"
        "import kettle\n"
        "from kettle import boil\n"
        "\n"
        "x, y = kettle.sizes('small large')\n"
        "\n"
        "\n"
        "def test_boil_twice():\n"
        "    boil(x)\n"
        "    boil(y)\n"
        "\n"
        "def test_empty():\n"
        "    pass\n"
    )


def test_module_text_indents_blocks_and_keeps_blank_lines_empty() -> None:
    body = "def helper(v):\n    return v * 2\n\nassert helper(2) == 4\n"
    text = module_text("t", [], [], [("helper", body)])
    assert "    def helper(v):\n        return v * 2\n\n    assert helper(2) == 4\n" in text
    namespace: dict[str, object] = {}
    exec(compile(text, "test_helper.py", "exec"), namespace)
    test = namespace["test_helper"]
    assert callable(test)
    test()


@pytest.mark.parametrize(
    "title",
    [
        'Evil """ title',
        "Title\nimport os; os.system('echo pwned')",
        "Title\r\nraise SystemExit(3)\rraise SystemExit(4)",
        "Title '''\n\n\ndef test_injected():\n    assert False",
        "Form\x0cfeed\x0bvertical\u2028line\u2029para\x85next",
        "x" * 500 + "\nraise SystemExit(5)",
        "\x1b]0;pwned\x07Title \x1b[2K\u202ereversed\u2066",
    ],
)
def test_module_text_the_title_stays_in_a_comment(title: str) -> None:
    text = module(title)
    tree = ast.parse(text)
    assert [type(node).__name__ for node in tree.body] == [
        "Import",
        "ImportFrom",
        "Assign",
        "FunctionDef",
        "FunctionDef",
    ]
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == [
        "test_boil_twice",
        "test_empty",
    ]
    header = text.split("\n\n", 1)[0]
    assert all(line.startswith("# ") for line in header.split("\n"))
    assert len(header.split("\n")) <= 3
    # No control or bidirectional character reaches the file, nor any diff of it.
    assert not any(ch in header for ch in "\x1b\x07\u202e\u2066")


# --- assertion bodies, run with exec -------------------------------------------------------------

SETUP = [
    "def half_up(v):",
    "    return int(v)  # the bug: rounds halves down",
    "def fixed_half_up(v):",
    "    return int(v + 0.5)",
]


def run(body: str, names: dict[str, object] | None = None) -> None:
    """``body`` as the module drafted around it runs it: with the imports it needs."""
    module = "\n".join([*needed_imports(body), body])
    exec(compile(module, "<test>", "exec"), dict(names or {}))


def test_assert_not_shown_fails_while_the_wrong_value_comes_back() -> None:
    body = assert_not_shown("half_up(2.5)", "2", SETUP)
    with pytest.raises(AssertionError, match="still gives the value the issue reports: 2"):
        run(body)


def test_assert_not_shown_passes_once_fixed() -> None:
    run(assert_not_shown("fixed_half_up(2.5)", "2", SETUP))


def test_assert_not_shown_compares_str_and_repr() -> None:
    with pytest.raises(AssertionError):
        run(assert_not_shown("'a' + 'b'", "'ab'"))
    with pytest.raises(AssertionError):
        run(assert_not_shown("'a' + 'b'", "ab"))
    run(assert_not_shown("['ab']", "ab"))  # not a substring search


def test_assert_expected_fails_with_the_wrong_value() -> None:
    body = assert_expected("half_up(2.5)", "3", SETUP)
    with pytest.raises(AssertionError, match="expected 3, got 2"):
        run(body)


def test_assert_expected_passes_with_the_right_value() -> None:
    run(assert_expected("fixed_half_up(2.5)", "3", SETUP))
    run(assert_expected("{'a': [1, 2]}", "{'a': [1, 2]}"))
    run(assert_expected("'text'", "'text'"))


def test_assertion_bodies_quote_values_safely() -> None:
    nasty = "'), __import__('os').system('echo pwned'), ('"
    with pytest.raises(AssertionError):
        run(assert_expected("'x'", nasty))
    run(assert_not_shown("'x'", nasty))
    multi = 'line one\n"""\nline two'
    with pytest.raises(AssertionError):
        run(assert_not_shown(repr(multi), multi))


@pytest.mark.parametrize(
    ("expected", "assertion"),
    [
        ("2.5", "assert result == pytest.approx(2.5), "),
        ("3", "assert result == 3, "),
        ("[1, 2]", "assert result == [1, 2], "),
        ("[0.5, 1]", "assert result == pytest.approx([0.5, 1]), "),
        ("(1, [2.5])", "assert result == (1, [2.5]), "),
        ("None", "assert result is None, "),
        ("True", "assert result == True, "),
        ("'abc'", "assert (result if isinstance(result, str) else str(result)) == 'abc', "),
        ('{"a": 1}', "assert result == {'a': 1}, "),
        ("array([1., 2.])", "assert getattr(result, 'tolist', lambda: result)() == pytest.approx("),
        ("Matrix([[1, 0]])", "assert 'Matrix([[1, 0]])' in (str(result), repr(result)), "),
        (
            "x**2 + 1",
            "assert _any_order('x**2 + 1') in (_any_order(str(result)), "
            "_any_order(repr(result))), ",
        ),
        ("{x, y}", "assert _any_order('{x, y}') in (_any_order(str(result)), "),
        ("f(x, y)", "assert 'f(x, y)' in (str(result), repr(result)), "),
    ],
)
def test_expected_values_are_compared_by_kind(expected: str, assertion: str) -> None:
    body = assert_expected("f()", expected)
    assert body.startswith(f"result = f()\n{assertion}")
    ast.parse(body)
    assert needs_pytest(body) == ("pytest.approx(" in assertion)


class _Parses:
    """An object whose ``==`` turns a string into another object, as SymPy's does."""

    def __init__(self, name: str, positive: bool) -> None:
        self.name, self.positive = name, positive

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = _Parses(other, positive=False)
        return isinstance(other, _Parses) and (other.name, other.positive) == (
            self.name,
            self.positive,
        )

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return self.name


def test_a_quoted_value_is_a_string_or_the_printed_form_of_an_object() -> None:
    body = assert_expected("value", "'n'")
    # "expected to be 'n'": a SymPy symbol that prints as n is it, whatever its ``==`` says.
    exec(compile(body, "<test>", "exec"), {"value": _Parses("n", positive=True)})
    exec(compile(body, "<test>", "exec"), {"value": "n"})
    for wrong in (_Parses("0", positive=True), "0", "'n'", 0):
        with pytest.raises(AssertionError):
            exec(compile(body, "<test>", "exec"), {"value": wrong})


PRETTY_PACKAGE = """
class Grid:
    def __init__(self, rows):
        self.rows = rows

    def __repr__(self):
        return f"Grid({self.rows!r})"


def pretty(grid, **settings):
    # Each row on a line of its own, padded as a 2D printer pads (trailing spaces included);
    # ASCII unless asked for Unicode, as SymPy's printer is under its own test suite.
    unknown = set(settings) - {"use_unicode"}
    if unknown:
        raise TypeError(f"unknown settings: {unknown}")
    bar = "\u2502" if settings.get("use_unicode") else "|"
    return "\\n".join(bar + " ".join(str(v) for v in row) + bar + "  " for row in grid.rows)
"""


@pytest.fixture
def pretty_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    (tmp_path / "prettypkg.py").write_text(PRETTY_PACKAGE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "prettypkg", raising=False)
    import prettypkg  # type: ignore[import-not-found]

    return {"Grid": prettypkg.Grid}


def test_a_value_shown_over_several_lines_is_compared_with_its_package_pretty_form(
    pretty_package: dict[str, object],
) -> None:
    # As IPython showed it: the reporter's copy lost the trailing spaces.
    shown = "\u25021 0\u2502\n\u25020 1\u2502"
    body = assert_not_shown("Grid([[1, 0], [0, 1]])", shown)
    with pytest.raises(AssertionError, match="still gives the value the issue reports"):
        run(body, pretty_package)
    run(assert_not_shown("Grid([[1, 0], [0, 2]])", shown), pretty_package)
    run(assert_expected("Grid([[1, 0], [0, 1]])", shown), pretty_package)
    with pytest.raises(AssertionError, match="expected"):
        run(assert_expected("Grid([[0, 1], [1, 0]])", shown), pretty_package)
    run(assert_expected("Grid([[1, 0], [0, 1]])", "|1 0|\n|0 1|"), pretty_package)
    # One line is compared with str and repr only, as before.
    assert "_forms" not in assert_not_shown("Grid([[1]])", "1")


def test_caught_output_is_what_a_statement_printed() -> None:
    body = assert_not_shown(CAUGHT_OUTPUT, "a 1", catch_output("print('a', 1)"))
    assert needed_imports(body) == ["import contextlib as _contextlib", "import io as _io"]
    with pytest.raises(AssertionError):
        run(body, {})
    run(assert_not_shown(CAUGHT_OUTPUT, "a 1", catch_output("print('a', 2)")), {})


def test_expected_text_cannot_escape_its_literal() -> None:
    hostile = "1')\nimport os; os.system('x')  #"
    body = assert_expected("f()", hostile)
    tree = ast.parse(body)
    # Several lines make it a display, compared with the printed forms; never a statement.
    assert [type(n).__name__ for n in tree.body] == ["Assign"] * 3 + ["If", "Assign", "Assert"]
    assert not any(isinstance(n, ast.Import) for n in ast.walk(tree))
    assert "system" not in {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def test_a_star_import_brings_no_tests_of_its_own(tmp_path: Path) -> None:
    # A package exporting a ``test`` function that runs its whole suite (as sympy and numpy do).
    (tmp_path / "starpkg.py").write_text(
        "def test():\n    raise SystemExit('the whole suite ran')\n\n"
        "class TestSuite:\n    def test_all(self):\n        raise SystemExit('ran')\n\n"
        "def helper():\n    return 1\n"
    )
    text = module_text(
        "helper is wrong", ["from starpkg import *"], [], [("helper", "assert helper() == 1")]
    )
    (tmp_path / "test_drafted.py").write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_drafted.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def _run(body: str) -> None:
    exec(compile(body, "<test>", "exec"), {})


def test_the_message_gone_fails_on_the_message_and_passes_on_another_or_none() -> None:
    message = "no attribute 'prop'"
    raising = "raise AttributeError(\"'C' object has no attribute 'prop'\")"
    with pytest.raises(AssertionError, match="still raises the message the issue reports"):
        _run(assert_message_gone(raising, message))
    _run(assert_message_gone("raise AttributeError(\"no attribute 'random_attr'\")", message))
    _run(assert_message_gone("x = 1", message))
    # Every statement runs inside the try, however many lines it has.
    assert assert_message_gone("a = 1\nif a:\n    b = 2", message).startswith(
        "try:\n    a = 1\n    if a:\n        b = 2\nexcept Exception as _raised:\n"
    )


@pytest.mark.parametrize(
    ("body", "plain"),
    [
        (assert_expected("f(1)", "2.5"), "result = f(1)\nassert result == pytest.approx(2.5)"),
        (assert_expected("f(1)", "None"), "result = f(1)\nassert result is None"),
        (
            assert_not_shown("f(2)", "[3, 1]"),
            "result = f(2)\nassert '[3, 1]' not in (str(result), repr(result))",
        ),
        (
            assert_message_gone("f(3)", "bad"),
            "try:\n    f(3)\nexcept Exception as _raised:\n    assert 'bad' not in str(_raised)",
        ),
        # A command's test: pytest's report shows the match, or the output searched.
        (
            "assert not re.search('bad', output), 'the output still shows ' + 'bad' + ':\\n'"
            " + output[-3000:]\nassert re.search('good', output), 'the output lacks ' + 'good'",
            "assert not re.search('bad', output)\nassert re.search('good', output)",
        ),
        # The reporter's own assertions keep their messages; a body that does not parse stays.
        ("assert ok, 'expected it to work'", "assert ok, 'expected it to work'"),
        ("assert total == 3, 'sum: ' + repr(total)", "assert total == 3, 'sum: ' + repr(total)"),
        (
            "def broken(:\n    assert x, 'expected ' + 'y'",
            "def broken(:\n    assert x, 'expected ' + 'y'",
        ),
    ],
)
def test_a_test_pytest_runs_carries_no_message_of_ours(body: str, plain: str) -> None:
    assert plain_asserts(body) == plain
    assert generated_messages(plain) == 0


def test_the_benchmark_counts_the_messages_written_here_and_only_those() -> None:
    command = (
        "assert not re.search('bad', output), 'the output still shows ' + 'bad'\n"
        "assert re.search('good', output), 'the output lacks ' + 'good'"
    )
    assert generated_messages(command) == 2
    assert generated_messages(assert_expected("f(1)", "2.5")) == 1
    assert generated_messages("assert ok, 'expected it to work'") == 0


def test_the_header_names_the_issue_as_the_repository_does_when_its_number_is_known() -> None:
    assert module_text(
        "boil() twice fails", [], [], [("boil", "pass")], reference="#12"
    ).startswith("# Regression test for #12.\n")
    assert module_text("boil() twice fails", [], [], [("boil", "pass")]).startswith(
        "# Reproduces the reported issue: boil() twice fails\n"
    )


class _Printed:
    """A value that prints as a given text, as a project's object does."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def _pytest_on(path: Path, text: str) -> subprocess.CompletedProcess[str]:
    """pytest run on a module of ``text`` written at ``path``."""
    path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=path.parent,
    )


def _module_with(expected: str, printed: str, shown: str = "") -> str:
    body = plain_asserts(assert_expected(f"_Printed({printed!r})", expected, shown=shown))
    prelude = [
        "class _Printed:",
        "    def __init__(self, text):",
        "        self.text = text",
        "",
        "    def __str__(self):",
        "        return self.text",
    ]
    return module_text("t", [], prelude, [("value", body)])


@pytest.mark.parametrize(
    ("expected", "printed", "passes"),
    [
        # A reporter's guess at a sum's order, a set's order, a mapping's order: the same items.
        ("x + 1", "1 + x", True),
        ("x**2 + 2*x + 1", "2*x + x**2 + 1", True),
        ("-x + y", "y - x", True),
        ("{x, y}", "{y, x}", True),
        ("{a: 1, b: 2}", "{b: 2, a: 1}", True),
        # Other items, or signs, are another value.
        ("x + 1", "x + 2", False),
        ("x - y", "y - x", False),
        ("{x, y}", "{x, y, z}", False),
        ("{a: 1, b: 2}", "{a: 2, b: 1}", False),
        # A call's arguments keep their order.
        ("f(x, y)", "f(y, x)", False),
    ],
)
def test_a_set_mapping_or_sum_is_compared_in_any_order(
    expected: str, printed: str, passes: bool, tmp_path: Path
) -> None:
    done = _pytest_on(tmp_path / "test_value.py", _module_with(expected, printed))
    assert (done.returncode == 0) == passes, done.stdout
    if not passes:
        # pytest's report shows the issue's value as the one expected.
        assert repr(expected) in done.stdout


def test_the_order_stays_when_it_is_what_the_issue_calls_wrong() -> None:
    # The issue shows ``1 + x`` and expects ``x + 1``: the order is the claim.
    body = assert_expected("f()", "x + 1", shown="1 + x")
    assert "_any_order" not in body
    assert "assert 'x + 1' in (str(result), repr(result))" in body
    # A value shown with other items leaves the comparison loose as to order.
    assert "_any_order('x + 1')" in assert_expected("f()", "x + 1", shown="x + 2")


# A truth value of a library's own type: equal to True or False, but neither of them (NumPy's
# ``np.True_``), so ``is True`` would fail where ``== True`` and the value itself hold.
_LIBRARY_BOOL = [
    "class _Bool:",
    "    def __init__(self, value):",
    "        self.value = value",
    "",
    "    def __bool__(self):",
    "        return self.value",
    "",
    "    def __eq__(self, other):",
    "        return self.value == other",
    "",
    "    def __repr__(self):",
    "        return repr(self.value)",
    "",
    "class _Dtype:",
    "    def __init__(self, name):",
    "        self.name = name",
    "",
    "    def __eq__(self, other):",
    "        return _Bool(self.name == other.name)",
]


@pytest.mark.parametrize(
    ("expression", "expected", "passes", "report"),
    [
        ("_Dtype('i4') == _Dtype('i4')", "True", True, ""),
        ("_Dtype('i4') == _Dtype('i8')", "True", False, "assert False"),
        ("_Dtype('i4') == _Dtype('i8')", "False", True, ""),
        ("_Dtype('i4') == _Dtype('i4')", "False", False, "assert not True"),
        ("isinstance(1, int)", "True", True, ""),
    ],
)
def test_a_truth_value_is_asserted_as_itself(
    expression: str, expected: str, passes: bool, report: str, tmp_path: Path
) -> None:
    """A comparison or predicate the issue expects True or False of is asserted as itself, as a
    maintainer writes it: no ``== True`` for linters to flag, and a library's own truth values
    (NumPy's) pass where ``is True`` would fail them. pytest's report shows the value got."""
    body = plain_asserts(assert_expected(expression, expected))
    tree = ast.parse(body)
    compared = [n for n in ast.walk(tree) if isinstance(n, ast.Compare)]
    assert all(
        not isinstance(c, ast.Constant) or not isinstance(c.value, bool)
        for n in compared
        for c in n.comparators
    ), body
    done = _pytest_on(
        tmp_path / "test_truth.py", module_text("t", [], _LIBRARY_BOOL, [("truth", body)])
    )
    assert (done.returncode == 0) == passes, done.stdout
    assert report in done.stdout
    # A value whose form gives no truth value keeps its comparison with the literal, and so
    # does an ordering, which SymPy may leave undecided as a relational whose truth raises.
    assert "assert result == True" in plain_asserts(assert_expected("f()", "True"))
    assert "assert result == True" in plain_asserts(assert_expected("x < 1", "True"))


def test_runs_of_imports_from_one_module_are_one_line() -> None:
    lines = [
        "from sympy.physics.units.util import convert_to",
        "from sympy.physics.units import joule",
        "from sympy.physics.units import second",
        "from sympy.physics.units import joule as J",
        "import os",
        "from sympy.physics.units import meter",
        "from . import a",
        "from . import b as c",
        "from x import *",
        "from x import y",
    ]
    assert merged_imports(lines) == [
        "from sympy.physics.units.util import convert_to",
        "from sympy.physics.units import joule, second, joule as J",
        "import os",
        # Not past another import: names stay bound in the order they were.
        "from sympy.physics.units import meter",
        "from . import a, b as c",
        "from x import *",
        "from x import y",
    ]
    module = module_text("t", lines[1:3], [], [("x", "assert second")])
    assert "from sympy.physics.units import joule, second\n" in module
