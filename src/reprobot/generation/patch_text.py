"""Unified diffs that ``git apply`` accepts, written from file contents before and after."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from reprobot.validation.patch import Patch


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        # git marks a last line without newline; a test file is better off ending with one.
        lines[-1] += "\n"
    return lines


def file_diff(path: str, before: str | None, after: str) -> str:
    """The git-style diff turning ``before`` (None: the file does not exist) into ``after``."""
    old = _lines(before) if before is not None else []
    new = _lines(after)
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
    return "".join(header) + "".join(body)


def patch_from_files(
    changes: Mapping[str, tuple[str | None, str]], name: str = "test.diff"
) -> Patch:
    """One patch for several files: ``changes`` maps a path to (content before or None, after)."""
    parts = [file_diff(path, before, after) for path, (before, after) in sorted(changes.items())]
    return Patch("".join(p for p in parts if p), name=name)
