"""Locating and applying function-level edits in a Python file: the second half of the
SWT-Bench function-level format (``function_diff`` parses the blocks and is the public API).

A ``rewrite`` replaces the definition named by the first function or class of its code (the
nearest by line number when several share the name, or the nearest of its kind when none does);
an ``insert`` lands on the boundary between top-level statements nearest to its line, inside a
class when a method is inserted at a line of that class. Imports at the top of the code are
hoisted into the file's import block, and spacing follows PEP 8.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from reprobot.generation.errors import DiffFormatError
from reprobot.validation import UNPARSABLE, UNREADABLE

Mode = Literal["rewrite", "insert"]


# The edit type lives here, below the parser, so that placing needs nothing from function_diff
# (no import cycle); function_diff re-exports it with Mode.
@dataclass(frozen=True)
class FunctionEdit:
    """One block: ``code`` replaces the definition it names (or nearest ``location``), or is
    inserted at ``location``."""

    path: str
    mode: Mode
    location: int | Literal["BOF", "EOF"]
    code: str


def normalise_newlines(text: str) -> str:
    """``text`` with CRLF and CR line ends turned into LF: parsing and placing both split on LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


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
    except UNPARSABLE:
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
    for line in normalise_newlines(code).split("\n"):
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
    except UNPARSABLE:
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
    except UNREADABLE as exc:
        return None, SyntaxError(f"cannot be read ({type(exc).__name__})")


def edit_file(path: str, before: str | None, edits: Sequence[FunctionEdit]) -> str:
    """The text of ``path`` after ``edits`` (all of them for this path) are placed in ``before``
    (None: the file does not exist yet). The result is not checked to parse; the caller does
    that once for all edits. Raises DiffFormatError when an edit cannot be placed."""
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
    lines = normalise_newlines(before).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tree, error = _parse_or_none(normalise_newlines(before))
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
