"""Python tracebacks, pytest ``E`` lines and bare exception lines found in untrusted issue text.

Everything here is plain string work over lines (no regular expression can backtrack over more
than one identifier), so the cost is linear in the text, whatever the text.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

# Without the colon: IPython prints "ValueError    Traceback (most recent call last)".
HEADER = "Traceback (most recent call last)"
CHAIN_MARKERS = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
# pytest reports pytest.fail() and "DID NOT RAISE" as Failed; only trusted after an "E" marker.
_PYTEST_OUTCOMES = frozenset({"Failed"})
# Too generic on their own in free output ("Warning: low disk space").
_VAGUE_NAMES = frozenset({"Error", "Warning"})
# Lines that start something else, so they end an exception message.
_MESSAGE_STOPS = (">>> ", "In [", "$ ", "E   ")
_MESSAGE_LINES = 60
_MESSAGE_CHARS = 4000
# A dotted identifier; each repetition starts with a dot, so matching is linear.
_DOTTED = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*|\.<\w+>)*")


@dataclass(frozen=True)
class Frame:
    """One ``File "...", line N, in func`` entry, with the source line printed under it."""

    file: str
    line: int | None
    function: str | None
    source: str | None


@dataclass(frozen=True)
class Traceback:
    """An exception as shown in the issue: its type, message, frames and the text it came from.

    ``exc_type`` is empty when the text was cut before the exception line. pytest ``E`` lines and
    bare exception lines give a Traceback without frames."""

    exc_type: str
    message: str
    frames: tuple[Frame, ...]
    text: str


def is_exception_name(name: str) -> bool:
    """Whether a (possibly dotted) name looks like an exception class by name alone."""
    last = name.rsplit(".", 1)[-1]
    if last in _BUILTIN_EXCEPTIONS:
        return True
    return last[:1].isupper() and last.endswith(("Error", "Exception", "Warning"))


def _plausible_type(name: str) -> bool:
    """Exception classes are CapWords or qualified; "more" after a cut traceback is not one."""
    return "." in name or name[:1].isupper() or name.startswith("_")


def parse_exception_line(line: str) -> tuple[str, str] | None:
    """``(type, message)`` for ``pkg.mod.Error: message`` or a lone ``Error``; None otherwise."""
    text = line.strip()
    match = _DOTTED.match(text)
    if match is None:
        return None
    rest = text[match.end() :]
    if not rest:
        return match.group(), ""
    if rest.startswith(":"):
        return match.group(), rest[1:].strip()
    return None


def find_tracebacks(text: str, *, bare: bool = False) -> tuple[Traceback, ...]:
    """Every traceback in ``text``, in order; chained ones come out as separate tracebacks.

    ``bare`` also accepts a lone ``SomeError: message`` line, which is right for output and
    interactive sessions but not for prose or source code."""
    lines = text.split("\n")
    found: list[Traceback] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        column = line.find(HEADER)
        if column >= 0:
            traceback, i = _read_python(lines, i, column)
        elif _is_e_line(line):
            traceback, i = _read_pytest(lines, i)
        elif bare and line[:1].strip() and not line.startswith((">>>", "...")):
            traceback, i = _read_bare(lines, i)
        else:
            traceback, i = None, i + 1
        if traceback is not None:
            found.append(traceback)
    return tuple(found)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parse_frame(text: str) -> Frame | None:
    """A frame header line, stripped: CPython's, IPython 8's ``File path:N, in f(x)`` or a cell."""
    if text.startswith('File "'):
        close = text.find('", line ', 6)
        if close < 0:
            return Frame(text[6:-1], None, None, None) if text.endswith('"') else None
        rest = text[close + 8 :]
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if digits == 0:
            return None
        tail = rest[digits:]
        function = (tail[5:].strip() or None) if tail.startswith(", in ") else None
        return Frame(text[6:close], int(rest[:digits]), function, None)
    if text.startswith(("File ", "Cell In[")):
        where, _, function = text.removeprefix("File ").partition(", in ")
        path, sep, number = where.rpartition(":")
        if not sep or not number.isdigit():
            path, sep, number = where.rpartition(", line ")
        if not sep or not number.isdigit():
            return None
        return Frame(path, int(number), function.strip() or None, None)
    return None


def _ipython_source(text: str) -> str | None:
    """The code on IPython's ``----> 12 code`` marker line."""
    if not text.startswith("-"):
        return None
    rest = text.lstrip("-")
    if not rest.startswith(">"):
        return None
    rest = rest[1:].lstrip()
    digits = len(rest) - len(rest.lstrip("0123456789"))
    return rest[digits:].strip() if digits else None


