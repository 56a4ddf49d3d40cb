"""The names a snippet uses, binds and calls, read from its syntax alone.

A snippet is small, so its scopes are merged: a name bound anywhere in it counts as bound.
Where the names it leaves unbound come from is ``name_resolution``'s concern.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Sequence

from reprobot.validation import UNPARSABLE

_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__"}


class _Names(ast.NodeVisitor):
    """Names loaded and names bound anywhere in a module (scopes merged: a snippet is small)."""

    def __init__(self) -> None:
        self.loaded: dict[str, None] = {}
        self.bound: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loaded.setdefault(node.id)
        else:
            self.bound.add(node.id)

    def _bind_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                self.bound.add(arg.arg)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.bound.add(node.name)
        self._bind_function(node)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.bound.add(node.name)
        self._bind_function(node)
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._bind_function(node)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bound.add(node.name)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.bound.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            self.bound.add(alias.asname or alias.name)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.bound.update(node.names)


def undefined_names(source: str, provided: Sequence[str] = ()) -> list[str]:
    """Names ``source`` loads but never binds, builtins and ``provided`` aside, in order of use."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return []
    names = _Names()
    names.visit(tree)
    skip = names.bound | _BUILTINS | set(provided)
    return [n for n in names.loaded if n not in skip]


def bound_names(source: str) -> set[str]:
    """Names ``source`` binds anywhere: assignments, definitions, imports, parameters."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return set()
    return bound_in(tree)


def bound_in(node: ast.AST) -> set[str]:
    """Names ``node`` binds anywhere in it."""
    names = _Names()
    names.visit(node)
    return names.bound


def called_names(source: str) -> set[str]:
    """Names ``source`` calls (``f(...)``): a module of that name is not what it means."""
    return _names_under(source, ast.Call, "func")


def attribute_bases(source: str) -> set[str]:
    """Names ``source`` reads attributes of (``smp.symbols``): used as a module would be."""
    return _names_under(source, ast.Attribute, "value")


def _names_under(source: str, kind: type[ast.AST], field: str) -> set[str]:
    """The bare names in ``field`` of every ``kind`` node of ``source`` (none if it does not
    parse)."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return set()
    found = (getattr(node, field) for node in ast.walk(tree) if isinstance(node, kind))
    return {name.id for name in found if isinstance(name, ast.Name)}


def _takes_self(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = [*node.args.posonlyargs, *node.args.args][:1]
    return bool(first) and first[0].arg in ("self", "cls")


def written_tests(source: str) -> tuple[list[str], list[str]]:
    """The tests ``source`` defines at its top level, pytest's way: the names of its ``test*``
    functions that take no ``self`` first (a ``TestCase`` method pasted alone is no test of its
    own), and of its ``Test*`` classes. Nothing for text that does not parse."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return [], []
    functions = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test")
        and not _takes_self(node)
    ]
    classes = [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test")
    ]
    return functions, classes
