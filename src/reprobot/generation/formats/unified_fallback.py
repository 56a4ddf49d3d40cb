"""Unified diffs written by a model, repaired and applied by their content.

Models get the bookkeeping of unified diffs wrong: hunk counts, line numbers, the leading space of
blank context lines, ``diff --git`` headers, indentation of context. Here the numbers in ``@@``
headers are only hints; each hunk is placed where its context and removed lines occur in the
file (exactly, then ignoring whitespace, then ignoring blank lines, then with unmatched context
trimmed from its edges), and a hunk that cannot be placed is reported in words for the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from reprobot.generation.errors import DiffFormatError
from reprobot.generation.formats.function_diff import (
    apply_function_edits,
    check_python,
    has_function_diff,
    parse_function_diff,
    safe_path,
)

Changes = dict[str, tuple[str | None, str]]
ReadFile = Callable[[str], str | None]

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
_HUNK = re.compile(r"^@@+\s*-(\d+)")
_GIT_HEADER = re.compile(r"^diff --git\s+(\S+)\s+(\S+)")
_EXTENDED = (
    "index ",
    "new file mode",
    "deleted file mode",
    "old mode",
    "new mode",
    "similarity index",
    "rename from",
    "rename to",
    "Binary files",
)
# How many unmatched context lines may be trimmed from each edge of a hunk.
_TRIM = 3


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _looks_like_diff(lines: Sequence[str]) -> bool:
    for i, line in enumerate(lines):
        if line.startswith(("diff --git ", "@@ ")):
            return True
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            return True
    return False


def _starts_file(lines: Sequence[str], i: int) -> bool:
    return lines[i].startswith("diff --git ") or (
        lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
    )


def _diffish(line: str) -> bool:
    return line[:1] in ("+", "-", " ", "\\") or line.startswith(("@@", "diff ", *_EXTENDED))


def extract_unified_diffs(text: str) -> list[str]:
    """The unified diffs in a reply, in order: the content of each fence that holds one, and
    each bare diff outside fences (from its first file header to the first line of prose)."""
    lines = _normalise(text).split("\n")
    diffs: list[str] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence:
            mark = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(mark):
                j += 1
            body = lines[i + 1 : j]
            if _looks_like_diff(body):
                diffs.append("\n".join(body).strip("\n") + "\n")
            i = j + 1
            continue
        if not _starts_file(lines, i):
            i += 1
            continue
        j = i
        while j < len(lines):
            if _FENCE.match(lines[j]):
                break
            if not lines[j].strip():
                # a blank line belongs to the diff only when the diff goes on after it
                k = j
                while k < len(lines) and not lines[k].strip():
                    k += 1
                if k >= len(lines) or not _diffish(lines[k]):
                    break
                j = k
                continue
            if not _diffish(lines[j]):
                break
            j += 1
        diffs.append("\n".join(lines[i:j]).strip("\n") + "\n")
        i = j
    return diffs


# ---------------------------------------------------------------------------------------------
# Lenient parsing


@dataclass
class _Hunk:
    header: str
    old_start: int | None
    # (tag, text): "+" added, "-" removed, " " context, "~" a line without prefix read as context
    lines: list[tuple[str, str]] = field(default_factory=list)

    @property
    def old(self) -> list[tuple[int, str]]:
        return [(k, text) for k, (tag, text) in enumerate(self.lines) if tag != "+"]


@dataclass
class _FilePatch:
    old_path: str | None  # None: /dev/null
    new_path: str | None
    hunks: list[_Hunk] = field(default_factory=list)
    new_file: bool = False
    has_headers: bool = False  # saw the ---/+++ pair


def _header_path(raw: str) -> str | None:
    raw = raw.split("\t", maxsplit=1)[0].strip().strip("'\"")
    if raw == "/dev/null":
        return None
    named = re.match(r"\S+\.py\b", raw)  # drop a timestamp a tool appended
    if named:
        raw = named.group()
    if raw.startswith(("a/", "b/")):
        raw = raw[2:]
    return raw


def _parse(diff: str) -> list[_FilePatch]:
    lines = _normalise(diff).split("\n")
    files: list[_FilePatch] = []
    current: _FilePatch | None = None
    hunk: _Hunk | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        git = _GIT_HEADER.match(line)
        if git:
            current = _FilePatch(_header_path(git.group(1)), _header_path(git.group(2)))
            files.append(current)
            hunk = None
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = _header_path(line[4:]), _header_path(lines[i + 1][4:])
            if current is None or current.hunks or current.has_headers:
                current = _FilePatch(old, new)
                files.append(current)
            current.old_path, current.new_path, current.has_headers = old, new, True
            current.new_file = current.new_file or old is None
            hunk = None
            i += 1
        elif line.startswith("@@"):
            if current is None:
                raise DiffFormatError(
                    "a hunk comes before any file header; start each file with"
                    " '--- a/<path>' and '+++ b/<path>'"
                )
            start = _HUNK.match(line)
            hunk = _Hunk(line.strip(), int(start.group(1)) if start else None)
            current.hunks.append(hunk)
        elif hunk is None:
            if current is not None and line.startswith("new file mode"):
                current.new_file = True
            elif current is not None and line[:1] in ("+", "-", " ") and line.strip():
                # body lines with no @@ header at all: an implicit hunk
                hunk = _Hunk("@@ (no header) @@", None)
                current.hunks.append(hunk)
                continue
        elif line.startswith("\\"):
            pass  # "\ No newline at end of file"
        elif line[:1] in ("+", "-", " "):
            hunk.lines.append((line[0], line[1:]))
        else:
            hunk.lines.append(("~", line))
        i += 1
    for patch in files:
        for h in patch.hunks:
            # blank lines after the last hunk line are spacing, not context
            while h.lines and h.lines[-1][0] == "~" and not h.lines[-1][1].strip():
                h.lines.pop()
    return files


# ---------------------------------------------------------------------------------------------
# Locating hunks


def _key_exact(line: str) -> str:
    return line.rstrip()


def _key_loose(line: str) -> str:
    return "".join(line.split())


def _find(
    file_lines: Sequence[str], old: Sequence[tuple[int, str]], loose: bool, skip_blank: bool
) -> list[dict[int, int]]:
    """Every placement of ``old`` in ``file_lines``, as maps from hunk line to file line."""
    key = _key_loose if loose else _key_exact
    wanted = [(k, key(text)) for k, text in old if not (skip_blank and not text.strip())]
    if not wanted:
        return []
    places = [(n, key(line)) for n, line in enumerate(file_lines)]
    if skip_blank:
        places = [(n, k) for n, k in places if k.strip()]
    found = []
    for s in range(len(places) - len(wanted) + 1):
        if all(places[s + j][1] == want for j, (_, want) in enumerate(wanted)):
            found.append({k: places[s + j][0] for j, (k, _) in enumerate(wanted)})
    return found


def _trimmed(hunk: _Hunk, front: int, back: int) -> list[tuple[int, str]] | None:
    """The hunk's old lines without ``front``/``back`` context lines at its edges, or None when
    that would cut a removed line or leave nothing to anchor on."""
    old = hunk.old
    cut = old[front : len(old) - back]
    dropped = old[:front] + old[len(old) - back :]
    if not any(text.strip() for _, text in cut):
        return None
    if any(hunk.lines[k][0] == "-" for k, _ in dropped):
        return None
    return cut


def _locate(file_lines: Sequence[str], hunk: _Hunk, hint: int, floor: int) -> dict[int, int] | None:
    """The placement of ``hunk`` nearest to line index ``hint``, preferring placements at or
    after ``floor`` (the end of the previous hunk), by the first strategy that finds any."""
    strategies = [(hunk.old, False, False), (hunk.old, True, False), (hunk.old, True, True)]
    for total in range(1, 2 * _TRIM + 1):
        for front in range(total + 1):
            if front <= _TRIM and total - front <= _TRIM:
                cut = _trimmed(hunk, front, total - front)
                if cut is not None:
                    strategies.append((cut, True, True))
    for old, loose, skip_blank in strategies:
        found = _find(file_lines, old, loose, skip_blank)
        if found:
            later = [m for m in found if min(m.values()) >= floor] or found
            return min(later, key=lambda m: (abs(min(m.values()) - hint), min(m.values())))
    return None


def _unlocated(path: str, number: int, hunk: _Hunk, file_lines: Sequence[str]) -> DiffFormatError:
    present = {_key_loose(line) for line in file_lines}
    missing = [text for _, text in hunk.old if text.strip() and _key_loose(text) not in present]
    if missing:
        why = f"the line {missing[0].strip()!r} does not occur in {path}"
    else:
        why = f"its context and removed lines occur in {path}, but not together in this order"
    return DiffFormatError(
        f"hunk {number} of {path} ({hunk.header}) could not be located: {why}. Copy context and"
        " removed lines exactly from the file, or write the whole test function instead"
    )


def _indent_shifts(
    file_lines: Sequence[str], hunk: _Hunk, mapping: dict[int, int]
) -> dict[int, int]:
    """For each matched non-blank hunk line, how many columns the file's line sits right of it
    (non-zero only when the hunk matched ignoring whitespace: the model lost indentation)."""
    shifts = {}
    for k, n in mapping.items():
        text = hunk.lines[k][1]
        if text.strip():
            have = len(file_lines[n]) - len(file_lines[n].lstrip())
            shifts[k] = have - (len(text) - len(text.lstrip()))
    return shifts


def _shifted(text: str, shift: int) -> str:
    if shift > 0 and text.strip():
        return " " * shift + text
    if shift < 0:
        lead = len(text) - len(text.lstrip(" "))
        return text[min(lead, -shift) :]
    return text


def _apply_hunk(lines: list[str], hunk: _Hunk, mapping: dict[int, int]) -> int:
    """Rewrite ``lines`` in place; return the index just past the rewritten region."""
    start, end = min(mapping.values()), max(mapping.values()) + 1
    shifts = _indent_shifts(lines, hunk, mapping)
    # An added line takes the indentation error of the matched line above it (or, at the top of
    # the hunk, the first matched line), so that it lines up with the file around it.
    shift = shifts[min(shifts)] if shifts else 0
    out: list[str] = []
    cursor = start
    for k, (tag, text) in enumerate(hunk.lines):
        shift = shifts.get(k, shift)
        if tag == "+":
            out.append(_shifted(text, shift))
            continue
        n = mapping.get(k)
        if n is None:
            continue  # a blank or trimmed hunk line: the file keeps its own lines
        out.extend(lines[cursor:n])  # file lines the hunk skipped (blank lines)
        if tag != "-":
            out.append(lines[n])  # context keeps the file's exact text
        cursor = n + 1
    out.extend(lines[cursor:end])
    lines[start:end] = out
    return start + len(out)


# ---------------------------------------------------------------------------------------------
# Applying


def _split(text: str) -> list[str]:
    lines = _normalise(text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _apply_file(path: str, patch: _FilePatch, current: str | None) -> str:
    adds_only = all(tag == "+" for h in patch.hunks for tag, _ in h.lines)
    if patch.new_file or (current is None and adds_only):
        if current is not None:
            raise DiffFormatError(
                f"{path} already exists, but the diff creates it from /dev/null; write hunks"
                " with context lines from the existing file"
            )
        # A new file's lines, including blank lines that lost their "+".
        body = [text for h in patch.hunks for tag, text in h.lines if tag != "-"]
        return "\n".join(body).strip("\n") + "\n"
    if current is None:
        raise DiffFormatError(
            f"{path} does not exist at this commit; create it with '--- /dev/null' and"
            f" '+++ b/{path}', every line starting with '+'"
        )
    newline = "\r\n" if "\r\n" in current else "\n"
    lines = _split(current)
    delta = 0  # how far earlier hunks moved the lines below them
    floor = 0
    for number, hunk in enumerate(patch.hunks, start=1):
        if not hunk.lines:
            continue
        if not hunk.old:
            # Only additions: the header's line number is all there is to place them.
            at = len(lines) if hunk.old_start is None else hunk.old_start + delta
            at = min(max(at, 0), len(lines))
            lines[at:at] = [text for _, text in hunk.lines]
            floor = at + len(hunk.lines)
            delta += len(hunk.lines)
            continue
        hint = (hunk.old_start - 1 + delta) if hunk.old_start else floor
        mapping = _locate(lines, hunk, hint, floor)
        if mapping is None:
            raise _unlocated(path, number, hunk, lines)
        size = len(lines)
        floor = _apply_hunk(lines, hunk, mapping)
        delta += len(lines) - size
    return newline.join(lines) + newline


def repair_unified_diff(diff: str, read_file: ReadFile) -> Changes:
    """Apply a possibly broken unified diff; map each touched path to (before or None, after).

    Hunk counts and line numbers are not trusted; hunks are placed by their content. Raises
    DiffFormatError (in words that can go back to the model) for an unsafe path, a deleted or
    missing file, a hunk that cannot be located, or a result that does not parse as Python.
    """
    patches = _parse(diff)
    if not patches:
        raise DiffFormatError(
            "no file header in the diff; start each file with '--- a/<path>' and '+++ b/<path>'"
        )
    changes: Changes = {}
    for patch in patches:
        if patch.new_path is None:
            raise DiffFormatError(f"the diff deletes {patch.old_path}; only add or edit tests")
        path = safe_path(patch.new_path)
        if not patch.hunks:
            raise DiffFormatError(f"the diff of {path} has no hunks")
        before = changes[path][0] if path in changes else read_file(path)
        current = changes[path][1] if path in changes else before
        changes[path] = (before, _apply_file(path, patch, current))
    for path, (_, after) in changes.items():
        check_python(path, after)
    return changes


def _apply_all(diffs: Sequence[str], read_file: ReadFile) -> Changes:
    """Apply several diffs in order, each seeing the files as the earlier ones left them."""
    merged: Changes = {}

    def current(path: str) -> str | None:
        return merged[path][1] if path in merged else read_file(path)

    for diff in diffs:
        for path, (_, after) in repair_unified_diff(diff, current).items():
            before = merged[path][0] if path in merged else read_file(path)
            merged[path] = (before, after)
    return merged


def draft_changes(reply: str, read_file: ReadFile) -> Changes:
    """The file changes a model's reply asks for, as (before or None, after) per path.

    The function-level format is tried first when the reply has a ``diff`` … ``end diff``
    block, else (or when it fails) the unified diffs in the reply. Raises DiffFormatError naming
    the failure of each format when neither yields changes.
    """
    failures: list[str] = []
    if has_function_diff(reply):
        try:
            return apply_function_edits(parse_function_diff(reply), read_file)
        except DiffFormatError as exc:
            failures.append(f"function-level edit: {exc}")
    else:
        failures.append("function-level edit: no 'diff' … 'end diff' block found")
    diffs = extract_unified_diffs(reply)
    if diffs:
        try:
            return _apply_all(diffs, read_file)
        except DiffFormatError as exc:
            failures.append(f"unified diff: {exc}")
    else:
        failures.append("unified diff: no diff with '--- a/<path>', '+++ b/<path>' and @@ hunks")
    raise DiffFormatError("; ".join(failures))
