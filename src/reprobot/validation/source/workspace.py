"""Local clones of repositories given by URL, kept under the cache directory and updated."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

from reprobot.validation.errors import SnapshotError

_URL = re.compile(r"^(?:https?|git|ssh|file)://|^[\w.-]+@[\w.-]+:")


def is_url(text: str) -> bool:
    return _URL.match(text) is not None


def _git(*args: str, cwd: Path | None = None, timeout: float = 900.0) -> None:
    proc = subprocess.run(
        # An empty askpass answers any credential prompt with nothing: a URL that needs
        # credentials fails instead of waiting on a terminal.
        ["git", "-c", "core.askPass=true", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise SnapshotError(
            f"git {args[0]} failed: {proc.stderr.decode('utf-8', 'replace').strip()[-500:]}"
        )


def clone_url(url: str, cache_dir: Path, ref: str | None = None) -> Path:
    """A local clone of ``url`` (bare, under ``cache_dir/repos``), fetched so that ``ref`` (a
    commit, branch or tag; default the remote's HEAD) is present."""
    if "\n" in url or url.startswith("-"):
        raise SnapshotError(f"not a repository URL: {url!r}")
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    name = re.sub(r"[^\w.-]+", "_", url.rstrip("/").rpartition("/")[2].removesuffix(".git"))
    path = cache_dir / "repos" / f"{name}-{digest}.git"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _git("clone", "--quiet", "--bare", "--", url, str(path))
    else:
        _git(
            "fetch",
            "--quiet",
            "--prune",
            "origin",
            "+refs/heads/*:refs/heads/*",
            "+refs/tags/*:refs/tags/*",
            cwd=path,
        )
    if ref and re.fullmatch(r"[0-9a-f]{7,40}", ref):
        # A commit outside every branch (a pull request's head) is fetched by its sha.
        probe = subprocess.run(
            ["git", "-C", str(path), "cat-file", "-e", f"{ref}^{{commit}}"],
            capture_output=True,
            check=False,
        )
        if probe.returncode != 0:
            _git("fetch", "--quiet", "origin", ref, cwd=path)
    return path
