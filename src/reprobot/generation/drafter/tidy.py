"""A chosen test tidied as a maintainer writes one, within the project's linter settings.

Drafts copy the reporter's code as it was written: star imports, names bound and never read,
spacing of every kind. Before the chosen test is run for the last time, each of these steps
that keeps its meaning is taken:

- a star import of a module of the tree becomes an import of the names the test uses of it
  (flake8's F403, F405), and the writer's guard after star imports goes with the last of them;
- a name bound to a call's result and never read keeps the call alone (``x = f()``: F841);
- an import never read goes when its module's top package stays imported by another (F401):
  importing the package already ran it;
- a string literal on a line longer than the project's line length becomes adjacent literals
  split after spaces, which Python joins into the same value (E501), kept only when the
  module's syntax tree is the same;
- the module is formatted by Ruff at the project's line length, its quotes as they are, and
  comment lines longer than that are wrapped.

The tidied text is kept only when it parses and the project's linter says less of it than of
the draft; the confirmation run then runs it as it will be kept (``pool.reproduce``).
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import subprocess
import sys
import textwrap
import tokenize
from collections.abc import Callable

from reprobot.generation.drafter.name_resolution import star_imported
from reprobot.generation.drafter.reading import TreeContext
from reprobot.generation.drafter.test_writer import STAR_GUARD
from reprobot.generation.repo.linter import Linter, LintError, lint
from reprobot.validation import UNPARSABLE

TIMEOUT_S = 60
# What reads names by their text, so that no binding is safe to drop.
_DYNAMIC = frozenset({"locals", "vars", "eval", "exec", "globals"})
_BUILTINS = frozenset(dir(builtins))

# The names a star import of a module binds (None: unknown, so it stays as it is).
StarNames = Callable[[str], "set[str] | None"]


def star_names_in(tree: TreeContext) -> StarNames:
    """What a star import of each module binds, read from the tree (None: not its module)."""

    def names(module: str) -> set[str] | None:
        if module not in tree.layout.modules:
            return None
        statement = f"from {module} import *"
        return star_imported([statement], tree.layout, tree.python_files, tree.exports)

    return names


def tidy(source: str, path: str, linter: Linter, star_names: StarNames) -> str:
    """``source`` (the test module ``path``) tidied, or as it is when tidying would not make
    the project's linter say less of it."""
    try:
        before = len(lint(linter, path, source))
    except LintError:
        return source
    if not before:
        return source
    text = explicit_star_imports(source, star_names)
    text = without_unread_imports(without_unread_bindings(text))
    text = split_long_strings(text, linter.line_length)
    text = wrapped_comments(formatted(text, linter.line_length), linter.line_length)
    if _tree(text) is None:
        return source
    try:
        after = len(lint(linter, path, text))
    except LintError:
        return source
    return text if after < before else source


def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except UNPARSABLE:
        return None


def _read_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _read_statically(source: str) -> tuple[ast.Module, set[str]] | None:
    """The module and the names it reads, when it parses and reads none by their text
    (``locals()``, ``eval``): only then is a name read nowhere truly unread."""
    tree = _tree(source)
    if tree is None:
        return None
    read = _read_names(tree)
    return None if read & _DYNAMIC else (tree, read)


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the module binds itself, but by a star import."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name.split(".")[0]) for a in node.names if a.name != "*")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _replace_lines(source: str, spans: dict[tuple[int, int], str]) -> str:
    """``source`` with each (first, last) line span (1-based) replaced by its text ("" drops
    the lines)."""
    lines = source.splitlines(keepends=True)
    for (first, last), text in sorted(spans.items(), reverse=True):
        lines[first - 1 : last] = [text + "\n"] if text else []
    return "".join(lines)


