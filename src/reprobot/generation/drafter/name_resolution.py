"""Imports a snippet took for granted: names it uses but never binds, found in the tree.

Reporters leave out ``import sympy`` or ``from pkg import Thing``, or the ``x, y = symbols(...)``
their test suite has at the top of every file. The search goes from the most to the least
certain source: the project's packages, the standard library, the names a package exports,
the module-level bindings of the related test files, the aliases the project itself imports
modules under (``import seaborn.objects as so`` in its docs' scripts), then classes and
functions defined in the tree.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from reprobot.generation.drafter.snippet_names import bound_in
from reprobot.generation.repo.test_layout import TestLayout
from reprobot.validation import UNPARSABLE

_ALIAS_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+([A-Za-z_][\w.]*)(?:[ \t]+as[ \t]+([A-Za-z_]\w*))?[ \t]*(?:#.*)?$", re.M
)


def import_aliases(sources: Iterable[str], packages: Iterable[str]) -> dict[str, str]:
    """``name -> module`` for the ``import module as name`` and ``import module`` lines of the
    tree's sources: the module the project most often imports under each name. A module outside
    the project's packages counts only when the project imports it so in two files or more
    (``np``, ``numpy``), so a one-off local alias names nothing."""
    own = set(packages)
    seen: dict[str, Counter[str]] = {}
    for text in sources:
        for dotted, alias in set(_ALIAS_IMPORT.findall(text)):
            # ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c`` to ``a.b``.
            module = dotted if alias else dotted.split(".")[0]
            seen.setdefault(alias or module, Counter())[module] += 1
    out: dict[str, str] = {}
    for alias, counts in seen.items():
        module, count = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        if module.split(".")[0] in own or count >= 2:
            out[alias] = module
    return out


def module_name_for(
    name: str, packages: Sequence[str], test_imports: Mapping[str, str] | None
) -> str | None:
    """The import of a module a reporter names without importing it, used as a module: a module
    the project's tests import under another name (``numpy``, which they import as ``np``), or
    the project's own package under the reporter's short name for it (``smp`` or ``sy`` for
    ``sympy``: its first letter, then letters of it in order)."""
    for statement in (test_imports or {}).values():
        words = statement.split()
        if len(words) >= 2 and words[0] == "import" and words[1] == name:
            return f"import {name}"
    if len(name) < 2 or not name.isidentifier() or not name.islower():
        return None
    found = [p for p in packages if p != name and p[0] == name[0] and _in_order(name, p)]
    return f"import {found[0]} as {name}" if len(found) == 1 else None


def _in_order(short: str, word: str) -> bool:
    letters = iter(word)
    return all(char in letters for char in short)


def module_bindings(source: str) -> dict[str, ast.stmt]:
    """Top-level names a module binds, each with the statement that binds it."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return {}
    out: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.setdefault(node.name, node)
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.Import | ast.ImportFrom):
            for name in bound_in(node) - {"*"}:  # what a star import binds is not known here
                out.setdefault(name, node)
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == "__all__":
                    for name in _literal_strings(node.value):
                        out.setdefault(name, node)
    return out


def _literal_strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.List | ast.Tuple):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


_STAR_DEPTH = 3


def all_exports(layout: TestLayout, sources: Mapping[str, str]) -> dict[str, dict[str, ast.stmt]]:
    """What each package of the tree exports (``package_exports``): read once per tree."""
    return {
        package: package_exports(package, layout, sources)
        for package in layout.packages
        if _package_init(layout, package)
    }


def package_exports(
    module: str, layout: TestLayout, sources: Mapping[str, str], depth: int = _STAR_DEPTH
) -> dict[str, ast.stmt]:
    """The names ``module`` binds, with those its ``from .sub import *`` lines bring in (to
    ``depth`` levels): older sympy's ``__init__`` is little else, and ``from sympy import Eq``
    works through them."""
    path = layout.modules.get(module)
    text = sources.get(path, "") if path else ""
    out = module_bindings(text)
    if depth <= 0 or "import *" not in text:
        return out
    try:
        tree = ast.parse(text)
    except UNPARSABLE:
        return out
    is_package = bool(path and path.endswith("__init__.py"))
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or [a.name for a in node.names] != ["*"]:
            continue
        target = _absolute(module, is_package, node.level, node.module)
        if target is None or target == module:
            continue
        for name, statement in package_exports(target, layout, sources, depth - 1).items():
            if not name.startswith("_"):
                out.setdefault(name, statement)
    return out


