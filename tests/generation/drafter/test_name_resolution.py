"""Names a snippet uses without binding them, resolved from a hand-made tree."""

from __future__ import annotations

import pytest

from reprobot.generation.drafter.name_resolution import (
    Resolution,
    all_exports,
    import_aliases,
    module_bindings,
    module_name_for,
    package_exports,
    resolve_names,
    star_imported,
)
from reprobot.generation.drafter.snippet_names import (
    attribute_bases,
    called_names,
    undefined_names,
)
from reprobot.generation.repo.test_layout import TestLayout, detect_layout

FILES = [
    "pyproject.toml",
    "src/geo/__init__.py",
    "src/geo/core.py",
    "src/geo/_impl.py",
    "src/geo/shapes/__init__.py",
    "src/geo/shapes/polygon.py",
    "src/geo/shapes/_private.py",
    "tests/test_core.py",
    "tests/shapes/test_polygon.py",
    "docs/conf.py",
    "zoneinfo_compat.py",
]
SOURCES = {
    "src/geo/__init__.py": (
        '"""Plane geometry."""\n\n'
        "from geo.core import Grid, make_grid\n"
        "from geo._impl import _fast_area\n\n"
        '__all__ = ["Grid", "make_grid", "distance"]\n'
    ),
    "src/geo/core.py": (
        "class Grid:\n    pass\n\n\ndef make_grid(n):\n    return Grid()\n\n\n"
        "def distance(a, b):\n    return abs(a - b)\n"
    ),
    "src/geo/_impl.py": "class FastPath:\n    pass\n\n\ndef _fast_area(points):\n    return 0\n",
    "src/geo/shapes/__init__.py": "",
    "src/geo/shapes/polygon.py": (
        "import math\n\n\nclass Polygon(Shape):\n    pass\n\n\n"
        "class Triangle:\n    pass\n\n\ndef ab(x):\n    return x\n"
    ),
    "src/geo/shapes/_private.py": "class Hidden:\n    pass\n",
    "tests/shapes/test_polygon.py": (
        "import pytest\n"
        "from geo.abc import pt, origin, unit\n"
        "from geo.core import make_grid as mg\n"
        "import numpy as np\n"
        "from sympy import symbols\n\n"
        "x, y = symbols('x y')\n"
        "z = compute(x)\n"
        "grid = mg(n)\n\n\n"
        "def test_square():\n    assert pt(0, 0) == origin\n"
    ),
}
RELATED = ("tests/shapes/test_polygon.py",)


@pytest.fixture
def layout() -> TestLayout:
    return detect_layout(FILES)


def resolve(layout: TestLayout, *names: str) -> Resolution:
    return resolve_names(list(names), layout, SOURCES, RELATED)


# --- module_bindings -----------------------------------------------------------------------------


def test_module_bindings_names_each_top_level_binding() -> None:
    source = (
        '"""doc"""\n'
        "import os.path\n"
        "from .core import Grid as G, make_grid\n"
        'VERSION: str = "1"\n'
        '__all__ = ["Grid", "make_grid", "VERSION"]\n'
        'x, y = symbols("x y")\n'
        "def helper():\n    inner = 1\n"
        "class Cell:\n    size = 2\n"
        "if True:\n    hidden = 1\n"
    )
    bindings = module_bindings(source)
    kinds = {name: type(node).__name__ for name, node in bindings.items()}
    assert kinds == {
        "os": "Import",
        "G": "ImportFrom",
        "make_grid": "ImportFrom",
        "VERSION": "AnnAssign",
        "__all__": "Assign",
        # A name only listed in __all__ counts as exported, with the __all__ statement.
        "Grid": "Assign",
        "x": "Assign",
        "y": "Assign",
        "helper": "FunctionDef",
        "Cell": "ClassDef",
    }


def test_module_bindings_of_invalid_source_is_empty() -> None:
    assert module_bindings("x = (") == {}


# --- resolve_names -------------------------------------------------------------------------------


def test_a_package_name_is_imported(layout: TestLayout) -> None:
    assert layout.packages == ("geo", "zoneinfo_compat")
    assert resolve(layout, "geo", "zoneinfo_compat") == Resolution(
        ("import geo", "import zoneinfo_compat"), ()
    )


def test_a_stdlib_module_is_imported(layout: TestLayout) -> None:
    assert resolve(layout, "json", "itertools") == Resolution(
        ("import json", "import itertools"), ()
    )


def test_a_name_the_package_exports_is_imported_from_it(layout: TestLayout) -> None:
    # Bound by an import in __init__, or only listed in __all__.
    assert resolve(layout, "Grid", "make_grid", "distance").statements == (
        "from geo import Grid",
        "from geo import make_grid",
        "from geo import distance",
    )


def test_a_private_export_is_not_imported(layout: TestLayout) -> None:
    assert resolve(layout, "_fast_area") == Resolution((), ("_fast_area",))


