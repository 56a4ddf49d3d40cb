"""Where a drafted test belongs: beside the project's tests of the code its example calls."""

from __future__ import annotations

import pytest

from reprobot.generation.repo.exercised import (
    definitions,
    exercised_module,
    own_tests_folder,
    reaches_project,
)
from reprobot.generation.repo.test_layout import TestLayout

FILES = {
    "sympy/__init__.py": "from sympy.polys import *\nfrom sympy.core import *\n",
    "sympy/core/basic.py": "class Basic:\n    def subs(self):\n        pass\n",
    "sympy/core/tests/test_basic.py": "def test_basic():\n    pass\n",
    "sympy/polys/partfrac.py": "def apart(f):\n    return f\n\n\ndef apart_list(f):\n    pass\n",
    "sympy/polys/tests/test_partfrac.py": "def apart():\n    pass\n",
    "sympy/polys/agca/modules.py": "class Module:\n    pass\n",
    "sympy/polys/agca/tests/test_modules.py": "",
    "sympy/printing/latex.py": "def latex(expr):\n    pass\n",
    "sympy/printing/pretty/pretty.py": "def pretty(expr):\n    pass\n\n\ndef latex(e):\n    pass\n",
    "sympy/printing/tests/test_latex.py": "",
    "sympy/printing/pretty/tests/test_pretty.py": "",
    "sympy/other/latex.py": "def latex(e):\n    pass\n",
}
TESTS = tuple(p for p in FILES if "/tests/" in p)
LAYOUT = TestLayout(
    TESTS,
    tuple(sorted({p.rsplit("/", 1)[0] for p in TESTS})),
    ("sympy",),
    {
        "sympy.core.basic": "sympy/core/basic.py",
        "sympy.polys": "sympy/polys/__init__.py",
        "sympy.polys.partfrac": "sympy/polys/partfrac.py",
        "sympy.printing.pretty": "sympy/printing/pretty/__init__.py",
        "sympy.printing.pretty.pretty": "sympy/printing/pretty/pretty.py",
    },
)


def test_definitions_are_the_codes_not_the_tests() -> None:
    defined = definitions(FILES, LAYOUT)
    assert defined["apart"] == ("sympy/polys/partfrac.py",)
    assert defined["Basic"] == ("sympy/core/basic.py",)
    assert "subs" not in defined  # a method is no top-level definition
    assert len(defined["latex"]) == 3


@pytest.mark.parametrize(
    ("body", "imports", "module"),
    [
        # The call the last statement shows, its arguments built before it.
        ("x = Basic()\nresult = apart(x)\nassert result == 1", (), "sympy/polys/partfrac.py"),
        ("result = apart(Basic())", (), "sympy/polys/partfrac.py"),
        # A name three files define says nothing; an earlier statement's call does.
        ("e = Basic()\nlatex(e)", (), "sympy/core/basic.py"),
        # Nothing called that the project defines: the deepest module imported from.
        (
            "pretty_print(1)",
            ("from sympy.printing.pretty import pretty_print", "import sympy"),
            "sympy/printing/pretty/__init__.py",
        ),
        ("print(1)", ("import sympy",), None),
    ],
)
def test_the_module_a_body_exercises(body: str, imports: tuple[str, ...], module: str) -> None:
    assert exercised_module(body, imports, LAYOUT, definitions(FILES, LAYOUT)) == module


@pytest.mark.parametrize(
    ("module", "folder"),
    [
        ("sympy/polys/partfrac.py", "sympy/polys/tests"),
        # The deepest folder that is this module's, not a sibling package's ("agca").
        ("sympy/polys/agca/modules.py", "sympy/polys/agca/tests"),
        ("sympy/printing/pretty/pretty.py", "sympy/printing/pretty/tests"),
        ("sympy/printing/latex.py", "sympy/printing/tests"),
        ("sympy/other/latex.py", None),
    ],
)
def test_the_test_folder_of_a_module(module: str, folder: str | None) -> None:
    assert own_tests_folder(module, LAYOUT) == folder


def test_top_level_tests_mirroring_the_package() -> None:
    layout = TestLayout(
        ("tests/_core/test_scales.py", "tests/test_core.py", "testing/logging/test_x.py"),
        ("tests/_core", "tests", "testing/logging"),
        ("seaborn", "_pytest"),
        {},
    )
    assert own_tests_folder("seaborn/_core/scales.py", layout) == "tests/_core"
    assert own_tests_folder("src/_pytest/logging.py", layout) == "testing/logging"
    # A module of the package's root has no folder of its own.
    assert own_tests_folder("seaborn/palettes.py", layout) is None


def test_a_function_the_reporter_defines_is_not_what_the_example_exercises() -> None:
    body = "e = apart(1)\ndef _print_latex(self):\n    return latex(self)\n"
    assert exercised_module(body, (), LAYOUT, definitions(FILES, LAYOUT)) == (
        "sympy/polys/partfrac.py"
    )


@pytest.mark.parametrize(
    ("body", "imports", "reaches"),
    [
        ("apart(x)", ("from sympy import apart",), True),
        ("import sympy.polys\nsympy.polys.apart(1)", (), True),
        # A command run as ``-m sympy`` or a name of the package reaches it too.
        ("run([sys.executable, '-m', 'sympy.cli', 'x'])", ("import sys",), True),
        ("sympy.apart(1)", (), True),
        # "a bug in LooseVersion": only the standard library, which no fix of sympy changes.
        (
            "LooseVersion('1.14.3') >= LooseVersion('1.14dev')",
            ("from distutils.version import LooseVersion",),
            False,
        ),
        ("numpy.asarray(1).size", ("import numpy",), False),
    ],
)
def test_whether_a_body_reaches_the_project(
    body: str, imports: tuple[str, ...], reaches: bool
) -> None:
    assert reaches_project(body, imports, ("sympy",)) is reaches


def test_without_known_packages_every_body_reaches_the_project() -> None:
    assert reaches_project("numpy.asarray(1)", ("import numpy",), ())