def star_imported(
    imports: Sequence[str],
    layout: TestLayout,
    sources: Mapping[str, str],
    exports: Mapping[str, Mapping[str, ast.stmt]] | None = None,
) -> set[str]:
    """Names the snippet's own ``from <module of the tree> import *`` lines bind: they are the
    reporter's, and a name resolved elsewhere would shadow them (``Operator`` of
    ``sympy.physics.quantum``, not the one of ``sympy.simplify.hyperexpand``)."""
    names: set[str] = set()
    for statement in imports:
        try:
            tree = ast.parse(statement)
        except UNPARSABLE:
            continue
        for node in tree.body:
            if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
                continue
            if [a.name for a in node.names] != ["*"] or node.module not in layout.modules:
                continue
            listed = _declared_all(sources.get(layout.modules[node.module], ""))
            if listed is not None:
                names.update(listed)  # a star import binds exactly what __all__ lists
                continue
            bound = (exports or {}).get(node.module)
            if bound is None:
                bound = package_exports(node.module, layout, sources)
            names.update(n for n in bound if not n.startswith("_"))
    return names


def _declared_all(source: str) -> list[str] | None:
    """The names a module's literal ``__all__`` lists, or None when it has none."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return _literal_strings(node.value)
    return None


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str | None:
    """The absolute module of ``from <level dots><name> import`` written in ``module``."""
    if level == 0:
        return name
    parts = module.split(".") if is_package else module.split(".")[:-1]
    if level - 1 >= len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, name] if name else base) or None


@dataclass(frozen=True)
class Resolution:
    """Statements to put before a snippet, and the names still unresolved."""

    statements: tuple[str, ...]
    unresolved: tuple[str, ...]


def _package_init(layout: TestLayout, package: str) -> str | None:
    return layout.modules.get(package)


def resolve_names(
    names: Sequence[str],
    layout: TestLayout,
    sources: Mapping[str, str],
    related_tests: Sequence[str] = (),
    called: frozenset[str] = frozenset(),
    aliases: Mapping[str, str] | None = None,
    exports: Mapping[str, Mapping[str, ast.stmt]] | None = None,
    test_imports: Mapping[str, str] | None = None,
    imported: Sequence[str] = (),
    factories: Mapping[str, str] | None = None,
    modules_used: frozenset[str] = frozenset(),
) -> Resolution:
    """Import (or binding) statements for ``names``; ``sources`` maps tree paths to their text
    (the package ``__init__`` files, the related test files and the modules of the tree). A
    name in ``called`` is called by the snippet: it resolves to a function or class of that
    name before a module. A name nothing else binds takes the import the project's tests use
    for it most often (``imports_in_tests``); a one-letter name only from a module the code
    already imports from (``imported``, the code's import statements, or another name's). A
    called name the tests make by a factory from its own name (``factories``: ``f =
    Function('f')``) is made that way: it has to be callable. A name the snippet reads
    attributes of (``modules_used``) and nothing binds may be a module (``module_name_for``)."""
    statements: list[str] = []
    unresolved: list[str] = []
    if exports is None:
        exports = all_exports(layout, sources)
    test_bindings = [(path, module_bindings(sources.get(path, ""))) for path in related_tests]
    pending: list[str] = []
    for name in names:
        statement = _resolve_one(name, layout, exports, test_bindings, sources, name in called)
        if statement is None and aliases and name in aliases:
            module = aliases[name]
            statement = f"import {module}" if module == name else f"import {module} as {name}"
        if statement is None:
            pending.append(name)
        elif statement not in statements:
            statements.append(statement)
    # "t" beside x and y from sympy.abc is sympy.abc's t; a lone "A" may be anything.
    modules = {_source_module(s) for s in [*imported, *statements]}
    for name in pending:
        made = (factories or {}).get(name) if name in called else None
        statement = (test_imports or {}).get(name)
        if statement is not None and len(name) == 1 and _source_module(statement) not in modules:
            statement = None
        statement = made or statement
        if statement is None and name in modules_used:
            statement = module_name_for(name, layout.packages, test_imports)
        if statement is None:
            unresolved.append(name)
        elif statement not in statements:
            statements.append(statement)
    return Resolution(tuple(statements), tuple(unresolved))


def _source_module(statement: str) -> str:
    """The module an import statement reads from (``from a.b import c``: ``a.b``)."""
    words = statement.split()
    return words[1] if len(words) > 1 and words[0] in ("from", "import") else ""


def _resolve_one(
    name: str,
    layout: TestLayout,
    exports: Mapping[str, Mapping[str, ast.stmt]],
    test_bindings: Sequence[tuple[str, Mapping[str, ast.stmt]]],
    sources: Mapping[str, str],
    called: bool = False,
) -> str | None:
    is_module = name in layout.packages or name in layout.modules
    if is_module and called:
        # "median(...)" where the tree has a module median.py: the function it defines (or a
        # package exports) is what was called; "'module' object is not callable" otherwise.
        for package, bound in exports.items():
            if name in bound and not name.startswith("_"):
                return f"from {package} import {name}"
        if found := _defining_module(name, layout, sources):
            return found
    if is_module:
        return f"import {name}"
    if name in sys.stdlib_module_names and not called:
        return f"import {name}"
    for package, bound in exports.items():
        if name in bound and not name.startswith("_"):
            return f"from {package} import {name}"
    if name in sys.stdlib_module_names:
        # Called, yet no package of the tree exports it: a function of the tree of that name,
        # or the standard module after all.
        return _defining_module(name, layout, sources) or f"import {name}"
    for path, bound in test_bindings:
        node = bound.get(name)
        if isinstance(node, ast.Import | ast.ImportFrom):
            return _narrow_import(node, name)
        if isinstance(node, ast.Assign) and _is_simple_call(node.value):
            segment = ast.get_source_segment(sources.get(path, ""), node)
            if segment:
                return segment
    return _defining_module(name, layout, sources)


def _narrow_import(node: ast.Import | ast.ImportFrom, name: str) -> str:
    for alias in node.names:
        bound = alias.asname or alias.name.split(".")[0]
        if bound != name:
            continue
        as_part = f" as {alias.asname}" if alias.asname else ""
        if isinstance(node, ast.Import):
            return f"import {alias.name}{as_part}"
        module = "." * node.level + (node.module or "")
        return f"from {module} import {alias.name}{as_part}"
    return ast.unparse(node)


def _is_simple_call(node: ast.expr) -> bool:
    """``symbols("x y")``, ``Symbol("x")``, ``Thing()`` with literal arguments: safe to copy."""
    if isinstance(node, ast.Tuple):
        return all(_is_simple_call(e) for e in node.elts)
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name | ast.Attribute):
        return False
    args = [*node.args, *(k.value for k in node.keywords)]
    return all(isinstance(a, ast.Constant) for a in args)


def _defining_module(name: str, layout: TestLayout, sources: Mapping[str, str]) -> str | None:
    """The public module of the tree that defines class or function ``name`` (shortest path)."""
    if len(name) < 3:
        return None  # one- and two-letter names are local variables far more often than APIs
    needles = (f"\nclass {name}(", f"\nclass {name}:", f"\ndef {name}(")
    found = []
    for module, path in layout.modules.items():
        if any(part.startswith("_") and part != "__init__" for part in module.split(".")[1:]):
            continue
        text = sources.get(path)
        if text is not None and any(needle in "\n" + text for needle in needles):
            found.append((module.count("."), len(module), module))
    if not found:
        return None
    return f"from {min(found)[2]} import {name}"
