"""RepoSnapshot (git and tarball) and Patch on real git repositories."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from reprobot.validation.errors import SnapshotError
from reprobot.validation.source.patch import Patch, applies_to
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import commit_files, git, make_repo

FILES = {
    "README.md": "# demo\n",
    "pkg/__init__.py": "",
    "pkg/core.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
    "tests/test_core.py": "from pkg.core import f\n\n\ndef test_f():\n    assert f() == 1\n",
    "data/ü file.txt": "unicode name\n",
}
BINARY = bytes(range(256))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = make_repo(tmp_path / "demo", FILES)
    (path / "data" / "blob.bin").write_bytes(BINARY)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "binary")
    return path


ALL_FILES = sorted([*FILES, "data/blob.bin"])


def _members(chunks: list[bytes]) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tf:
        return {m.name: m for m in tf.getmembers()}


def _contents(chunks: list[bytes]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tf:
        for member in tf.getmembers():
            if member.isfile():
                fh = tf.extractfile(member)
                assert fh is not None
                out[member.name] = fh.read()
    return out


# --- from_git -------------------------------------------------------------------------------


def test_from_git_resolves_refs_to_full_shas(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    first = git(repo, "rev-parse", "HEAD~1")
    snap = RepoSnapshot.from_git(repo, "main", "owner/demo")
    assert snap.sha == head
    assert len(snap.sha) == 40
    assert snap.repo == "owner/demo"
    assert snap.path == repo.resolve()
    assert snap.tarball is None
    assert RepoSnapshot.from_git(repo, "HEAD~1").sha == first
    assert RepoSnapshot.from_git(repo, first[:8]).sha == first


def test_from_git_names_the_repository_after_its_folder(repo: Path) -> None:
    assert RepoSnapshot.from_git(repo, "HEAD").repo == "demo"


def test_from_git_resolves_an_annotated_tag_to_its_commit(repo: Path) -> None:
    git(repo, "tag", "-a", "v1", "-m", "release", "HEAD~1")
    assert RepoSnapshot.from_git(repo, "v1").sha == git(repo, "rev-parse", "HEAD~1")


@pytest.mark.parametrize("ref", ["no-such-branch", "HEAD~5", "0" * 40, "HEAD:README.md"])
def test_from_git_bad_ref_raises(repo: Path, ref: str) -> None:
    with pytest.raises(SnapshotError):
        RepoSnapshot.from_git(repo, ref)


def test_from_git_on_a_folder_that_is_not_a_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(SnapshotError):
        RepoSnapshot.from_git(tmp_path / "plain", "HEAD")


# --- read_file and list_files ---------------------------------------------------------------


def test_read_file(repo: Path) -> None:
    snap = RepoSnapshot.from_git(repo, "HEAD")
    assert snap.read_file("pkg/core.py") == FILES["pkg/core.py"].encode()
    assert snap.read_file("data/ü file.txt") == b"unicode name\n"
    assert snap.read_file("data/blob.bin") == BINARY
    assert snap.read_file("pkg/__init__.py") == b""


@pytest.mark.parametrize("missing", ["nope.py", "pkg/nope.py", "pkg", "data/blob.bin/x"])
def test_read_file_missing_is_none(repo: Path, missing: str) -> None:
    assert RepoSnapshot.from_git(repo, "HEAD").read_file(missing) is None


def test_read_file_reads_the_commit_not_the_work_tree(repo: Path) -> None:
    old = RepoSnapshot.from_git(repo, "HEAD")
    commit_files(repo, {"pkg/core.py": "changed\n", "new.py": "x = 1\n"}, "change")
    (repo / "README.md").write_text("dirty work tree\n")
    assert old.read_file("pkg/core.py") == FILES["pkg/core.py"].encode()
    assert old.read_file("new.py") is None
    assert old.read_file("README.md") == b"# demo\n"
    new = RepoSnapshot.from_git(repo, "HEAD")
    assert new.read_file("new.py") == b"x = 1\n"
    assert new.read_file("README.md") == b"# demo\n"


def test_list_files(repo: Path) -> None:
    assert sorted(RepoSnapshot.from_git(repo, "HEAD").list_files()) == ALL_FILES
    assert sorted(RepoSnapshot.from_git(repo, "HEAD~1").list_files()) == sorted(FILES)


def test_list_files_ignores_untracked_files(repo: Path) -> None:
    (repo / "untracked.py").write_text("")
    assert "untracked.py" not in RepoSnapshot.from_git(repo, "HEAD").list_files()


def test_snapshot_without_a_tree_raises(tmp_path: Path) -> None:
    snap = RepoSnapshot(repo="o/r", sha="a" * 40)
    with pytest.raises(SnapshotError):
        snap.list_files()
    with pytest.raises(SnapshotError):
        snap.read_file("x")


# --- iter_tar -------------------------------------------------------------------------------


def test_iter_tar_members_carry_the_prefix(repo: Path) -> None:
    chunks = list(RepoSnapshot.from_git(repo, "HEAD").iter_tar("work/repo/"))
    members = _members(chunks)
    assert members
    assert all(name.startswith("work/repo") for name in members)
    files = {name for name, m in members.items() if m.isfile()}
    assert files == {f"work/repo/{f}" for f in ALL_FILES}
    contents = _contents(chunks)
    assert contents["work/repo/pkg/core.py"] == FILES["pkg/core.py"].encode()
    assert contents["work/repo/data/blob.bin"] == BINARY


def test_iter_tar_of_an_older_commit(repo: Path) -> None:
    chunks = list(RepoSnapshot.from_git(repo, "HEAD~1").iter_tar("x/"))
    assert set(_contents(chunks)) == {f"x/{f}" for f in FILES}


def test_iter_tar_streams_the_blobs_as_committed_whatever_the_attributes(repo: Path) -> None:
    # git archive would substitute, drop, re-encode or convert these; the diff shows the blobs.
    attributes = "subst.py export-subst\nhidden.py export-ignore\ncrlf.txt eol=crlf\nid.txt ident\n"
    committed = {
        ".gitattributes": attributes,
        "subst.py": "VERSION = '$Format:%H$'\n",
        "hidden.py": "def f():\n    return 'fixed'\n",
        "crlf.txt": "one\ntwo\n",
        "id.txt": "$Id$\n",
    }
    commit_files(repo, committed, "attributes")
    contents = _contents(list(RepoSnapshot.from_git(repo, "HEAD").iter_tar("r/")))
    for path, text in committed.items():
        assert contents[f"r/{path}"] == text.encode(), path
    assert contents["r/data/blob.bin"] == BINARY


def test_iter_tar_of_a_vanished_commit_raises(repo: Path) -> None:
    snap = RepoSnapshot(repo="o/r", sha="1" * 40, path=repo)
    with pytest.raises(SnapshotError):
        list(snap.iter_tar("work/repo/"))


# --- the tarball variant --------------------------------------------------------------------


@pytest.fixture
def tarball(repo: Path, tmp_path: Path) -> Path:
    """The tree of HEAD as a GitHub-style tarball: one top-level folder named after the commit."""
    path = tmp_path / "demo.tar"
    git(repo, "archive", "--format=tar", "--prefix=owner-demo-1a2b3c4/", "-o", str(path), "HEAD")
    return path


@pytest.fixture
def tar_snap(repo: Path, tarball: Path) -> RepoSnapshot:
    return RepoSnapshot(repo="owner/demo", sha=git(repo, "rev-parse", "HEAD"), tarball=tarball)


def test_tarball_list_files_matches_git(tar_snap: RepoSnapshot, repo: Path) -> None:
    assert sorted(tar_snap.list_files()) == ALL_FILES
    assert sorted(tar_snap.list_files()) == sorted(RepoSnapshot.from_git(repo, "HEAD").list_files())


def test_tarball_read_file(tar_snap: RepoSnapshot) -> None:
    assert tar_snap.read_file("pkg/core.py") == FILES["pkg/core.py"].encode()
    assert tar_snap.read_file("data/blob.bin") == BINARY
    assert tar_snap.read_file("data/ü file.txt") == b"unicode name\n"
    assert tar_snap.read_file("nope.py") is None
    assert tar_snap.read_file("pkg") is None


def test_tarball_iter_tar_has_the_same_files_as_git(tar_snap: RepoSnapshot, repo: Path) -> None:
    from_tarball = _contents(list(tar_snap.iter_tar("work/repo/")))
    from_git = _contents(list(RepoSnapshot.from_git(repo, "HEAD").iter_tar("work/repo/")))
    assert from_tarball == from_git


def test_tarball_iter_tar_adds_nothing_outside_the_tree(tar_snap: RepoSnapshot) -> None:
    members = _members(list(tar_snap.iter_tar("work/repo/")))
    assert all(name.startswith("work/repo/") for name in members)
    folders = {name for name, m in members.items() if m.isdir()}
    # Only the tree's own folders; the tarball's top-level folder is not part of the tree.
    assert folders <= {"work/repo/pkg", "work/repo/tests", "work/repo/data"}


def test_tarball_iter_tar_skips_links(tmp_path: Path) -> None:
    path = tmp_path / "links.tar"
    with tarfile.open(path, "w") as tf:
        data = b"real\n"
        info = tarfile.TarInfo("top/real.txt")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("top/link.txt")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        tf.addfile(link)
    snap = RepoSnapshot(repo="o/r", sha="s", tarball=path)
    members = _members(list(snap.iter_tar("p/")))
    assert set(members) == {"p/real.txt"}
    assert snap.list_files() == ["real.txt"]


def test_tarball_snapshot_cannot_check_patches(tar_snap: RepoSnapshot) -> None:
    with pytest.raises(SnapshotError):
        applies_to([Patch(diff="")], tar_snap)


# --- Patch ----------------------------------------------------------------------------------


def _diff_of(repo: Path, files: dict[str, str | None]) -> str:
    """A git diff that writes ``files`` (None deletes) on top of HEAD; the repository is reset."""
    for rel, text in files.items():
        target = repo / rel
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    git(repo, "add", "-A")
    diff = git(repo, "diff", "--cached", "HEAD") + "\n"
    git(repo, "reset", "-q", "--hard", "HEAD")
    return diff


def test_patch_files_for_added_removed_and_modified(repo: Path) -> None:
    diff = _diff_of(
        repo,
        {
            "tests/test_new.py": "def test_new():\n    assert False\n",
            "README.md": None,
            "pkg/core.py": FILES["pkg/core.py"].replace("return 1", "return 10"),
        },
    )
    patch = Patch(diff=diff, name="mixed.diff")
    assert patch.well_formed
    assert sorted(patch.files) == ["README.md", "pkg/core.py", "tests/test_new.py"]


def test_patch_files_of_a_plain_unified_diff() -> None:
    diff = (
        "--- /dev/null\n"
        "+++ b/tests/test_added.py\n"
        "@@ -0,0 +1,2 @@\n"
        "+def test_x():\n"
        "+    pass\n"
        "--- a/old.py\n"
        "+++ /dev/null\n"
        "@@ -1 +0,0 @@\n"
        "-x = 1\n"
        "--- src/mod.py\n"
        "+++ src/mod.py\n"
        "@@ -1 +1 @@\n"
        "-a = 1\n"
        "+a = 2\n"
    )
    # Read as git apply (and patch -p1, its fallback in the sandbox) apply it: the first
    # component of each name goes, whatever it is.
    assert Patch(diff=diff).files == ("tests/test_added.py", "old.py", "mod.py")
    assert Patch(diff=diff).deleted_files == ("old.py",)


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "hello world\n",
        "Here is the fix:\n\n```python\nprint(1)\n```\n",
        # A hunk that promises three lines and brings one.
        "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-a\n",
    ],
)
def test_garbage_is_not_well_formed(garbage: str) -> None:
    patch = Patch(diff=garbage)
    assert not patch.well_formed
    assert patch.files == ()
    assert patch.parsed() is None


def test_from_file(tmp_path: Path) -> None:
    path = tmp_path / "fix.diff"
    path.write_text("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    patch = Patch.from_file(path)
    assert patch.name == "fix.diff"
    assert patch.files == ("x.py",)


# --- applies_to -----------------------------------------------------------------------------


def test_applies_to_the_commit_it_was_made_on(repo: Path) -> None:
    diff = _diff_of(repo, {"pkg/core.py": FILES["pkg/core.py"].replace("return 2", "return 20")})
    snap = RepoSnapshot.from_git(repo, "HEAD")
    assert applies_to([Patch(diff=diff)], snap)
    assert applies_to([], snap)


def test_does_not_apply_after_its_context_changed(repo: Path) -> None:
    diff = _diff_of(repo, {"pkg/core.py": FILES["pkg/core.py"].replace("return 2", "return 20")})
    before = RepoSnapshot.from_git(repo, "HEAD")
    commit_files(repo, {"pkg/core.py": "def g():\n    return 3\n"}, "rewrite")
    after = RepoSnapshot.from_git(repo, "HEAD")
    assert applies_to([Patch(diff=diff)], before)
    assert not applies_to([Patch(diff=diff)], after)


def test_adding_an_existing_file_does_not_apply(repo: Path) -> None:
    diff = "--- /dev/null\n+++ b/README.md\n@@ -0,0 +1 @@\n+again\n"
    assert not applies_to([Patch(diff=diff)], RepoSnapshot.from_git(repo, "HEAD"))


def test_garbage_does_not_apply(repo: Path) -> None:
    assert not applies_to([Patch(diff="not a diff\n")], RepoSnapshot.from_git(repo, "HEAD"))


def test_two_patches_apply_in_order(repo: Path) -> None:
    first_text = FILES["pkg/core.py"].replace("return 1", "return 10")
    first = Patch(diff=_diff_of(repo, {"pkg/core.py": first_text}), name="first.diff")
    # The second patch is made on top of the first one, so it needs it.
    commit_files(repo, {"pkg/core.py": first_text}, "tmp")
    second = Patch(
        diff=_diff_of(repo, {"pkg/core.py": first_text.replace("return 10", "return 100")}),
        name="second.diff",
    )
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    snap = RepoSnapshot.from_git(repo, "HEAD")
    assert applies_to([first, second], snap)
    assert not applies_to([second], snap)
    assert not applies_to([second, first], snap)
    assert not applies_to([first, first], snap)


def test_applies_to_leaves_the_repository_alone(repo: Path) -> None:
    diff = _diff_of(repo, {"tests/test_new.py": "def test_new():\n    pass\n"})
    (repo / "README.md").write_text("local edit\n")
    status_before = git(repo, "status", "--porcelain")
    head_before = git(repo, "rev-parse", "HEAD")
    assert applies_to([Patch(diff=diff)], RepoSnapshot.from_git(repo, "HEAD"))
    assert git(repo, "status", "--porcelain") == status_before
    assert git(repo, "rev-parse", "HEAD") == head_before
    assert not (repo / "tests" / "test_new.py").exists()
    assert (repo / "README.md").read_text() == "local edit\n"


def test_python_paths_name_a_renamed_module_under_both_names() -> None:
    diff = (
        "diff --git a/pkg/old.py b/pkg/new.py\n"
        "similarity index 90%\n"
        "rename from pkg/old.py\n"
        "rename to pkg/new.py\n"
        "--- a/pkg/old.py\n"
        "+++ b/pkg/new.py\n"
        "@@ -1 +1 @@\n"
        "-x = 1\n"
        "+x = 2\n"
        "diff --git a/pkg/gone.py b/pkg/gone.py\n"
        "deleted file mode 100644\n"
        "--- a/pkg/gone.py\n"
        "+++ /dev/null\n"
        "@@ -1 +0,0 @@\n"
        "-y = 1\n"
        "diff --git a/README.md b/README.md\n"
        "--- a/README.md\n"
        "+++ b/README.md\n"
        "@@ -1 +1 @@\n"
        "-a\n"
        "+b\n"
    )
    assert Patch(diff).python_paths == ("pkg/old.py", "pkg/new.py", "pkg/gone.py")
    assert Patch("not a diff").python_paths == ()
