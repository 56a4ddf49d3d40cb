"""The job ledger: one row per unit of work, with state, a lease and attempts.

Webhook deliveries map onto jobs by key, so redeliveries and duplicate events land on the same
row. Workers claim a job with a lease and must hold it to finish; a reaper returns jobs whose
worker vanished. Every transition is a conditional UPDATE, so concurrent callers (threads,
processes, machines) cannot both win.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Connection, Engine, and_, bindparam, or_, select, text, update
from sqlalchemy.sql.elements import ColumnElement

from reprobot.bot.store.engine import insert_ignore
from reprobot.bot.store.job_reads import JobReads
from reprobot.bot.store.jobs import (
    FINISHED_STATES,
    LIVE_STATES,
    Delivery,
    DeliveryOutcome,
    Job,
    JobRequest,
    ReapResult,
)
from reprobot.bot.store.models import DeliveryRow, JobRow, utc


def _system_clock() -> datetime:
    return datetime.now(UTC)


def _queued_again(now: datetime) -> dict[str, Any]:
    """What a job that goes back to the queue is set to: no worker, no lease, not enqueued."""
    return {
        "state": "queued",
        "worker": None,
        "lease_until": None,
        "enqueued_at": None,
        "updated_at": now,
    }


def _lease_expired(now: datetime, grace: timedelta | None = None) -> ColumnElement[bool]:
    # A running row without a lease cannot be renewed by anyone, so it counts as expired; so
    # does one whose worker stopped beating (every renewal and claim stamps updated_at).
    expired = or_(JobRow.lease_until.is_(None), JobRow.lease_until < now)
    if grace is None:
        return expired
    return or_(expired, JobRow.updated_at < now - grace)


# The webhook's hot path, built once: building a statement costs more than running it.
_DELIVERY_JOBS = select(DeliveryRow.job_ids).where(DeliveryRow.delivery_id == bindparam("d"))
_SET_DELIVERY_JOBS = (
    update(DeliveryRow)
    .where(DeliveryRow.delivery_id == bindparam("d"))
    .values(job_ids=bindparam("ids", type_=DeliveryRow.__table__.c.job_ids.type))
)
_JOB_BY_KEY = select(JobRow.id, JobRow.state).where(JobRow.key == bindparam("key"))


def _pr_lock_id(repo: str, number: int) -> int:
    digest = hashlib.blake2b(f"verify:{repo}#{number}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Ledger(JobReads):
    """The job ledger over ``engine``; ``clock`` returns the current time (aware, any zone)."""

    def __init__(
        self,
        engine: Engine,
        clock: Callable[[], datetime] = _system_clock,
        heartbeat_grace_s: float | None = None,
    ) -> None:
        """``heartbeat_grace_s``: a running job not renewed for this long is taken to have lost
        its worker even while its lease lasts (None: only an expired lease counts)."""
        self._engine = engine
        self._clock = clock
        self._grace = None if heartbeat_grace_s is None else timedelta(seconds=heartbeat_grace_s)

    def _now(self) -> datetime:
        return utc(self._clock())

    # -- deliveries -------------------------------------------------------------------------

    def record_delivery(
        self,
        delivery_id: str,
        event: str,
        action: str | None,
        repo: str | None,
        requests: Sequence[JobRequest],
        enqueue: bool = False,
    ) -> DeliveryOutcome:
        """Record one delivery and the jobs it asks for, in one transaction: see
        ``record_deliveries``."""
        delivery = Delivery(delivery_id, event, action, repo, requests)
        return self.record_deliveries([delivery], enqueue=enqueue)[0]

    def record_deliveries(
        self, deliveries: Sequence[Delivery], enqueue: bool = False
    ) -> list[DeliveryOutcome]:
        """Record deliveries and the jobs they ask for, all in one transaction, in order; one
        outcome each.

        With ``enqueue`` the jobs they make runnable are marked as handed to the queue in that
        same transaction; the caller then enqueues them, and calls ``enqueue_failed`` for any
        it could not (the reaper then lists it again at once).

        A delivery id seen before (also earlier in the same call) gives ``new=False`` with the
        jobs stored for it; of those, only jobs that ended failed are queued again (GitHub's
        "Redeliver"). Otherwise each request lands on the job with its key: a missing job is
        created queued; a queued or running one is left alone (a duplicate event); a failed one
        is queued again; another finished one is reset to queued only when ``request.rerun``. A
        verification job created or reset here supersedes every other queued or running
        verification of the same PR. ``to_enqueue`` lists exactly the jobs each delivery made
        runnable.
        """
        now = self._now()
        with self._engine.begin() as conn:
            self._lock_prs(conn, [r for d in deliveries for r in d.requests])
            return [self._record_in(conn, d, now, enqueue) for d in deliveries]

    def _record_in(
        self, conn: Connection, delivery: Delivery, now: datetime, enqueue: bool
    ) -> DeliveryOutcome:
        delivery_id = delivery.delivery_id
        inserted = insert_ignore(
            conn,
            DeliveryRow,
            {
                "delivery_id": delivery_id,
                "event": delivery.event,
                "action": delivery.action,
                "repo": delivery.repo,
                "received_at": now,
                "job_ids": [],
            },
        )
        if not inserted:
            stored = conn.execute(_DELIVERY_JOBS, {"d": delivery_id}).scalar_one()
            known = [int(i) for i in stored or ()]
            # GitHub's "Redeliver" of a delivery whose job failed: run that job again.
            revived = [i for i in known if self._revive_failed(conn, i, now)]
            if enqueue and revived:
                self._mark_enqueued(conn, revived, now)
            return DeliveryOutcome(new=False, job_ids=tuple(known), to_enqueue=tuple(revived))

        job_ids: list[int] = []
        to_enqueue: list[int] = []
        for request in delivery.requests:
            job_id, runnable = self._upsert_job(conn, request, delivery_id, now)
            if job_id not in job_ids:
                job_ids.append(job_id)
            if runnable:
                if job_id not in to_enqueue:
                    to_enqueue.append(job_id)
                if request.kind == "verify":
                    self._supersede_others(conn, request, job_id, now)
        if job_ids:
            conn.execute(_SET_DELIVERY_JOBS, {"d": delivery_id, "ids": job_ids})
        if enqueue and to_enqueue:
            self._mark_enqueued(conn, to_enqueue, now)
        return DeliveryOutcome(new=True, job_ids=tuple(job_ids), to_enqueue=tuple(to_enqueue))

    @staticmethod
    def _lock_prs(conn: Connection, requests: Sequence[JobRequest]) -> None:
        # SQLite's BEGIN IMMEDIATE already serialises writers. PostgreSQL (READ COMMITTED) does
        # not: two pushes to one PR recorded at once would each miss the other's uncommitted
        # job and both stay live, so verification deliveries of one PR take a transaction lock.
        # Sorted, so two deliveries that touch several PRs cannot deadlock.
        if conn.dialect.name != "postgresql":
            return
        lock_ids = sorted({_pr_lock_id(r.repo, r.number) for r in requests if r.kind == "verify"})
        for lock_id in lock_ids:
            conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": lock_id})

    @staticmethod
    def _upsert_job(
        conn: Connection, request: JobRequest, delivery_id: str, now: datetime
    ) -> tuple[int, bool]:
        """The id of the job for ``request`` and whether this call made it runnable."""
        created_id = insert_ignore(
            conn,
            JobRow,
            {
                "key": request.key,
                "kind": request.kind,
                "repo": request.repo,
                "installation_id": request.installation_id,
                "number": request.number,
                "head_sha": request.head_sha,
                "state": "queued",
                "attempts": 0,
                "lease_until": None,
                "worker": None,
                "delivery_id": delivery_id,
                "payload": dict(request.payload),
                "error": None,
                "superseded_by": None,
                "created_at": now,
                "updated_at": now,
                "enqueued_at": None,
                "revivals": 0,
                "retry_at": None,
            },
            returning="id",
        )
        if created_id is not None:
            return int(created_id), True
        job_id, state = conn.execute(_JOB_BY_KEY, {"key": request.key}).one()
        # A failed job runs again for any new delivery of its event; a finished one only when
        # asked to (a command, "Re-run").
        if state in LIVE_STATES or not (request.rerun or state == "failed"):
            return job_id, False
        # Conditional on the state still being finished: of two concurrent reruns only one
        # resets (and enqueues) the job.
        reset = conn.execute(
            update(JobRow)
            .where(JobRow.id == job_id, JobRow.state.in_(FINISHED_STATES))
            .values(
                **_queued_again(now),
                attempts=0,
                error=None,
                superseded_by=None,
                retry_at=None,
                revivals=0,
                delivery_id=delivery_id,
                # A rerun carries the newest request's data (an installation can be recreated).
                installation_id=request.installation_id,
                payload=dict(request.payload),
            )
        )
        return job_id, reset.rowcount == 1

    @staticmethod
    def _revive_failed(conn: Connection, job_id: int, now: datetime) -> bool:
        """Queue a failed job again, attempts reset; False when it was not failed."""
        revived = conn.execute(
            update(JobRow)
            .where(JobRow.id == job_id, JobRow.state == "failed")
            .values(
                **_queued_again(now),
                attempts=0,
                retry_at=None,
                revivals=0,
                error=None,
            )
        )
        return revived.rowcount == 1

    @staticmethod
    def _supersede_others(
        conn: Connection, request: JobRequest, job_id: int, now: datetime
    ) -> None:
        conn.execute(
            update(JobRow)
            .where(
                JobRow.repo == request.repo,
                JobRow.number == request.number,
                JobRow.kind == request.kind,
                JobRow.id != job_id,
                JobRow.state.in_(LIVE_STATES),
            )
            .values(state="superseded", superseded_by=job_id, lease_until=None, updated_at=now)
        )

    def mark_enqueued(self, job_ids: Sequence[int]) -> None:
        """Note that these jobs were handed to the queue now (the reaper re-lists stale ones)."""
        if not job_ids:
            return
        with self._engine.begin() as conn:
            self._mark_enqueued(conn, job_ids, self._now())

    @staticmethod
    def _mark_enqueued(conn: Connection, job_ids: Sequence[int], now: datetime) -> None:
        conn.execute(update(JobRow).where(JobRow.id.in_(list(job_ids))).values(enqueued_at=now))

    def enqueue_failed(self, job_ids: Sequence[int]) -> None:
        """These jobs, marked enqueued with their delivery, never reached the queue: unmark
        them, so that the reaper's next round enqueues them."""
        if not job_ids:
            return
        with self._engine.begin() as conn:
            conn.execute(
                update(JobRow)
                .where(JobRow.id.in_(list(job_ids)), JobRow.state == "queued")
                .values(enqueued_at=None)
            )

    # -- leases -------------------------------------------------------------------------------

    def claim(self, job_id: int, worker: str, lease_s: float) -> Job | None:
        """Take the job for ``worker`` for ``lease_s`` seconds and count an attempt.

        Succeeds for a queued job or a running one whose lease expired; returns the job as
        claimed, or None when it is running elsewhere, finished, superseded or unknown.
        """
        now = self._now()
        with self._engine.begin() as conn:
            claimed = conn.execute(
                update(JobRow)
                .where(
                    JobRow.id == job_id,
                    or_(
                        JobRow.state == "queued",
                        and_(JobRow.state == "running", _lease_expired(now, self._grace)),
                    ),
                )
                .values(
                    state="running",
                    attempts=JobRow.attempts + 1,
                    lease_until=now + timedelta(seconds=lease_s),
                    worker=worker,
                    updated_at=now,
                )
            )
            if claimed.rowcount != 1:
                return None
            return self._get(conn, job_id)

    def _owned(self, job_id: int, worker: str) -> tuple[ColumnElement[bool], ...]:
        return (JobRow.id == job_id, JobRow.state == "running", JobRow.worker == worker)

    def renew(self, job_id: int, worker: str, lease_s: float) -> bool:
        """Extend the lease to ``lease_s`` from now; False unless running under ``worker``."""
        now = self._now()
        with self._engine.begin() as conn:
            renewed = conn.execute(
                update(JobRow)
                .where(*self._owned(job_id, worker))
                .values(lease_until=now + timedelta(seconds=lease_s), updated_at=now)
            )
            return renewed.rowcount == 1

    def finish(
        self,
        job_id: int,
        worker: str,
        state: Literal["done", "failed"],
        error: str | None = None,
        retry_after_s: float | None = None,
    ) -> bool:
        """Record the outcome; False (and no change) unless still running under ``worker``.
        A failed job with ``retry_after_s`` comes back (``reap``) once that time has passed."""
        now = self._now()
        retry_at = None if retry_after_s is None else now + timedelta(seconds=retry_after_s)
        with self._engine.begin() as conn:
            finished = conn.execute(
                update(JobRow)
                .where(*self._owned(job_id, worker))
                .values(
                    state=state, error=error, lease_until=None, updated_at=now, retry_at=retry_at
                )
            )
            return finished.rowcount == 1

    def release(self, job_id: int, worker: str, error: str) -> bool:
        """Give the job back after a retryable failure: queued again, attempts kept.

        The job is left needing an enqueue (the reaper lists it). False unless it was still
        running under ``worker``.
        """
        now = self._now()
        with self._engine.begin() as conn:
            released = conn.execute(
                update(JobRow)
                .where(*self._owned(job_id, worker))
                .values(
                    **_queued_again(now),
                    error=error,
                )
            )
            return released.rowcount == 1

    def is_current(self, job_id: int, worker: str) -> bool:
        """True while the job is running under ``worker`` (not superseded, finished or stolen)."""
        with self._engine.connect() as conn:
            found = conn.execute(select(JobRow.id).where(*self._owned(job_id, worker))).first()
            return found is not None

    def reap(self, max_attempts: int, stale_enqueue_s: float) -> ReapResult:
        """Recover jobs whose worker or enqueue was lost.

        A running job whose lease expired fails after ``max_attempts`` attempts (error
        "worker lost after N attempts") and is otherwise queued again. ``requeued`` lists
        those plus queued jobs never enqueued or enqueued more than ``stale_enqueue_s`` ago;
        the caller enqueues them and calls ``mark_enqueued``.
        """
        now = self._now()
        requeued: list[int] = []
        failed: list[int] = []
        with self._engine.begin() as conn:
            expired = conn.execute(
                select(JobRow.id, JobRow.attempts)
                .where(JobRow.state == "running", _lease_expired(now, self._grace))
                .order_by(JobRow.id)
            ).all()
            for job_id, attempts in expired:
                # Re-checked in the UPDATE: a worker may have claimed or renewed it meanwhile.
                still_expired = (
                    JobRow.id == job_id,
                    JobRow.state == "running",
                    JobRow.attempts == attempts,
                    _lease_expired(now, self._grace),
                )
                if attempts >= max_attempts:
                    result = conn.execute(
                        update(JobRow)
                        .where(*still_expired)
                        .values(
                            state="failed",
                            error=f"worker lost after {attempts} attempts",
                            lease_until=None,
                            updated_at=now,
                        )
                    )
                    if result.rowcount == 1:
                        failed.append(job_id)
                else:
                    result = conn.execute(
                        update(JobRow)
                        .where(*still_expired)
                        .values(
                            **_queued_again(now),
                        )
                    )
                    if result.rowcount == 1:
                        requeued.append(job_id)
            stale_before = now - timedelta(seconds=stale_enqueue_s)
            lost = conn.execute(
                select(JobRow.id)
                .where(
                    JobRow.state == "queued",
                    or_(JobRow.enqueued_at.is_(None), JobRow.enqueued_at < stale_before),
                )
                .order_by(JobRow.id)
            ).scalars()
            requeued.extend(job_id for job_id in lost if job_id not in requeued)
            # Failed on passing trouble, and its back-off is over: a fresh round of attempts.
            due = conn.execute(
                select(JobRow.id)
                .where(JobRow.state == "failed", JobRow.retry_at <= now)
                .order_by(JobRow.id)
            ).scalars()
            for job_id in list(due):
                revived = conn.execute(
                    update(JobRow)
                    .where(JobRow.id == job_id, JobRow.state == "failed", JobRow.retry_at <= now)
                    .values(
                        **_queued_again(now),
                        attempts=0,
                        retry_at=None,
                        revivals=JobRow.revivals + 1,
                    )
                )
                if revived.rowcount == 1 and job_id not in requeued:
                    requeued.append(job_id)
        return ReapResult(requeued=tuple(requeued), failed=tuple(failed))