def _read_python(lines: list[str], start: int, column: int) -> tuple[Traceback | None, int]:
    # Text before the header (indentation, a pytest "E   ", an exception group's "  | ") is
    # removed from the following lines when they carry it too.
    prefix = lines[start][:column]
    if prefix.rstrip().endswith("Exception Group") and "+" in prefix:
        prefix = prefix[: prefix.find("+")] + "| "  # "  + Exception Group Traceback": "  | "
    elif prefix.strip() not in ("", "E", "|"):
        prefix = ""  # an IPython "ValueError    " or a log prefix: later lines do not repeat it

    def strip(line: str) -> str:
        return line[len(prefix) :] if prefix and line.startswith(prefix) else line

    frames: list[Frame] = []
    i = start + 1
    file_indent = 0
    after_blank = False
    while i < len(lines):
        raw = strip(lines[i])
        text = raw.strip()
        if HEADER in raw or text in CHAIN_MARKERS:
            break
        frame = _parse_frame(text)
        if frame is not None:
            frames.append(frame)
            # IPython prints context lines under its frames and marks the source with an arrow.
            file_indent = _indent(raw) if text.startswith('File "') else len(raw)
        elif not text:
            pass  # IPython separates frames with blank lines
        elif frames and frames[-1].source is None and (code := _ipython_source(text)):
            frames[-1] = replace(frames[-1], source=code)
        elif raw[:1] in (" ", "\t", "-", "[", "."):
            # A frame's source line sits deeper than its File line; carets, IPython context
            # lines and "[Previous line repeated N more times]" are skipped.
            if (
                frames
                and frames[-1].source is None
                and _indent(raw) > file_indent
                and text.strip("^~ ")
                and not text.startswith("[")
            ):
                frames[-1] = replace(frames[-1], source=text)
        else:
            break
        after_blank = not text
        i += 1
    parsed = parse_exception_line(strip(lines[i])) if i < len(lines) else None
    # CPython prints the exception right under the last frame; after a blank line (IPython's
    # layout, or prose after a cut traceback) only a name that looks like an exception counts.
    plausible = is_exception_name if after_blank else _plausible_type
    if parsed is not None and plausible(parsed[0]):
        exc_type, first = parsed
        message, end = _message(first, lines, i + 1, strip)
    else:
        while i > start + 1 and not lines[i - 1].strip():
            i -= 1
        if not frames:
            return None, start + 1
        exc_type, message, end = "", "", i
    text = "\n".join(lines[start:end]).strip("\n")
    return Traceback(exc_type, message, tuple(frames), text), end


def _same(line: str) -> str:
    return line


def _message(
    first: str, lines: list[str], i: int, strip: Callable[[str], str] = _same
) -> tuple[str, int]:
    """The exception message: its first line and what follows until a blank line or a stop."""
    parts = [first]
    size = len(first)
    while i < len(lines) and len(parts) < _MESSAGE_LINES and size < _MESSAGE_CHARS:
        line = strip(lines[i])
        text = line.strip()
        if (
            not text
            or HEADER in line
            or text in CHAIN_MARKERS
            or line.startswith(_MESSAGE_STOPS)
            # An exception group's separator; pytest's section rules ("____ test_x ____").
            or text.startswith(("+-", "____", "===="))
        ):
            break
        parts.append(line.rstrip())
        size += len(line)
        i += 1
    return "\n".join(parts).strip()[:_MESSAGE_CHARS], i


def _is_e_line(line: str) -> bool:
    return line == "E" or line.startswith(("E   ", "E\t"))


def _read_pytest(lines: list[str], start: int) -> tuple[Traceback | None, int]:
    """A run of pytest ``E`` lines: the first exception line (or rewritten assert) in it."""
    end = start
    while end < len(lines) and _is_e_line(lines[end]) and HEADER not in lines[end]:
        end += 1
    contents = [line[1:] for line in lines[start:end]]
    for k, content in enumerate(contents):
        text = content.strip()
        parsed = parse_exception_line(text)
        if parsed is not None and (is_exception_name(parsed[0]) or parsed[0] in _PYTEST_OUTCOMES):
            exc_type, first = parsed
        elif text == "assert" or text.startswith("assert "):
            # pytest's assertion rewriting prints the failed assert itself, not its type.
            exc_type, first = "AssertionError", text
        else:
            continue
        depth = _indent(content)
        rest = [line[min(depth, _indent(line)) :].rstrip() for line in contents[k + 1 :]]
        message = "\n".join([first, *rest]).strip()[:_MESSAGE_CHARS]
        return Traceback(exc_type, message, (), "\n".join(lines[start:end])), end
    return None, max(end, start + 1)


def _read_bare(lines: list[str], start: int) -> tuple[Traceback | None, int]:
    parsed = parse_exception_line(lines[start])
    if parsed is None or parsed[0] in _VAGUE_NAMES or not is_exception_name(parsed[0]):
        return None, start + 1
    exc_type, first = parsed
    message, end = _message(first, lines, start + 1)
    return Traceback(exc_type, message, (), "\n".join(lines[start:end])), end
