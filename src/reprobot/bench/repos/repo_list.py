"""The list of repositories ``bench repos`` measures: ``owner/name commit`` per line (``#``
starts a comment), or JSON lines ``{"repo": "owner/name", "commit": "..."}``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from reprobot.bench.data.instances import DatasetError

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")
_COMMIT = re.compile(r"^[0-9a-fA-F]{4,40}$")
# A line with no commit is measured at its clone's HEAD (resolved, and recorded, when it runs).
HEAD = "HEAD"


@dataclass(frozen=True)
class RepoEntry:
    """One repository of the list, at the commit it is pinned to."""

    repo: str
    commit: str = HEAD

    @property
    def name(self) -> str:
        return self.repo.split("/", 1)[-1]


def parse_repo_list(text: str, source: str = "the list") -> list[RepoEntry]:
    """The entries of a list, in its order; a malformed line or a repository named twice is a
    ``DatasetError`` naming the line."""
    entries: list[RepoEntry] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{source}, line {number}"
        entry = _json_entry(line, where) if line.startswith("{") else _text_entry(line, where)
        key = entry.repo.lower()
        if key in seen:
            raise DatasetError(f"{where}: {entry.repo} is listed already (line {seen[key]})")
        seen[key] = number
        entries.append(entry)
    return entries


def load_repo_list(path: Path) -> list[RepoEntry]:
    return parse_repo_list(Path(path).read_text(encoding="utf-8"), str(path))


def _text_entry(line: str, where: str) -> RepoEntry:
    words = line.split("#", 1)[0].split()
    if len(words) > 2:
        raise DatasetError(f"{where}: expected 'owner/name [commit]', got {line!r}")
    return _checked(words[0], words[1] if len(words) == 2 else HEAD, where)


def _json_entry(line: str, where: str) -> RepoEntry:
    try:
        record = json.loads(line)
    except ValueError as exc:
        raise DatasetError(f"{where}: not JSON: {exc}") from exc
    if not isinstance(record, dict) or not isinstance(record.get("repo"), str):
        raise DatasetError(f'{where}: expected {{"repo": "owner/name", "commit": "..."}}')
    commit = record.get("commit") or HEAD
    if not isinstance(commit, str):
        raise DatasetError(f"{where}: the commit must be a string")
    return _checked(record["repo"], commit, where)


def _checked(repo: str, commit: str, where: str) -> RepoEntry:
    if not _REPO.match(repo):
        raise DatasetError(f"{where}: {repo!r} is not owner/name")
    if commit != HEAD and not _COMMIT.match(commit):
        raise DatasetError(f"{where}: {commit!r} is not a commit sha")
    return RepoEntry(repo, commit)
