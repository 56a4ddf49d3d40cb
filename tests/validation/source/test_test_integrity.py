"""Whether the tests that ran are the tests that were drafted: the pure checks."""

from __future__ import annotations

import pytest

from reprobot.validation.results.testrun import Outcome
from reprobot.validation.results.verdict import removed_tests
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.test_integrity import (
    edited_test_files,
    imported_top_names,
    shadowing_files,
)


def _new_file(path: str, text: str = "x = 1\n") -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"


def _edit(path: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"


TESTS = Patch(_new_file("tests/unit/test_issue.py", "from durations.parse import f\n"))


def test_a_fix_that_edits_a_file_of_the_test_patch_is_named() -> None:
    assert edited_test_files(Patch(_edit("tests/unit/test_issue.py")), TESTS) == (
        "tests/unit/test_issue.py",
    )
    assert edited_test_files(Patch(_edit("src/durations/parse.py")), TESTS) == ()


def test_imported_top_names() -> None:
    source = (
        b"import os.path\nimport numpy as np, durations\nfrom durations.parse import f\n"
        b"from . import helpers\nfrom .x import y\n\ndef test():\n    import json\n"
    )
    assert imported_top_names(source) == {"os", "numpy", "durations", "json"}
    assert imported_top_names(b"def broken(:\n") == frozenset()
    assert imported_top_names(None) == frozenset()


@pytest.mark.parametrize(
    ("added", "shadows"),
    [
        ("durations.py", True),  # the repository's root: the run's working folder
        ("tests/durations.py", True),
        ("tests/unit/durations/__init__.py", True),  # next to the test file
        ("src/durations/helpers.py", False),  # a module of the package itself
        ("docs/durations.py", False),  # not a folder searched for the tests
        ("tests/unit/other.py", False),  # a name the tests do not import
    ],
)
def test_a_module_added_where_python_finds_it_first_shadows(added: str, shadows: bool) -> None:
    sources = {"tests/unit/test_issue.py": b"from durations.parse import f\n"}
    fix = Patch(_new_file(added))
    found = shadowing_files(fix, sources, ["src/durations/__init__.py", "src/durations/parse.py"])
    assert found == ((added,) if shadows else ())


def test_a_module_that_already_existed_is_not_added_by_the_fix() -> None:
    sources = {"tests/test_issue.py": b"import durations\n"}
    fix = Patch(_edit("durations.py"))
    assert shadowing_files(fix, sources, ["durations.py"]) == ()


P, F, E = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR


def test_removed_tests_are_those_gone_from_a_module_that_still_runs_or_from_a_deleted_one() -> None:
    before = {"t/a.py::x": P, "t/a.py::y": P, "t/b.py::z": P, "t/c.py::w": P, "t/a.py::f": F}
    after = {"t/a.py::x": P, "t/c.py": E}
    # y left a module that still runs, z's module is gone; c no longer collects (broken, not
    # removed); f failed before, so its removal hides nothing.
    assert removed_tests(before, after) == ["t/a.py::y", "t/b.py::z"]
