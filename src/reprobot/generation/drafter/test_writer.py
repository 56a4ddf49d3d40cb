"""Test modules written from a reproducer: the text of a pytest file, as pure functions.

The issue's words only ever land in comments and string literals built with ``repr``, so no
text of the issue can break out of the test it is quoted in.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Sequence

from reprobot.console import printable
from reprobot.generation.drafter.any_order import (
    HELPER,
    helper_lines,
    is_unordered,
    order_is_the_claim,
)
from reprobot.generation.drafter.test_style import APPROX_HELPER, PYTEST, TestStyle, class_name
from reprobot.generation.drafter.truth_values import TRUTH_VALUES, asserted_as_itself
from reprobot.generation.issue.values import literal
from reprobot.validation import UNPARSABLE

_SLUG_WORD = re.compile(r"[a-z0-9]+")
_MAX_SLUG_WORDS = 6
_CLITIC = re.compile(r"(?<=[a-z])['’][a-z]{1,2}\b")
# NumPy's repr of an array: array([1, 2]) or array([1., 2.]) (dtype and all).
_ARRAY = re.compile(r"(?:np\.|numpy\.)?array\((\[.*\])(?:,\s*dtype=[\w.]+)?\)", re.S)
_STOP = frozenset(
    {"the", "a", "an", "of", "to", "in", "on", "for", "and", "or", "is", "are", "be", "with"}
    | {"when", "does", "not", "no", "can", "cannot", "should", "it", "its", "by", "from", "as"}
    | {"bug", "issue", "error", "fails", "fail", "broken", "wrong"}
)


def slug(title: str) -> str:
    """A short identifier from an issue title (``Matrix.col_insert() is wrong`` gives
    ``matrix_col_insert``)."""
    # "Modeling's" and "doesn't" are one word each, not "modeling", "s".
    words = [w for w in _SLUG_WORD.findall(_CLITIC.sub("", title.lower())) if w not in _STOP]
    # Numbers in a title are mostly an example's data ("median([7, 8, 9, 10]) is 9").
    words = [w for w in words if not w.isdigit()] or words
    text = "_".join(words[:_MAX_SLUG_WORDS])[:60].strip("_")
    return text if text and not text[0].isdigit() else f"issue_{text}".strip("_")


# A star import can bring in callables pytest collects as tests (``sympy.test``, ``numpy.test``
# run a whole project's suite); the module keeps none that it did not define itself.
STAR_GUARD = (
    "# Names a star import brought in are not this module's tests.",
    "for _name in [n for n in dict(globals()) if n.lower().startswith('test')]:",
    "    if getattr(globals()[_name], '__module__', __name__) != __name__:",
    "        del globals()[_name]",
)


def _comment(text: str, width: int = 96) -> list[str]:
    # The issue's words, as the test file and every diff of it show them: no control sequence.
    lines = textwrap.wrap(" ".join(printable(text).split()), width=width - 2) or [""]
    return [f"# {line}" for line in lines[:3]]


def indented(source: str, by: str = "    ") -> str:
    return textwrap.indent(source, by, lambda line: True).replace(by + "\n", "\n")


def header(title: str, reference: str = "") -> str:
    """The first line of a drafted module: the issue it is a regression test for, as the
    repository names it ("#123"); without a number, the issue's title."""
    if reference:
        return f"Regression test for {reference}."
    return f"Reproduces the reported issue: {title}"


def module_text(
    title: str,
    imports: Sequence[str],
    prelude: Sequence[str],
    tests: Sequence[tuple[str, str]],
    params: str = "",
    style: TestStyle = PYTEST,
    reference: str = "",
) -> str:
    """A test module: a comment naming the issue (``header``), module-level imports and
    bindings, and each
    (name, body) as ``def test_<name>(<params>):`` (``params`` names pytest fixtures), or, in
    the unittest family's style, as a method of one ``TestCase`` class."""
    parts = [*_comment(header(title, reference)), ""]
    imports = merged_imports(list(dict.fromkeys(imports)))
    if imports:
        parts.extend(imports)
        parts.append("")
    if any(line.rstrip().endswith("import *") for line in imports):
        parts.extend(STAR_GUARD)
        parts.append("")
    if prelude:
        parts.extend(prelude)
        parts.append("")
    if not style.is_pytest and any("_approx(" in body for _, body in tests):
        parts.extend(["", *APPROX_HELPER, ""])
    if any(f"{HELPER}(" in body for _, body in tests):
        parts.extend(["", *helper_lines(), ""])
    if style.is_pytest:
        for name, body in tests:
            parts.append("")
            parts.append(f"def test_{name}({params}):")
            parts.append(indented(body.rstrip("\n")) if body.strip() else "    pass")
    else:
        parts.append("")
        parts.append(f"class {class_name(tests[0][0] if tests else 'issue')}({style.base}):")
        for k, (name, body) in enumerate(tests):
            if k:
                parts.append("")
            parts.append(f"    def test_{name}(self):")
            text = body.rstrip("\n") if body.strip() else "pass"
            parts.append(indented(text, "        "))
    return "\n".join(parts).rstrip("\n") + "\n"


