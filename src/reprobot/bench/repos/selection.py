"""Which tests a first-contact run selects: the whole suite, or, when the tree has more test
files than a bound, only its largest test files up to that bound (the largest hold the most
tests, so the sample stays close to the suite's own mix while its run time stays bounded)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from reprobot.validation import RepoSnapshot, SnapshotError

# pytest's default module names (test_*.py, *_test.py), the plural some projects use, and the
# single-module suites (test.py, tests.py) unittest discovers.
_TEST_FILE = re.compile(r"^(test_.*|.*_tests?|tests?)\.py$")


@dataclass(frozen=True)
class Selection:
    """The test files a run names (none: the test command runs the whole suite), out of how many
    test files the tree has."""

    files: tuple[str, ...]
    test_files: int
    bound: int

    @property
    def whole_suite(self) -> bool:
        return not self.files

    def sentence(self) -> str:
        if self.whole_suite:
            return "whole suite"
        return f"largest {len(self.files)} of {self.test_files} test files"


def is_test_file(path: str) -> bool:
    parts = path.split("/")
    if any(p.startswith(".") for p in parts[:-1]):
        return False
    return _TEST_FILE.match(parts[-1]) is not None


def choose_tests(sizes: Mapping[str, int], bound: int) -> Selection:
    """The whole suite when the tree (``sizes``: every file's size in bytes) has at most
    ``bound`` test files (or ``bound`` is 0); else its ``bound`` largest test files, in path
    order (equal sizes: the first paths)."""
    found = {path: size for path, size in sizes.items() if is_test_file(path)}
    if bound <= 0 or len(found) <= bound:
        return Selection((), len(found), bound)
    largest = sorted(found, key=lambda p: (-found[p], p))[:bound]
    return Selection(tuple(sorted(largest)), len(found), bound)


def file_sizes(snapshot: RepoSnapshot) -> dict[str, int]:
    """Every file of the snapshot's tree with its size in bytes (from git, nothing checked out)."""
    if snapshot.path is None:
        raise SnapshotError(f"snapshot of {snapshot.repo} has no git repository")
    proc = subprocess.run(
        ["git", "-C", str(snapshot.path), "ls-tree", "-r", "-l", "-z", snapshot.sha],
        capture_output=True,
        check=False,
        timeout=300,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise SnapshotError(f"git ls-tree failed in {snapshot.path}: {err}")
    sizes: dict[str, int] = {}
    for record in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = record.partition("\t")
        parts = meta.split()
        if path and len(parts) == 4 and parts[1] == "blob" and parts[3].isdigit():
            sizes[path] = int(parts[3])
    return sizes
