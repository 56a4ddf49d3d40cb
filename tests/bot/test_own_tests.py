"""What a pull request does to its own tests, when there is nothing to run before and after:
a test configuration alone, deleted tests, tests without code."""

from __future__ import annotations

from typing import Any

from reprobot.bot.jobs.verify import _own_tests
from reprobot.bot.render.pull import OwnTests
from reprobot.validation.source.patch import Patch


def diff(*files: tuple[str, str]) -> Patch:
    parts = []
    for path, kind in files:
        if kind == "added":
            parts.append(
                f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n"
                f"+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n"
            )
        elif kind == "deleted":
            parts.append(
                f"diff --git a/{path} b/{path}\ndeleted file mode 100644\n--- a/{path}\n"
                f"+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n"
            )
        else:
            parts.append(
                f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
                "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
            )
    return Patch("".join(parts))


def own(change: Patch) -> OwnTests:
    # Nothing here reaches a sandbox: each case ends before a run.
    unused: Any = None
    return _own_tests(unused, unused, unused, change, ("tests",), unused, unused)


def test_a_patch_names_what_it_deletes() -> None:
    patch = diff(("tests/test_a.py", "deleted"), ("pkg/a.py", "changed"), ("b.py", "added"))
    assert patch.deleted_files == ("tests/test_a.py",)
    assert patch.files == ("tests/test_a.py", "pkg/a.py", "b.py")
    assert Patch("not a diff").deleted_files == ()


def test_no_test_file_at_all() -> None:
    assert own(diff(("pkg/a.py", "changed"))) == OwnTests((), None)


def test_a_test_configuration_alone_is_named_not_called_no_test_file() -> None:
    result = own(diff(("tests/conftest.py", "added"), ("pkg/a.py", "changed")))
    assert result.verdict is None
    assert result.test_files == ("tests/conftest.py",)
    assert result.note == "changes how its tests run (`tests/conftest.py`) but no test"


def test_deleted_tests_are_said_to_be_deleted() -> None:
    result = own(diff(("tests/test_a.py", "deleted"), ("pkg/a.py", "changed")))
    assert result.verdict is None
    assert result.note == "deletes `tests/test_a.py` and adds or changes no test"


def test_tests_without_code() -> None:
    result = own(diff(("tests/test_a.py", "changed")))
    assert result.note == "changes tests and no other code to run them against"
