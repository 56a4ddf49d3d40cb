"""Whether the tests that ran after a fix are the tests that were drafted (pure functions).

The reproducing tests are applied last, over the fix, so that a fix cannot rewrite them. A fix
can still reach them another way: by editing a file of the test patch (a second definition of a
test's name wins over the first, a helper it calls can be replaced), or by adding a module that
Python finds before the project's own under a name the tests import (pytest puts the test file's
folders, and the run puts the repository's root, ahead of the installed package). Each is
a reason for a maintainer to read the change before trusting a pass.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from reprobot.validation.source.patch import Patch
from reprobot.validation.source.python_text import UNPARSABLE


def edited_test_files(fix: Patch, tests: Patch) -> tuple[str, ...]:
    """The files of the test patch that the fix changes too, sorted."""
    return tuple(sorted(set(fix.files) & set(tests.files)))


def imported_top_names(source: bytes | None) -> frozenset[str]:
    """The top-level names a module imports absolutely (``import a.b`` and ``from a.b import c``
    both give ``a``); none when the source does not parse."""
    if source is None:
        return frozenset()
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return frozenset(names)


def _search_folders(test_file: str) -> list[str]:
    """Folders Python may search before the installed package when running ``test_file``: the
    repository's root and each folder from the root down to the test file's own."""
    parts = PurePosixPath(test_file).parts[:-1]
    return [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]


def shadowing_files(
    fix: Patch, test_sources: Mapping[str, bytes | None], existing: Iterable[str]
) -> tuple[str, ...]:
    """Files the fix adds (absent before it) that Python would import, under a name one of the
    test files imports, from a folder searched before the project's own package, sorted."""
    before = set(existing)
    added = {path for path in fix.files if path not in before and path not in fix.deleted_files}
    found: set[str] = set()
    for test_file, source in test_sources.items():
        for name in imported_top_names(source):
            for folder in _search_folders(test_file):
                prefix = f"{folder}/" if folder else ""
                for candidate in (f"{prefix}{name}.py", f"{prefix}{name}/__init__.py"):
                    if candidate in added:
                        found.add(candidate)
    return tuple(sorted(found))
