"""What a change does to each file, as git reads it: a patch's text and a head commit alike."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from reprobot.validation.errors import SnapshotError
from reprobot.validation.source.git_changes import (
    EXECUTABLE,
    REGULAR,
    SYMLINK,
    FileChange,
    fix_changes,
    head_changes,
    parse_raw,
)
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import commit_files, git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "r",
        {"pkg/mod.py": "a = 1\n" * 20, "run.sh": "echo\n", "caf\u00e9.txt": "x\n"},
    )


def _summary(files: tuple[FileChange, ...]) -> set[tuple[str, str, str | None, str | None]]:
    return {(c.status, c.path, c.old_path, c.new_mode) for c in files}


def test_a_head_and_its_diff_read_the_same(repo: Path) -> None:
    base = RepoSnapshot.from_git(repo, "HEAD")
    git(repo, "mv", "pkg/mod.py", "pkg/renamed.py")
    (repo / "run.sh").chmod(0o755)
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02")
    os.symlink("pkg/renamed.py", repo / "link.py")
    (repo / "caf\u00e9.txt").unlink()
    head = RepoSnapshot.from_git(repo, commit_files(repo, {}, "change"))
    expected = {
        ("R", "pkg/renamed.py", "pkg/mod.py", REGULAR),
        ("M", "run.sh", None, EXECUTABLE),
        ("A", "blob.bin", None, REGULAR),
        ("A", "link.py", None, SYMLINK),
        ("D", "caf\u00e9.txt", None, None),
    }
    from_head = head_changes(base, head)
    assert _summary(from_head.files) == expected
    diff = subprocess.run(
        ["git", "-C", str(repo), "diff", "--binary", "-M", base.sha, head.sha],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    from_fix = fix_changes(base, [Patch(diff)])
    assert _summary(from_fix.files) == expected
    # The blobs the patch wrote can be read back as they will run.
    added = next(c for c in from_fix.files if c.path == "blob.bin")
    assert from_fix.content(added.new_blob) == b"\x00\x01\x02"
    assert from_fix.content(None) is None


QUOTED = """\
diff --git "a/t\\303\\251st.py" "b/t\\303\\251st.py"
new file mode 100644
--- /dev/null
+++ "b/t\\303\\251st.py"
@@ -0,0 +1 @@
+x = 1
"""
MNEMONIC = """\
diff --git c/conftest.py w/conftest.py
new file mode 100644
--- /dev/null
+++ w/conftest.py
@@ -0,0 +1 @@
+x = 1
"""


@pytest.mark.parametrize(
    ("diff", "path"),
    [(QUOTED, "t\u00e9st.py"), (MNEMONIC, "conftest.py")],
    ids=["quoted", "prefix"],
)
def test_a_patch_names_files_as_git_applies_it(repo: Path, diff: str, path: str) -> None:
    base = RepoSnapshot.from_git(repo, "HEAD")
    (change,) = fix_changes(base, [Patch(diff)]).files
    assert (change.status, change.path) == ("A", path)


def test_a_patch_git_does_not_apply_is_an_error(repo: Path) -> None:
    base = RepoSnapshot.from_git(repo, "HEAD")
    with pytest.raises(SnapshotError, match="does not apply"):
        fix_changes(base, [Patch("--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n")])


def test_raw_records_are_parsed_as_git_writes_them() -> None:
    raw = (
        b":000000 100644 0000000 abc1234 A\0new.py\0"
        b":100644 100644 1111111 2222222 R087\0old.py\0moved.py\0"
        b":100644 000000 3333333 0000000 D\0gone.py\0"
    )
    assert parse_raw(raw) == (
        FileChange("A", "new.py", None, None, REGULAR, None, "abc1234"),
        FileChange("R", "moved.py", "old.py", REGULAR, REGULAR, "1111111", "2222222"),
        FileChange("D", "gone.py", None, REGULAR, None, "3333333", None),
    )
