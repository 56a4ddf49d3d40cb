"""The function-level edit format of SWT-Bench, read and applied fault-tolerantly.

A model writes whole functions and says where they go, instead of counting lines in hunks::

    diff
    tests/test_parser.py
    rewrite            (or: insert)
    12                 (a rough line number, BOF or EOF)
    def test_parse_empty():
        ...
    end diff

``rewrite`` replaces a function, method or class, found by the name of the function in the
block first and by the line number second; ``insert`` puts the code between top-level
statements. Model output is untrusted: paths are checked, and every result must parse.

This module reads the blocks and is the public API; finding where a block goes and putting it
there is ``function_placement``.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Literal

from reprobot.generation.errors import DiffFormatError

# Locating and applying edits live in function_placement; the edit type and its mode are
# re-exported so that callers keep importing the whole format from here.
from reprobot.generation.formats.function_placement import (
    FunctionEdit,
    Mode,
    edit_file,
    normalise_newlines,
)
from reprobot.validation import UNREADABLE

__all__ = [
    "FORMAT_HINT",
    "FunctionEdit",
    "Mode",
    "apply_function_edits",
    "check_python",
    "has_function_diff",
    "parse_function_diff",
    "safe_path",
]

FORMAT_HINT = (
    "write each edit as:\ndiff\n<path of the test file>\n<rewrite or insert>\n"
    "<line number, BOF or EOF>\n<the complete function or class>\nend diff"
)


# ---------------------------------------------------------------------------------------------
# Paths

_DRIVE = re.compile(r"^[A-Za-z]:")


def safe_path(raw: str) -> str:
    """``raw`` as a normalised relative POSIX path of a ``.py`` file.

    Raises DiffFormatError when the path is empty, absolute, climbs out with ``..``, points into
    ``.git`` or does not name a Python file: paths come from model output and are untrusted.
    """
    path = raw.strip().strip("`'\"").strip().replace("\\", "/")
    if not path:
        raise DiffFormatError("an edit has an empty file path")
    if any(ord(ch) < 32 for ch in path):
        raise DiffFormatError(f"file path {raw!r} contains control characters")
    if path.startswith(("/", "~")) or _DRIVE.match(path):
        raise DiffFormatError(f"file path {raw!r} is absolute; give it relative to the repository")
    if ".." in path.split("/"):
        raise DiffFormatError(f"file path {raw!r} leaves the repository with '..'")
    norm = posixpath.normpath(path)
    if norm in ("", ".") or ".git" in norm.split("/"):
        raise DiffFormatError(f"file path {raw!r} does not name a file of the repository")
    if not norm.endswith(".py"):
        raise DiffFormatError(f"file path {raw!r} is not a Python file (.py)")
    return norm


# ---------------------------------------------------------------------------------------------
# Parsing

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_END = re.compile(r"^end[\s_-]*(of[\s_-]*)?diff$")
_PATH_PREFIX = re.compile(r"^(file|path|filename)\s*[:=]\s*", re.IGNORECASE)
_CODE_START = re.compile(r"^\s*(async\s+def|def|class|@|import|from)\b")
_MODES: dict[str, Mode] = {"rewrite": "rewrite", "insert": "insert"}


def _word(line: str) -> str:
    """A header line without fences, markdown emphasis, a trailing colon and case."""
    return line.strip().strip("`~*_").strip().rstrip(":").strip().lower()


def _next_nonblank(lines: Sequence[str], i: int) -> int:
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


def _is_header(lines: Sequence[str], i: int) -> bool:
    """Whether line ``i`` opens a block: a bare ``diff`` line, or a ```` ```diff ```` fence that
    is directly followed by a path and a mode (a plain ```diff fence holds a unified diff)."""
    if _word(lines[i]) != "diff":
        return False
    j = _next_nonblank(lines, i + 1)
    if j >= len(lines) or _word(lines[j]) == "diff":
        # "```diff" opening a fence whose first line is the real header
        return j >= len(lines) and not _FENCE.match(lines[i])
    if not _FENCE.match(lines[i]):
        return True
    k = _next_nonblank(lines, j + 1)
    return k < len(lines) and _word(lines[k]).split(" ")[0] in _MODES


def has_function_diff(text: str) -> bool:
    """Whether ``text`` contains at least one function-level block header."""
    lines = normalise_newlines(text).split("\n")
    return any(_is_header(lines, i) for i in range(len(lines)))


def _location(raw: str) -> int | Literal["BOF", "EOF"] | None:
    word = _word(raw)
    if re.search(r"\bbof\b|^(start|beginning|top)\b", word):
        return "BOF"
    if re.search(r"\beof\b|^(end|bottom)\b", word):
        return "EOF"
    number = re.search(r"\d+", word)
    return max(1, int(number.group())) if number else None


def parse_function_diff(text: str) -> list[FunctionEdit]:
    """Every block of ``text``, in order; prose, fences and blank lines around them are ignored.

    A block ends at ``end diff``, at the next block header, at a closing fence or at the end of
    the text. Raises DiffFormatError naming the block when there is no block at all, or a block
    lacks a path, has an unknown mode, an unreadable location or no code.
    """
    lines = normalise_newlines(text).split("\n")
    edits: list[FunctionEdit] = []
    i = 0
    while i < len(lines):
        if not _is_header(lines, i):
            i += 1
            continue
        number = len(edits) + 1
        edit, i = _parse_block(lines, _next_nonblank(lines, i + 1), number)
        edits.append(edit)
    if not edits:
        raise DiffFormatError(f"no function-level edit found; {FORMAT_HINT}")
    return edits


def _parse_block(lines: Sequence[str], i: int, number: int) -> tuple[FunctionEdit, int]:
    where = f"edit block {number}"
    if i >= len(lines):
        raise DiffFormatError(f"{where} ends right after 'diff'; {FORMAT_HINT}")
    raw_path = _PATH_PREFIX.sub("", lines[i].strip().strip("`*")).rstrip(":").strip()
    if _word(raw_path).split(" ")[0] in _MODES or _CODE_START.match(raw_path):
        raise DiffFormatError(f"{where} has no file path after 'diff'; {FORMAT_HINT}")
    # "tests/test_x.py (new file)": the path is the .py word; safe_path judges it.
    named = re.search(r"[^\s`'\"]+\.py\b", raw_path)
    path = safe_path(named.group() if named else raw_path)
    where = f"edit block {number} ({path})"

    i = _next_nonblank(lines, i + 1)
    mode_words = _word(lines[i]).split(None, 1) if i < len(lines) else []
    if not mode_words or mode_words[0] not in _MODES:
        got = lines[i].strip() if i < len(lines) else "nothing"
        raise DiffFormatError(f"{where}: unknown mode {got!r}; use rewrite or insert")
    mode = _MODES[mode_words[0]]
    # The location is usually on its own line, sometimes on the mode line ("insert EOF").
    location = _location(mode_words[1]) if len(mode_words) > 1 else None
    if location is not None:
        i += 1
    else:
        i = _next_nonblank(lines, i + 1)
        if i < len(lines) and _CODE_START.match(lines[i]):
            # The model went straight to the code; the name still locates a rewrite.
            location = "EOF"
        elif (location := _location(lines[i]) if i < len(lines) else None) is not None:
            i += 1
        else:
            got = lines[i].strip() if i < len(lines) else "nothing"
            raise DiffFormatError(f"{where}: expected a line number, BOF or EOF, got {got!r}")

    code: list[str] = []
    while i < len(lines):
        line = lines[i]
        if _END.match(_word(line)) or _is_header(lines, i):
            break
        if _FENCE.match(line):
            if any(c.strip() for c in code):
                break  # the fence around the block (or around its code) closes it
            i += 1
            continue
        code.append(line)
        i += 1
    if i < len(lines) and _END.match(_word(lines[i])):
        i += 1
    while code and not code[-1].strip():
        code.pop()
    while code and not code[0].strip():
        code.pop(0)
    body = "\n".join(code)
    if not body.strip():
        raise DiffFormatError(f"{where} has no code")
    return FunctionEdit(path=path, mode=mode, location=location, code=body + "\n"), i


# ---------------------------------------------------------------------------------------------
# Checking and applying (placing each edit is function_placement's)


def check_python(path: str, text: str) -> None:
    """Raise DiffFormatError quoting the offending line when ``text`` does not parse."""
    try:
        ast.parse(text)
    except UNREADABLE as exc:
        raise DiffFormatError(
            f"the result is not valid Python: {path} cannot be read ({type(exc).__name__})"
        ) from None
    except SyntaxError as exc:
        where = f"SyntaxError at line {exc.lineno} of {path}: {exc.msg}"
        source = normalise_newlines(text).split("\n")
        if exc.lineno and 0 < exc.lineno <= len(source):
            where += f" (line: {source[exc.lineno - 1].strip()!r})"
        raise DiffFormatError(f"the result is not valid Python: {where}") from None


def apply_function_edits(
    edits: Sequence[FunctionEdit], read_file: Callable[[str], str | None]
) -> dict[str, tuple[str | None, str]]:
    """Apply ``edits`` and map each touched path to (content before or None if new, after).

    ``read_file`` returns a file's current text, or None when it does not exist. Raises
    DiffFormatError for an unsafe path, a rewrite of a missing file or of a file with nothing to
    replace, and when a result does not parse as Python.
    """
    if not edits:
        raise DiffFormatError(f"no function-level edit to apply; {FORMAT_HINT}")
    by_path: dict[str, list[FunctionEdit]] = {}
    for edit in edits:
        by_path.setdefault(safe_path(edit.path), []).append(edit)
    changes: dict[str, tuple[str | None, str]] = {}
    for path, group in by_path.items():
        before = read_file(path)
        after = edit_file(path, before, group)
        check_python(path, after)
        changes[path] = (before, after)
    return changes
