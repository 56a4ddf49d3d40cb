"""The job ledger on real SQLite files, with threads and processes racing for the same rows."""

from __future__ import annotations

import multiprocessing
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import Engine

from reprobot.bot.store.engine import make_engine, migrate
from reprobot.bot.store.jobs import (
    DeliveryOutcome,
    Job,
    JobRequest,
    ReapResult,
    reproduce_key,
    verify_key,
)
from reprobot.bot.store.ledger import Ledger
from reprobot.settings import Settings

REPO = "octo/widgets"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
SHA1, SHA2, SHA3 = "1" * 40, "2" * 40, "3" * 40

R = TypeVar("R")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def ledger(engine: Engine, clock: Clock) -> Ledger:
    return Ledger(engine, clock=clock)


def reproduce(issue: int, *, rerun: bool = False, **payload: Any) -> JobRequest:
    return JobRequest(
        kind="reproduce",
        key=reproduce_key(REPO, issue),
        repo=REPO,
        installation_id=42,
        number=issue,
        payload=payload,
        rerun=rerun,
    )


def verify(pr: int, sha: str, *, rerun: bool = False) -> JobRequest:
    return JobRequest(
        kind="verify",
        key=verify_key(REPO, pr, sha),
        repo=REPO,
        installation_id=42,
        number=pr,
        head_sha=sha,
        rerun=rerun,
    )


def record(ledger: Ledger, delivery_id: str, *requests: JobRequest) -> DeliveryOutcome:
    return ledger.record_delivery(delivery_id, "issues", "opened", REPO, requests)


def the_job(ledger: Ledger, job_id: int) -> Job:
    job = ledger.get(job_id)
    assert job is not None
    return job


def race(n: int, action: Callable[[int], R]) -> list[R]:
    """Run ``action(i)`` in ``n`` threads released at the same instant."""
    barrier = threading.Barrier(n)

    def run(i: int) -> R:
        barrier.wait(timeout=30)
        return action(i)

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(run, range(n)))


# -- recording deliveries -------------------------------------------------------------------


def test_a_new_delivery_creates_queued_jobs(ledger: Ledger) -> None:
    outcome = record(ledger, "d1", reproduce(1), reproduce(2))
    assert outcome.new
    assert len(outcome.job_ids) == 2
    assert outcome.to_enqueue == outcome.job_ids
    job = the_job(ledger, outcome.job_ids[0])
    assert (job.key, job.kind, job.repo, job.number, job.installation_id) == (
        "reproduce:octo/widgets#1",
        "reproduce",
        REPO,
        1,
        42,
    )
    assert (job.state, job.attempts, job.worker, job.lease_until) == ("queued", 0, None, None)
    assert (job.delivery_id, job.enqueued_at, job.error, job.superseded_by) == (
        "d1",
        None,
        None,
        None,
    )
    assert job.created_at == job.updated_at == T0
    assert job.created_at.tzinfo is UTC


def test_the_same_delivery_twice_is_recorded_once(ledger: Ledger) -> None:
    first = record(ledger, "d1", reproduce(1))
    again = record(ledger, "d1", reproduce(1))
    assert not again.new
    assert again.job_ids == first.job_ids
    assert again.to_enqueue == ()
    assert len(ledger.jobs()) == 1


def test_a_delivery_without_jobs_is_still_deduplicated(ledger: Ledger) -> None:
    assert record(ledger, "ping-1") == DeliveryOutcome(new=True, job_ids=(), to_enqueue=())
    assert record(ledger, "ping-1") == DeliveryOutcome(new=False, job_ids=(), to_enqueue=())


def test_duplicate_events_map_to_the_same_job(ledger: Ledger) -> None:
    first = record(ledger, "d1", reproduce(1))
    (job_id,) = first.job_ids
    # Another delivery for the same issue, while queued and while running.
    assert record(ledger, "d2", reproduce(1)) == DeliveryOutcome(True, (job_id,), ())
    assert ledger.claim(job_id, "w1", 60) is not None
    assert record(ledger, "d3", reproduce(1, rerun=True)) == DeliveryOutcome(True, (job_id,), ())
    # Finished, and the event is not a request to run again.
    assert ledger.finish(job_id, "w1", "done")
    assert record(ledger, "d4", reproduce(1)) == DeliveryOutcome(True, (job_id,), ())
    job = the_job(ledger, job_id)
    assert (job.state, job.delivery_id) == ("done", "d1")
    assert len(ledger.jobs()) == 1


