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
"""

from __future__ import annotations

import ast
import posixpath
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from reprobot.generation.errors import DiffFormatError

Mode = Literal["rewrite", "insert"]

FORMAT_HINT = (
    "write each edit as:\ndiff\n<path of the test file>\n<rewrite or insert>\n"
    "<line number, BOF or EOF>\n<the complete function or class>\nend diff"
)


@dataclass(frozen=True)
class FunctionEdit:
    """One block: ``code`` replaces the definition it names (or nearest ``location``), or is
    inserted at ``location``."""

    path: str
    mode: Mode
    location: int | Literal["BOF", "EOF"]
    code: str


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
    lines = _normalise(text).split("\n")
    return any(_is_header(lines, i) for i in range(len(lines)))


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


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
    lines = _normalise(text).split("\n")
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
# Locating definitions

_DefNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True)
class _Def:
    name: str
    is_class: bool
    is_method: bool
    start: int  # 0-based index of the first line (decorators included)
    end: int  # 0-based index one past the last line
    indent: str
    depth: int


def _definitions(tree: ast.Module, lines: Sequence[str]) -> list[_Def]:
    """Top-level functions and classes and, recursively, the definitions inside classes."""
    found: list[_Def] = []

    def visit(body: Sequence[ast.stmt], depth: int, in_class: bool) -> None:
        for node in body:
            if not isinstance(node, _DefNode):
                continue
            start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            text = lines[node.lineno - 1]
            indent = text[: len(text) - len(text.lstrip())]
            end = node.end_lineno or node.lineno
            is_class = isinstance(node, ast.ClassDef)
            found.append(_Def(node.name, is_class, in_class, start, end, indent, depth))
            if is_class:
                visit(node.body, depth + 1, True)

    visit(tree.body, 0, False)
    return found


def _first_definition(code: str) -> tuple[str, bool, bool] | None:
    """(name, is a class, looks like a method) of the first definition in ``code``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        match = re.search(r"^\s*(async\s+def|def|class)\s+(\w+)\s*\(?\s*(\w*)", code, re.M)
        if not match:
            return None
        kind, name, first = match.groups()
        return name, kind == "class", first in ("self", "cls")
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            return node.name, True, False
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            params = node.args.posonlyargs + node.args.args
            return node.name, False, bool(params) and params[0].arg in ("self", "cls")
    return None


def _target(defs: Sequence[_Def], edit: FunctionEdit, code: str, path: str) -> _Def:
    first = _first_definition(code)
    loc = edit.location
    line = 1 if loc == "BOF" else 10**9 if loc == "EOF" else loc

    def distance(d: _Def) -> int:
        return 0 if d.start < line <= d.end else min(abs(line - d.start - 1), abs(line - d.end))

    if first is not None:
        name, is_class, _ = first
        same = [d for d in defs if d.name == name and d.is_class == is_class]
        if same:
            return min(same, key=lambda d: (distance(d), -d.depth))
    is_class = first is not None and first[1]
    pool = [d for d in defs if d.is_class == is_class]
    if first is not None and not is_class:
        # a ``self`` parameter says method; none says a module-level test function
        preferred = [d for d in pool if d.is_method == first[2]]
        pool = preferred or pool
    if not pool:
        kind = "class" if is_class else "function"
        raise DiffFormatError(
            f"rewrite in {path}: the file has no {kind} to replace; use insert instead"
        )
    if loc == "BOF":
        return min(pool, key=lambda d: d.start)
    if loc == "EOF":
        return max(pool, key=lambda d: d.start)
    return min(pool, key=lambda d: (distance(d), -d.depth))


def _bof_index(tree: ast.Module | None, lines: Sequence[str]) -> int:
    """The line index after the module docstring, ``__future__`` imports and the import block
    (``try``/``if`` blocks holding only imports count as imports)."""

    def only_imports(body: Sequence[ast.stmt]) -> bool:
        return all(isinstance(n, ast.Import | ast.ImportFrom | ast.Pass) for n in body)

    index = 0
    if tree is not None:
        for pos, node in enumerate(tree.body):
            docstring = (
                pos == 0
                and isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            )
            importish = isinstance(node, ast.Import | ast.ImportFrom) or (
                isinstance(node, ast.Try | ast.If) and only_imports(node.body)
            )
            if not (docstring or importish):
                break
            index = node.end_lineno or node.lineno
    if index == 0:
        # keep a shebang, encoding line or licence header on top
        while index < len(lines) and lines[index].startswith("#"):
            index += 1
    return index


