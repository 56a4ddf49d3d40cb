"""The App's long-lived clients, built once at start-up and passed to everything that needs them."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import docker
from sqlalchemy.engine import Engine

from reprobot.bot.errors import AppConfigError
from reprobot.bot.github.auth import GitHubApp
from reprobot.bot.metrics import CountingTransport, Metrics
from reprobot.bot.queue import JobQueue, make_huey
from reprobot.bot.store.check_runs import CheckRuns
from reprobot.bot.store.engine import make_engine, migrate
from reprobot.bot.store.ledger import Ledger
from reprobot.bot.store.pages import Pages
from reprobot.bot.store.records import Records
from reprobot.settings import Settings
from reprobot.validation import connect


@dataclass
class AppContext:
    settings: Settings
    engine: Engine
    ledger: Ledger
    records: Records
    pages: Pages
    check_runs: CheckRuns
    queue: JobQueue
    github: GitHubApp
    metrics: Metrics = field(default_factory=Metrics)
    _docker: docker.DockerClient | None = None
    _docker_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def docker(self) -> docker.DockerClient:
        """The Docker engine, connected on first use: the webhook side never needs it."""
        with self._docker_lock:
            if self._docker is None:
                self._docker = connect()
            return self._docker

    def close(self) -> None:
        if self._docker is not None:
            self._docker.close()
        self.github.close()
        self.engine.dispose()


def build_context(
    settings: Settings,
    github: GitHubApp | None = None,
    docker_client: docker.DockerClient | None = None,
) -> AppContext:
    """Connect the store (migrating it), the queue and the App's GitHub identity."""
    if not settings.webhook_secret.get_secret_value():
        raise AppConfigError("REPROBOT_WEBHOOK_SECRET is not set: the App cannot check deliveries")
    engine = make_engine(settings.database)
    migrate(engine)
    ledger = Ledger(engine, heartbeat_grace_s=3 * settings.job_heartbeat_s)
    queue = JobQueue(make_huey(settings.queue))
    metrics = Metrics(job_counts=ledger.counts, queue_depth=queue.ping)
    github = github or GitHubApp.from_settings(
        settings, transport=CountingTransport(metrics), on_wait=metrics.waited
    )
    return AppContext(
        settings=settings,
        engine=engine,
        ledger=ledger,
        records=Records(engine),
        pages=Pages(engine),
        check_runs=CheckRuns(engine),
        queue=queue,
        github=github,
        metrics=metrics,
        _docker=docker_client,
    )
