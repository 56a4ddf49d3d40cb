"""Workers: claim a job from the ledger, keep its lease alive, run it, and record the outcome;
and the reaper that brings back jobs whose worker died or whose message was lost."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from datetime import timedelta

import structlog
from sqlalchemy.exc import SQLAlchemyError

from reprobot.bot.context import AppContext
from reprobot.bot.errors import GitHubError, JobAbandoned
from reprobot.bot.github.auth import VERIFY_PERMISSIONS
from reprobot.bot.github.repo_api import RepoAPI
from reprobot.bot.jobs import reproduce as job_reproduce
from reprobot.bot.jobs import verify as job_verify
from reprobot.bot.jobs.attempts import retryable, tries_again
from reprobot.bot.jobs.check_run import complete_left_behind
from reprobot.bot.jobs.guard import Guard
from reprobot.bot.queue import QueueError
from reprobot.bot.store.jobs import Job
from reprobot.bot.store.ledger import Ledger
from reprobot.bot.store.sessions import WebSessions
from reprobot.errors import ReprobotError

log = structlog.get_logger(__name__)


Handler = Callable[[AppContext, Job, Guard], None]
HANDLERS: Mapping[str, Handler] = {
    "reproduce": job_reproduce.run,
    "verify": job_verify.run,
}


class Lease(threading.Thread):
    """Renews a job's lease while it runs; once renewal fails (a newer push superseded the job,
    or the lease expired and another worker took it) every ``check`` raises JobAbandoned."""

    def __init__(
        self,
        ledger: Ledger,
        job_id: int,
        worker: str,
        lease_s: float,
        heartbeat_s: float | None = None,
    ) -> None:
        super().__init__(name=f"lease-{job_id}", daemon=True)
        self.ledger, self.job_id, self.worker, self.lease_s = ledger, job_id, worker, lease_s
        self.every_s = min(lease_s / 3, heartbeat_s or lease_s)
        self._stop_event = threading.Event()
        self.lost = False

    def run(self) -> None:
        while not self._stop_event.wait(self.every_s):
            if not self.ledger.renew(self.job_id, self.worker, self.lease_s):
                self.lost = True
                return

    def stop(self) -> None:
        self._stop_event.set()

    def check(self) -> None:
        if self.lost or not self.ledger.is_current(self.job_id, self.worker):
            self.lost = True
            raise JobAbandoned(f"job {self.job_id} was superseded or taken over")


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


class JobRunner:
    """What the queue calls with a job id."""

    def __init__(self, ctx: AppContext, handlers: Mapping[str, Handler] = HANDLERS) -> None:
        self.ctx = ctx
        self.handlers = handlers

    def __call__(self, job_id: int) -> None:
        settings, ledger = self.ctx.settings, self.ctx.ledger
        worker = worker_name()
        job = ledger.claim(job_id, worker, settings.job_lease_s)
        if job is None:
            log.debug("job.not_claimed", job_id=job_id)
            return
        lease = Lease(ledger, job.id, worker, settings.job_lease_s, settings.job_heartbeat_s)
        lease.start()
        with structlog.contextvars.bound_contextvars(
            job_id=job.id,
            kind=job.kind,
            repo=job.repo,
            number=job.number,
            delivery=job.delivery_id,
            attempt=job.attempts,
        ):
            log.info("job.started", head_sha=job.head_sha)
            started = time.monotonic()
            outcome = "done"
            try:
                self.handlers[job.kind](self.ctx, job, lease)
            except JobAbandoned as exc:
                outcome = "abandoned"
                log.info("job.abandoned", reason=str(exc))
            except ReprobotError as exc:
                outcome = self._failed(job, worker, exc)
            except Exception as exc:
                # The last line of defence of a long-running worker: record the bug on the job
                # (it is not retried) and keep serving the next one.
                outcome = "crashed"
                log.exception("job.crashed")
                ledger.finish(job.id, worker, "failed", error=f"internal error: {exc!r}"[:2000])
            else:
                ledger.finish(job.id, worker, "done")
                log.info("job.done")
            finally:
                lease.stop()
                seconds = time.monotonic() - started
                self.ctx.metrics.job_seconds.labels(job.kind, outcome).observe(seconds)

    def _failed(self, job: Job, worker: str, exc: ReprobotError) -> str:
        """Retry, revive later or fail ``job``; the outcome's name."""
        settings, ledger = self.ctx.settings, self.ctx.ledger
        if tries_again(exc, job, settings.job_max_attempts):
            delay = min(600.0, 10.0 * 2 ** (job.attempts - 1))
            log.warning("job.retry", error=str(exc), delay_s=delay)
            if ledger.release(job.id, worker, str(exc)[:2000]):
                try:
                    self.ctx.queue.enqueue(job.id, delay_s=delay)
                    ledger.mark_enqueued([job.id])
                except QueueError as qexc:
                    log.error("job.enqueue_failed", error=str(qexc))
            return "retried"
        retry_after = None
        if retryable(exc) and job.revivals < settings.job_max_revivals:
            retry_after = settings.job_revive_after_s * 2**job.revivals
        log.error("job.failed", error=str(exc), retry_after_s=retry_after)
        ledger.finish(job.id, worker, "failed", error=str(exc)[:2000], retry_after_s=retry_after)
        return "failed"


