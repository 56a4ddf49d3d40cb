"""The pytest fixtures a new test module can ask for by name, read from the tree (pure): pytest's
own, those of the ``conftest.py`` files above it, every one the tree defines, and those the tests
an issue writes out ask for.

Reporters write their example the way the project's tests do: ``app.config.from_file(...)``
where ``app`` is the Flask test suite's fixture, never bound in the snippet. A test placed in a
folder gets the fixtures of the ``conftest.py`` files of that folder and of every folder above
it, so such a name becomes a parameter of the drafted test instead of an unresolved name.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import PurePosixPath

from reprobot.validation import UNPARSABLE

_FIXTURE_DECORATORS = frozenset({"fixture", "yield_fixture"})
# The fixtures pytest itself offers every test (``pytest --fixtures`` without plugins; ``testdir``
# and ``pytester`` come with its ``pytester`` plugin, which a project enables for them).
PYTEST_FIXTURES = frozenset(
    {"cache", "capsys", "capsysbinary", "capfd", "capfdbinary", "caplog", "doctest_namespace"}
    | {"monkeypatch", "pytestconfig", "record_property", "record_testsuite_property"}
    | {"record_xml_attribute", "recwarn", "request", "tmp_path", "tmp_path_factory", "tmpdir"}
    | {"tmpdir_factory"}
)


def visible_fixtures(test_path: str, sources: Mapping[str, str]) -> frozenset[str]:
    """Names of the fixtures the ``conftest.py`` files above ``test_path`` define (``sources``:
    tree path to text)."""
    folder = PurePosixPath(test_path).parent
    names: set[str] = set()
    for parent in (folder, *folder.parents):
        path = "conftest.py" if str(parent) in ("", ".") else f"{parent}/conftest.py"
        text = sources.get(path)
        if text:
            names |= fixture_names(text)
    return frozenset(names)


def fixture_names(source: str) -> set[str]:
    """The fixtures a module defines at its top level: functions decorated with
    ``pytest.fixture`` (bare, called, or imported as ``fixture``), under their ``name=``."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return set()
    out: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call is not None else decorator
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name not in _FIXTURE_DECORATORS:
                continue
            renamed = [
                k.value.value
                for k in (call.keywords if call is not None else [])
                if k.arg == "name"
                and isinstance(k.value, ast.Constant)
                and isinstance(k.value.value, str)
            ]
            out.add(renamed[0] if renamed else node.name)
    return out


def _parametrized(decorator: ast.expr) -> set[str]:
    """The argument names a ``pytest.mark.parametrize("a, b", ...)`` decorator gives a test."""
    if not isinstance(decorator, ast.Call) or not decorator.args:
        return set()
    target = decorator.func
    if not (isinstance(target, ast.Attribute) and target.attr == "parametrize"):
        return set()
    names = decorator.args[0]
    if isinstance(names, ast.Constant) and isinstance(names.value, str):
        return {n.strip() for n in names.value.split(",") if n.strip()}
    if isinstance(names, ast.List | ast.Tuple):
        return {
            e.value for e in names.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        }
    return set()


def asked_fixtures(source: str) -> set[str]:
    """The fixtures the top-level ``test*`` functions of a module ask for by their parameters:
    those its own ``parametrize`` marks and fixtures do not give."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return set()
    own = fixture_names(source)
    asked: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            given = set().union(*(_parametrized(d) for d in node.decorator_list))
            params = [
                a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
            ]
            asked.update(p for p in params if p not in given)
    return asked - own


def tree_fixtures(sources: Mapping[str, str]) -> frozenset[str]:
    """Every fixture the tree defines, in any module: its ``conftest.py`` files and the plugins
    it ships (pytest's own ``caplog`` is defined in ``_pytest/logging.py``). A test asking for
    one of them runs the project's code."""
    names: set[str] = set()
    for text in sources.values():
        if "fixture" in text:
            names |= fixture_names(text)
    return frozenset(names)
