"""Python written straight into an issue's prose, with no fence or indentation: trackers that
lost the markup (Trac's imports, pasted e-mails) leave code as plain lines between sentences.

Pure and linear on any input: a run is parsed a bounded number of times, and never tried again
from inside.
"""

from __future__ import annotations

import ast
import re

from reprobot.validation import UNPARSABLE, UNREADABLE

PY_SIGNAL = re.compile(
    r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import\b|import[ \t]+[\w.]+|(?:async[ \t]+)?def[ \t]+\w+"
    r"[ \t]*\(|class[ \t]+\w+[ \t]*[(:]|@[\w.]+[ \t]*(?:\(|$)|if[ \t]+__name__[ \t]*==)",
    re.MULTILINE,
)


def width(line: str) -> int:
    """Indentation in columns, tabs to the next multiple of four."""
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def parses_as_code(text: str) -> bool:
    """Whether ``text`` parses as Python with at least one statement that does something.

    Output often parses too (``[1, 2]``, ``True``, ``KeyError: 'a'`` as an annotation), so bare
    values and annotations without a value do not count."""
    try:
        tree = ast.parse(text)
    except UNPARSABLE:
        return False
    for node in tree.body:
        if isinstance(node, ast.Expr) and not isinstance(node.value, (ast.Call, ast.Await)):
            continue
        if isinstance(node, ast.AnnAssign) and node.value is None:
            continue
        return True
    return False


_MAX_UNFENCED_LINES = 200
_CUTS = 6
_OPENS = (":", ",", "(", "[", "{", "\\")
_CLOSES = (")", "]", "}")


def _parses(text: str) -> SyntaxError | None:
    """None when ``text`` parses; the error otherwise."""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return exc
    except UNREADABLE:
        return SyntaxError("unreadable")
    return None


def _strong_code_line(line: str) -> bool:
    """A line of prose that is a statement doing something: an import, a definition, a call or
    an assignment; a sentence never parses, and a bare word or value does not count."""
    text = line.strip()
    if not text or text.startswith("#") or len(text) > 500:
        return False
    return PY_SIGNAL.match(text) is not None or parses_as_code(text)


def _code_like(line: str, previous: str) -> bool:
    """Whether ``line`` can continue a run of unfenced code after ``previous``."""
    text = line.strip()
    if not text or len(text) > 500:
        return False
    if text.startswith("#") or text.startswith(_CLOSES) or previous.rstrip().endswith(_OPENS):
        return True
    if line[:1] in (" ", "\t") and previous.strip():
        return True  # the body of a definition, or a continuation
    return PY_SIGNAL.match(text) is not None or _parses(text) is None


# A line that gives what the code above it printed: "output: ___this-is-a-test-".
_OUTPUT_LINE = re.compile(r"^(?:output|out|result|returns?|prints?)[ \t]*:[ \t]*\S", re.I)


def _continues(line: str, previous: str) -> bool:
    return _code_like(line, previous) or _OUTPUT_LINE.match(line) is not None


def _as_comment(line: str) -> str:
    """An output line as the comment a reporter would have written (``# output: 3``), which
    the readers of output comments take as the line above's output; other lines as they are."""
    return f"# {line}" if _OUTPUT_LINE.match(line) else line


def unfenced(lines: list[str], i: int) -> tuple[int, str | None]:
    """(last line, text) of Python written straight into the prose from line ``i``: a run of
    code-like lines, started by a statement that does something, cut back at most a few times
    to where it parses; text None when there is none (last: the end of the run tried). Each run
    is parsed a bounded number of times and never tried again from inside, so this stays
    linear."""
    if not _strong_code_line(lines[i]) or width(lines[i]) >= 4:
        return i, None
    j = i + 1
    while j < len(lines) and j - i < _MAX_UNFENCED_LINES and _continues(lines[j], lines[j - 1]):
        j += 1
    run = [_as_comment(line.rstrip()) for line in lines[i:j]]
    for _ in range(_CUTS):
        text = "\n".join(run)
        error = _parses(text)
        if error is None:
            if not parses_as_code(text):
                return j - 1, None
            return i + len(run) - 1, text
        # Cut the run before the line the parser stopped at (a sentence that looked like code).
        cut = (error.lineno or 1) - 1
        if cut <= 0 or cut >= len(run):
            cut = len(run) - 1
        run = run[:cut]
    return j - 1, None
