"""Which test files a first-contact run names: none (the whole suite), or the largest."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.bench.repos.selection import choose_tests, file_sizes, is_test_file
from reprobot.validation import RepoSnapshot
from tests.support.repos import make_repo


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_api.py", True),
        ("src/pkg/api_test.py", True),
        ("pkg/tests.py", True),
        ("test.py", True),
        ("tests/unit_tests.py", True),
        ("tests/conftest.py", False),
        ("tests/__init__.py", False),
        ("src/pkg/testing.py", False),
        ("tests/test_data.json", False),
        (".github/test_workflow.py", False),
    ],
)
def test_test_files_are_named_as_pytest_and_unittest_find_them(path: str, expected: bool) -> None:
    assert is_test_file(path) is expected


SIZES = {
    "tests/test_a.py": 300,
    "tests/test_b.py": 100,
    "tests/test_c.py": 300,
    "tests/test_d.py": 50,
    "src/big.py": 10_000,
}


def test_a_suite_within_the_bound_runs_whole() -> None:
    chosen = choose_tests(SIZES, 4)
    assert chosen.whole_suite
    assert chosen.files == ()
    assert chosen.test_files == 4
    assert chosen.sentence() == "whole suite"
    assert choose_tests(SIZES, 0).whole_suite


def test_a_suite_past_the_bound_runs_its_largest_files() -> None:
    chosen = choose_tests(SIZES, 2)
    assert chosen.files == ("tests/test_a.py", "tests/test_c.py")
    assert chosen.sentence() == "largest 2 of 4 test files"
    # Equal sizes: the first paths.
    assert choose_tests(SIZES, 1).files == ("tests/test_a.py",)


def test_file_sizes_come_from_the_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"tests/test_x.py": "x = 1\n", "a/b.txt": "hello"})
    (repo / "tests" / "test_x.py").write_text("changed but not committed\n")
    sizes = file_sizes(RepoSnapshot.from_git(repo, "HEAD", "o/r"))
    assert sizes == {"tests/test_x.py": 6, "a/b.txt": 5}