def explicit_star_imports(source: str, star_names: StarNames) -> str:
    """Each ``from M import *`` of the module as the names the module reads of it (the last
    star import binding a name wins, as in Python); as it is when a name read is bound by
    nothing known, or a star import's names are unknown. The writer's guard after star
    imports (``STAR_GUARD``, which reads ``globals()`` only to drop collected imports) goes with
    them; a name imported that pytest would collect keeps them as they are."""
    guard = "\n".join(STAR_GUARD) + "\n"
    found = _read_statically(source.replace(guard, ""))
    if found is None:
        return source
    tree, read = found
    stars = [
        node
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.level == 0
        and node.module
        and [a.name for a in node.names] == ["*"]
    ]
    if not stars:
        return source
    names: list[set[str]] = []
    for node in stars:
        known = star_names(str(node.module))
        if known is None:
            return source
        names.append(known)
    chosen: list[list[str]] = [[] for _ in stars]
    for name in sorted(read - _bound_names(tree)):
        owners = [i for i, known in enumerate(names) if name in known]
        if owners:
            # A star import's name shadows a builtin of the same name too.
            chosen[owners[-1]].append(name)
        elif name not in _BUILTINS:
            return source
    spans = {}
    for node, taken in zip(stars, chosen, strict=True):
        text = f"from {node.module} import {', '.join(taken)}" if taken else ""
        spans[(node.lineno, node.end_lineno or node.lineno)] = text
    if any(n.lower().startswith("test") for taken in chosen for n in taken):
        return source
    return _replace_lines(source.replace(guard, ""), spans)


def without_unread_bindings(source: str) -> str:
    """``name = call(...)`` inside a function, where ``name`` is read nowhere in the module, as
    the call alone."""
    found = _read_statically(source)
    if found is None:
        return source
    tree, read = found
    declared = {
        name
        for node in ast.walk(tree)
        if isinstance(node, ast.Global | ast.Nonlocal)
        for name in node.names
    }
    cuts: list[tuple[int, int, int]] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in _own_statements(function):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(target := node.targets[0], ast.Name)
                and target.id not in read
                and target.id not in declared
                and isinstance(node.value, ast.Call)
                and node.lineno == node.value.lineno
            ):
                cuts.append((node.lineno, target.col_offset, node.value.col_offset))
    if not cuts:
        return source
    lines = source.splitlines(keepends=True)
    for line, start, end in sorted(cuts, reverse=True):
        text = lines[line - 1]
        # Offsets are in UTF-8 bytes.
        raw = text.encode("utf-8")
        lines[line - 1] = (raw[:start] + raw[end:]).decode("utf-8")
    return "".join(lines)


