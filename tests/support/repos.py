"""Real git repositories made by the tests, and the small projects they start from."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "durations"


def pyproject(name: str, extra: str = "") -> str:
    """A setuptools ``pyproject.toml`` for project ``name`` 1.0, with ``extra`` lines added to its
    ``[project]`` table (or further tables after it)."""
    return (
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{name}"\nversion = "1.0"\n{extra}'
    )


TINY_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny"
version = "1.0"
requires-python = ">=3.9"
"""
TINY_MODULE = "def add(a, b):\n    return a + b\n"


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "HOME": str(repo),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    if date is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return proc.stdout.strip()


def make_repo(path: Path, files: dict[str, str]) -> Path:
    """A real git repository at ``path`` whose first commit holds ``files``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    commit_files(path, files, "initial")
    return path


def commit_files(repo: Path, files: dict[str, str], message: str, date: str | None = None) -> str:
    """Write ``files`` into ``repo`` and commit them (made at ``date``, ISO 8601, when given);
    return the new sha."""
    for rel, text in files.items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD")
