"""A clone that lacks a file's content (a size-limited clone): the benchmark streams what is
there and names what is not; anything else refuses the tree."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from reprobot.validation.errors import SnapshotError
from reprobot.validation.source.partial_clone import absent_files
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import git, make_repo


def _clone_without(tmp_path: Path) -> tuple[Path, str]:
    repo = make_repo(
        tmp_path / "partial",
        {
            "pkg/__init__.py": "VALUE = 1\n",
            "pkg/data/big.bin": "x" * 5000,
            "run.sh": "#!/bin/sh\necho hi\n",
        },
    )
    os.chmod(repo / "run.sh", 0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "executable")
    (repo / "link").symlink_to("pkg/__init__.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    blob = git(repo, "rev-parse", "HEAD:pkg/data/big.bin")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    return repo, git(repo, "rev-parse", "HEAD")


def _members(chunks: list[bytes]) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tar:
        return {m.name.rstrip("/"): m for m in tar.getmembers() if not m.isdir()}


def test_absent_content_is_named_and_left_out(tmp_path: Path) -> None:
    repo, sha = _clone_without(tmp_path)
    assert absent_files(repo, sha) == ("pkg/data/big.bin",)
    snapshot = RepoSnapshot.from_git(repo, sha, "test/partial", absent_ok=True)
    members = _members(list(snapshot.iter_tar("work/repo/")))
    assert set(members) == {"work/repo/pkg/__init__.py", "work/repo/run.sh", "work/repo/link"}
    assert members["work/repo/run.sh"].mode == 0o755
    assert members["work/repo/link"].issym()
    assert members["work/repo/link"].linkname == "pkg/__init__.py"


def test_without_leave_a_lacking_clone_is_an_error(tmp_path: Path) -> None:
    repo, sha = _clone_without(tmp_path)
    snapshot = RepoSnapshot.from_git(repo, sha, "test/partial")
    with pytest.raises(SnapshotError, match="git archive"):
        list(snapshot.iter_tar("work/repo/"))


def test_a_whole_clone_has_nothing_absent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "whole", {"a.py": "A = 1\n"})
    sha = git(repo, "rev-parse", "HEAD")
    assert absent_files(repo, sha) == ()
    snapshot = RepoSnapshot.from_git(repo, sha, "test/whole", absent_ok=True)
    assert set(_members(list(snapshot.iter_tar("r/")))) == {"r/a.py"}
