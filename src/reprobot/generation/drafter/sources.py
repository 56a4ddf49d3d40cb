"""What every variant of the no-LLM drafter is made of before it is placed in a file: a
``TestSource``, and the small readings of a reproducer's text they share (a printing statement,
a value a test can compare). Pure functions."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from reprobot.generation.issue.values import MAX_SHOWN_CHARS, is_literal
from reprobot.validation import UNPARSABLE


@dataclass(frozen=True)
class TestSource:
    """One variant before it is placed in a file."""

    __test__ = False

    method: str
    imports: tuple[str, ...]
    body: str
    note: str
    wants_tmp_path: bool = False
    # It runs one of the project's own commands (a console script, ``-m`` of its package, its
    # documentation build): it reaches the project whatever it imports.
    runs_project_command: bool = False
    # Its body is a module whose own ``test*`` functions are the tests: the tests the issue
    # writes out, run by pytest as they are, with the fixtures they ask for.
    module_level: bool = False


def squash(text: str) -> str:
    return "".join(text.split())


def printed(statement: str) -> str | None:
    """``x`` of a statement ``print(x)`` or ``pprint(x)`` (one argument, no keywords), else
    None: what it shows is a printed form of ``x``."""
    node = print_call(statement)
    if (
        node is not None
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ):
        return ast.unparse(node.args[0])
    return None


def only_displays(statement: str) -> bool:
    """Whether a statement only shows a value and changes nothing: a bare expression that
    calls nothing (``r``, ``m.is_finite``), or a printing call of such expressions
    (``print(r)``; not ``print(r, file=log)``, not ``print(f(r))``, whose call may do more)."""
    try:
        tree = ast.parse(statement.strip())
    except UNPARSABLE:
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return False
    shown: list[ast.expr] = [tree.body[0].value]
    call = print_call(statement)
    if call is not None:
        if call.keywords:
            return False
        shown = list(call.args)
    return not any(
        isinstance(n, ast.Call | ast.Await | ast.NamedExpr | ast.Yield | ast.YieldFrom)
        for expression in shown
        for n in ast.walk(expression)
    )


def print_call(statement: str) -> ast.Call | None:
    """``statement`` as a call of a function that prints (``print``, ``pprint``,
    ``pretty_print``, ``print_tree``), else None."""
    try:
        node = ast.parse(statement.strip(), mode="eval").body
    except UNPARSABLE:
        return None
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    # "register_blueprint" ends in "print" too.
    prints = name in ("print", "pprint") or name.endswith("_print") or name.startswith("print_")
    return node if prints else None


# A printed form that is no Python: ``<class 'sympy.core.symbol.Symbol'>``, ``<Quantity 1 m>``.
_ANGLE_REPR = re.compile(r"^<[^<>\n]+>$")
_MAX_DISPLAY_LINES = 10


def same_kind(text: str, shown: str) -> bool:
    """Whether ``text``, which does not read as a Python value, is still a value of the kind a
    statement showed: both ``<...>`` forms, on one line (``<class 'Function'>`` where the code
    printed ``<class 'Symbol'>``) or as the first line of a display of a few lines
    (``<xarray.DataArray ()>`` over ``array(1.)``). An expected value the issue ties to that
    statement may be such a form; a sentence never is."""
    a, b = text.strip().split("\n"), shown.strip().split("\n")
    if len(text) > MAX_SHOWN_CHARS or len(a) > _MAX_DISPLAY_LINES or len(b) > _MAX_DISPLAY_LINES:
        return False
    if (len(a) == 1) != (len(b) == 1):
        return False
    return bool(_ANGLE_REPR.match(a[0].strip()) and _ANGLE_REPR.match(b[0].strip()))


def is_shown_form(text: str) -> bool:
    """Whether one line reads as a value a statement showed: a Python value, or a ``<...>``
    form (``<class 'Symbol'>``); "with:" or a sentence does not."""
    return is_value_text(text) or bool(_ANGLE_REPR.match(text.strip()))


OUT_PROMPT = re.compile(r"^Out\[\d{0,6}\]:[ \t]*")
# A code span of prose: "I would expect the output `'F(x, 2)'`".
_SPAN = re.compile(r"`([^`\n]{1,300})`")


def stated_value(text: str, shown: str = "") -> str | None:
    """The value a stated expected or actual text gives: the whole text when it reads as a
    shown value (``5``, ```<class 'Symbol'>```), else its one code span that is a value of the
    kind ``shown`` is, or, with nothing shown, a literal ("I would expect the output
    `'F(x, 2)'`"). A span naming an API ("via `io.fits.Card`") and words alone give none."""
    # An IPython output line ("Out[2]: 'F(x, 2)'") states the value after its prompt.
    whole = OUT_PROMPT.sub("", text.strip().strip("`").strip(), count=1)
    if whole and is_shown_form(whole):
        return whole
    found = [s.strip() for s in _SPAN.findall(text) if _is_stated_value(s.strip(), shown)]
    return found[0] if len(dict.fromkeys(found)) == 1 else None


def _is_stated_value(span: str, shown: str) -> bool:
    if not span or not is_shown_form(span):
        return False
    if shown:
        kind = _python_kind(span)
        return same_kind(span, shown) or (
            kind not in ("", "Name", "Attribute") and kind == _python_kind(shown)
        )
    return is_literal(span) or bool(_ANGLE_REPR.match(span))


# literal_eval raises TypeError on some operations of constants ("1 + 'a'").
def _python_kind(text: str) -> str:
    """What sort of Python value ``text`` writes (``number``, ``str``, ``Tuple``, ``Call``), or
    "" when it writes none: a span of the sort a statement showed is a value of its kind."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except UNPARSABLE:
        return ""
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        node = node.operand
    if isinstance(node, ast.Constant):
        number = isinstance(node.value, int | float | complex) and not isinstance(node.value, bool)
        return "number" if number else type(node.value).__name__
    return type(node).__name__


def is_value_text(text: str) -> bool:
    """Whether an expected value the issue's words give reads as a value a test can compare:
    one short line that parses as a Python expression (``2.5``, ``'a-b'``, ``x**2 + 1``), not a
    sentence ("the empty string", "No error is thrown.")."""
    if not text or len(text) > MAX_SHOWN_CHARS or "\n" in text:
        return False
    try:
        ast.parse(text, mode="eval")
    except UNPARSABLE:
        return False
    return True
