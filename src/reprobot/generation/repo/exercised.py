"""Which module of the project a reproduction exercises, and the test folder of that module: a
drafted test sits beside the project's own tests of the code it calls (``apart`` is defined in
``sympy/polys/partfrac.py``, so the test goes to ``sympy/polys/tests/``), not in whatever folder
shares words with the issue's title. Pure functions over the tree's text."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath

from reprobot.generation.repo.test_layout import TestLayout
from reprobot.validation import UNPARSABLE

# A top-level definition: what ``from pkg import name`` finally reaches.
_DEFINITION = re.compile(r"^(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z_]\w*")
_TEST_WORDS = frozenset({"tests", "test", "testing", "src"})
# A name defined in more files than this says nothing of where the example goes (``__init__``,
# ``eval``).
_MAX_DEFINERS = 2


def definitions(python_files: Mapping[str, str], layout: TestLayout) -> dict[str, tuple[str, ...]]:
    """Top-level function and class names of the code under test (test files left out), each to
    the files that define it."""
    tests = set(layout.test_files)
    found: dict[str, list[str]] = defaultdict(list)
    for path, text in python_files.items():
        if path in tests or "/tests/" in f"/{path}" or PurePosixPath(path).name == "conftest.py":
            continue
        for name in dict.fromkeys(_DEFINITION.findall(text)):
            found[name].append(path)
    return {name: tuple(paths) for name, paths in found.items()}


def exercised_module(
    body: str,
    imports: Iterable[str],
    layout: TestLayout,
    defined: Mapping[str, Sequence[str]],
) -> str | None:
    """The file of the project a test body exercises: the definition of a function or class its
    last statements call (the reported behaviour is shown last), else the deepest module it
    imports from. None when neither names one file."""
    try:
        statements = ast.parse(body).body
    except UNPARSABLE:
        statements = []
    for statement in reversed(statements):
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            # The reporter's own helper or proposed fix: not the code the example exercises.
            continue
        for name in _called(statement):
            paths = defined.get(name, ())
            if 0 < len(paths) <= _MAX_DEFINERS:
                return min(paths, key=lambda p: (len(PurePosixPath(p).parts), p))
    deepest: str | None = None
    for line in imports:
        for module in _imported_modules(line):
            path = layout.modules.get(module)
            deeper = deepest is None or (path is not None and len(path) > len(deepest))
            if path is not None and module.count(".") >= 1 and deeper:
                deepest = path
    return deepest


def reaches_project(body: str, imports: Iterable[str], packages: Iterable[str]) -> bool:
    """Whether a test body reaches the project at all: it imports from one of its packages, or
    names one (a command run as ``-m pkg``, an import inside the body). An example that calls
    only the standard library or another package shows a bug no change of the project can fix
    ("a bug in LooseVersion": ``LooseVersion('1.14.3') >= LooseVersion('1.14dev')``). Without
    known packages, every body does."""
    names = set(packages)
    if not names:
        return True
    for line in imports:
        if any(module.split(".")[0] in names for module in _imported_modules(line)):
            return True
    try:
        tree = ast.parse(body)
    except UNPARSABLE:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.append(node.module)
            if any(m.split(".")[0] in names for m in modules):
                return True
        elif (isinstance(node, ast.Name) and node.id in names) or (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and names & set(_WORD.findall(node.value))
        ):
            return True
    return False


def own_tests_folder(module: str, layout: TestLayout) -> str | None:
    """The folder of existing tests of ``module``: the one whose path, without the package name
    and the words for tests, follows the module's path furthest (``sympy/polys/tests`` for
    ``sympy/polys/partfrac.py``, ``tests/_core`` for ``seaborn/_core/scales.py``,
    ``testing/logging`` for ``src/_pytest/logging.py``); the nearest of those. None when no
    folder shares a part of the path."""
    packages = set(layout.packages)
    path = PurePosixPath(module)
    stem = path.stem if path.stem != "__init__" else ""
    wanted = _parts([*path.parent.parts, *([stem] if stem else [])], packages)
    best: tuple[int, int, str] | None = None
    for folder in {str(PurePosixPath(t).parent) for t in layout.test_files}:
        parts = _parts(PurePosixPath(folder).parts, packages)
        shared = 0
        for a, b in zip(wanted, parts, strict=False):
            if a != b:
                break
            shared += 1
        if shared == 0 or shared < len(parts):
            # A folder for another module of the same package ("polys/agca") is not this one's.
            continue
        key = (-shared, len(parts), folder)
        if best is None or key < best:
            best = key
    if best is not None:
        return best[2]
    return None


def _parts(parts: Iterable[str], packages: set[str]) -> list[str]:
    return [p.lstrip("_") for p in parts if p not in _TEST_WORDS and p not in packages and p != "."]


def _called(statement: ast.stmt) -> list[str]:
    """Names of the functions and classes a statement calls, outermost first: in
    ``latex(Poly(x))`` the printer is what the statement shows."""
    return [
        node.func.id
        for node in ast.walk(statement)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]


def _imported_modules(line: str) -> list[str]:
    try:
        tree = ast.parse(line.strip())
    except UNPARSABLE:
        return []
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
            out.extend(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
    return out