def _from_import(line: str) -> ast.ImportFrom | None:
    try:
        tree = ast.parse(line)
    except UNPARSABLE:
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, ast.ImportFrom) or any(a.name == "*" for a in node.names):
        return None
    return node


def merged_imports(lines: Sequence[str]) -> list[str]:
    """``lines`` with each run of ``from M import a`` lines of one module written as one, as a
    maintainer writes them (``from M import a, b``); nothing moves past another import, so every
    name is bound in the same order as before."""
    out: list[str] = []
    last: ast.ImportFrom | None = None
    for line in lines:
        node = _from_import(line)
        if node is not None and last is not None and _same_module(node, last):
            have = {(a.name, a.asname) for a in last.names}
            last.names.extend(a for a in node.names if (a.name, a.asname) not in have)
            out[-1] = ast.unparse(last)
            continue
        out.append(line)
        last = node
    return out


def _same_module(a: ast.ImportFrom, b: ast.ImportFrom) -> bool:
    return (a.module, a.level) == (b.module, b.level)


# A value shown over several lines is a two-dimensional display: what IPython shows of an object
# whose package prints it prettily (SymPy's ``pretty``) rather than its str or repr. Reporters'
# copies lose trailing spaces, so lines are compared without them.
_DISPLAY_FORMS = (
    "_package = _sys.modules.get(type(result).__module__.partition('.')[0])",
    "_forms = [str(result), repr(result)]",
    "if callable(getattr(_package, 'pretty', None)):",
    "    _forms.append(_package.pretty(result))",
    # A display drawn with box characters is the Unicode one, whatever the default.
    "    try:",
    "        _forms.append(_package.pretty(result, use_unicode=True))",
    "    except TypeError:  # a printer without that setting",
    "        pass",
    "_forms = ['\\n'.join(line.rstrip() for line in form.strip().split('\\n')) for form in _forms]",
)


def _display(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def _printed_forms(shown: str, pretty: bool = False) -> tuple[list[str], str, str]:
    """(lines that compute the printed forms of ``result``, the expression naming them, the
    shown text as they are compared with it); ``pretty``: shown by a pretty printer, even on
    one line."""
    if "\n" not in shown.strip() and not pretty:
        return [], "(str(result), repr(result))", shown
    return list(_DISPLAY_FORMS), "_forms", _display(shown)


def assert_not_shown(
    expression: str,
    shown: str,
    setup: Sequence[str] = (),
    pretty: bool = False,
    within: bool = False,
) -> str:
    """Run ``setup``, evaluate ``expression``, and fail if it still prints what the issue shows
    (``pretty``: as ``pprint`` showed it; ``within``: anywhere inside what it prints, as when
    another release prints more around the same value)."""
    forms, named, shown = _printed_forms(shown, pretty)
    lines = [*setup, f"result = {expression}", *forms]
    test = (
        f"not any({shown!r} in _form for _form in {named})"
        if within
        else (f"{shown!r} not in {named}")
    )
    lines.append(f"assert {test}, 'still gives the value the issue reports: ' + repr(result)")
    return "\n".join(lines)


def assert_message_gone(body: str, message: str) -> str:
    """Run ``body`` and fail if it raises with ``message`` in what it says: the message the
    issue calls wrong gone, whether the fix raises another message or nothing."""
    return "\n".join(
        [
            "try:",
            indented(body.strip() or "pass"),
            "except Exception as _raised:",
            f"    assert {message!r} not in str(_raised), "
            "'still raises the message the issue reports: ' + repr(str(_raised))",
        ]
    )


# Where a statement that prints (``pprint(x)``, ``print(a, b)``) has its output caught, to stand
# for the value it showed.
CAUGHT_OUTPUT = "_output.getvalue().strip()"


def catch_output(statement: str) -> list[str]:
    """``statement`` run with what it writes to standard output caught in ``CAUGHT_OUTPUT``."""
    return [
        "with _contextlib.redirect_stdout(_io.StringIO()) as _output:",
        indented(statement.strip()),
    ]


def _approximate(value: object) -> bool:
    """Whether ``value`` is compared with a tolerance: a float, or a flat list, tuple or dict of
    numbers with a float among them (what ``pytest.approx`` takes)."""
    if isinstance(value, float):
        return True
    items = list(value.values()) if isinstance(value, dict) else value
    if not isinstance(items, list | tuple) or not items:
        return False
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in items)
    return numbers and any(isinstance(v, float) for v in items)


def _expected_message(expected: str) -> str:
    """The message of an assertion written here, for runners that do not rewrite assertions
    (``plain_asserts`` removes it for pytest)."""
    return f"'expected ' + {expected!r} + ', got ' + repr(result)"


