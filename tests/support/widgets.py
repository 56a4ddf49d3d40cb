"""The ``widgets`` project the GitHub tests serve: a base repository with two commits and a fork
with a fix on its ``fix`` branch, made once per module as real git repositories."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support.repos import commit_files, git, make_repo


@dataclass(frozen=True)
class Sources:
    """Local repositories the served bare repositories are cloned from, and their commits."""

    base: Path
    fork: Path
    first_sha: str
    main_sha: str
    fork_sha: str


def make_sources(root: Path, core: str, extra: Mapping[str, str] | None = None) -> Sources:
    """``widgets`` under ``root``: a first commit, then ``widgets/core.py`` (= ``core``) and
    ``extra`` files on ``main``; the fork appends a line to ``core.py`` on its ``fix`` branch."""
    base = make_repo(root / "widgets", {"README.md": "# widgets\n", "widgets/__init__.py": ""})
    first = git(base, "rev-parse", "HEAD")
    main = commit_files(base, {"widgets/core.py": core, **(extra or {})}, "add core")
    fork = root / "fork"
    subprocess.run(["git", "clone", "-q", str(base), str(fork)], check=True, capture_output=True)
    git(fork, "checkout", "-q", "-b", "fix")
    fork_sha = commit_files(fork, {"widgets/core.py": core + "# fixed\n"}, "the fix")
    return Sources(base, fork, first, main, fork_sha)