def test_rerun_resets_a_finished_job(ledger: Ledger, clock: Clock) -> None:
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    assert ledger.claim(job_id, "w1", 60) is not None
    assert ledger.finish(job_id, "w1", "failed", error="sandbox exploded")
    clock.advance(5)

    outcome = record(ledger, "d2", reproduce(1, rerun=True, command="/reprobot retry"))
    assert outcome == DeliveryOutcome(True, (job_id,), (job_id,))
    job = the_job(ledger, job_id)
    assert (job.state, job.attempts, job.error, job.worker, job.lease_until) == (
        "queued",
        0,
        None,
        None,
        None,
    )
    assert job.delivery_id == "d2"
    assert job.payload == {"command": "/reprobot retry"}
    assert job.created_at == T0
    assert job.updated_at == T0 + timedelta(seconds=5)
    claimed = ledger.claim(job_id, "w2", 60)
    assert claimed is not None
    assert claimed.attempts == 1


def test_json_payload_round_trip(ledger: Ledger) -> None:
    payload: dict[str, Any] = {
        "issue": {"title": "Crash on ünïcode ✓", "labels": ["bug", "p1"], "n": 3},
        "flags": [True, False, None],
        "ratio": 0.25,
        "empty": {},
    }
    request = JobRequest("reproduce", reproduce_key(REPO, 1), REPO, 42, 1, payload=payload)
    (job_id,) = record(ledger, "d1", request).job_ids
    assert the_job(ledger, job_id).payload == payload


def test_timestamps_are_stored_as_utc_whatever_the_clock_zone(engine: Engine) -> None:
    plus_two = timezone(timedelta(hours=2))
    ledger = Ledger(engine, clock=lambda: datetime(2024, 5, 1, 14, 0, tzinfo=plus_two))
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    job = ledger.claim(job_id, "w", 30)
    assert job is not None
    assert job.created_at == T0
    assert job.created_at.tzinfo is UTC
    assert job.lease_until == T0 + timedelta(seconds=30)


# -- verification supersession --------------------------------------------------------------


def test_a_newer_head_supersedes_older_verifications(ledger: Ledger) -> None:
    (v1,) = record(ledger, "d1", verify(7, SHA1)).job_ids
    (other_pr,) = record(ledger, "d-other", verify(8, SHA1)).job_ids
    (repro,) = record(ledger, "d-issue", reproduce(7)).job_ids

    # A queued verification is superseded and can no longer be claimed.
    (v2,) = record(ledger, "d2", verify(7, SHA2)).job_ids
    job1 = the_job(ledger, v1)
    assert (job1.state, job1.superseded_by) == ("superseded", v2)
    assert ledger.claim(v1, "w1", 60) is None

    # A running one is superseded too: its worker can no longer finish it.
    assert ledger.claim(v2, "w2", 60) is not None
    (v3,) = record(ledger, "d3", verify(7, SHA3)).job_ids
    job2 = the_job(ledger, v2)
    assert (job2.state, job2.superseded_by) == ("superseded", v3)
    assert not ledger.is_current(v2, "w2")
    assert not ledger.renew(v2, "w2", 60)
    assert not ledger.finish(v2, "w2", "done")
    assert the_job(ledger, v2).state == "superseded"

    # Other PRs and other kinds of job on the same number are untouched.
    assert the_job(ledger, other_pr).state == "queued"
    assert the_job(ledger, repro).state == "queued"
    assert ledger.pulls_verified_at(REPO, the_job(ledger, v3).head_sha or "") == [7]


def test_a_late_duplicate_of_an_old_head_does_not_supersede_the_current_one(
    ledger: Ledger,
) -> None:
    (v1,) = record(ledger, "d1", verify(7, SHA1)).job_ids
    (v2,) = record(ledger, "d2", verify(7, SHA2)).job_ids
    # A redelivered event about the old head (new delivery id) is a duplicate, not a request.
    assert record(ledger, "d1-again", verify(7, SHA1)) == DeliveryOutcome(True, (v1,), ())
    assert the_job(ledger, v2).state == "queued"

    # Re-requesting the old head's check is a newer request: it runs, the other is superseded.
    assert record(ledger, "d3", verify(7, SHA1, rerun=True)).to_enqueue == (v1,)
    job1, job2 = the_job(ledger, v1), the_job(ledger, v2)
    assert (job1.state, job1.superseded_by) == ("queued", None)
    assert (job2.state, job2.superseded_by) == ("superseded", v1)


