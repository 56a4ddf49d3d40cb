"""What a test checks, read from its source: the kind and the words of its oracle (pure).

A test that goes from fail to pass is only as good as what it asserts. Three kinds, strongest
first:

- ``expected``: it asserts a value or an exception (``assert f(x) == 2.5``,
  ``pytest.raises(ValueError)``, ``assertEqual``, ``'ok' in output``): a wrong fix fails it.
- ``crash``: it asserts nothing and only runs code: it fails by raising, and passes once
  nothing raises, whatever the code then returns.
- ``weak``: its assertions only say a value is no longer what it was (``!=``, ``not in``,
  ``is not``, ``assertNotEqual``): a fix that returns any other wrong value passes it.

A test counts as its strongest assertion. Parsing never runs the code; a source that does not
parse, or nests too deep, gives no oracle for its tests.

Only ``expected`` checks a result: a fix whose fail-to-pass tests are all ``crash`` or ``weak``
is not called verified (``unchecked_result`` says what they check instead). Judged against the
labelled fix candidates of the dev set, fixes that tests of those kinds let through were more
often wrong than right.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum

from reprobot.validation.source.python_text import UNPARSABLE


class OracleKind(StrEnum):
    EXPECTED = "expected"
    CRASH = "crash"
    WEAK = "weak"


STRENGTH = {OracleKind.EXPECTED: 2, OracleKind.CRASH: 1, OracleKind.WEAK: 0}

_MAX_SOURCE_CHARS = 2_000_000
_MAX_CODE_CHARS = 160
_NEGATIVE_OPS = (ast.NotEq, ast.NotIn, ast.IsNot)
_RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex", "warns", "assertWarns"})
_RAISES |= frozenset({"assertRaisesRegexp", "assertWarnsRegex", "deprecated_call"})


@dataclass(frozen=True)
class Oracle:
    """A test's oracle: its kind, what it checks in words, and its strongest assertion as code
    (empty for a test that asserts nothing)."""

    kind: OracleKind
    checks: str
    assertion: str = ""

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind.value, "checks": self.checks, "assertion": self.assertion}


_WORDS = {
    OracleKind.EXPECTED: "checks",
    OracleKind.CRASH: "runs the code and checks only that nothing raises",
    OracleKind.WEAK: "checks only that a value is no longer the one reported",
}


# What tests of a kind check instead of a result, for "the tests only check that ...".
_SHORT_OF_A_RESULT = {
    OracleKind.CRASH: "the reported error no longer occurs",
    OracleKind.WEAK: "the reported wrong value is gone",
}


def unchecked_result(kinds: Collection[OracleKind | None]) -> str | None:
    """What the fail-to-pass tests of these oracle kinds check instead of a result, when none
    of them checks one; None when one does, or when a test's oracle is unknown (it may)."""
    if not kinds or any(k is None or k is OracleKind.EXPECTED for k in kinds):
        return None
    if all(k is OracleKind.WEAK for k in kinds):
        return _SHORT_OF_A_RESULT[OracleKind.WEAK]
    if all(k is OracleKind.CRASH for k in kinds):
        return _SHORT_OF_A_RESULT[OracleKind.CRASH]
    return "the reported error or wrong value is gone"


def _called_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if isinstance(func, ast.Name):
            return func.id
    return None


def _expression_kind(test: ast.expr) -> OracleKind:
    """The kind of ``assert <test>``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return OracleKind.WEAK
    if isinstance(test, ast.BoolOp):
        kinds = [_expression_kind(v) for v in test.values]
        return max(kinds, key=STRENGTH.__getitem__)
    if isinstance(test, ast.Compare) and all(isinstance(op, _NEGATIVE_OPS) for op in test.ops):
        return OracleKind.WEAK
    return OracleKind.EXPECTED


def _call_kind(name: str) -> OracleKind | None:
    """The kind of a call to an assertion helper by its name, or None for any other call."""
    if name in _RAISES:
        return OracleKind.EXPECTED
    squashed = name.lower().replace("_", "")
    if not squashed.startswith("assert"):
        return None
    # assertNotEqual, assert_not_equal, assertIsNot, assert_array_not_equal...
    return OracleKind.WEAK if "not" in squashed[len("assert") :] else OracleKind.EXPECTED


def _checks(node: ast.AST) -> Iterator[tuple[OracleKind, ast.AST]]:
    """Every assertion under ``node`` (nested functions and classes left out), with its kind."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(child, ast.Assert):
            yield _expression_kind(child.test), child.test
        elif (name := _called_name(child)) and (kind := _call_kind(name)):
            yield kind, child
        yield from _checks(child)


class _Inline(ast.NodeTransformer):
    """Names replaced by the short expressions last assigned to them, for the words."""

    def __init__(self, values: Mapping[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = self.values.get(node.id)
        return value if value is not None and isinstance(node.ctx, ast.Load) else node


def _assigned(body: list[ast.stmt]) -> dict[str, ast.expr]:
    values: dict[str, ast.expr] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and len(ast.unparse(stmt.value)) <= 100:
                values[target.id] = stmt.value
    return values


def _code(node: ast.AST, values: Mapping[str, ast.expr]) -> str:
    text = ast.unparse(_Inline(values).visit(node))
    return text if len(text) <= _MAX_CODE_CHARS else text[: _MAX_CODE_CHARS - 1] + "…"


def function_oracle(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Oracle:
    """The oracle of one test function."""
    values = _assigned(function.body)
    found = list(_checks(function))
    if not found:
        return Oracle(OracleKind.CRASH, _WORDS[OracleKind.CRASH])
    kind, node = max(found, key=lambda item: STRENGTH[item[0]])
    return Oracle(kind, _WORDS[kind], _code(node, values))


def module_oracles(path: str, source: str) -> dict[str, Oracle]:
    """Test id (``path::test_x``, ``path::TestY::test_x``) to oracle, for every test function
    of a module; empty when the source does not parse."""
    if len(source) > _MAX_SOURCE_CHARS:
        return {}
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return {}
    out: dict[str, Oracle] = {}
    try:
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name.startswith("test"):
                    out[f"{path}::{node.name}"] = function_oracle(node)
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        item.name.startswith("test")
                    ):
                        out[f"{path}::{node.name}::{item.name}"] = function_oracle(item)
    except RecursionError:
        return {}
    return out


def oracle_of(test_id: str, oracles: Mapping[str, Oracle]) -> Oracle | None:
    """The oracle of ``test_id``, a parametrised id (``test_x[1-2]``) included."""
    return oracles.get(test_id) or oracles.get(test_id.split("[", 1)[0])