def _own_statements(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """The statements of a function's own scope: into its blocks, never into a class body it
    defines (whose bindings are the class's attributes) or a function of its own."""
    out: list[ast.stmt] = []
    todo: list[ast.stmt] = list(function.body)
    while todo:
        statement = todo.pop(0)
        out.append(statement)
        if isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            for child in getattr(statement, field, []):
                todo.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return out


def without_unread_imports(source: str) -> str:
    """Imports of names read nowhere in the module, dropped when another import the module
    keeps brings in the same top package."""
    found = _read_statically(source)
    if found is None:
        return source
    tree, read = found
    imports: list[ast.Import | ast.ImportFrom] = [
        n
        for n in tree.body
        if isinstance(n, ast.Import) or (isinstance(n, ast.ImportFrom) and not n.level)
    ]

    def top(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> str:
        name = alias.name if isinstance(node, ast.Import) else str(node.module or "")
        return name.split(".")[0]

    def used(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> bool:
        if alias.name == "*" or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            return True
        return (alias.asname or alias.name.split(".")[0]) in read

    kept_tops = {top(n, a) for n in imports for a in n.names if used(n, a)}
    spans: dict[tuple[int, int], str] = {}
    for node in imports:
        keep = [a for a in node.names if used(node, a) or top(node, a) not in kept_tops]
        if len(keep) == len(node.names):
            continue
        span = (node.lineno, node.end_lineno or node.lineno)
        if not keep:
            spans[span] = ""
            continue
        names = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in keep)
        spans[span] = (
            f"import {names}"
            if isinstance(node, ast.Import)
            else f"from {node.module} import {names}"
        )
    return _replace_lines(source, spans) if spans else source


# A one-line string literal's prefix and quote: f-strings are left whole, since a space inside a
# replacement field is no place to split them.
_PLAIN_STRING = re.compile(r"(?i)(?P<prefix>[rbu]{0,2})(?P<quote>['\"])(?!(?P=quote){2})")
# Where a literal goes on a line of its own inside the parentheses Ruff breaks it into.
_STRING_MARGIN = 12
_MIN_CHUNK = 20


def _chunks(body: str, width: int) -> list[str]:
    """``body`` cut after spaces into pieces of at most ``width`` characters where it can be."""
    pieces: list[str] = []
    for word in re.findall(r"[^ ]+ *| +", body):
        if pieces and len(pieces[-1]) + len(word) <= width:
            pieces[-1] += word
        else:
            pieces.append(word)
    return pieces


def split_long_strings(source: str, line_length: int) -> str:
    """Each one-line string literal on a line longer than ``line_length`` written as adjacent
    literals in parentheses, cut after spaces (``("a long " "value")``): Python joins them into
    the same value, and Ruff then puts each on a line of its own. As it is unless the module's
    syntax tree stays the same: an escape cut in two, or a literal already beside another,
    would change it."""
    tree = _tree(source)
    # Rows as the tokenizer counts them: split at "\n" alone (``splitlines`` splits at more).
    rows = io.StringIO(source).readlines()
    lines = [row.rstrip("\n") for row in rows]
    if tree is None or all(len(line) <= line_length for line in lines):
        return source
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    significant = [t for t in tokens if t.type not in _LAYOUT]
    edits: list[tuple[tuple[int, int], tuple[int, int], str]] = []
    for k, token in enumerate(significant):
        row = token.start[0]
        if (
            token.type != tokenize.STRING
            or row != token.end[0]
            or len(lines[row - 1]) <= line_length
        ):
            continue
        beside = significant[max(k - 1, 0) : k + 2]
        match = _PLAIN_STRING.match(token.string)
        if match is None or sum(t.type == tokenize.STRING for t in beside) > 1:
            continue
        head = match.group()
        body = token.string[len(head) : -1]
        indent = len(lines[row - 1]) - len(lines[row - 1].lstrip())
        pieces = _chunks(body, max(_MIN_CHUNK, line_length - indent - _STRING_MARGIN))
        if len(pieces) > 1:
            quote = match.group("quote")
            split = " ".join(f"{head}{piece}{quote}" for piece in pieces)
            edits.append((token.start, token.end, f"({split})"))
    if not edits:
        return source
    for (row, start), (_, end), text in sorted(edits, reverse=True):
        rows[row - 1] = rows[row - 1][:start] + text + rows[row - 1][end:]
    split_source = "".join(rows)
    after = _tree(split_source)
    same = after is not None and ast.dump(after) == ast.dump(tree)
    return split_source if same else source


_LAYOUT = frozenset(
    {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
)


def formatted(source: str, line_length: int) -> str:
    """``source`` as Ruff formats it at ``line_length``, its quotes as they are; as it is when
    Ruff cannot."""
    command = [
        *(sys.executable, "-m", "ruff", "format", "--isolated", "--no-cache"),
        *("--line-length", str(line_length), "--config", "format.quote-style='preserve'"),
        *("--stdin-filename", "test_module.py", "-"),
    ]
    try:
        done = subprocess.run(
            command, input=source, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return source
    return done.stdout if done.returncode == 0 and done.stdout.strip() else source


def wrapped_comments(source: str, line_length: int) -> str:
    """Each run of comment lines (at one indentation) holding a line longer than
    ``line_length``, wrapped again as one paragraph."""
    lines = source.splitlines()
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.lstrip()
        if not stripped.startswith("# "):
            out.append(line)
            index += 1
            continue
        indent = line[: len(line) - len(stripped)]
        end = index
        while end < len(lines) and lines[end].startswith(indent + "# "):
            end += 1
        block = lines[index:end]
        if all(len(b) <= line_length for b in block):
            out += block
        else:
            words = " ".join(b[len(indent) + 2 :] for b in block)
            width = max(20, line_length - len(indent) - 2)
            out += [f"{indent}# {part}" for part in textwrap.wrap(words, width)]
        index = end
    return "\n".join(out) + ("\n" if source.endswith("\n") else "")