# -- claims and leases ----------------------------------------------------------------------


def test_claim_is_exclusive_under_concurrent_threads(ledger: Ledger) -> None:
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    results = race(20, lambda i: ledger.claim(job_id, f"w{i}", 60))
    winners = [job for job in results if job is not None]
    assert len(winners) == 1
    (winner,) = winners
    assert (winner.state, winner.attempts) == ("running", 1)
    assert ledger.is_current(job_id, winner.worker or "")


def test_claim_of_unknown_or_finished_jobs_returns_none(ledger: Ledger) -> None:
    assert ledger.claim(999, "w", 60) is None
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    assert ledger.claim(job_id, "w1", 60) is not None
    assert ledger.claim(job_id, "w2", 60) is None  # running, lease still valid
    assert ledger.finish(job_id, "w1", "done")
    assert ledger.claim(job_id, "w2", 60) is None
    assert not ledger.finish(job_id, "w1", "failed")  # finishing twice changes nothing
    assert the_job(ledger, job_id).state == "done"


def test_an_expired_lease_can_be_claimed_again(ledger: Ledger, clock: Clock) -> None:
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    assert ledger.claim(job_id, "old", 10) is not None
    clock.advance(5)
    assert ledger.renew(job_id, "old", 10)  # now good until +15
    clock.advance(9)
    assert ledger.claim(job_id, "new", 10) is None
    clock.advance(2)

    stolen = ledger.claim(job_id, "new", 10)
    assert stolen is not None
    assert (stolen.attempts, stolen.worker) == (2, "new")
    assert stolen.lease_until == clock.now + timedelta(seconds=10)
    assert not ledger.is_current(job_id, "old")
    assert not ledger.renew(job_id, "old", 10)
    assert not ledger.finish(job_id, "old", "done")
    assert not ledger.release(job_id, "old", "boom")
    assert ledger.is_current(job_id, "new")
    assert ledger.finish(job_id, "new", "failed", error="tests did not fail")
    job = the_job(ledger, job_id)
    assert (job.state, job.error, job.lease_until) == ("failed", "tests did not fail", None)


def test_release_returns_the_job_to_the_queue(ledger: Ledger) -> None:
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    ledger.mark_enqueued([job_id])
    assert ledger.claim(job_id, "w1", 60) is not None
    assert ledger.release(job_id, "w1", "GitHub answered 502")
    job = the_job(ledger, job_id)
    assert (job.state, job.attempts, job.worker, job.lease_until, job.enqueued_at) == (
        "queued",
        1,
        None,
        None,
        None,
    )
    assert job.error == "GitHub answered 502"
    again = ledger.claim(job_id, "w2", 60)
    assert again is not None
    assert again.attempts == 2


# -- the reaper -----------------------------------------------------------------------------


def test_reap_requeues_then_fails_lost_workers(ledger: Ledger, clock: Clock) -> None:
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    ledger.mark_enqueued([job_id])
    assert ledger.claim(job_id, "w1", 10) is not None
    assert ledger.reap(max_attempts=2, stale_enqueue_s=3600) == ReapResult((), ())

    clock.advance(11)
    assert ledger.reap(max_attempts=2, stale_enqueue_s=3600) == ReapResult((job_id,), ())
    job = the_job(ledger, job_id)
    assert (job.state, job.attempts, job.worker, job.lease_until) == ("queued", 1, None, None)
    assert not ledger.finish(job_id, "w1", "done")
    # Requeued but not yet enqueued again: listed until mark_enqueued.
    assert ledger.reap(max_attempts=2, stale_enqueue_s=3600).requeued == (job_id,)
    ledger.mark_enqueued([job_id])
    assert ledger.reap(max_attempts=2, stale_enqueue_s=3600) == ReapResult((), ())

    assert ledger.claim(job_id, "w2", 10) is not None
    clock.advance(11)
    assert ledger.reap(max_attempts=2, stale_enqueue_s=3600) == ReapResult((), (job_id,))
    job = the_job(ledger, job_id)
    assert (job.state, job.error, job.lease_until) == (
        "failed",
        "worker lost after 2 attempts",
        None,
    )
    assert ledger.claim(job_id, "w3", 10) is None


