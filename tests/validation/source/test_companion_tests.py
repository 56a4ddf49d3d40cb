"""Which existing test modules guard the files a fix changes (pure)."""

from __future__ import annotations

from reprobot.validation.source.companion_tests import companion_test_modules

TREE = [
    "src/_pytest/skipping.py",
    "testing/test_skipping.py",
    "sympy/solvers/polysys.py",
    "sympy/solvers/tests/test_polysys.py",
    "sympy/polys/tests/test_polysys.py",
    "pkg/core/__init__.py",
    "pkg/core/tests/test_core.py",
    "pkg/io/reader.py",
    "tests/io/reader_test.py",
    "pkg/util.py",
    "docs/conf.py",
]


def test_a_changed_file_is_guarded_by_the_test_module_named_for_it() -> None:
    assert companion_test_modules(["src/_pytest/skipping.py"], TREE) == (
        "testing/test_skipping.py",
    )
    # Of two modules with the name, the one sharing most directories with the source.
    assert companion_test_modules(["sympy/solvers/polysys.py"], TREE) == (
        "sympy/solvers/tests/test_polysys.py",
    )
    # A package's __init__.py is named for its folder; *_test.py is a name too.
    assert companion_test_modules(["pkg/core/__init__.py", "pkg/io/reader.py"], TREE) == (
        "pkg/core/tests/test_core.py",
        "tests/io/reader_test.py",
    )


def test_files_that_are_not_code_under_test_have_no_guard() -> None:
    changed = ["pkg/util.py", "docs/conf.py", "setup.py", "testing/test_skipping.py", "a.txt"]
    assert companion_test_modules(changed, TREE) == ()


def test_the_guard_is_bounded_and_never_repeats_a_module() -> None:
    tree = [f"p/m{i}.py" for i in range(6)] + [f"tests/test_m{i}.py" for i in range(6)]
    changed = [f"p/m{i}.py" for i in range(6)]
    assert companion_test_modules(changed, tree) == tuple(f"tests/test_m{i}.py" for i in range(3))
    assert companion_test_modules(changed, tree, limit=1) == ("tests/test_m0.py",)
    assert companion_test_modules(["p/m1.py", "q/m1.py"], tree) == ("tests/test_m1.py",)
