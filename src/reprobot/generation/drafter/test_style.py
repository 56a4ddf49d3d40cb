"""The shape of a drafted test for the project's runner: a pytest function, or a method of a
``TestCase`` class for the unittest family, which collects nothing else.

A pytest function in a Django project run by ``tests/runtests.py`` or ``manage.py test`` is
never run: the runner's loader only finds ``TestCase`` classes. So a project tested by the
unittest family gets each drafted test as a method of ``unittest.TestCase``, and a Django
project as one of ``django.test.TestCase`` (which lets the reporter's code use the test
database the runner set up). Nothing of pytest is left in such a module: its environment need
not have pytest at all. Pure functions of the text the drafter wrote.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from reprobot.validation import UNPARSABLE, Runner, runner_of


@dataclass(frozen=True)
class TestStyle:
    """How a test module is written for ``runner``: pytest functions, or methods of ``base``
    (imported by ``base_import`` under a name no reporter takes)."""

    __test__ = False

    runner: Runner
    base_import: str = ""
    base: str = ""

    @property
    def is_pytest(self) -> bool:
        return self.runner == "pytest"

    @property
    def django(self) -> bool:
        """Whether the runner has configured Django before any test runs."""
        return self.runner == "django"

    @property
    def module_patterns(self) -> tuple[str, ...]:
        """Test module names the runner collects beyond pytest's ``test_*.py``: the unittest
        family's ``test*.py`` discovery finds ``tests.py``, where Django's apps keep theirs."""
        return () if self.is_pytest else ("tests.py",)

    def instructions(self) -> str:
        """What a model writing tests for this runner must know ("" for pytest's default)."""
        if self.is_pytest:
            return ""
        if self.django:
            return (
                "The tests run under Django's own test runner, which collects only TestCase "
                "classes and has configured Django already: write each test as a test_* method "
                "of a django.test.TestCase subclass, and never call settings.configure() or "
                "django.setup()."
            )
        return (
            "The tests run under unittest, which collects only TestCase classes: write each "
            "test as a test_* method of a unittest.TestCase subclass, without pytest."
        )


PYTEST = TestStyle("pytest")
UNITTEST = TestStyle("unittest", "import unittest as _unittest", "_unittest.TestCase")
DJANGO = TestStyle(
    "django", "from django.test import TestCase as _DjangoTestCase", "_DjangoTestCase"
)


def style_for(test_cmd: str) -> TestStyle:
    """The style the project's test command collects; pytest's when the command is unknown."""
    runner = runner_of(test_cmd)
    if runner == "django":
        return DJANGO
    if runner == "unittest":
        return UNITTEST
    return PYTEST


# pytest.approx's comparison, for a module that cannot import pytest: numbers, and flat lists,
# tuples and dicts of them, within a relative 1e-6 (an absolute 1e-12 near zero).
APPROX_HELPER = (
    "def _approx(expected):",
    "    import math",
    "",
    "    def close(a, e):",
    "        return math.isclose(a, e, rel_tol=1e-6, abs_tol=1e-12)",
    "",
    "    class _Approx:",
    "        def __eq__(self, actual):",
    "            if isinstance(expected, dict):",
    "                return isinstance(actual, dict) and actual.keys() == expected.keys() and all(",
    "                    close(actual[k], expected[k]) for k in expected",
    "                )",
    "            if isinstance(expected, (list, tuple)):",
    "                return len(actual) == len(expected) and all(map(close, actual, expected))",
    "            return close(actual, expected)",
    "",
    "        def __repr__(self):",
    "            return 'approx(%r)' % (expected,)",
    "",
    "    return _Approx()",
)

# A temporary directory standing for pytest's ``tmp_path``, removed when the test ends.
TMP_PATH_LINES = (
    "_tmp = _tempfile.TemporaryDirectory()",
    "self.addCleanup(_tmp.cleanup)",
    "tmp_path = _pathlib.Path(_tmp.name)",
)
TMP_PATH_IMPORTS = ("import pathlib as _pathlib", "import tempfile as _tempfile")

_RAISES = re.compile(r"\bpytest\.raises\(")
_APPROX = re.compile(r"\bpytest\.approx\(")


def unittest_body(body: str, wants_tmp_path: bool, style: TestStyle = UNITTEST) -> str:
    """A body written for pytest as the body of a ``TestCase`` method: ``pytest.raises`` as
    ``self.assertRaises``, ``pytest.approx`` as the module's ``_approx``, and ``tmp_path`` as
    a temporary directory of the test's own; under Django's runner, without the reporter's own
    set-up of Django."""
    body = _APPROX.sub("_approx(", _RAISES.sub("self.assertRaises(", body))
    if style.django:
        body = without_django_setup(body)
    if wants_tmp_path:
        body = "\n".join([*TMP_PATH_LINES, body])
    return body


def _is_django_setup(node: ast.stmt) -> bool:
    """``settings.configure(...)``, ``django.setup()``, ``django.conf.settings.configure()``."""
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return False
    func = node.value.func
    if not isinstance(func, ast.Attribute):
        return False
    owner = ast.unparse(func.value)
    return (func.attr == "configure" and owner.split(".")[-1] == "settings") or (
        func.attr == "setup" and owner == "django"
    )


# Settings a test cannot take over from a standalone script: the runner's apps and databases
# are what its test database was built from.
_RUNNER_OWNS = frozenset({"INSTALLED_APPS", "DATABASES", "DATABASE_ROUTERS", "SECRET_KEY"})


def _overrides(body: str, node: ast.stmt) -> list[str]:
    """The settings a ``settings.configure(USE_TZ=True, ...)`` call sets, as ``override_settings``
    for the rest of the test (removed again when it ends); none for ``django.setup()``."""
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return []
    kept = []
    for keyword in node.value.keywords:
        name = keyword.arg
        value = ast.get_source_segment(body, keyword.value)
        if name and name.isupper() and name not in _RUNNER_OWNS and value is not None:
            kept.append(f"{name}={' '.join(value.split())}")
    if not kept:
        return []
    return [
        f"_overridden = _override_settings({', '.join(kept)})",
        "_overridden.enable()",
        "self.addCleanup(_overridden.disable)",
    ]


def _statements(body: str) -> list[tuple[ast.stmt, int, int]] | None:
    """The top-level statements of ``body``, each with the index of its first line (decorators
    included) and of the line after its last; None when ``body`` does not parse."""
    try:
        tree = ast.parse(body)
    except UNPARSABLE:
        return None
    out: list[tuple[ast.stmt, int, int]] = []
    for node in tree.body:
        # Functions and classes start at their first decorator.
        decorators: list[ast.expr] = getattr(node, "decorator_list", [])
        start = min([node.lineno, *(d.lineno for d in decorators)]) - 1
        out.append((node, start, node.end_lineno or node.lineno))
    return out


def _rewritten(body: str, drop: set[int], inserted: dict[int, list[str]]) -> str:
    """``body`` without the lines ``drop``, with ``inserted`` lines before the line of each key."""
    out: list[str] = []
    for k, line in enumerate(body.split("\n")):
        out.extend(inserted.get(k, []))
        if k not in drop:
            out.append(line)
    return "\n".join(out)


def without_django_setup(body: str) -> str:
    """``body`` without the statements that set Django up on their own (``settings.configure()``,
    ``django.setup()``): a reporter's standalone script needs them, a test under Django's runner
    must not run them (settings can be configured once), and what the runner configured is what
    the project's own tests run with. The settings such a call sets (``USE_TZ=True``) hold for
    the rest of the test, through ``override_settings``; the apps and databases stay the
    runner's. A body that does not parse is left as it is."""
    statements = _statements(body)
    if statements is None:
        return body
    drop: set[int] = set()
    inserted: dict[int, list[str]] = {}
    for node, start, end in statements:
        if _is_django_setup(node):
            drop.update(range(start, end))
            inserted[start] = _overrides(body, node)
    return _rewritten(body, drop, inserted)


# A class of the reporter's that Django registers when it is defined: a model, or the choices
# its fields use.
_MODEL_BASE = re.compile(r"(?:^|\.)(?:Model|TextChoices|IntegerChoices|Choices)$")


def hoist_models(body: str) -> tuple[list[str], str]:
    """(the reporter's model classes, the rest of ``body``). Django creates a model's table only
    when the model exists as the test database is set up, that is, when its test module is
    imported; a model defined inside a test method has none. So the models (and the choices
    and models built on them) move to the module, which must then be one of an installed app.
    A body that does not parse, or defines no model, is left as it is."""
    lines = body.split("\n")
    hoisted: list[str] = []
    names: set[str] = set()
    drop: set[int] = set()
    for node, start, end in _statements(body) or []:
        bases = [ast.unparse(b) for b in node.bases] if isinstance(node, ast.ClassDef) else []
        if isinstance(node, ast.ClassDef) and any(
            _MODEL_BASE.search(b) or b in names for b in bases
        ):
            hoisted.append("\n".join(lines[start:end]))
            drop.update(range(start, end))
            names.add(node.name)
    return (hoisted, _rewritten(body, drop, {})) if hoisted else ([], body)


def class_name(stem: str) -> str:
    """``Test`` and the test's stem in CamelCase: ``parse_duration_1h30m`` gives
    ``TestParseDuration1h30m``."""
    words = [w for w in stem.split("_") if w]
    return "Test" + "".join(w[:1].upper() + w[1:] for w in words)