def test_reap_relists_queued_jobs_whose_enqueue_was_lost(ledger: Ledger, clock: Clock) -> None:
    never, enqueued = record(ledger, "d1", reproduce(1), reproduce(2)).job_ids
    ledger.mark_enqueued([enqueued])
    assert ledger.reap(max_attempts=3, stale_enqueue_s=60) == ReapResult((never,), ())
    clock.advance(61)
    assert ledger.reap(max_attempts=3, stale_enqueue_s=60) == ReapResult((never, enqueued), ())
    ledger.mark_enqueued([never, enqueued])
    assert ledger.reap(max_attempts=3, stale_enqueue_s=60) == ReapResult((), ())


# -- concurrent deliveries ------------------------------------------------------------------


def test_one_delivery_recorded_by_20_threads_at_once(ledger: Ledger) -> None:
    outcomes = race(20, lambda i: record(ledger, "same-delivery", reproduce(1), verify(7, SHA1)))
    assert sum(outcome.new for outcome in outcomes) == 1
    assert len({outcome.job_ids for outcome in outcomes}) == 1
    assert sum(len(outcome.to_enqueue) for outcome in outcomes) == 2
    assert len(ledger.jobs()) == 2


def test_20_deliveries_for_one_key_at_once(ledger: Ledger) -> None:
    outcomes = race(20, lambda i: record(ledger, f"delivery-{i}", verify(7, SHA1)))
    assert all(outcome.new for outcome in outcomes)
    assert len({outcome.job_ids for outcome in outcomes}) == 1
    assert sum(len(outcome.to_enqueue) for outcome in outcomes) == 1
    (job,) = ledger.jobs()
    assert job.state == "queued"  # not superseded by its own duplicates


def test_jobs_and_latest(ledger: Ledger) -> None:
    record(ledger, "d1", reproduce(1))
    ledger.record_delivery(
        "d2",
        "issues",
        "opened",
        "someone/else",
        [JobRequest("reproduce", reproduce_key("someone/else", 1), "someone/else", 1, 1)],
    )
    assert [job.repo for job in ledger.jobs()] == [REPO, "someone/else"]
    assert [job.repo for job in ledger.jobs(REPO)] == [REPO]
    assert ledger.pulls_verified_at(REPO, "0" * 40) == []


# -- two processes on one file --------------------------------------------------------------

PROCESS_JOBS = 40


def _process_worker(
    url: str, name: str, barrier: Any, results: Any, reverse: bool
) -> None:  # pragma: no cover - runs in a child process
    engine = make_engine(url)
    try:
        barrier.wait(timeout=60)
        migrate(engine)
        ledger = Ledger(engine)
        requests = [reproduce(n) for n in range(1, PROCESS_JOBS + 1)]
        record(ledger, f"delivery-{name}", *requests)
        claimed: list[int] = []
        for job in sorted(ledger.jobs(), key=lambda j: j.id, reverse=reverse):
            if ledger.claim(job.id, name, 60) is not None:
                claimed.append(job.id)
                assert ledger.finish(job.id, name, "done")
        results.put((name, claimed))
    finally:
        engine.dispose()


def test_two_processes_migrate_and_claim_each_job_once(tmp_path: Path) -> None:
    url = Settings(cache_dir=tmp_path / "shared").database
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    results = context.Queue()
    processes = [
        context.Process(target=_process_worker, args=(url, name, barrier, results, reverse))
        for name, reverse in (("p1", False), ("p2", True))
    ]
    for process in processes:
        process.start()
    claimed: dict[str, list[int]] = {}
    deadline = time.monotonic() + 60
    # Poll rather than block on the queue, so a child that crashed fails the test at once.
    while len(claimed) < len(processes) and time.monotonic() < deadline:
        try:
            name, ids = results.get(timeout=0.2)
            claimed[name] = ids
        except queue.Empty:
            if any(p.exitcode not in (None, 0) for p in processes):
                break
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert set(claimed) == {"p1", "p2"}

    engine = make_engine(url)
    try:
        jobs = Ledger(engine).jobs()
    finally:
        engine.dispose()
    all_ids = {job.id for job in jobs}
    assert len(all_ids) == PROCESS_JOBS
    assert sorted(claimed["p1"] + claimed["p2"]) == sorted(all_ids)
    assert all((job.state, job.attempts) == ("done", 1) for job in jobs)


