"""What reading a hostile pull request costs the host, before and besides its sandbox runs.

Makes a repository whose head adds a ~21 MB diff (many Python files of long lines, as a change
built to exhaust the host would), then times everything ``verify`` does on the host to read the
change: the diff, the paths git reads, the allowlist, the harness files, the lines reaching
into the test process, the changed lines and their coverage, the guard's modules. Prints the
CPU seconds and the peak memory of this process (``ru_maxrss``) for it. No Docker.

    python benchmarks/hostile_diff.py [--megabytes 21]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from reprobot.validation.concerns import (
    change_concerns,
    holds_the_tests,
    integrity_concerns,
    too_large,
)
from reprobot.validation.results.testrun import TestRun
from reprobot.validation.results.verdict import change_coverage, changed_lines
from reprobot.validation.source.companion_tests import companion_test_modules, unguarded_sources
from reprobot.validation.source.harness_files import harness_changes
from reprobot.validation.source.patch import Patch, diff_between
from reprobot.validation.source.snapshot import RepoSnapshot


def _git(repo: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid",
           "HOME": str(repo), "PATH": "/usr/bin:/bin"}  # fmt: skip
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def make_repo(root: Path, megabytes: float) -> tuple[RepoSnapshot, RepoSnapshot]:
    repo = root / "r"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg/__init__.py").write_text("")
    (repo / "pkg/mod.py").write_text("def f(x):\n    return x\n")
    (repo / "tests").mkdir()
    (repo / "tests/test_mod.py").write_text(
        "from pkg.mod import f\n\ndef test_f():\n    assert f(1) == 1\n"
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    target = int(megabytes * 1024 * 1024)
    written, index = 0, 0
    while written < target:
        # Files of long generated expressions: slow to parse line by line, as hostile code is.
        body = "".join(f"x_{n} = ({' + '.join(['1'] * 20)})\n" for n in range(500))
        (repo / f"pkg/gen_{index:04d}.py").write_text(body)
        written += len(body) + 500  # the diff's "+" on every line, and the file's header
        index += 1
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "head")
    return RepoSnapshot.from_git(repo, "HEAD~1"), RepoSnapshot.from_git(repo, "HEAD")


def read_change(base: RepoSnapshot, head: RepoSnapshot) -> int:
    """What verify does on the host to read the change, step for step as ``verify`` takes them
    (a diff over ``concerns.MAX_READ_DIFF_BYTES`` is not parsed); returns the diff's size."""
    tests = Patch("--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1 @@\n+x = 1\n")
    fix = diff_between(base, head)
    large = too_large(fix)
    files = base.list_files()
    if not large:
        holds_the_tests(base, tests, fix, head)
        changes = changed_lines(fix)
        old = {c.old_path: base.read_file(c.old_path) for c in changes.values() if c.old_path}
        new = {p: head.read_file(p) for p in changes}
        change_coverage(changes, old, new, None, None)
        harness_changes(fix.files, lambda p: None, lambda p: None)
        integrity_concerns(base, tests, fix, TestRun(outcomes={}))
        companion_test_modules(fix.files, files)
        unguarded_sources(fix.python_paths, files)
    change_concerns(base, fix, head)
    return len(fix.diff)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=21.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, head = make_repo(Path(tmp), args.megabytes)
        before = resource.getrusage(resource.RUSAGE_SELF)
        rss_before = before.ru_maxrss / 1024
        wall = time.monotonic()
        size = read_change(base, head)
        after = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(f"diff: {size / 1024 / 1024:.1f} MB")
    print(
        f"host CPU reading it: {cpu:.2f} s in this process (+ git: "
        f"{children.ru_utime + children.ru_stime:.2f} s, the repository's making included)"
    )
    print(f"wall: {time.monotonic() - wall:.2f} s")
    print(
        f"peak memory of this process: {after.ru_maxrss / 1024:.0f} MB "
        f"({rss_before:.0f} MB before reading the change)"
    )


if __name__ == "__main__":
    main()
