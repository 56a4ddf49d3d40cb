"""What the job ledger holds: jobs and the requests that make them, as plain records.

A job is keyed by what it is about (an issue, or a pull request's head), so that redeliveries
and duplicate events land on the same row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy import RowMapping

from reprobot.bot.store.models import utc, utc_or_none

JobKind = Literal["reproduce", "verify"]
JobState = Literal["queued", "running", "done", "failed", "superseded"]

LIVE_STATES: tuple[JobState, ...] = ("queued", "running")
FINISHED_STATES: tuple[JobState, ...] = ("done", "failed", "superseded")


def reproduce_key(repo: str, issue: int) -> str:
    """The ledger key of the reproduction job for an issue: one per issue."""
    return f"reproduce:{repo}#{issue}"


def verify_key(repo: str, pr: int, head_sha: str) -> str:
    """The ledger key of the verification job for a PR at one head commit."""
    return f"verify:{repo}#{pr}@{head_sha}"


@dataclass(frozen=True)
class JobRequest:
    """A unit of work a delivery asks for; ``key`` decides which requests are the same job."""

    kind: JobKind
    key: str
    repo: str
    installation_id: int
    number: int
    head_sha: str | None = None
    payload: Mapping[str, Any] = field(default_factory=dict)
    # A command or a re-requested check: run again even if the job already finished.
    rerun: bool = False


@dataclass(frozen=True)
class Job:
    """A job row as read; timestamps are aware UTC datetimes."""

    id: int
    key: str
    kind: JobKind
    repo: str
    installation_id: int
    number: int
    head_sha: str | None
    state: JobState
    attempts: int
    lease_until: datetime | None
    worker: str | None
    delivery_id: str | None
    payload: dict[str, Any]
    error: str | None
    superseded_by: int | None
    created_at: datetime
    updated_at: datetime
    enqueued_at: datetime | None
    revivals: int = 0
    retry_at: datetime | None = None


@dataclass(frozen=True)
class Delivery:
    """A verified webhook delivery as the ledger records it: its id, what it was about, and the
    jobs it asks for."""

    delivery_id: str
    event: str
    action: str | None
    repo: str | None
    requests: Sequence[JobRequest]


@dataclass(frozen=True)
class DeliveryOutcome:
    """What recording a delivery did."""

    new: bool  # False: this delivery id was already recorded (a redelivery or a duplicate)
    job_ids: tuple[int, ...]  # the jobs this delivery maps to (also for a duplicate delivery)
    to_enqueue: tuple[int, ...]  # jobs created or reset to queued by this call


@dataclass(frozen=True)
class ReapResult:
    """Jobs the reaper found: ``requeued`` need an enqueue, ``failed`` ran out of attempts."""

    requeued: tuple[int, ...]
    failed: tuple[int, ...]


def job_from_row(row: RowMapping) -> Job:
    return Job(
        id=row["id"],
        key=row["key"],
        kind=cast(JobKind, row["kind"]),
        repo=row["repo"],
        installation_id=row["installation_id"],
        number=row["number"],
        head_sha=row["head_sha"],
        state=cast(JobState, row["state"]),
        attempts=row["attempts"],
        lease_until=utc_or_none(row["lease_until"]),
        worker=row["worker"],
        delivery_id=row["delivery_id"],
        payload=dict(row["payload"] or {}),
        error=row["error"],
        superseded_by=row["superseded_by"],
        created_at=utc(row["created_at"]),
        updated_at=utc(row["updated_at"]),
        enqueued_at=utc_or_none(row["enqueued_at"]),
        revivals=int(row["revivals"] or 0),
        retry_at=utc_or_none(row["retry_at"]),
    )