def _insert_index(tree: ast.Module | None, lines: Sequence[str], location: int) -> int:
    """The boundary between top-level statements nearest to 1-based ``location``."""
    bof = _bof_index(tree, lines)
    if tree is None:
        return min(max(location - 1, bof), len(lines))
    bounds = {bof, len(lines)}
    bounds.update(
        n.end_lineno for n in tree.body if n.end_lineno is not None and n.end_lineno >= bof
    )
    want = location - 1
    return min(bounds, key=lambda b: (abs(b - want), -b))


def _class_slot(
    tree: ast.Module | None, lines: Sequence[str], location: int
) -> tuple[int, str] | None:
    """(boundary between the statements of the top-level class around 1-based ``location``
    nearest to it, indentation of the class body), or None when no class holds that line."""
    for node in tree.body if tree is not None else []:
        if not isinstance(node, ast.ClassDef) or not node.body:
            continue
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        if not start <= location <= (node.end_lineno or node.lineno):
            continue
        bounds = {n.end_lineno or n.lineno for n in node.body}
        at = min(bounds, key=lambda b: (abs(b - (location - 1)), -b))
        text = lines[node.body[0].lineno - 1]
        return at, text[: len(text) - len(text.lstrip())]
    return None


# ---------------------------------------------------------------------------------------------
# Applying


@dataclass(frozen=True)
class _Placement:
    start: int
    end: int  # == start for an insertion
    lines: tuple[str, ...]
    seq: int
    imports: bool = False
    gap: int = 2  # blank lines around an insertion: 2 at top level, 1 between methods


def _code_lines(code: str) -> list[str]:
    """``code`` dedented to column 0, leading tabs expanded so that mixed indentation dedents."""
    lines = []
    for line in _normalise(code).split("\n"):
        lead = len(line) - len(line.lstrip(" \t"))
        lines.append(line[:lead].replace("\t", "    ") + line[lead:])
    return textwrap.dedent("\n".join(lines)).strip("\n").split("\n")


