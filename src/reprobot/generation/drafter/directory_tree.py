"""The files a directory tree in an issue draws (``|-- a.py``, ``└── b.py``), as paths from the
project's root: the layout a command-line reproduction recreates. Pure functions."""

from __future__ import annotations

import re

from reprobot.generation.issue.report import CodeBlock

# A line of a directory tree as `tree` draws it, ASCII or not: "|   `-- b.py", "└── a.py".
_TREE_LINE = re.compile(r"^\s*(?:[|│]\s*)*(?:[|`+]--|[├└]──)")
_DRAWING = " \t|│├└─-`+"
_PATH_PART = re.compile(r"[\w.-]{1,100}")
_MAX_LISTED_FILES = 50


def listed_files(block: CodeBlock) -> list[str]:
    """The files a directory tree draws, as paths from the project's root: ``|-- a/`` then
    ``|   |-- a.py`` is ``a/a.py``. Depth is the column where a name starts, so ASCII, box and
    dash-only (``|----project/``) drawings read alike; a name
    without an extension and no entries under it is left out (a directory or a mistake)."""
    if not is_listing(block):
        return []
    rows: list[tuple[int, str]] = []
    for line in block.text.split("\n"):
        text = line.split("#", 1)[0].rstrip()
        name = text.lstrip(_DRAWING)
        if name and name != ".":
            rows.append((len(text) - len(name), name.split()[0]))
    files: list[str] = []
    stack: list[tuple[int, str]] = []
    for k, (column, name) in enumerate(rows):
        while stack and stack[-1][0] >= column:
            stack.pop()
        has_entries = k + 1 < len(rows) and rows[k + 1][0] > column
        parts = [*(n for _, n in stack), name.rstrip("/")]
        if not all(_PATH_PART.fullmatch(part) and part not in (".", "..") for part in parts):
            continue
        if name.endswith("/") or has_entries:
            stack.append((column, name.rstrip("/")))
        elif "." in name.strip("."):
            files.append("/".join(parts))
    return files[:_MAX_LISTED_FILES]


def is_listing(block: CodeBlock) -> bool:
    """A directory tree (``|-- a.py``, ``└── b.py``): the layout of the files, no output."""
    lines = [line for line in block.text.split("\n") if line.strip()]
    tree = sum(1 for line in lines if _TREE_LINE.match(line))
    return tree > 0 and 2 * tree >= len(lines) - 1


def from_root(paths: list[str], args: tuple[str, ...]) -> list[str]:
    """``paths`` without the directory they all sit in when the command never names it: a tree
    drawn from ``root_dir/`` shows the project the command runs in."""
    tops = {path.split("/", 1)[0] for path in paths}
    if len(tops) != 1 or not all("/" in path for path in paths):
        return paths
    (top,) = tops
    if any(a == top or a.startswith(top + "/") for a in args):
        return paths
    return [path.split("/", 1)[1] for path in paths]
