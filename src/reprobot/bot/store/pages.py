"""Report pages kept with the jobs' results: saved once by the job that made them, read by the
page route, removed when older than the retention period."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import Engine, RowMapping, delete, insert, select

from reprobot.bot.store.models import PageRow, utc

PageKind = Literal["reproduction", "verdict"]


@dataclass(frozen=True)
class StoredPage:
    id: str
    kind: PageKind
    repo: str
    number: int
    head_sha: str | None
    status: str
    document: str
    created_at: datetime
    # Shown only to signed-in users who can read the repository; a public one, by link alone.
    private: bool = False


def _row(row: RowMapping) -> StoredPage:
    kind: PageKind = "verdict" if row["kind"] == "verdict" else "reproduction"
    return StoredPage(
        id=row["id"],
        kind=kind,
        repo=row["repo"],
        number=row["number"],
        head_sha=row["head_sha"],
        status=row["status"],
        document=row["document"],
        created_at=utc(row["created_at"]),
        private=bool(row["private"]),
    )


class Pages:
    """The pages over ``engine``; ``clock`` returns the current time."""

    def __init__(
        self, engine: Engine, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._engine = engine
        self._clock = clock

    def save(
        self,
        kind: PageKind,
        repo: str,
        number: int,
        head_sha: str | None,
        status: str,
        document: str,
        *,
        private: bool = False,
    ) -> StoredPage:
        """Keep a new page; its id is random (128 bits), never derived from what it shows.
        ``private``: the repository is private, and so is the page."""
        page = StoredPage(
            id=secrets.token_urlsafe(16),
            kind=kind,
            repo=repo,
            number=number,
            head_sha=head_sha,
            status=status,
            document=document,
            created_at=utc(self._clock()),
            private=private,
        )
        with self._engine.begin() as conn:
            conn.execute(insert(PageRow).values(**page.__dict__))
        return page

    def get(self, page_id: str) -> StoredPage | None:
        with self._engine.connect() as conn:
            row = conn.execute(select(PageRow).where(PageRow.id == page_id)).mappings().first()
        return _row(row) if row else None

    def earlier_heads(self, page: StoredPage) -> list[StoredPage]:
        """Verdict pages of the same pull request made before ``page`` for other heads, the
        newest page of each head, newest first."""
        query = (
            select(PageRow)
            .where(
                PageRow.kind == "verdict",
                PageRow.repo == page.repo,
                PageRow.number == page.number,
                PageRow.created_at < page.created_at,
            )
            .order_by(PageRow.created_at.desc())
            .limit(200)
        )
        with self._engine.connect() as conn:
            rows = [_row(r) for r in conn.execute(query).mappings()]
        seen = {page.head_sha}
        out = []
        for row in rows:
            if row.head_sha not in seen:
                seen.add(row.head_sha)
                out.append(row)
        return out

    def prune(self, retention: timedelta) -> int:
        """Remove the pages older than ``retention``; returns how many went."""
        cutoff = utc(self._clock()) - retention
        with self._engine.begin() as conn:
            result = conn.execute(delete(PageRow).where(PageRow.created_at < cutoff))
        return int(result.rowcount or 0)
