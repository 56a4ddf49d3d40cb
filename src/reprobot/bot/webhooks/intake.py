"""Verified deliveries, routed and recorded in batches by one writer thread.

Every delivery costs one transaction, and with many in flight the store's commit and the
contention of threads taking turns on one writer (SQLite's lock, PostgreSQL's round trips) cost
more than the work itself. So the webhook hands each delivery to ``Intake``: its thread takes
whatever has arrived since its last round (up to ``max_batch``), routes each, records them all
in one transaction (group commit), enqueues the jobs they made runnable, and answers each
waiting request. A delivery's answer still means it is stored: it comes after the commit.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from reprobot.bot.queue import JobQueue, QueueError
from reprobot.bot.store.engine import StoreError
from reprobot.bot.store.jobs import Delivery, DeliveryOutcome
from reprobot.bot.store.ledger import Ledger
from reprobot.bot.webhooks.route_context import RouteContext
from reprobot.bot.webhooks.router import Routed, route

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Accepted:
    """A delivery recorded: what it was about, what recording it did, and the router's note."""

    action: str | None
    repo: str | None
    outcome: DeliveryOutcome
    note: str


@dataclass
class _Pending:
    delivery: str
    event: str
    body: bytes
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Accepted]
    routed: Routed | None = None
    result: Accepted | BaseException | None = field(default=None)


def _settle(pending: list[_Pending]) -> None:
    # Runs on the event loop. A request that went away (client gone) left a cancelled future.
    for p in pending:
        if p.future.done():
            continue
        if isinstance(p.result, BaseException):
            p.future.set_exception(p.result)
        elif p.result is not None:
            p.future.set_result(p.result)


class Intake:
    """Routes and records deliveries for ``submit``'s callers, in batches of up to
    ``max_batch``, on a thread of its own started by the first ``submit``."""

    def __init__(
        self,
        route_ctx: RouteContext,
        ledger: Ledger,
        job_queue: JobQueue,
        max_batch: int = 64,
        router: Callable[[str, bytes, RouteContext], Routed] = route,
    ) -> None:
        self._route_ctx = route_ctx
        self._ledger = ledger
        self._queue = job_queue
        self._max_batch = max(1, max_batch)
        self._route = router
        self._inbox: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False

    async def submit(self, delivery: str, event: str, body: bytes) -> Accepted:
        """Route and record one verified delivery; returns once it is committed.

        Raises what routing raises (``BadDelivery``) and what recording raises (the store's
        errors), for this delivery alone: a batch-mate's failure never becomes this one's.
        """
        loop = asyncio.get_running_loop()
        pending = _Pending(delivery, event, body, loop, loop.create_future())
        with self._lock:
            if self._closed:
                raise StoreError("the App is shutting down; redeliver this delivery")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="reprobot-intake", daemon=True
                )
                self._thread.start()
            self._inbox.put(pending)
        return await pending.future

    def close(self, timeout_s: float = 30.0) -> None:
        """Record what was submitted before, then stop the thread."""
        with self._lock:
            self._closed = True
            thread = self._thread
            self._inbox.put(None)
        if thread is not None:
            thread.join(timeout_s)

    def _run(self) -> None:
        stop = False
        while not stop:
            first = self._inbox.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < self._max_batch:
                try:
                    more = self._inbox.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            self._handle(batch)
            self._answer(batch)

    def _handle(self, batch: list[_Pending]) -> None:
        # Every failure lands on the delivery it belongs to, whatever its type: this thread
        # serves every request in flight and must outlive any one of them.
        routed: list[_Pending] = []
        for p in batch:
            try:
                p.routed = self._route(p.event, p.body, self._route_ctx)
                routed.append(p)
            except Exception as exc:  # noqa: BLE001 - handed to the delivery's own request
                p.result = exc
        if not routed:
            return
        try:
            outcomes = self._ledger.record_deliveries([_delivery(p) for p in routed], enqueue=True)
        except Exception as exc:  # noqa: BLE001 - retried alone below, or handed to its request
            if len(routed) == 1:
                routed[0].result = exc
                return
            # One delivery the store refuses must not fail its batch-mates: the batch was
            # rolled back as a whole, so each is recorded again on its own.
            log.warning("webhook.batch_failed", size=len(routed), error=str(exc))
            outcomes = []
            for p in list(routed):
                try:
                    outcomes.extend(self._ledger.record_deliveries([_delivery(p)], enqueue=True))
                except Exception as alone:  # noqa: BLE001 - handed to the delivery's request
                    p.result = alone
                    routed.remove(p)
        self._enqueue(routed, outcomes)

    def _enqueue(self, routed: list[_Pending], outcomes: list[DeliveryOutcome]) -> None:
        lost: list[int] = []
        for p, outcome in zip(routed, outcomes, strict=True):
            for job_id in outcome.to_enqueue:
                try:
                    self._queue.enqueue(job_id)
                except QueueError as exc:
                    # The job is durable in the ledger; the reaper enqueues it again.
                    log.error("webhook.enqueue_failed", job_id=job_id, error=str(exc))
                    lost.append(job_id)
            event = p.routed.event if p.routed else None
            p.result = Accepted(
                action=event.action if event else None,
                repo=event.repository.full_name if event and event.repository else None,
                outcome=outcome,
                note=p.routed.note if p.routed else "",
            )
        if lost:
            try:
                self._ledger.enqueue_failed(lost)
            except Exception as exc:  # noqa: BLE001 - the reaper finds them once their mark ages
                log.error("webhook.enqueue_unmark_failed", job_ids=lost, error=str(exc))

    @staticmethod
    def _answer(batch: list[_Pending]) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[_Pending]] = {}
        for p in batch:
            by_loop.setdefault(p.loop, []).append(p)
        for loop, pending in by_loop.items():
            try:
                loop.call_soon_threadsafe(_settle, pending)
            except RuntimeError:
                # That loop has closed: nobody is waiting for these answers any more.
                continue


def _delivery(p: _Pending) -> Delivery:
    event = p.routed.event if p.routed else None
    return Delivery(
        delivery_id=p.delivery,
        event=p.event,
        action=event.action if event else None,
        repo=event.repository.full_name if event and event.repository else None,
        requests=p.routed.requests if p.routed else [],
    )