def expected_assertion(expected: str, shown: str = "") -> str:
    """``assert`` that ``result`` is the value the issue states, compared by its kind: numbers
    numerically (a tolerance for floats only), containers structurally (a NumPy array as its
    list), None by identity, strings exactly (a value that is no string by its ``str``); the
    printed form (``str`` or ``repr``) only when the text is not a literal, with the items of a
    printed set, mapping or sum in any order, unless ``shown``, the value the issue shows the
    code give, differs from the expected one in their order alone."""
    message = _expected_message(expected)
    subject = "result"
    text = expected
    if array := _ARRAY.fullmatch(expected):
        subject, text = "getattr(result, 'tolist', lambda: result)()", array.group(1)
    ok, value = literal(text)
    if not ok:
        forms, named, printed_form = _printed_forms(expected)
        if not forms and is_unordered(expected) and not order_is_the_claim(expected, shown):
            sorted_forms = f"({HELPER}(str(result)), {HELPER}(repr(result)))"
            return f"assert {HELPER}({expected!r}) in {sorted_forms}, {message}"
        return "\n".join([*forms, f"assert {printed_form!r} in {named}, {message}"])
    if value is None:
        return f"assert result is None, {message}"
    if _approximate(value):
        return f"assert {subject} == pytest.approx({value!r}), {message}"
    if isinstance(value, str):
        # Quotes around a value that is no string are the reporter's quoting of its printed
        # form ("expected to be 'n'"): compare that form, never a string with an object (whose
        # ``==`` may parse the string, as SymPy's does).
        subject = f"({subject} if isinstance({subject}, str) else str({subject}))"
    return f"assert {subject} == {value!r}, {message}"


# The messages the assertions written here carry, by their leading text: where pytest rewrites
# assertions, its own report shows both sides, and a maintainer writes none (``plain_asserts``
# drops them). "expected " is the whole leading text of ours ("'expected ' + '2.5' + ...").
_MESSAGE_LEADS = (
    "still gives the value the issue reports: ",
    "still raises the message the issue reports: ",
    # A command's output: pytest's report of ``not re.search`` shows the match, the line the
    # issue reports; of ``re.search``, the output searched.
    "the output still shows ",
    "the output lacks ",
)


def _leading_text(node: ast.expr) -> str | None:
    while isinstance(node, ast.BinOp):
        node = node.left
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _with_our_message(tree: ast.AST) -> list[ast.Assert]:
    """The assertions of ``tree`` that carry a message written here."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.msg is not None:
            lead = _leading_text(node.msg)
            if lead is not None and (lead == "expected " or lead.startswith(_MESSAGE_LEADS)):
                found.append(node)
    return found


def generated_messages(source: str) -> int:
    """How many assertions of a test module carry a message written here (0 when it does not
    parse): the benchmark counts the chosen tests that still do."""
    try:
        return len(_with_our_message(ast.parse(source)))
    except SyntaxError:
        return 0


def plain_asserts(body: str) -> str:
    """``body`` with the messages of the assertions written here removed, for a test pytest
    runs: its assertion rewriting reports the compared values itself (``assert 3 == 2.5``).
    Assertions of the reporter's own code keep theirs; a body that does not parse is kept."""
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return body
    lines = [line.encode() for line in body.split("\n")]
    cuts: list[tuple[int, int, int]] = []
    for node in _with_our_message(tree):
        msg = node.msg
        if msg is None:
            continue
        row, start, end = msg.end_lineno, node.test.end_col_offset, msg.end_col_offset
        if row is None or start is None or end is None or node.test.end_lineno != row:
            continue
        cuts.append((row, start, end))
    for row, start, end in sorted(cuts, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + line[end:]
    return "\n".join(line.decode() for line in lines)


def assert_expected(
    expression: str, expected: str, setup: Sequence[str] = (), shown: str = ""
) -> str:
    """Run ``setup``, evaluate ``expression`` and require the value the issue expects
    (``shown``: the value the issue shows it give, when it shows one)."""
    if expected in TRUTH_VALUES and asserted_as_itself(expression):
        # Asserted as itself, as a maintainer writes it: ``== True`` is what linters flag, and
        # ``is True`` fails on NumPy's bools.
        negation = "" if expected == "True" else "not "
        assertion = f"assert {negation}result, {_expected_message(expected)}"
    else:
        assertion = expected_assertion(expected, shown)
    return "\n".join([*setup, f"result = {expression}", assertion])


def needs_pytest(body: str) -> bool:
    """Whether a body written here uses ``pytest`` (its module must import it)."""
    return "pytest.approx(" in body or "pytest.raises(" in body


# Modules the bodies written here use, under names a reporter's code does not take.
_HELPER_IMPORTS = (
    ("_sys.", "import sys as _sys"),
    ("_contextlib.", "import contextlib as _contextlib"),
    ("_io.", "import io as _io"),
    ("_override_settings(", "from django.test import override_settings as _override_settings"),
)


def needed_imports(body: str) -> list[str]:
    """The imports a body written here needs beyond the reporter's own."""
    found = ["import pytest"] if needs_pytest(body) else []
    return found + [line for marker, line in _HELPER_IMPORTS if marker in body]
