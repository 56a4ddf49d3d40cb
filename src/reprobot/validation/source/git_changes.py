"""What a change does to each file, as git itself reads it.

A patch's text can name a file differently from how ``git apply`` writes it (quoted names, any
prefix in place of ``a/`` and ``b/``, renames, modes): every check of what a change touches
asks git, which is what applies it in the sandbox, and never reads the diff's headers itself.
A fix is applied to a scratch index of its base (the blobs it writes stay in the object store,
to be read); a pull request's head is compared with its base commit directly.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from reprobot.validation.errors import SnapshotError
from reprobot.validation.source.patch import Patch, scratch_index
from reprobot.validation.source.snapshot import RepoSnapshot

# git's file modes: a regular file, an executable one, a symbolic link, a submodule.
REGULAR, EXECUTABLE, SYMLINK, GITLINK = "100644", "100755", "120000", "160000"
_ABSENT_MODE = "000000"


@dataclass(frozen=True)
class FileChange:
    """One file's change: git's status letter (A added, M modified, D deleted, R renamed, C
    copied, T type changed), its path after the change (before it, for a deletion), its path
    before a rename or copy, and each side's mode and blob id (None where the side is absent)."""

    status: str
    path: str
    old_path: str | None = None
    old_mode: str | None = None
    new_mode: str | None = REGULAR
    old_blob: str | None = None
    new_blob: str | None = None

    @property
    def added(self) -> bool:
        return self.status == "A"

    @property
    def deleted(self) -> bool:
        return self.status == "D"

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path the change touches: the old one of a rename as well as the new one."""
        return (self.old_path, self.path) if self.old_path else (self.path,)


# A file larger than this is not read: no reviewer reads it in a diff either.
MAX_READ_BYTES = 1 << 20


@dataclass(frozen=True)
class ChangeSet:
    """The files of one change, and the repository whose object store holds their blobs."""

    files: tuple[FileChange, ...]
    repo: Path

    def content(self, blob: str | None) -> bytes | None:
        """A blob's bytes; None for an absent side, a blob the store lacks, or one larger than
        ``MAX_READ_BYTES``."""
        return None if blob is None else self._contents.get(blob)

    @cached_property
    def _contents(self) -> dict[str, bytes]:
        # Two git processes for the whole change, however many files it holds: first the sizes,
        # then the blobs small enough to read.
        blobs = sorted({b for c in self.files for b in (c.old_blob, c.new_blob) if b})
        if not blobs:
            return {}
        sizes = _batch(self.repo, "--batch-check=%(objectname) %(objectsize)", blobs)
        small = []
        for line in sizes.decode().splitlines():
            name, _, size = line.partition(" ")
            if size.isdigit() and int(size) <= MAX_READ_BYTES:
                small.append(name)
        out: dict[str, bytes] = {}
        data = _batch(self.repo, "--batch", small) if small else b""
        at = 0
        while at < len(data):
            end = data.index(b"\n", at)
            name, _, rest = data[at:end].decode().partition(" ")
            length = int(rest.rsplit(" ", 1)[-1])
            out[name] = data[end + 1 : end + 1 + length]
            at = end + 1 + length + 1
        return out


def _batch(repo: Path, mode: str, names: Sequence[str]) -> bytes:
    proc = subprocess.run(
        [_git(), "-C", str(repo), "cat-file", mode],
        input="".join(f"{n}\n" for n in names).encode(),
        capture_output=True,
        check=False,
        timeout=300,
    )
    if proc.returncode != 0:
        raise SnapshotError(f"git cat-file failed: {proc.stderr.decode('utf-8', 'replace')}")
    return proc.stdout


def _git() -> str:
    return shutil.which("git") or "git"


def parse_raw(output: bytes) -> tuple[FileChange, ...]:
    """git's ``--raw -z`` output (``:old new oldblob newblob S\\0path\\0[path\\0]`` records)
    as changes (pure)."""
    fields = output.decode("utf-8", "surrogateescape").split("\0")
    out: list[FileChange] = []
    i = 0
    while i < len(fields) and fields[i].startswith(":"):
        old_mode, new_mode, old_blob, new_blob, status = fields[i][1:].split(" ")
        letter = status[:1]
        if letter in ("R", "C"):
            old_path, path = fields[i + 1], fields[i + 2]
            i += 3
        else:
            old_path, path = None, fields[i + 1]
            i += 2
        out.append(
            FileChange(
                status=letter,
                path=path,
                old_path=old_path,
                old_mode=None if old_mode == _ABSENT_MODE else old_mode,
                new_mode=None if new_mode == _ABSENT_MODE else new_mode,
                old_blob=None if old_mode == _ABSENT_MODE else old_blob,
                new_blob=None if new_mode == _ABSENT_MODE else new_blob,
            )
        )
    return tuple(out)


def _raw(args: list[str], env: dict[str, str] | None = None) -> bytes:
    # Renames are found as git finds them by default; copies are not looked for, so a file whose
    # content repeats another's is judged as the new file it is.
    proc = subprocess.run(
        [*args, "--raw", "-z", "-M"],
        capture_output=True,
        check=False,
        timeout=300,
        env=env,
    )
    if proc.returncode != 0:
        raise SnapshotError(f"git diff failed: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout


def fix_changes(base: RepoSnapshot, patches: Sequence[Patch]) -> ChangeSet:
    """What ``patches``, applied in order to ``base`` by ``git apply`` as the sandbox applies
    them, do to each file. Raises ``SnapshotError`` when git does not apply them as written."""
    with scratch_index(base, patches) as (git, env):
        output = _raw([*git, "diff-index", "--cached", base.sha], env)
    assert base.path is not None
    return ChangeSet(parse_raw(output), base.path)


def head_changes(base: RepoSnapshot, head: RepoSnapshot) -> ChangeSet:
    """What a pull request's head commit does to each file of its base commit."""
    if base.path is None or head.path is None or base.path != head.path:
        raise SnapshotError("the changes between two commits need both in one local repository")
    output = _raw([_git(), "-C", str(base.path), "diff-tree", "-r", base.sha, head.sha])
    return ChangeSet(parse_raw(output), base.path)
