"""A repository at one commit, and the ways to read its tree without checking it out."""

from __future__ import annotations

import hashlib
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import IO

from reprobot.validation.errors import SnapshotError
from reprobot.validation.source.partial_clone import absent_files, iter_tar_present

_CHUNK = 1 << 16


def _git(repo: Path, *args: str, binary: bool = False) -> bytes:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, check=False, timeout=300
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise SnapshotError(f"git {' '.join(args[:2])} failed in {repo}: {err}")
    return proc.stdout


@dataclass(frozen=True)
class RepoSnapshot:
    """Repository identity plus a commit; the tree comes from a local git repository or a tarball.

    ``repo`` names the repository (``owner/name``); ``path`` is a local git repository holding
    ``sha``; ``tarball`` is an alternative: a tar of the tree (one top-level folder is stripped).
    """

    repo: str
    sha: str
    path: Path | None = None
    tarball: Path | None = None
    # Stream what the clone holds when it lacks some files' content (see ``partial_clone``);
    # only the benchmark, whose clones may be size-limited, sets it.
    absent_ok: bool = False

    @classmethod
    def from_git(
        cls, path: Path, ref: str, repo: str | None = None, absent_ok: bool = False
    ) -> RepoSnapshot:
        """Resolve ``ref`` in the git repository at ``path`` to a full commit sha."""
        path = Path(path).resolve()
        if not (path / ".git").exists() and not (path / "HEAD").exists():
            raise SnapshotError(f"{path} is not a git repository")
        proc = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            capture_output=True,
            check=False,
            timeout=60,
        )
        sha = proc.stdout.decode().strip()
        if proc.returncode != 0 or not sha:
            raise SnapshotError(f"{ref!r} is not a commit in {path}")
        return cls(repo=repo or path.name, sha=sha, path=path, absent_ok=absent_ok)

    def commit_time(self) -> datetime | None:
        """When the commit was made (its committer date, UTC); None for a tarball's tree."""
        if self.tarball is not None or self.path is None:
            return None
        out = _git(self.path, "show", "-s", "--format=%ct", self.sha).decode().strip()
        return datetime.fromtimestamp(int(out), tz=UTC) if out.isdigit() else None

    def _require_path(self) -> Path:
        if self.path is None:
            raise SnapshotError(f"snapshot of {self.repo} has no git repository")
        return self.path

    def read_file(self, relpath: str) -> bytes | None:
        """The bytes of ``relpath`` at this commit, or None when the file does not exist."""
        if self.tarball is not None:
            return _tar_read(self.tarball, relpath)
        repo = self._require_path()
        proc = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "blob", f"{self.sha}:{relpath}"],
            capture_output=True,
            check=False,
            timeout=60,
        )
        return proc.stdout if proc.returncode == 0 else None

    def list_files(self) -> list[str]:
        """Every file path of the tree, relative to its root."""
        if self.tarball is not None:
            with tarfile.open(self.tarball) as tf:
                return [_strip_top(m.name) for m in tf.getmembers() if m.isfile()]
        out = _git(self._require_path(), "ls-tree", "-r", "-z", "--name-only", self.sha)
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    def blob_ids(self) -> dict[str, str]:
        """Every file path of the tree with an id of its content (git's blob id, or for a
        tarball the SHA-1 of the bytes): what changed between two trees, without reading them."""
        if self.tarball is not None:
            ids: dict[str, str] = {}
            with tarfile.open(self.tarball) as tf:
                for member in tf.getmembers():
                    handle = tf.extractfile(member) if member.isfile() else None
                    if handle is not None:
                        ids[_strip_top(member.name)] = hashlib.sha1(handle.read()).hexdigest()
            return ids
        out = _git(self._require_path(), "ls-tree", "-r", "-z", self.sha)
        entries: dict[str, str] = {}
        for record in out.decode("utf-8", "surrogateescape").split("\0"):
            meta, _, path = record.partition("\t")
            parts = meta.split()
            if path and len(parts) == 3 and parts[1] == "blob":
                entries[path] = parts[2]
        return entries

    def _has_attributes(self) -> bool:
        return any(PurePosixPath(p).name == ".gitattributes" for p in self.list_files())

    def iter_tar(self, prefix: str) -> Iterator[bytes]:
        """Stream the tree as an uncompressed tar whose members sit under ``prefix``."""
        if self.tarball is not None:
            yield from _retar(self.tarball, prefix)
            return
        repo = self._require_path()
        if (self.absent_ok and absent_files(repo, self.sha)) or self._has_attributes():
            # git archive applies the tree's own attributes (export-subst, export-ignore, eol,
            # ident, working-tree-encoding): the sandbox runs the blobs as committed instead,
            # which is what the diff a reviewer reads shows.
            yield from iter_tar_present(repo, self.sha, prefix)
            return
        proc = subprocess.Popen(
            ["git", "-C", str(repo), "archive", "--format=tar", f"--prefix={prefix}", self.sha],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None
        try:
            while chunk := proc.stdout.read(_CHUNK):
                yield chunk
        finally:
            proc.stdout.close()
            err = proc.stderr.read() if proc.stderr else b""
            if proc.wait() != 0:
                raise SnapshotError(
                    f"git archive {self.sha} failed in {repo}: {err.decode('utf-8', 'replace')}"
                )


def _strip_top(name: str) -> str:
    """The path below the tarball's single top-level folder ("" for the folder itself)."""
    parts = name.strip("/").split("/", 1)
    return parts[1] if len(parts) == 2 else ""


def _tar_read(tarball: Path, relpath: str) -> bytes | None:
    with tarfile.open(tarball) as tf:
        for member in tf.getmembers():
            if member.isfile() and _strip_top(member.name) == relpath:
                fh = tf.extractfile(member)
                return fh.read() if fh else None
    return None


class _ChunkWriter:
    """A write-only file object that hands each written block to a list."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        return len(data)


def _retar(tarball: Path, prefix: str) -> Iterator[bytes]:
    sink = _ChunkWriter()
    with tarfile.open(tarball) as src, tarfile.open(fileobj=sink, mode="w|") as dst:  # type: ignore[call-overload]
        for member in src:
            rel = _strip_top(member.name)
            if not rel or member.issym() or member.islnk():
                continue
            member.name = prefix + rel
            fh: IO[bytes] | None = src.extractfile(member) if member.isfile() else None
            dst.addfile(member, fh)
            yield from sink.chunks
            sink.chunks.clear()
    yield from sink.chunks