def test_an_import_of_a_related_test_is_narrowed_to_the_name(layout: TestLayout) -> None:
    assert resolve(layout, "pt", "np", "mg").statements == (
        "from geo.abc import pt",
        "import numpy as np",
        "from geo.core import make_grid as mg",
    )


def test_a_simple_binding_of_a_related_test_is_copied(layout: TestLayout) -> None:
    resolution = resolve(layout, "x", "y")
    # Both names come from one statement, copied once; ``symbols`` is for a later round.
    assert resolution == Resolution(("x, y = symbols('x y')",), ())
    assert undefined_names(resolution.statements[0]) == ["symbols"]
    assert resolve(layout, "symbols").statements == ("from sympy import symbols",)


def test_a_binding_computed_from_other_names_is_not_copied(layout: TestLayout) -> None:
    # ``compute(x)`` and ``mg(n)`` take non-literal arguments: running them is not safe.
    assert resolve(layout, "z", "grid") == Resolution((), ("z", "grid"))


def test_without_related_tests_their_bindings_are_unknown(layout: TestLayout) -> None:
    assert resolve_names(["pt", "x"], layout, SOURCES) == Resolution((), ("pt", "x"))


def test_a_class_defined_in_a_public_module_is_imported_from_it(layout: TestLayout) -> None:
    assert resolve(layout, "Polygon", "Triangle").statements == (
        "from geo.shapes.polygon import Polygon",
        "from geo.shapes.polygon import Triangle",
    )


def test_private_modules_are_not_searched(layout: TestLayout) -> None:
    assert "geo._impl" in layout.modules and "geo.shapes._private" in layout.modules
    assert resolve(layout, "FastPath", "Hidden") == Resolution((), ("FastPath", "Hidden"))


def test_short_names_are_not_searched_in_modules(layout: TestLayout) -> None:
    # ``ab`` is defined in polygon.py, but a two-letter name is a local variable far more often.
    assert resolve(layout, "ab", "q") == Resolution((), ("ab", "q"))


def test_unresolved_names_are_reported_in_order(layout: TestLayout) -> None:
    resolution = resolve(layout, "Nope", "json", "Polygon", "Path", "Grid", "json")
    assert resolution.statements == (
        "import json",
        "from geo.shapes.polygon import Polygon",
        "from geo import Grid",
    )
    assert resolution.unresolved == ("Nope", "Path")


def test_resolved_statements_make_the_snippet_complete(layout: TestLayout) -> None:
    snippet = "poly = Polygon(make_grid(3))\nprint(json.dumps(distance(x, y)), np.pi)\n"
    missing = undefined_names(snippet)
    first = resolve(layout, *missing)
    second = resolve(layout, *undefined_names("\n".join([*first.statements, snippet])))
    source = "\n".join([*second.statements, *first.statements, snippet])
    compile(source, "test_snippet.py", "exec")
    assert undefined_names(source) == []


def test_a_called_name_resolves_to_the_function_not_the_module_of_that_name() -> None:
    files = ["pyproject.toml", "median.py", "stats/__init__.py", "stats/summary.py"]
    sources = {
        "median.py": "def median(values):\n    return sorted(values)[len(values) // 2]\n",
        "stats/__init__.py": "",
        "stats/summary.py": "def summary(values):\n    return values\n",
    }
    layout = detect_layout(files)
    assert "median" in layout.modules
    source = "print(median([1, 2, 3, 4]))\nsummary\n"
    called = frozenset(called_names(source))
    assert called == {"print", "median"}
    found = resolve_names(["median", "summary"], layout, sources, (), called)
    # Called: the function the module defines; merely named: the module (or its definition).
    assert found.statements[0] == "from median import median"
    assert resolve_names(["median"], layout, sources).statements == ("import median",)


def test_aliases_the_project_imports_modules_under_resolve_what_nothing_else_does(
    layout: TestLayout,
) -> None:
    sources = [
        "import geo.shapes as gs  # the documented spelling\n",
        "def build():\n    import geo.shapes as gs\n    return gs\n",
        "import numpy as np\n",
        "    import numpy as np\n",
        "import pandas as pd\n",  # once, in a module of someone else's: a local choice
        "import geo.core as gs\n",
        "x = 'import geo as g' and 1\n",  # not an import line
        "import dask.array\nimport numpy\n",
        "import dask\n",
        "import toolz  # once\n",
    ]
    aliases = import_aliases(sources, layout.packages)
    assert aliases == {"gs": "geo.shapes", "np": "numpy", "dask": "dask"}
    found = resolve_names(["gs", "pd", "np", "dask"], layout, SOURCES, (), aliases=aliases)
    # np is bound by the related tests here too; without them, the alias table answers.
    assert found == Resolution(
        ("import geo.shapes as gs", "import numpy as np", "import dask"), ("pd",)
    )