class Reaper(threading.Thread):
    """Every ``interval_s``: jobs whose lease expired go back to the queue (or fail after their
    last attempt), queued jobs whose message was lost are enqueued again, and report pages past
    their retention are removed."""

    def __init__(self, ctx: AppContext, interval_s: float) -> None:
        super().__init__(name="reaper", daemon=True)
        self.ctx = ctx
        self.interval_s = interval_s
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval_s):
            self.reap_once()

    def reap_once(self) -> None:
        settings = self.ctx.settings
        try:
            result = self.ctx.ledger.reap(
                settings.job_max_attempts, stale_enqueue_s=settings.job_requeue_after_s
            )
        except ReprobotError as exc:
            log.error("reaper.failed", error=str(exc))
            return
        for job_id in result.requeued:
            try:
                self.ctx.queue.enqueue(job_id)
            except QueueError as exc:
                log.error("reaper.enqueue_failed", job_id=job_id, error=str(exc))
                continue
            self.ctx.ledger.mark_enqueued([job_id])
        if result.requeued or result.failed:
            log.info("reaper.reaped", requeued=list(result.requeued), failed=list(result.failed))
        self.complete_check_runs()
        self.prune_pages()
        self.prune_sessions()

    def complete_check_runs(self) -> None:
        """Check runs still in progress whose job has finished (its worker died, or GitHub was
        unreachable when it ended) are completed, neutral, saying why."""
        try:
            left = self.ctx.check_runs.left_behind()
        except SQLAlchemyError as exc:
            log.error("reaper.check_runs_failed", error=str(exc))
            return
        for item in left:
            run = item.check_run
            try:
                auth = self.ctx.github.installation(
                    run.installation_id, run.repo, VERIFY_PERMISSIONS
                )
                api = RepoAPI(self.ctx.github.client_for(auth), run.repo, self.ctx.github.app_id)
                complete_left_behind(api, self.ctx.check_runs, item)
            except (ReprobotError, SQLAlchemyError) as exc:
                log.warning("reaper.check_run_not_completed", job_id=run.job_id, error=str(exc))
                if isinstance(exc, GitHubError) and exc.status in (401, 403, 404):
                    # The App lost the repository (uninstalled, suspended, narrowed): nothing
                    # it can do to that check run any more. Anything else: next round.
                    with contextlib.suppress(SQLAlchemyError):
                        self.ctx.check_runs.completed(run.job_id, run.check_run_id)
                continue
            log.info("reaper.check_run_completed", job_id=run.job_id, check_run=run.check_run_id)

    def prune_pages(self) -> None:
        """Report pages older than the retention period go, and their links with them."""
        retention = timedelta(days=self.ctx.settings.page_retention_days)
        try:
            removed = self.ctx.pages.prune(retention)
        except SQLAlchemyError as exc:
            log.error("reaper.prune_failed", error=str(exc))
            return
        if removed:
            log.info("reaper.pages_removed", pages=removed)

    def prune_sessions(self) -> None:
        """Sign-in sessions past their end go, with the GitHub tokens they kept."""
        try:
            removed = WebSessions(self.ctx.engine).prune()
        except SQLAlchemyError as exc:
            log.error("reaper.sessions_prune_failed", error=str(exc))
            return
        if removed:
            log.info("reaper.sessions_removed", sessions=removed)

    def stop(self) -> None:
        self._stop_event.set()
