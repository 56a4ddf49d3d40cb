"""The store's tables as typed ORM models; the migrations create exactly these.

Timestamps are written as UTC. SQLite hands them back naive, so readers pass them through
``utc`` before use.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Deterministic constraint names, so the hand-written migration and the models agree on every
# database (SQLite would otherwise leave unique constraints unnamed).
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

JOB_KINDS = ("reproduce", "verify")
PAGE_KINDS = ("reproduction", "verdict")
JOB_STATES = ("queued", "running", "done", "failed", "superseded")
LABEL_STATES = ("added", "removed")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def utc(value: datetime) -> datetime:
    """``value`` as an aware UTC datetime; a naive value (as SQLite returns) is taken as UTC."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def utc_or_none(value: datetime | None) -> datetime | None:
    """``utc`` that lets ``None`` through."""
    return None if value is None else utc(value)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: DateTime(timezone=True),
        dict[str, Any]: JSON,
        list[int]: JSON,
        list[str]: JSON,
        list[dict[str, Any]]: JSON,
    }


class DeliveryRow(Base):
    """One webhook delivery as received; ``job_ids`` are the jobs it maps to."""

    __tablename__ = "deliveries"

    delivery_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    event: Mapped[str] = mapped_column(String(64))
    action: Mapped[str | None] = mapped_column(String(64))
    repo: Mapped[str | None] = mapped_column(String(255))
    received_at: Mapped[datetime]
    job_ids: Mapped[list[int]]


class JobRow(Base):
    """One unit of work; ``key`` makes redeliveries and duplicate events land on the same row."""

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_repo_kind_number", "repo", "kind", "number"),
        CheckConstraint(_in("kind", JOB_KINDS), name="kind"),
        CheckConstraint(_in("state", JOB_STATES), name="state"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(512), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    repo: Mapped[str] = mapped_column(String(255))
    installation_id: Mapped[int] = mapped_column(BigInteger)
    number: Mapped[int] = mapped_column(Integer)
    head_sha: Mapped[str | None] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer)
    lease_until: Mapped[datetime | None]
    worker: Mapped[str | None] = mapped_column(String(255))
    delivery_id: Mapped[str | None] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]]
    error: Mapped[str | None] = mapped_column(Text)
    superseded_by: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    enqueued_at: Mapped[datetime | None]
    # How often a job that failed on passing trouble was brought back, and when it next will be.
    revivals: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    retry_at: Mapped[datetime | None]


class InstallationRow(Base):
    """Where the App is installed: GitHub's installation id, its account and repositories."""

    __tablename__ = "installations"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    account: Mapped[str] = mapped_column(String(255))
    repos: Mapped[list[str]]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class ReproductionRow(Base):
    """The reproduction kept for an issue, which verification of fix PRs runs against."""

    __tablename__ = "reproductions"

    repo: Mapped[str] = mapped_column(String(255), primary_key=True)
    issue_number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    base_sha: Mapped[str] = mapped_column(String(64))
    reproduced: Mapped[bool] = mapped_column(Boolean)
    test_patch: Mapped[str] = mapped_column(Text)
    failing_tests: Mapped[list[str]]
    failure: Mapped[str] = mapped_column(Text)
    method: Mapped[str] = mapped_column(Text)
    candidates: Mapped[list[dict[str, Any]]]
    created_at: Mapped[datetime]


class PostedCommentRow(Base):
    """The comment the App posted for an issue or PR, edited in place on later runs."""

    __tablename__ = "posted_comments"

    repo: Mapped[str] = mapped_column(String(255), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(32), primary_key=True)
    comment_id: Mapped[int] = mapped_column(BigInteger)


class AppliedLabelRow(Base):
    """A label the App added, or saw removed (and so never re-adds)."""

    __tablename__ = "applied_labels"
    __table_args__ = (CheckConstraint(_in("state", LABEL_STATES), name="state"),)

    repo: Mapped[str] = mapped_column(String(255), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    state: Mapped[str] = mapped_column(String(16))
    updated_at: Mapped[datetime]


class PageRow(Base):
    """A report page: the document a job made (JSON), found by its unguessable id."""

    __tablename__ = "pages"
    __table_args__ = (
        Index("ix_pages_repo_number", "repo", "number"),
        Index("ix_pages_created_at", "created_at"),
        CheckConstraint(_in("kind", PAGE_KINDS), name="kind"),
    )

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    repo: Mapped[str] = mapped_column(String(255))
    number: Mapped[int] = mapped_column(Integer)
    head_sha: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(32))
    document: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    # A page of a private repository is shown only to signed-in users who can read it.
    private: Mapped[bool] = mapped_column(Boolean, server_default=false())


class CheckRunRow(Base):
    """The check run a verification job created: a retry of the job reuses it while it is in
    progress, and the reaper completes one whose job finished without completing it."""

    __tablename__ = "check_runs"
    __table_args__ = (Index("ix_check_runs_completed", "completed"),)

    job_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    repo: Mapped[str] = mapped_column(String(255))
    installation_id: Mapped[int] = mapped_column(BigInteger)
    head_sha: Mapped[str] = mapped_column(String(64))
    check_run_id: Mapped[int] = mapped_column(BigInteger)
    completed: Mapped[bool] = mapped_column(Boolean)
    updated_at: Mapped[datetime]


class WebSessionRow(Base):
    """A GitHub user signed in to read report pages of private repositories. The id is the
    SHA-256 of the cookie's value, so a reader of the database cannot present the cookie; the
    user's token is encrypted with a key derived from that value, so it cannot use the token
    either."""

    __tablename__ = "web_sessions"
    __table_args__ = (Index("ix_web_sessions_expires_at", "expires_at"),)

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    login: Mapped[str] = mapped_column(String(255))
    user_token: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
