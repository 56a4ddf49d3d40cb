"""Tar streams for feeding containers through stdin."""

from __future__ import annotations

import io
import tarfile
import time


def small_tar(files: dict[str, bytes], executable: frozenset[str] = frozenset()) -> bytes:
    """An in-memory tar of ``files`` (path -> content); paths in ``executable`` get mode 0755."""
    buf = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mtime = now
            info.mode = 0o755 if path in executable else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
