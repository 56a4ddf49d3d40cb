"""The existing test modules that belong to the source files a fix changes (pure).

A reproducing test says the reported bug is gone; it says nothing of what else the fix broke. A
fix that avoids the reported exception by returning nothing, or special-cases the reported input,
passes it and usually breaks the tests the project already has for that code. Those tests live in
the module named for the changed file: ``pkg/sub/mod.py`` is tested by ``test_mod.py`` (or
``mod_test.py``), in ``pkg/sub/tests/``, ``tests/sub/``, ``testing/`` or wherever the project
keeps it. When several modules have that name, the one sharing most directories with the source
file is taken.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

# Enough to guard the files a typical fix changes, few enough to keep two extra runs short.
MAX_MODULES = 3
_NOT_SOURCES = frozenset({"setup.py", "conftest.py", "noxfile.py", "__main__.py"})


def companion_test_modules(
    changed: Iterable[str], files: Iterable[str], limit: int = MAX_MODULES
) -> tuple[str, ...]:
    """The test module of each changed source file in ``changed`` (in that order) that
    ``files`` (the tree's files) holds, at most ``limit`` of them."""
    by_name = _test_modules_by_name(files)
    out: list[str] = []
    for path in changed:
        best = _companion(path, by_name, out)
        if best is None:
            continue
        out.append(best)
        if len(out) >= limit:
            break
    return tuple(out)


def unguarded_sources(changed: Iterable[str], files: Iterable[str]) -> tuple[str, ...]:
    """The changed source files that have no test module of their own in ``files``: nothing
    checks that the change keeps their existing behaviour."""
    by_name = _test_modules_by_name(files)
    return tuple(
        path
        for path in changed
        if _subject(path) is not None and _companion(path, by_name, []) is None
    )


def _test_modules_by_name(files: Iterable[str]) -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = {}
    for path in files:
        name = PurePosixPath(path).name
        if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
            by_name.setdefault(name, []).append(path)
    return by_name


def _companion(path: str, by_name: dict[str, list[str]], taken: list[str]) -> str | None:
    stem = _subject(path)
    if stem is None:
        return None
    found = [*by_name.get(f"test_{stem}.py", ()), *by_name.get(f"{stem}_test.py", ())]
    found = [f for f in found if f != path and f not in taken]
    if not found:
        return None
    source_dirs = set(PurePosixPath(path).parent.parts)
    best: str = max(
        found,
        key=lambda f: (len(source_dirs & set(PurePosixPath(f).parent.parts)), -len(f), f),
    )
    return best


def _subject(path: str) -> str | None:
    """The name a source file's tests are named for, or None for a file that is not one."""
    p = PurePosixPath(path)
    if p.suffix != ".py" or p.name in _NOT_SOURCES:
        return None
    if p.name.startswith("test_") or p.name.endswith("_test.py"):
        return None
    if {"tests", "test", "testing"} & set(p.parent.parts):
        return None
    if p.name == "__init__.py":
        return p.parent.name or None
    return p.stem
