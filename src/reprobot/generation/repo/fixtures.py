"""The pytest fixtures a new test module can ask for by name, read from the tree (pure).

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
