"""Unified diffs that ``git apply`` accepts, written from file contents before and after."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from reprobot.validation import Patch

_NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str, final_newline: bool) -> list[str]:
    lines = text.splitlines(keepends=True)
    if final_newline and lines and not lines[-1].endswith("\n"):
        # A written test file is better off ending with a newline.
        lines[-1] += "\n"
    return lines


def _marked(line: str) -> str:
    """A diff line whose file line has no newline: git's marker follows it."""
    return line if line.endswith("\n") else f"{line}\n{_NO_NEWLINE}"


def file_diff(path: str, before: str | None, after: str) -> str:
    """The git-style diff turning ``before`` (None: the file does not exist) into ``after``."""
    # The file as it is (a last line without newline included), the new text ending with one.
    old = _lines(before, final_newline=False) if before is not None else []
    new = _lines(after, final_newline=True)
    if old == new:
        return ""
    header = [f"diff --git a/{path} b/{path}\n"]
    if before is None:
        header.append("new file mode 100644\n")
    body = difflib.unified_diff(
        old,
        new,
        fromfile=f"a/{path}" if before is not None else "/dev/null",
        tofile=f"b/{path}",
        n=3,
    )
    return "".join(header) + "".join(_marked(line) for line in body)


def patch_from_files(
    changes: Mapping[str, tuple[str | None, str]], name: str = "test.diff"
) -> Patch:
    """One patch for several files: ``changes`` maps a path to (content before or None, after)."""
    parts = [file_diff(path, before, after) for path, (before, after) in sorted(changes.items())]
    return Patch("".join(p for p in parts if p), name=name)