def test_a_failed_job_runs_again_for_a_new_delivery_of_its_event(ledger: Ledger) -> None:
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    assert ledger.claim(job_id, "w1", 60) is not None
    assert ledger.finish(job_id, "w1", "failed", error="GitHub answered 502")
    # Not a request to rerun, but the job failed: a new delivery brings it back.
    assert record(ledger, "d2", reproduce(1)) == DeliveryOutcome(True, (job_id,), (job_id,))
    job = the_job(ledger, job_id)
    assert (job.state, job.attempts, job.error, job.delivery_id) == ("queued", 0, None, "d2")


def test_a_redelivery_with_the_same_id_revives_only_failed_jobs(ledger: Ledger) -> None:
    (failed_id,) = record(ledger, "d1", reproduce(1)).job_ids
    (done_id,) = record(ledger, "d2", reproduce(2)).job_ids
    for job_id, state in ((failed_id, "failed"), (done_id, "done")):
        assert ledger.claim(job_id, "w1", 60) is not None
        assert ledger.finish(job_id, "w1", state)  # type: ignore[arg-type]
    assert record(ledger, "d1", reproduce(1)) == DeliveryOutcome(False, (failed_id,), (failed_id,))
    assert record(ledger, "d2", reproduce(2)) == DeliveryOutcome(False, (done_id,), ())
    assert the_job(ledger, failed_id).state == "queued"
    assert the_job(ledger, done_id).state == "done"
    # Revived once: a second redelivery while it is queued changes nothing.
    assert record(ledger, "d1", reproduce(1)) == DeliveryOutcome(False, (failed_id,), ())


def test_a_silent_worker_loses_its_job_before_its_lease_ends(engine: Engine, clock: Clock) -> None:
    ledger = Ledger(engine, clock=clock, heartbeat_grace_s=30)
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    assert ledger.claim(job_id, "w1", lease_s=120) is not None
    # Heartbeats keep it: renewed every 10 s, the job stays w1's past the grace.
    for _ in range(5):
        clock.advance(10)
        assert ledger.renew(job_id, "w1", 120)
        assert ledger.claim(job_id, "w2", 120) is None
    # w1 crashed: after 31 s of silence, well within its lease, another worker takes it.
    clock.advance(31)
    assert ledger.reap(max_attempts=3, stale_enqueue_s=3600).requeued == (job_id,)
    job = ledger.claim(job_id, "w2", 120)
    assert job is not None and job.worker == "w2" and job.attempts == 2
    # The old worker can no longer write.
    assert not ledger.renew(job_id, "w1", 120)


def test_a_job_that_failed_on_passing_trouble_comes_back_after_its_back_off(
    ledger: Ledger, clock: Clock
) -> None:
    (job_id,) = record(ledger, "d1", reproduce(1)).job_ids
    assert ledger.claim(job_id, "w1", 60) is not None
    assert ledger.finish(job_id, "w1", "failed", error="GitHub answered 502", retry_after_s=900)
    job = the_job(ledger, job_id)
    assert (job.state, job.retry_at, job.revivals) == ("failed", T0 + timedelta(seconds=900), 0)
    clock.advance(899)
    assert ledger.reap(max_attempts=3, stale_enqueue_s=3600).requeued == ()
    clock.advance(1)
    assert ledger.reap(max_attempts=3, stale_enqueue_s=3600).requeued == (job_id,)
    job = the_job(ledger, job_id)
    assert (job.state, job.attempts, job.revivals, job.retry_at) == ("queued", 0, 1, None)
    # A failure without a back-off (not passing trouble) stays failed.
    assert ledger.claim(job_id, "w1", 60) is not None
    assert ledger.finish(job_id, "w1", "failed", error="the sandbox image is broken")
    clock.advance(100_000)
    assert ledger.reap(max_attempts=3, stale_enqueue_s=3600).requeued == ()
    assert the_job(ledger, job_id).state == "failed"
