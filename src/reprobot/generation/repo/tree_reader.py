"""Every Python file of a snapshot at once: one ``git ls-tree`` and one ``git cat-file --batch``
instead of a git process per file (or one pass over a tarball)."""

from __future__ import annotations

import subprocess
import tarfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from reprobot.validation import RepoSnapshot, SnapshotError

MAX_FILE_BYTES = 200_000
_SKIP_PARTS = frozenset({"node_modules", "site-packages", "__pycache__"})


def _wanted(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return path.endswith(".py") and not any(
        part in _SKIP_PARTS or part.startswith(".") for part in parts[:-1]
    )


def _decode(data: bytes) -> str | None:
    if b"\0" in data:
        return None  # binary content under a .py name
    return data.decode("utf-8", "replace")


def _git(repo: Path, args: Sequence[str], stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=False, timeout=300
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise SnapshotError(f"git {args[0]} failed in {repo}: {err}")
    return proc.stdout


def _from_git(repo: Path, sha: str, max_bytes: int) -> dict[str, str]:
    # One ls-tree for paths and sizes and one cat-file --batch for the blobs, instead of a git
    # process per file; big files are skipped before their content is read.
    listing = _git(repo, ["ls-tree", "-r", "-l", "-z", sha])
    wanted: dict[str, list[str]] = {}
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, oid, size = meta.decode().split()
        path = raw_path.decode("utf-8", "surrogateescape")
        if kind != "blob" or mode == "120000" or not _wanted(path) or int(size) > max_bytes:
            continue
        wanted.setdefault(oid, []).append(path)
    if not wanted:
        return {}
    out = _git(repo, ["cat-file", "--batch"], stdin="".join(f"{o}\n" for o in wanted).encode())
    files: dict[str, str] = {}
    pos = 0
    while pos < len(out):
        eol = out.index(b"\n", pos)
        header = out[pos:eol].decode().split()
        if len(header) < 3:  # "<oid> missing"
            pos = eol + 1
            continue
        length = int(header[2])
        text = _decode(out[eol + 1 : eol + 1 + length])
        pos = eol + 1 + length + 1
        for path in wanted.get(header[0], []):
            if text is not None:
                files[path] = text
    return files


def _from_tarball(tarball: Path, max_bytes: int) -> dict[str, str]:
    files: dict[str, str] = {}
    with tarfile.open(tarball) as tf:
        for member in tf:
            parts = member.name.strip("/").split("/", 1)
            path = parts[1] if len(parts) == 2 else ""
            if not member.isfile() or not _wanted(path) or member.size > max_bytes:
                continue
            fh = tf.extractfile(member)
            text = _decode(fh.read()) if fh else None
            if text is not None:
                files[path] = text
    return files


def read_python_files(snapshot: RepoSnapshot, max_bytes: int = MAX_FILE_BYTES) -> dict[str, str]:
    """Path → text of every ``.py`` file of the snapshot up to ``max_bytes``, read in bulk;
    files in hidden, vendored and cache directories and binary files are left out."""
    if snapshot.tarball is not None:
        return _from_tarball(snapshot.tarball, max_bytes)
    if snapshot.path is not None:
        return _from_git(snapshot.path, snapshot.sha, max_bytes)
    files: dict[str, str] = {}
    for path in filter(_wanted, snapshot.list_files()):
        data = snapshot.read_file(path)
        text = _decode(data) if data is not None and len(data) <= max_bytes else None
        if text is not None:
            files[path] = text
    return files
