"""Diffs written from file contents, checked with ``git apply --check`` in a real repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reprobot.generation.formats.patch_text import file_diff, patch_from_files
from reprobot.validation.source.patch import Patch
from tests.support.repos import make_repo

CORE = "def mean(values):\n    return sum(values) // len(values)\n"
OLD_TEST = "from calc import mean\n\n\ndef test_mean():\n    assert mean([2, 4]) == 3\n"
NEW_TEST = OLD_TEST + "\n\ndef test_mean_of_halves():\n    assert mean([1, 2]) == 1.5\n"


def check_applies(repo: Path, patch: Patch) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), "apply", "--check", "-"],
        input=patch.diff,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "calc", {"src/calc/__init__.py": CORE, "tests/test_calc.py": OLD_TEST}
    )


def test_new_and_modified_files_apply(repo: Path) -> None:
    patch = patch_from_files(
        {
            "tests/test_calc.py": (OLD_TEST, NEW_TEST),
            "tests/regressions/test_halves.py": (None, "def test_x():\n    pass\n"),
        },
        name="draft.diff",
    )
    assert patch.name == "draft.diff"
    assert patch.files == ("tests/regressions/test_halves.py", "tests/test_calc.py")
    assert "new file mode 100644\n--- /dev/null\n+++ b/tests/regressions/test_halves.py" in (
        patch.diff
    )
    proc = check_applies(repo, patch)
    assert proc.returncode == 0, proc.stderr
    subprocess.run(["git", "-C", str(repo), "apply", "-"], input=patch.diff, text=True, check=True)
    assert (repo / "tests/test_calc.py").read_text() == NEW_TEST
    assert (repo / "tests/regressions/test_halves.py").read_text() == "def test_x():\n    pass\n"


def test_a_new_file_without_a_final_newline_gets_one(repo: Path) -> None:
    patch = patch_from_files({"tests/test_new.py": (None, "def test_x():\n    pass")})
    assert "No newline" not in patch.diff
    assert check_applies(repo, patch).returncode == 0


def test_a_patch_for_an_existing_path_as_new_file_does_not_apply(repo: Path) -> None:
    patch = patch_from_files({"tests/test_calc.py": (None, NEW_TEST)})
    assert check_applies(repo, patch).returncode != 0


def test_unchanged_files_give_an_empty_patch() -> None:
    assert file_diff("tests/test_calc.py", OLD_TEST, OLD_TEST) == ""
    assert patch_from_files({"tests/test_calc.py": (OLD_TEST, OLD_TEST)}).diff == ""
    assert patch_from_files({}).diff == ""
    # An unchanged file among changed ones leaves no trace.
    both = patch_from_files({"a.py": ("x = 1\n", "x = 1\n"), "b.py": ("y = 1\n", "y = 2\n")})
    assert both.files == ("b.py",)


def test_an_existing_file_without_a_final_newline(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc", {"tests/test_calc.py": OLD_TEST.rstrip("\n")})
    patch = patch_from_files({"tests/test_calc.py": (OLD_TEST.rstrip("\n"), NEW_TEST)})
    proc = check_applies(repo, patch)
    assert proc.returncode == 0, proc.stderr
