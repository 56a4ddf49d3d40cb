"""The names a snippet uses, binds and calls, from its syntax alone."""

from __future__ import annotations

from reprobot.generation.drafter.snippet_names import (
    bound_names,
    called_names,
    undefined_names,
    written_tests,
)


def test_undefined_names_in_order_of_use() -> None:
    source = (
        "import os\n"
        "m = Matrix([[1, 2]])\n"
        "def f(a, *args, k=1, **kw):\n"
        "    return a + k + y + len(args) + len(kw)\n"
        "for i in range(3):\n"
        "    print(i, os.sep, z)\n"
        "try:\n"
        "    m.det()\n"
        "except Exception as e:\n"
        "    print(e, __file__, __name__)\n"
        "g = lambda q: q + w\n"
        "squares = [c * c for c in data]\n"
        "class Shape(Base):\n"
        "    pass\n"
        "Shape()\n"
    )
    assert undefined_names(source) == ["Matrix", "y", "z", "w", "data", "Base"]


def test_undefined_names_provided_and_imports_do_not_count() -> None:
    source = "from geo import Grid as G\nimport numpy.linalg\nprint(G, numpy, tmp_path, m)\n"
    assert undefined_names(source, provided=("tmp_path",)) == ["m"]


def test_undefined_names_of_invalid_source_is_empty() -> None:
    assert undefined_names("def f(:\n    return x") == []


def test_bound_names_are_every_binding_of_any_scope() -> None:
    source = "import a.b\nfrom c import d as e\nf = 1\ndef g(h):\n    i = h\nclass J: pass\n"
    assert bound_names(source) == {"a", "e", "f", "g", "h", "i", "J"}
    assert bound_names("def f(:") == set()


def test_called_names_are_bare_names_in_call_position() -> None:
    assert called_names("f(x)\nm.g(y)\nh(k)(z)") == {"f", "h"}


def test_written_tests_are_pytests_top_level_tests() -> None:
    source = "\n".join(
        [
            "import pytest",
            "def test_roc(caplog):",
            "    def test_inner():",
            "        pass",
            "async def test_wait():",
            "    pass",
            "def test_method(self):",
            "    pass",
            "def helper():",
            "    pass",
            "class TestSuite:",
            "    def test_case(self):",
            "        pass",
            "class Helper:",
            "    pass",
        ]
    )
    assert written_tests(source) == (["test_roc", "test_wait"], ["TestSuite"])
    assert written_tests("def test_x(:") == ([], [])
    assert written_tests("x = 1") == ([], [])
