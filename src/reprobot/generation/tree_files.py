"""Many files of a snapshot at once: one ``git cat-file --batch`` instead of one process a file."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable

from reprobot.validation.errors import SnapshotError
from reprobot.validation.snapshot import RepoSnapshot

MAX_FILE_BYTES = 200_000


def read_texts(
    snapshot: RepoSnapshot, paths: Iterable[str], max_bytes: int = MAX_FILE_BYTES
) -> dict[str, str]:
    """The text of each path that exists and is at most ``max_bytes`` (decoded as UTF-8, with
    undecodable bytes replaced); missing and larger files are left out."""
    wanted = [p for p in dict.fromkeys(paths) if "\n" not in p]
    if not wanted:
        return {}
    if snapshot.path is None:
        out = {}
        for path in wanted:
            data = snapshot.read_file(path)
            if data is not None and len(data) <= max_bytes:
                out[path] = data.decode("utf-8", "replace")
        return out
    request = "".join(f"{snapshot.sha}:{p}\n" for p in wanted).encode("utf-8", "surrogateescape")
    proc = subprocess.run(
        ["git", "-C", str(snapshot.path), "cat-file", "--batch"],
        input=request,
        capture_output=True,
        check=False,
        timeout=300,
    )
    if proc.returncode != 0:
        raise SnapshotError(
            f"git cat-file failed in {snapshot.path}: {proc.stderr.decode('utf-8', 'replace')}"
        )
    return _parse_batch(proc.stdout, wanted, max_bytes)


def _parse_batch(data: bytes, paths: list[str], max_bytes: int) -> dict[str, str]:
    out: dict[str, str] = {}
    pos = 0
    for path in paths:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        body = data[pos : pos + size]
        pos += size + 1  # the object is followed by a newline
        if header[1] == b"blob" and size <= max_bytes:
            out[path] = body.decode("utf-8", "replace")
    return out
