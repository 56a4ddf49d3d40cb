"""What the project's own tests say a name is: the import they use for it most often, or the
factory they make it by from its own name; and how a snippet's unbound names take them."""

from __future__ import annotations

from reprobot.generation.drafter.imports_in_tests import factories_in_tests, imports_in_tests
from reprobot.generation.drafter.name_resolution import Resolution, resolve_names
from reprobot.generation.repo.test_layout import TestLayout

TEST_MODULES = {
    "tests/test_a.py": (
        "import numpy as np\nfrom geo.abc import x, y, t\nfrom .helpers import local\n"
        "from geo.units import A\n"
    ),
    "tests/test_b.py": (
        "import numpy as np\nfrom geo.abc import (\n    x,\n    t,\n)\nimport os.path\n"
        "from geo.abc import *\n"
    ),
    "tests/test_c.py": "import numpy\nfrom geo.letters import t\n",
}


def test_the_import_the_projects_tests_use_most_for_a_name() -> None:
    found = imports_in_tests(sorted(TEST_MODULES), TEST_MODULES)
    assert found["np"] == "import numpy as np"
    assert found["numpy"] == "import numpy"
    # Two test modules import t from geo.abc, one from geo.letters.
    assert found["t"] == "from geo.abc import t"
    assert found["x"] == "from geo.abc import x"
    # Relative imports, star imports and a dotted module's first part are not offered.
    assert "local" not in found and "*" not in found and "os" not in found


def test_a_name_nothing_else_binds_takes_the_projects_test_import() -> None:
    layout = TestLayout(tuple(TEST_MODULES), ("tests",), ("geo",), {})
    imported = imports_in_tests(sorted(TEST_MODULES), TEST_MODULES)

    def resolve(names: list[str], code_imports: tuple[str, ...] = ()) -> Resolution:
        return resolve_names(
            names, layout, {}, test_imports=imported, exports={}, imported=code_imports
        )

    assert resolve(["np"]).statements == ("import numpy as np",)
    # A one-letter name only beside another name from the same module: "t" with "x" from
    # geo.abc is geo.abc's t; a lone "A" or "t" may be anything.
    assert resolve(["t"]).unresolved == ("t",)
    assert resolve(["A"]).unresolved == ("A",)
    assert resolve(["t"], ("from geo.abc import x",)).statements == ("from geo.abc import t",)
    both = resolve(["x", "t"])
    assert both.unresolved == ("x", "t")
    assert resolve(["x", "t"], ("from geo.abc import y",)).statements == (
        "from geo.abc import x",
        "from geo.abc import t",
    )


FACTORY_MODULES = {
    "tests/test_f.py": (
        "from geo.abc import f, x\n\n\ndef test_one():\n    f = Function('f')\n"
        "    g = Function('g', real=True)\n"
    ),
    "tests/test_g.py": 'f = Function("f")\nT = TypeVar(\'T\')\nn = Dummy("m")\n',
    "tests/test_h.py": "f = Function('phi')\nf = sympy.Function('f')\n",
}


def test_the_names_the_projects_tests_make_from_their_own_name() -> None:
    found = factories_in_tests(sorted(FACTORY_MODULES), FACTORY_MODULES)
    # Two modules write Function, one sympy.Function; quotes as the statement is written here.
    assert found["f"] == "f = Function('f')"
    assert found["T"] == "T = TypeVar('T')"
    # More than the name as argument, or another name: no factory of that name.
    assert "g" not in found and "n" not in found


def test_a_called_name_the_tests_make_by_a_factory_is_made_that_way() -> None:
    layout = TestLayout(tuple(FACTORY_MODULES), ("tests",), ("geo",), {})
    imported = imports_in_tests(sorted(FACTORY_MODULES), FACTORY_MODULES)
    made = factories_in_tests(sorted(FACTORY_MODULES), FACTORY_MODULES)

    def resolve(names: list[str], called: frozenset[str]) -> Resolution:
        return resolve_names(
            names,
            layout,
            {},
            called=called,
            test_imports=imported,
            exports={},
            imported=("from geo.abc import x",),
            factories=made,
        )

    # "f(x)": geo.abc's f would be a symbol, not callable.
    assert resolve(["f"], frozenset({"f"})).statements == ("f = Function('f')",)
    # Not called: the import, as before.
    assert resolve(["f"], frozenset()).statements == ("from geo.abc import f",)