def test_names_a_package_brings_in_through_star_imports_resolve_to_the_package() -> None:
    files = [
        "symb/__init__.py",
        "symb/core/__init__.py",
        "symb/core/relational.py",
        "symb/core/_hidden.py",
        "symb/solvers/__init__.py",
        "symb/solvers/solve.py",
        "symb/loop.py",
    ]
    sources = {
        "symb/__init__.py": (
            "from .core import *\nfrom symb.solvers import *\nfrom .loop import *\n"
        ),
        "symb/core/__init__.py": (
            "from .relational import Eq, Ne\nfrom ._hidden import *\nfrom . import relational\n"
        ),
        "symb/core/relational.py": "class Eq:\n    pass\n\n\nclass Ne:\n    pass\n",
        "symb/core/_hidden.py": "def _private():\n    pass\n\n\ndef visible():\n    pass\n",
        "symb/solvers/__init__.py": "from .solve import *\n",
        "symb/solvers/solve.py": "def solve(eq):\n    return []\n",
        # A star import of itself, and of a module outside the tree, end the walk.
        "symb/loop.py": "from symb.loop import *\nfrom elsewhere import *\n\nLOOPED = 1\n",
    }
    layout = detect_layout(files)
    exports = all_exports(layout, sources)
    assert {"Eq", "Ne", "visible", "solve", "LOOPED", "relational"} <= set(exports["symb"])
    assert "_private" not in exports["symb"]
    found = resolve_names(["Eq", "solve", "visible"], layout, sources, (), exports=exports)
    assert found.statements == (
        "from symb import Eq",
        "from symb import solve",
        "from symb import visible",
    )
    # Without the walk the same names resolve (read from the tree on the spot).
    assert resolve_names(["Eq"], layout, sources, ()).statements == ("from symb import Eq",)
    assert package_exports("symb", layout, sources, depth=0).keys() == set()


@pytest.mark.parametrize(
    "error",
    [
        SystemError("AST constructor recursion depth mismatch (before=54, after=53)"),
        RecursionError("maximum recursion depth exceeded during ast construction"),
        MemoryError(),
        ValueError("source code string cannot contain null bytes"),
    ],
)
def test_a_module_the_parser_cannot_read_binds_nothing(
    monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    # CPython 3.11 raises SystemError, not RecursionError, on some deeply nested files (met in
    # one of sympy's): the interpreter's own failure, so the parser itself is made to fail.
    def unreadable(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr("ast.parse", unreadable)
    assert module_bindings("x = 1\n") == {}


def test_names_the_snippets_own_star_imports_bind_are_the_reporters(layout: TestLayout) -> None:
    # "Triangle" is defined in geo.shapes.polygon; a snippet that star-imports that module
    # has it, and no import of another module's Triangle may shadow it.
    imports = ["from geo.shapes.polygon import *", "from numpy import *", "from .x import *"]
    names = star_imported(imports, layout, SOURCES)
    assert {"Polygon", "Triangle", "ab"} <= names
    # Modules outside the tree, and relative imports, bind names nobody here knows.
    assert "Grid" not in names
    # A module's __all__ is exactly what its star import binds.
    assert star_imported(["from geo import *"], layout, SOURCES) == {
        "Grid",
        "make_grid",
        "distance",
    }
    assert (
        star_imported(["import geo", "x = (", "from geo.core import Grid"], layout, SOURCES)
        == set()
    )


def test_a_name_used_as_a_module_is_one_the_tests_import_or_the_package_short() -> None:
    tests = {"np": "import numpy as np", "xr": "import xarray as xr"}
    # The tests import numpy as np: numpy itself is a module.
    assert module_name_for("numpy", ("xarray",), tests) == "import numpy"
    # The reporter's short names for the project's package: its first letter, then its letters
    # in order.
    assert module_name_for("smp", ("sympy",), {}) == "import sympy as smp"
    assert module_name_for("sy", ("sympy",), {}) == "import sympy as sy"
    # Not a short name of it, ambiguous, or the package itself (imported as it is elsewhere).
    assert module_name_for("ps", ("sympy",), {}) is None
    assert module_name_for("sp", ("sympy", "spam"), {}) is None
    assert module_name_for("sympy", ("sympy",), {}) is None
    assert module_name_for("S", ("sympy",), {}) is None


def test_only_names_read_as_modules_are_taken_for_one() -> None:
    assert attribute_bases("q = smp.symbols('q')\nx = y + 1\nz.w.v") == {"smp", "z"}
    layout = TestLayout((), (), ("sympy",), {})
    used = resolve_names(["smp"], layout, {}, modules_used=frozenset({"smp"}))
    assert used.statements == ("import sympy as smp",)
    unused = resolve_names(["smp"], layout, {})
    assert unused.unresolved == ("smp",)
