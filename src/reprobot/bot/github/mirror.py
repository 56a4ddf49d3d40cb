"""Bare mirrors of installed repositories, fetched with an installation token.

The token travels in an HTTP header given to git through its environment
(``GIT_CONFIG_COUNT``/``KEY``/``VALUE``): never in the URL, never in ``.git/config``, never on a
command line that ``ps`` shows. The sandbox later receives only the tree of one commit.
"""

from __future__ import annotations

import base64
import fcntl
import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from reprobot.bot.errors import GitHubError

_SHA = re.compile(r"[0-9a-f]{40}")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
# How git reports that the server refused the token (an HTTP 401).
_REJECTED = ("Authentication failed", "returned error: 401", "could not read Username")


def mirror_path(cache_dir: Path, repo: str) -> Path:
    owner, _, name = repo.partition("/")
    return cache_dir / "mirrors" / _SAFE.sub("_", owner) / f"{_SAFE.sub('_', name)}.git"


def _auth_env(token: str) -> dict[str, str]:
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "true",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
    }


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    # Two workers fetching into one mirror at once would race on its refs and packs.
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(args: Sequence[str], env: dict[str, str] | None, repo: str, timeout: float) -> str:
    # Errors name the git command, not the ``-C <dir>`` in front of it.
    verb = args[2] if len(args) > 2 and args[0] == "-C" else args[0]
    try:
        proc = subprocess.run(
            ["git", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitHubError(f"git {verb} timed out after {timeout:.0f} s", repo=repo) from exc
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()[-500:]
        # git says so in words only; the status lets the caller renew the token and try again.
        status = 401 if any(sign in err for sign in _REJECTED) else None
        raise GitHubError(f"git {verb} failed: {err}", repo=repo, status=status)
    return proc.stdout.decode("utf-8", "replace")


def fetch(
    cache_dir: Path,
    repo: str,
    clone_url: str,
    token: str,
    refs: Sequence[str],
    timeout: float = 900.0,
) -> Path:
    """The mirror of ``repo`` holding every commit of ``refs`` (shas, branch names or
    ``refs/pull/N/head``), fetched from ``clone_url`` as the installation; its path."""
    if not clone_url.startswith(("https://", "http://")):
        raise GitHubError(f"refusing to fetch from {clone_url!r}: not an HTTP(S) URL", repo=repo)
    path = mirror_path(cache_dir, repo)
    with _locked(path):
        if not (path / "HEAD").exists():
            _run(["init", "--quiet", "--bare", str(path)], None, repo, timeout)
        wanted = [r for r in refs if not (_SHA.fullmatch(r) and _has_commit(path, r))]
        if wanted:
            # Named refs land under refs/reprobot/ so that a later fetch updates them in place.
            specs = [r if _SHA.fullmatch(r) else f"+{r}:refs/reprobot/{r}" for r in wanted]
            _run(
                ["-C", str(path), "fetch", "--quiet", "--no-tags", "--", clone_url, *specs],
                _auth_env(token),
                repo,
                timeout,
            )
    return path


def _has_commit(path: Path, sha: str) -> bool:
    probe = subprocess.run(
        ["git", "-C", str(path), "cat-file", "-e", f"{sha}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0
