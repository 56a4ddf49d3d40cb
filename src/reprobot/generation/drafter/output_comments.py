"""What a comment in an issue's code says a line printed (pure).

Reporters who paste code rather than a session often write the output next to the line that
printed it: ``d.kind  # UndefinedKind``, or on the line below (``# -> 3``, ``# Out: 0.75``),
or announce it on the line above, against what they expected (``# expected to be 'n' but the
answer is 0!``). Such a comment is the session's output line in another form. A comment that
reads as prose (``# works``, ``# TODO``, ``# not working``) or as a suggestion is no output.
"""

from __future__ import annotations

import ast
import itertools
import re

from reprobot.generation.issue.expectations import hedged, stated_in_line
from reprobot.validation import UNPARSABLE

_MAX_CHARS = 200
# Words that introduce the printed value rather than being part of it.
_MARKER = re.compile(
    r"(?:-+>|=+>|→|out(?:\[\d+\])?[ \t]*:|output[ \t]*:|result[ \t]*:|returns?\b:?|gives\b:?"
    r"|prints\b:?|yields\b:?|evaluates[ \t]+to\b:?)[ \t]*",
    re.I,
)
# Where a value stops and the reporter's words begin: "3, should be 2.5", "3 (wrong)".
# A parenthesis only after a space: "Ux(U + V)" is a call.
_CUT = re.compile(r"(?:[ \t]*(?:,|;|#)|[ \t]+(?:\(|--?|—|<-+|←))[ \t]*(?=[A-Za-z<←])")
# Words after the value, or in the comment lines below it, that call it wrong.
_CALLED_WRONG = re.compile(
    r"\b(?:wrong|incorrect|bug|should|expected|expecting|not|missed|missing|incomplete"
    r"|broken)\b|<-|←",
    re.I,
)
_REMARK_LINES = 3
# A comment line below the output that speaks of it ("# This is not correct"), not of the next
# lines ("# should also work for lists").
_REMARK = re.compile(
    r"#[ \t]*(?:this|that|which|it|the[ \t]+(?:result|output|value|answer)|wrong|incorrect|not"
    r"|bug|<-|←|\^)",
    re.I,
)
# Bare names that are values, not words of prose.
_VALUE_NAMES = frozenset({"nan", "inf", "oo", "zoo", "None", "True", "False", "NaN", "NaT"})
# Operators that make an expression read as a sentence ("x is y", "not working").
_PROSE_NODES = (
    ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom,
    ast.Starred,
)  # fmt: skip
_PROSE_OPS = (ast.Not, ast.Is, ast.IsNot, ast.In, ast.NotIn)


def _reads_as_value(text: str) -> bool:
    """Whether ``text`` is a printed value rather than a word or sentence."""
    try:
        tree = ast.parse(text, mode="eval")
    except UNPARSABLE:
        return False
    for node in ast.walk(tree):
        if isinstance(node, _PROSE_NODES + _PROSE_OPS):
            return False
    body = tree.body
    if isinstance(body, ast.Name):
        name = body.id
        # "x", "EmptySet", "UndefinedKind", "x1" print as themselves; "works", "TODO",
        # "Fails" are words.
        camel = sum(c.isupper() for c in name) >= 2 and not name.isupper()
        return (
            len(name) == 1
            or name in _VALUE_NAMES
            or camel
            or any(c.isdigit() or c == "_" for c in name)
        )
    return True


def comment_output(comment: str) -> tuple[str, bool] | None:
    """(the value, whether the comment calls it wrong) a comment shows printed, or None when
    the comment reads as prose or a suggestion."""
    text = comment.strip().lstrip("#").strip()
    if not text or len(text) > _MAX_CHARS or hedged(text):
        return None
    if marker := _MARKER.match(text):
        text = text[marker.end() :].strip()
    # The parser would read a second "#" as a comment, and "3 <-- bug" as a comparison.
    whole = not any(mark in text for mark in ("#", "<-", "←"))
    if whole and _reads_as_value(text.rstrip(".")):
        return text.rstrip("."), False
    # The longest value wins: "2*Ux(U + V) - Vx(U + V) # incomplete" is not cut at " - ".
    for cut in reversed(list(_CUT.finditer(text))):
        value, rest = text[: cut.start()].strip(), text[cut.start() :]
        if value and _reads_as_value(value):
            return value, _CALLED_WRONG.search(rest) is not None
    return None


def _comment_of(line: str, column: int) -> str | None:
    """The comment of ``line`` after byte ``column`` (where its code ends; the parser counts
    UTF-8 bytes), when there is one."""
    rest = line.encode()[column:].decode(errors="replace").strip()
    return rest if rest.startswith("#") else None


def _announced(lines: list[str], first: int) -> str | None:
    """The value the comment lines right above line ``first`` say the statement there gives,
    where they also say what it should give: "# Total sum is expected to be 'n' but the answer
    is 0!" above ``print(total)``: 0, called wrong. A comment above that states no expected
    value ("# prints 3") may be about the line before it, so it shows nothing here."""
    above: list[str] = []
    k = first - 1
    while k >= 0 and len(above) < _REMARK_LINES and (comment := _comment_of(lines[k], 0)):
        above.append(comment.lstrip("#").strip())
        k -= 1
    text = " ".join(reversed(above))
    if not text or len(text) > 3 * _MAX_CHARS:
        return None
    for stated in stated_in_line(text):
        actual = (stated.actual or "").strip().strip("`").strip()
        if stated.expected and actual and _reads_as_value(actual):
            return actual
    return None


def statement_output(lines: list[str], node: ast.stmt) -> tuple[str, bool]:
    """What the comments around the top-level expression statement ``node`` of the source
    ``lines`` show it printed: its own trailing comment, else a comment line right below it,
    else a comment above it that sets the value against the one expected; ("", False) when they
    show nothing."""
    if not isinstance(node, ast.Expr) or node.end_lineno is None or node.end_col_offset is None:
        return "", False
    last = node.end_lineno - 1
    below = list(
        itertools.takewhile(
            lambda comment: comment is not None,
            (_comment_of(line, 0) for line in lines[last + 1 : last + 2 + _REMARK_LINES]),
        )
    )
    trailing = _comment_of(lines[last], node.end_col_offset)
    if trailing is not None and (found := comment_output(trailing)) is not None:
        remarks = below
    elif below and (found := comment_output(below[0] or "")) is not None:
        remarks = below[1:]
    elif (announced := _announced(lines, node.lineno - 1)) is not None:
        return announced, True
    else:
        return "", False
    value, wrong = found
    # "# Out: b'<memory at 0x...>'", then "# This is not correct, I am expecting ...".
    return value, wrong or any(
        _REMARK.match(r) is not None and _CALLED_WRONG.search(r) is not None
        for r in remarks
        if r is not None
    )