def _indent(lines: Sequence[str], indent: str, tabs: bool) -> list[str]:
    out = []
    for line in lines:
        if not line.strip():
            out.append("")
            continue
        if tabs:
            lead = len(line) - len(line.lstrip(" "))
            out.append(indent + "\t" * (lead // 4) + " " * (lead % 4) + line[lead:])
        else:
            out.append(indent + line)
    return out


def _module_imports(tree: ast.Module | None) -> set[str]:
    """The module-level imports of ``tree`` (``try``/``if`` blocks included), as AST dumps."""
    found: set[str] = set()
    for node in tree.body if tree is not None else []:
        inner = [node, *node.body] if isinstance(node, ast.Try | ast.If) else [node]
        found.update(ast.dump(n) for n in inner if isinstance(n, ast.Import | ast.ImportFrom))
    return found


def _split_imports(code_lines: list[str], tree: ast.Module | None) -> tuple[list[str], list[str]]:
    """(the code's leading imports the file does not have yet, the code without its leading
    imports). ``__future__`` imports are dropped: they are only legal at the top of a file."""
    try:
        code_tree = ast.parse("\n".join(code_lines))
    except SyntaxError:
        return [], code_lines
    have = _module_imports(tree)
    new: list[str] = []
    cut = 0
    for node in code_tree.body:
        if not isinstance(node, ast.Import | ast.ImportFrom):
            break
        cut = node.end_lineno or node.lineno
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not future and ast.dump(node) not in have:
            have.add(ast.dump(node))
            new.extend(code_lines[node.lineno - 1 : cut])
    if cut == 0 or cut >= len(code_lines):
        return [], code_lines  # nothing to hoist, or the code is only imports
    rest = code_lines[cut:]
    while rest and not rest[0].strip():
        rest.pop(0)
    return new, rest


def _blank_run(lines: Sequence[str], start: int, step: int) -> int:
    count, i = 0, start
    while 0 <= i < len(lines) and not lines[i].strip():
        count, i = count + 1, i + step
    return count


def _apply(lines: list[str], place: _Placement) -> None:
    new = list(place.lines)
    if place.end == place.start:
        # PEP 8 spacing around inserted code: two blank lines around definitions, one between
        # imports and other code, none between imports.
        above = _blank_run(lines, place.start - 1, -1)
        below = _blank_run(lines, place.start, 1)
        prev = lines[place.start - 1 - above] if place.start - above > 0 else None
        after = lines[place.start + below] if place.start + below < len(lines) else None
        if prev is not None:
            want = place.gap
            if place.imports:
                want = 0 if re.match(r"(import|from)\s", prev) else 1
            new = [""] * max(0, want - above) + new
        if after is not None:
            want = place.gap
            if place.imports and not re.match(r"(async\s+def|def|class|@)\b", after):
                want = 0 if re.match(r"(import|from)\s", after) else 1
            new += [""] * max(0, want - below)
    lines[place.start : place.end] = new


def _overlaps(a: _Placement, b: _Placement) -> bool:
    return a.start < b.end and b.start < a.end


def _parse_or_none(text: str) -> tuple[ast.Module | None, SyntaxError | None]:
    try:
        return ast.parse(text), None
    except SyntaxError as exc:
        return None, exc


def _edit_file(path: str, before: str | None, edits: Sequence[FunctionEdit]) -> str:
    if before is None:
        if any(e.mode == "rewrite" for e in edits):
            raise DiffFormatError(
                f"rewrite of a file that does not exist: {path}; use insert with BOF or EOF"
            )
        # BOF blocks first, the rest in the order written
        ordered = sorted(edits, key=lambda e: e.location != "BOF")
        blocks = ["\n".join(_code_lines(e.code)) for e in ordered]
        return "\n\n\n".join(blocks) + "\n"

    newline = "\r\n" if "\r\n" in before else "\n"
    lines = _normalise(before).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tree, error = _parse_or_none(_normalise(before))
    tabs = any(line.startswith("\t") for line in lines)
    defs = _definitions(tree, lines) if tree is not None else []
    bof = _bof_index(tree, lines)

    placements: list[_Placement] = []
    hoisted: list[str] = []
    for seq, edit in enumerate(edits):
        code = _code_lines(edit.code)
        if edit.mode == "rewrite":
            if tree is None:
                raise DiffFormatError(
                    f"{path} does not parse (SyntaxError at line {error.lineno if error else '?'}),"
                    " so its functions cannot be located; rewrite the whole file with insert"
                )
            target = _target(defs, edit, "\n".join(code), path)
            imports, code = _split_imports(code, tree)
            hoisted += imports
            placements.append(
                _Placement(target.start, target.end, tuple(_indent(code, target.indent, tabs)), seq)
            )
            continue
        first = _first_definition("\n".join(code))
        slot = None
        if isinstance(edit.location, int) and first is not None and first[2]:
            slot = _class_slot(tree, lines, edit.location)
        if slot is not None:
            # a method inserted at a line inside a class goes into that class
            at, indent = slot
        elif edit.location == "BOF":
            at, indent = bof, ""
        elif edit.location == "EOF":
            at, indent = len(lines), ""
        else:
            at, indent = _insert_index(tree, lines, edit.location), ""
        imports, code = _split_imports(code, tree)
        hoisted += imports
        gap = 1 if indent else 2
        placements.append(_Placement(at, at, tuple(_indent(code, indent, tabs)), seq, gap=gap))
    if hoisted:
        placements.append(_Placement(bof, bof, tuple(hoisted), -1, imports=True))

    # A later rewrite of the same lines wins: models resend a corrected version of a function.
    rewrites = [p for p in placements if p.end > p.start]
    kept = [
        p
        for p in placements
        if p.end == p.start or not any(q.seq > p.seq and _overlaps(p, q) for q in rewrites)
    ]
    for p in kept:
        if p.end == p.start and any(q.start < p.start < q.end for q in kept if q.end > q.start):
            raise DiffFormatError(
                f"an insert into {path} lands inside lines that another edit rewrites;"
                " put the inserted code into the rewritten function or class instead"
            )
    # Bottom to top, so that every location still refers to the original lines; at one
    # position the rewrite goes first and earlier insertions end up above later ones.
    for place in sorted(kept, key=lambda p: (p.start, p.end > p.start, p.seq), reverse=True):
        _apply(lines, place)
    return newline.join(lines) + newline


def check_python(path: str, text: str) -> None:
    """Raise DiffFormatError quoting the offending line when ``text`` does not parse."""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        where = f"SyntaxError at line {exc.lineno} of {path}: {exc.msg}"
        source = _normalise(text).split("\n")
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
        after = _edit_file(path, before, group)
        check_python(path, after)
        changes[path] = (before, after)
    return changes
