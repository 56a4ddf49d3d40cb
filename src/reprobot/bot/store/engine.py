"""The App's durable store: engines for SQLite (default) or PostgreSQL, and schema migrations.

Nothing here connects at import time; ``make_engine`` builds a lazy engine, ``ping`` and
``migrate`` are the first calls that touch the database and turn failures into ``StoreError``.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.util.exc import CommandError
from sqlalchemy import Connection, Engine, Table, create_engine, event, literal_column, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from reprobot.errors import ReprobotError

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_WAL_SWITCH_TIMEOUT_S = 30.0


class StoreError(ReprobotError):
    """The database cannot be reached, opened or migrated; the message names the database."""


def _safe_url(url: URL) -> str:
    return url.render_as_string(hide_password=True)


def _is_file_sqlite(url: URL) -> bool:
    database = url.database or ""
    return database not in ("", ":memory:") and url.query.get("mode") != "memory"


def _enable_wal(cursor: Any) -> None:
    """Switch the database file to WAL, which lets readers proceed while one writer writes."""
    if cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
        return  # the mode is stored in the file; only its first connection switches it
    # Two processes opening a fresh file at once both try to switch; SQLite answers the loser
    # "database is locked" at once (the busy timeout does not apply), so retry briefly.
    deadline = time.monotonic() + _WAL_SWITCH_TIMEOUT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def make_engine(url: str) -> Engine:
    """An engine for ``url`` tuned for many short transactions from several processes.

    SQLite gets WAL, a 30 s busy timeout, enforced foreign keys and ``BEGIN IMMEDIATE``
    transactions; other databases get ``pool_pre_ping``. Raises ``StoreError`` only for a URL
    that cannot be parsed: reachability is reported by ``ping`` and ``migrate``.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"invalid database URL {url!r}: {exc}") from exc
    if parsed.get_backend_name() != "sqlite":
        try:
            return create_engine(parsed, pool_pre_ping=True)
        except (ArgumentError, ImportError) as exc:
            raise StoreError(f"cannot use database {_safe_url(parsed)}: {exc}") from exc

    if _is_file_sqlite(parsed) and parsed.database:
        # Deliberately quiet: the same failure surfaces, with the URL, from ping/migrate,
        # so callers handle "the store is unusable" in one place.
        with contextlib.suppress(OSError):
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(parsed, connect_args={"check_same_thread": False, "timeout": 30})
    wal = _is_file_sqlite(parsed)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take BEGIN away from the sqlite3 module (it would only begin lazily, before the first
        # write, and a read-then-write transaction then fails with "database is locked" instead
        # of waiting); "begin" below emits our own.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA busy_timeout=30000")
            if wal:
                _enable_wal(cursor)
            cursor.execute("PRAGMA foreign_keys=ON")
            # NORMAL is durable across application crashes in WAL mode and much cheaper.
            cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    # Threads of one process take turns on an in-process lock: SQLite's busy handler sleeps
    # ever longer (up to 100 ms a try) and is not woken when the lock frees, which under a burst
    # of webhooks made the slowest transactions wait seconds. Other processes still meet the
    # busy timeout. The lock is held from BEGIN until the connection goes back to the pool.
    writer = threading.Lock()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        record = conn.connection._connection_record
        if record is not None and not record.info.get("writer"):
            writer.acquire()
            record.info["writer"] = True
        # IMMEDIATE takes the write lock up front, so concurrent writers queue on the busy
        # timeout rather than deadlocking when both upgrade a read lock.
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    def _release(record: Any) -> None:
        if record is not None and record.info.pop("writer", False):
            writer.release()

    # Every way a connection leaves its user: back to the pool (also after an error), or
    # invalidated by a broken connection.
    event.listen(engine, "checkin", lambda _dbapi, record: _release(record))
    event.listen(engine, "invalidate", lambda _dbapi, record, _exc: _release(record))

    return engine


def ping(engine: Engine) -> None:
    """Return if the database answers ``SELECT 1``; raise ``StoreError`` otherwise."""
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot reach the database {_safe_url(engine.url)}: {exc}") from exc


# The advisory lock's key: any number, the same in every process of the App ("rprbt").
_MIGRATION_LOCK = 0x7270726274


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to the newest revision (or ``revision``); a no-op when it already is.

    Safe to call from any number of processes at once, on an empty database too: on SQLite the
    whole upgrade runs in one ``BEGIN IMMEDIATE`` transaction, on PostgreSQL under a
    transaction-scoped advisory lock, so each later caller waits, then finds the schema
    current (without the lock, two first migrations race to create ``alembic_version``).
    Raises ``StoreError`` when the database cannot be reached or migrated.
    """
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    except (SQLAlchemyError, CommandError) as exc:
        raise StoreError(f"cannot migrate the database {_safe_url(engine.url)}: {exc}") from exc


@functools.cache
def _insert_ignore_statement(dialect: str, table: Table, returning: str | None) -> Any:
    """``INSERT ... ON CONFLICT DO NOTHING RETURNING`` for ``table``, built once: the values
    travel as parameters, so SQLAlchemy compiles it once too (the webhook's hot path)."""
    if dialect == "sqlite":
        stmt: Any = sqlite.insert(table).on_conflict_do_nothing()
    elif dialect == "postgresql":
        stmt = postgresql.insert(table).on_conflict_do_nothing()
    else:
        raise StoreError(f"unsupported database dialect {dialect!r} (SQLite or PostgreSQL)")
    # RETURNING rather than rowcount: psycopg reports -1 as the rowcount of this statement.
    return stmt.returning(table.c[returning] if returning else literal_column("1"))


def insert_ignore(
    conn: Connection, model: Any, values: Mapping[str, Any], returning: str | None = None
) -> Any:
    """INSERT one row unless it conflicts with an existing key. Without ``returning``: True when
    it was inserted, False otherwise; with it: the inserted row's ``returning`` column, or None.

    ``ON CONFLICT DO NOTHING`` rather than catch-and-retry, so a conflicting concurrent insert
    neither aborts the caller's transaction (PostgreSQL) nor needs a savepoint.
    """
    stmt = _insert_ignore_statement(conn.dialect.name, model.__table__, returning)
    row = conn.execute(stmt, dict(values)).first()
    if returning is None:
        return row is not None
    return None if row is None else row[0]
