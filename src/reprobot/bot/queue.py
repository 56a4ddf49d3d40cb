"""The work queue: huey carries job ids from the webhook to the workers.

The queue only says "look at job N"; the job ledger says what job N is and whether it still
needs doing. A message that is lost, duplicated or delivered after its job finished is therefore
harmless: the reaper re-sends lost ones, and a worker ignores what it cannot claim.
SQLite by default (one file, one machine); Redis (``redis://``) when workers run elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from huey import RedisHuey, SqliteHuey
from huey.api import Huey
from huey.consumer import Consumer
from huey.storage import SqliteStorage

from reprobot.bot.errors import BotError

TASK_NAME = "reprobot.run_job"


class QueueError(BotError):
    """The queue cannot be reached or written."""


class _NormalSyncStorage(SqliteStorage):  # type: ignore[misc]
    """huey's SQLite storage with ``synchronous=NORMAL`` (huey offers FULL or OFF): durable
    across crashes of the process in WAL mode, without a disk sync on every enqueue. A message
    lost to a power cut is enqueued again by the reaper from the ledger, which is the record."""

    def _create_connection(self) -> Any:
        conn = super()._create_connection()
        conn.execute("pragma synchronous=1")
        return conn


class _SqliteHuey(SqliteHuey):  # type: ignore[misc]
    storage_class = _NormalSyncStorage


class _HostedConsumer(Consumer):  # type: ignore[misc]
    """A consumer living inside another server's process (``reprobot serve``): signals belong to
    the server, which stops the consumer itself."""

    def _set_signal_handlers(self) -> None:
        pass


def make_huey(url: str, name: str = "reprobot") -> Huey:
    """A huey instance for ``url``: ``sqlite:///PATH`` or ``redis://HOST:PORT/DB``."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        # As in SQLAlchemy's URLs: sqlite:///relative/path, sqlite:////absolute/path.
        path = Path(url.removeprefix("sqlite:///"))
        path.parent.mkdir(parents=True, exist_ok=True)
        return _SqliteHuey(name=name, filename=str(path), results=False, utc=True)
    if parsed.scheme in ("redis", "rediss", "unix"):
        return RedisHuey(name=name, url=url, results=False, utc=True)
    raise QueueError(f"unsupported queue URL {url!r}: use sqlite:///PATH or redis://HOST:PORT/DB")


class JobQueue:
    """Enqueue job ids; run a consumer that hands each to ``runner``."""

    def __init__(self, huey: Huey, runner: Callable[[int], None] | None = None) -> None:
        self.huey = huey
        self._runner = runner

        def run_job(job_id: int) -> None:
            if self._runner is None:
                raise QueueError("this process runs no worker")
            self._runner(job_id)

        # Retries are the ledger's business (leases, attempts), not huey's.
        self._task: Any = huey.task(retries=0, name=TASK_NAME)(run_job)

    def set_runner(self, runner: Callable[[int], None]) -> None:
        self._runner = runner

    def enqueue(self, job_id: int, delay_s: float = 0.0) -> None:
        try:
            if delay_s > 0:
                self._task.schedule((job_id,), delay=delay_s)
            else:
                self._task(job_id)
        except Exception as exc:  # each storage backend (SQLite, Redis) raises its own errors
            raise QueueError(f"cannot enqueue job {job_id}: {exc}") from exc

    def ping(self) -> int:
        """The number of waiting messages; QueueError when the queue cannot be read."""
        try:
            return int(self.huey.pending_count())
        except Exception as exc:  # each storage backend (SQLite, Redis) raises its own errors
            raise QueueError(f"the queue is not reachable: {exc}") from exc

    def consumer(self, workers: int, hosted: bool) -> Consumer:
        """A consumer with ``workers`` threads; ``hosted`` when it runs inside another server."""
        cls = _HostedConsumer if hosted else Consumer
        return cls(
            self.huey,
            workers=workers,
            worker_type="thread",
            periodic=False,
            # Poll often while idle: a webhook's job should start within a second.
            initial_delay=0.1,
            max_delay=1.0,
            check_worker_health=True,
        )
