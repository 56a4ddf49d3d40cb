"""Small durable records: where the App is installed, reproductions, and its writes to GitHub.

Comment ids and label states make GitHub writes idempotent: a comment is edited in place
instead of posted again, and a label a human removed is never re-added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, cast

from sqlalchemy import Engine, delete, or_, select, update

from reprobot.bot.store.engine import insert_ignore
from reprobot.bot.store.models import (
    AppliedLabelRow,
    InstallationRow,
    JobRow,
    PostedCommentRow,
    ReproductionRow,
    utc,
)

LabelState = Literal["added", "removed"]


def _system_clock() -> datetime:
    return datetime.now(UTC)


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


@dataclass(frozen=True)
class ReproductionRecord:
    """The reproduction kept for an issue; ``created_at`` is set by the store when saved."""

    repo: str
    issue_number: int
    base_sha: str
    reproduced: bool
    test_patch: str
    failing_tests: tuple[str, ...]
    failure: str
    method: str
    candidates: tuple[dict[str, Any], ...]
    created_at: datetime | None = None


class Records:
    """The App's small records over ``engine``; ``clock`` returns the current time."""

    def __init__(self, engine: Engine, clock: Callable[[], datetime] = _system_clock) -> None:
        self._engine = engine
        self._clock = clock

    def _now(self) -> datetime:
        return utc(self._clock())

    # -- installations ----------------------------------------------------------------------

    def save_installation(self, installation_id: int, account: str, repos: Sequence[str]) -> None:
        """Record the installation with exactly ``repos`` (replacing any stored list)."""
        now = self._now()
        with self._engine.begin() as conn:
            row = {"account": account, "repos": _unique(repos), "updated_at": now}
            inserted = insert_ignore(
                conn, InstallationRow, {"id": installation_id, "created_at": now, **row}
            )
            if not inserted:
                conn.execute(
                    update(InstallationRow)
                    .where(InstallationRow.id == installation_id)
                    .values(**row)
                )

    def _change_repos(self, installation_id: int, change: Callable[[list[str]], list[str]]) -> None:
        now = self._now()
        with self._engine.begin() as conn:
            # An installation made before the store existed is first seen here; its account
            # name arrives with the next full installation event.
            insert_ignore(
                conn,
                InstallationRow,
                {
                    "id": installation_id,
                    "account": "",
                    "repos": [],
                    "created_at": now,
                    "updated_at": now,
                },
            )
            current = conn.execute(
                select(InstallationRow.repos).where(InstallationRow.id == installation_id)
            ).scalar_one()
            conn.execute(
                update(InstallationRow)
                .where(InstallationRow.id == installation_id)
                .values(repos=change(list(current or [])), updated_at=now)
            )

    def add_repos(self, installation_id: int, repos: Sequence[str]) -> None:
        """Add ``repos`` to the installation (recording an unknown installation)."""
        self._change_repos(installation_id, lambda current: _unique([*current, *repos]))

    def remove_repos(self, installation_id: int, repos: Sequence[str]) -> None:
        """Drop ``repos`` from the installation's list; what is stored for them is kept."""
        gone = set(repos)
        self._change_repos(installation_id, lambda current: [r for r in current if r not in gone])

    def forget_installation(self, installation_id: int) -> None:
        """Delete the installation and everything stored for its repositories.

        Reproductions, posted comment ids and label states of its repositories go; its queued
        jobs fail with "installation removed" (running ones fail on their own when GitHub
        refuses them). Unknown installations are a no-op apart from the jobs.
        """
        now = self._now()
        with self._engine.begin() as conn:
            stored = conn.execute(
                select(InstallationRow.repos).where(InstallationRow.id == installation_id)
            ).scalar_one_or_none()
            repos = list(stored or [])
            if repos:
                for model in (ReproductionRow, PostedCommentRow, AppliedLabelRow):
                    conn.execute(delete(model).where(model.repo.in_(repos)))
            conn.execute(
                update(JobRow)
                .where(
                    JobRow.state == "queued",
                    or_(JobRow.installation_id == installation_id, JobRow.repo.in_(repos)),
                )
                .values(state="failed", error="installation removed", updated_at=now)
            )
            conn.execute(delete(InstallationRow).where(InstallationRow.id == installation_id))

    def installation(self, installation_id: int) -> tuple[str, list[str]] | None:
        """The installation's account and repositories, or None when unknown."""
        with self._engine.connect() as conn:
            row = conn.execute(
                select(InstallationRow.account, InstallationRow.repos).where(
                    InstallationRow.id == installation_id
                )
            ).first()
        return None if row is None else (row.account, list(row.repos or []))

    # -- reproductions ------------------------------------------------------------------------

    def save_reproduction(self, record: ReproductionRecord) -> None:
        """Store ``record`` as the issue's reproduction, replacing an earlier one."""
        now = self._now()
        values = {
            "base_sha": record.base_sha,
            "reproduced": record.reproduced,
            "test_patch": record.test_patch,
            "failing_tests": list(record.failing_tests),
            "failure": record.failure,
            "method": record.method,
            "candidates": [dict(c) for c in record.candidates],
            "created_at": now,
        }
        with self._engine.begin() as conn:
            key = {"repo": record.repo, "issue_number": record.issue_number}
            if not insert_ignore(conn, ReproductionRow, {**key, **values}):
                conn.execute(
                    update(ReproductionRow)
                    .where(
                        ReproductionRow.repo == record.repo,
                        ReproductionRow.issue_number == record.issue_number,
                    )
                    .values(**values)
                )

    def reproduction(self, repo: str, issue_number: int) -> ReproductionRecord | None:
        """The reproduction stored for the issue, or None."""
        with self._engine.connect() as conn:
            row = (
                conn.execute(
                    select(ReproductionRow.__table__).where(
                        ReproductionRow.repo == repo, ReproductionRow.issue_number == issue_number
                    )
                )
                .mappings()
                .first()
            )
        if row is None:
            return None
        return ReproductionRecord(
            repo=row["repo"],
            issue_number=row["issue_number"],
            base_sha=row["base_sha"],
            reproduced=bool(row["reproduced"]),
            test_patch=row["test_patch"],
            failing_tests=tuple(row["failing_tests"] or ()),
            failure=row["failure"],
            method=row["method"],
            candidates=tuple(dict(c) for c in row["candidates"] or ()),
            created_at=utc(row["created_at"]),
        )

    # -- idempotent writes to GitHub ----------------------------------------------------------

    def comment_id(self, repo: str, number: int, kind: str) -> int | None:
        """The id of the ``kind`` comment the App posted on issue or PR ``number``, or None."""
        with self._engine.connect() as conn:
            return conn.execute(
                select(PostedCommentRow.comment_id).where(
                    PostedCommentRow.repo == repo,
                    PostedCommentRow.number == number,
                    PostedCommentRow.kind == kind,
                )
            ).scalar_one_or_none()

    def save_comment_id(self, repo: str, number: int, kind: str, comment_id: int) -> None:
        """Remember the ``kind`` comment's id (replacing one that was deleted on GitHub)."""
        key = {"repo": repo, "number": number, "kind": kind}
        with self._engine.begin() as conn:
            if not insert_ignore(conn, PostedCommentRow, {**key, "comment_id": comment_id}):
                conn.execute(
                    update(PostedCommentRow)
                    .where(
                        PostedCommentRow.repo == repo,
                        PostedCommentRow.number == number,
                        PostedCommentRow.kind == kind,
                    )
                    .values(comment_id=comment_id)
                )

    def label_state(self, repo: str, number: int, name: str) -> LabelState | None:
        """Whether the App added label ``name`` or saw it removed; None if never touched."""
        with self._engine.connect() as conn:
            state = conn.execute(
                select(AppliedLabelRow.state).where(
                    AppliedLabelRow.repo == repo,
                    AppliedLabelRow.number == number,
                    AppliedLabelRow.name == name,
                )
            ).scalar_one_or_none()
        return None if state is None else cast(LabelState, state)

    def set_label_state(self, repo: str, number: int, name: str, state: LabelState) -> None:
        """Record that label ``name`` is now ``state`` on issue or PR ``number``."""
        now = self._now()
        key = {"repo": repo, "number": number, "name": name}
        with self._engine.begin() as conn:
            if not insert_ignore(conn, AppliedLabelRow, {**key, "state": state, "updated_at": now}):
                conn.execute(
                    update(AppliedLabelRow)
                    .where(
                        AppliedLabelRow.repo == repo,
                        AppliedLabelRow.number == number,
                        AppliedLabelRow.name == name,
                    )
                    .values(state=state, updated_at=now)
                )
