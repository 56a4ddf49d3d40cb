"""The App's store on both of its back-ends: SQLite (the embedded default) and PostgreSQL (for
scale-out), a fresh database for each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from reprobot.bot.store.engine import make_engine, migrate
from reprobot.settings import Settings

STORES = ["sqlite", "postgresql"]


@pytest.fixture(params=STORES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database of each back-end."""
    if request.param == "sqlite":
        yield Settings(cache_dir=tmp_path / "nested" / "cache").database
        return
    server = request.getfixturevalue("postgres_server")
    url = server.new_database()
    yield url
    server.drop_database(url)


@pytest.fixture
def engine(store_url: str) -> Iterator[Engine]:
    """A migrated store of each back-end."""
    engine = make_engine(store_url)
    migrate(engine)
    yield engine
    engine.dispose()


BACKENDS = ["embedded", "scale-out"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """Settings of each way to run the App: the embedded default (SQLite for the store and the
    queue) and scale-out (PostgreSQL for the store, Redis for the queue), each empty."""
    if request.param == "embedded":
        yield {}
        return
    postgres = request.getfixturevalue("postgres_server")
    redis_server = request.getfixturevalue("redis_server")
    redis_server.flush()
    url = postgres.new_database()
    yield {"database_url": url, "queue_url": redis_server.url()}
    postgres.drop_database(url)
