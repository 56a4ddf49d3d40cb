"""Trees of a clone that lacks some file contents.

A clone made with a size limit (or a partial clone) lists every file of a commit but may hold no
content for its largest ones: ``git archive`` then fails on the first. The benchmark, which must
work from such clones, may stream what is present and name what is not; the App never does, since
its mirrors are whole.
"""

from __future__ import annotations

import subprocess
import tarfile
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

from reprobot.validation.errors import SnapshotError


def _entries(repo: Path, sha: str) -> list[tuple[str, str, str]]:
    """(mode, blob id, path) of every blob of the commit's tree."""
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "-z", sha],
        capture_output=True,
        check=False,
        timeout=300,
    )
    if out.returncode != 0:
        raise SnapshotError(f"git ls-tree {sha} failed in {repo}: {out.stderr.decode()[:500]}")
    entries = []
    for record in out.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = record.partition("\t")
        parts = meta.split()
        if path and len(parts) == 3 and parts[1] == "blob":
            entries.append((parts[0], parts[2], path))
    return entries


def absent_files(repo: Path, sha: str) -> tuple[str, ...]:
    """The files of the commit whose content the clone does not hold (sorted)."""
    entries = _entries(repo, sha)
    ids = "".join(f"{blob}\n" for _, blob, _ in entries).encode()
    out = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-check"],
        input=ids,
        capture_output=True,
        check=False,
        timeout=300,
    )
    missing = {
        line.split()[0] for line in out.stdout.decode().splitlines() if line.endswith(" missing")
    }
    return tuple(sorted(path for _, blob, path in entries if blob in missing))


def iter_tar_present(repo: Path, sha: str, prefix: str) -> Iterator[bytes]:
    """The commit's tree as a tar under ``prefix``, its blobs as committed (no attribute of the
    tree's applies), without the files whose content is absent."""
    entries = _entries(repo, sha)
    proc = subprocess.Popen(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    buffer = BytesIO()
    try:
        with tarfile.open(fileobj=buffer, mode="w|") as tar:
            for mode, blob, path in entries:
                proc.stdin.write(f"{blob}\n".encode())
                proc.stdin.flush()
                header = proc.stdout.readline().split()
                if len(header) < 2 or header[1] == b"missing":
                    continue
                data = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)  # the newline after each object
                info = tarfile.TarInfo(prefix + path)
                if mode == "120000":
                    info.type = tarfile.SYMTYPE
                    info.linkname = data.decode("utf-8", "surrogateescape")
                    tar.addfile(info)
                else:
                    info.size = len(data)
                    info.mode = 0o755 if mode == "100755" else 0o644
                    tar.addfile(info, BytesIO(data))
                if buffer.tell() >= 1 << 16:
                    yield buffer.getvalue()
                    buffer.seek(0)
                    buffer.truncate()
        yield buffer.getvalue()
    finally:
        proc.stdin.close()
        proc.stdout.close()
        proc.wait()
