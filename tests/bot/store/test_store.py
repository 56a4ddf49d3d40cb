"""The store on real SQLite files: engine settings, migrations, and the small records."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Column, Engine, Integer, MetaData, Table, inspect, text

from reprobot.bot.store.engine import MIGRATIONS_DIR, StoreError, make_engine, migrate, ping
from reprobot.bot.store.jobs import JobRequest, reproduce_key
from reprobot.bot.store.ledger import Ledger
from reprobot.bot.store.models import Base
from reprobot.bot.store.pages import Pages
from reprobot.bot.store.records import Records, ReproductionRecord
from reprobot.settings import Settings

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
# The newest migration: the one every store is brought to.
HEAD = max(p.name[:4] for p in MIGRATIONS_DIR.glob("versions/0*.py"))


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def test_default_url_is_a_sqlite_file_in_the_cache_dir(tmp_path: Path) -> None:
    assert Settings(cache_dir=tmp_path).database == f"sqlite:///{tmp_path}/app.sqlite3"


def test_make_engine_creates_the_directory_and_sets_the_pragmas(tmp_path: Path) -> None:
    db_file = tmp_path / "a" / "b" / "app.sqlite3"
    engine = make_engine(f"sqlite:///{db_file}")
    try:
        assert db_file.parent.is_dir()
        ping(engine)
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
    finally:
        engine.dispose()


def test_migration_creates_exactly_the_models_tables(engine: Engine) -> None:
    tables = set(inspect(engine).get_table_names())
    assert tables == {*Base.metadata.tables, "alembic_version"}
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []

        # The comparison is not vacuous: a model the migration lacks is reported.
        extended = MetaData()
        for table in Base.metadata.tables.values():
            table.to_metadata(extended)
        Table("extra", extended, Column("id", Integer, primary_key=True))
        diffs = compare_metadata(context, extended)
        assert [d[0] for d in diffs] == ["add_table"]


def test_migrate_twice_is_a_no_op_and_keeps_data(engine: Engine) -> None:
    Records(engine).save_comment_id("o/r", 1, "reproduction", 99)
    migrate(engine)
    with engine.connect() as conn:
        versions = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    assert versions == [HEAD]
    assert Records(engine).comment_id("o/r", 1, "reproduction") == 99


def test_a_store_of_the_first_schema_is_upgraded_with_its_jobs(tmp_path: Path) -> None:
    old = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    migrate(old, "0001")
    now = "2026-01-02 03:04:05.000000"
    with old.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO jobs (key, kind, repo, installation_id, number, state, attempts,"
                " payload, created_at, updated_at) VALUES ('reproduce:o/r#1', 'reproduce',"
                " 'o/r', 1, 1, 'failed', 3, '{}', :now, :now)"
            ),
            {"now": now},
        )
    migrate(old)
    (job,) = Ledger(old).jobs()
    assert (job.state, job.attempts, job.revivals, job.retry_at) == ("failed", 3, 0, None)


def test_unreachable_sqlite_path_raises_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    engine = make_engine(f"sqlite:///{blocker}/sub/app.sqlite3")
    try:
        with pytest.raises(StoreError, match="a-file"):
            ping(engine)
        with pytest.raises(StoreError, match="cannot migrate"):
            migrate(engine)
    finally:
        engine.dispose()


def test_unreachable_postgres_raises_store_error_without_the_password() -> None:
    # Port 1 on loopback refuses at once; the driver is part of the "scale" extra.
    pytest.importorskip("psycopg")
    engine = make_engine("postgresql+psycopg://bot:s3cret@127.0.0.1:1/reprobot")
    try:
        with pytest.raises(StoreError, match="cannot reach") as caught:
            ping(engine)
        assert "s3cret" not in str(caught.value)
    finally:
        engine.dispose()


def test_invalid_url_raises_store_error() -> None:
    with pytest.raises(StoreError, match="invalid database URL"):
        make_engine("not a database url")


# -- installations ------------------------------------------------------------------------------


def test_installation_save_add_remove(engine: Engine) -> None:
    records = Records(engine)
    assert records.installation(7) is None
    records.save_installation(7, "octo", ["octo/a", "octo/b"])
    assert records.installation(7) == ("octo", ["octo/a", "octo/b"])

    records.add_repos(7, ["octo/c", "octo/a"])
    assert records.installation(7) == ("octo", ["octo/a", "octo/b", "octo/c"])
    records.remove_repos(7, ["octo/b", "octo/unknown"])
    assert records.installation(7) == ("octo", ["octo/a", "octo/c"])

    # A full installation event replaces the list.
    records.save_installation(7, "octo-renamed", ["octo/z"])
    assert records.installation(7) == ("octo-renamed", ["octo/z"])


def test_add_repos_to_an_unknown_installation_records_it(engine: Engine) -> None:
    records = Records(engine)
    records.add_repos(8, ["someone/x"])
    assert records.installation(8) == ("", ["someone/x"])
    records.save_installation(8, "someone", ["someone/x"])
    assert records.installation(8) == ("someone", ["someone/x"])


def test_forget_installation_cascades_to_its_repositories(engine: Engine) -> None:
    records = Records(engine)
    ledger = Ledger(engine)
    records.save_installation(7, "octo", ["octo/a"])
    records.save_installation(9, "other", ["other/keep"])
    for repo in ("octo/a", "other/keep"):
        records.save_reproduction(_reproduction(repo, 1))
        records.save_comment_id(repo, 1, "reproduction", 5)
        records.set_label_state(repo, 1, "reproduced", "added")
    outcome = ledger.record_delivery(
        "d1",
        "issues",
        "opened",
        "octo/a",
        [JobRequest("reproduce", reproduce_key("octo/a", n), "octo/a", 7, n) for n in (1, 2)],
    )
    running = outcome.job_ids[1]
    assert ledger.claim(running, "w", 60) is not None
    kept = ledger.record_delivery(
        "d2",
        "issues",
        "opened",
        "other/keep",
        [JobRequest("reproduce", reproduce_key("other/keep", 1), "other/keep", 9, 1)],
    ).job_ids[0]

    records.forget_installation(7)

    assert records.installation(7) is None
    assert records.reproduction("octo/a", 1) is None
    assert records.comment_id("octo/a", 1, "reproduction") is None
    assert records.label_state("octo/a", 1, "reproduced") is None
    queued = ledger.get(outcome.job_ids[0])
    assert queued is not None
    assert (queued.state, queued.error) == ("failed", "installation removed")
    assert ledger.claim(queued.id, "w2", 60) is None
    still_running = ledger.get(running)
    assert still_running is not None
    assert still_running.state == "running"

    # The other installation is untouched.
    assert records.installation(9) == ("other", ["other/keep"])
    assert records.reproduction("other/keep", 1) is not None
    assert records.comment_id("other/keep", 1, "reproduction") == 5
    assert records.label_state("other/keep", 1, "reproduced") == "added"
    other_job = ledger.get(kept)
    assert other_job is not None
    assert other_job.state == "queued"

    records.forget_installation(12345)  # unknown: nothing to do


# -- reproductions ------------------------------------------------------------------------------


def _reproduction(repo: str, issue: int, **changes: Any) -> ReproductionRecord:
    record = ReproductionRecord(
        repo=repo,
        issue_number=issue,
        base_sha="a" * 40,
        reproduced=True,
        test_patch="diff --git a/tests/test_x.py b/tests/test_x.py\n+def test_x(): ...\n",
        failing_tests=("tests/test_x.py::test_x",),
        failure="AssertionError: 1 != 2",
        method="zero-shot",
        candidates=({"name": "c1", "score": 0.5, "tags": ["é", None]},),
    )
    return replace(record, **changes)


def test_reproduction_upsert_and_round_trip(engine: Engine) -> None:
    clock = Clock()
    records = Records(engine, clock=clock)
    assert records.reproduction("o/r", 3) is None

    records.save_reproduction(_reproduction("o/r", 3))
    first = records.reproduction("o/r", 3)
    assert first == _reproduction("o/r", 3, created_at=T0)
    assert first is not None
    assert first.created_at is not None
    assert first.created_at.tzinfo is UTC

    clock.now = T0 + timedelta(hours=1)
    records.save_reproduction(
        _reproduction("o/r", 3, reproduced=False, failing_tests=(), candidates=(), method="agent")
    )
    second = records.reproduction("o/r", 3)
    assert second is not None
    assert (second.reproduced, second.failing_tests, second.candidates, second.method) == (
        False,
        (),
        (),
        "agent",
    )
    assert second.created_at == T0 + timedelta(hours=1)
    assert records.reproduction("o/r", 4) is None


# -- idempotent GitHub writes -------------------------------------------------------------------


def test_comment_ids(engine: Engine) -> None:
    records = Records(engine)
    assert records.comment_id("o/r", 1, "reproduction") is None
    big = 2**40  # GitHub comment ids outgrew 32 bits
    records.save_comment_id("o/r", 1, "reproduction", big)
    records.save_comment_id("o/r", 1, "verification", 2)
    assert records.comment_id("o/r", 1, "reproduction") == big
    assert records.comment_id("o/r", 1, "verification") == 2
    records.save_comment_id("o/r", 1, "reproduction", 3)
    assert records.comment_id("o/r", 1, "reproduction") == 3
    assert records.comment_id("o/r", 2, "reproduction") is None


def test_label_states(engine: Engine) -> None:
    records = Records(engine)
    assert records.label_state("o/r", 1, "reproduced") is None
    records.set_label_state("o/r", 1, "reproduced", "added")
    assert records.label_state("o/r", 1, "reproduced") == "added"
    records.set_label_state("o/r", 1, "reproduced", "removed")
    assert records.label_state("o/r", 1, "reproduced") == "removed"
    assert records.label_state("o/r", 1, "other") is None
    assert records.label_state("o/r", 2, "reproduced") is None


def test_pages_are_kept_found_by_id_linked_to_earlier_heads_and_pruned(engine: Engine) -> None:
    clock = Clock()
    pages = Pages(engine, clock)
    first = pages.save("verdict", "o/r", 7, "a" * 40, "failure", '{"kind": "pull"}')
    clock.now += timedelta(minutes=1)
    again = pages.save("verdict", "o/r", 7, "a" * 40, "failure", '{"kind": "pull"}')
    clock.now += timedelta(minutes=1)
    pages.save("reproduction", "o/r", 7, None, "reproduced", "{}")
    pages.save("verdict", "o/r", 8, "c" * 40, "success", "{}")
    clock.now += timedelta(minutes=1)
    latest = pages.save("verdict", "o/r", 7, "b" * 40, "success", '{"kind": "pull"}')
    # Ids are random and unguessable, never derived from what the page shows.
    assert len({first.id, again.id, latest.id}) == 3 and len(latest.id) >= 22
    assert pages.get(latest.id) == latest
    assert pages.get("no-such-page") is None
    # Earlier heads of the same pull request: one page per head, the newest of each.
    assert [p.id for p in pages.earlier_heads(latest)] == [again.id]
    assert pages.earlier_heads(first) == []
    clock.now += timedelta(days=30)
    # Thirty days on, all but the last page made are older than thirty days and 30 s.
    assert pages.prune(timedelta(days=30, seconds=30)) == 4
    assert pages.get(first.id) is None and pages.get(latest.id) == latest


_START = """\
import sys
from reprobot.bot.store.engine import make_engine, migrate
migrate(make_engine(sys.argv[1]))
"""


def test_processes_started_together_on_an_empty_database_all_migrate(store_url: str) -> None:
    # As when the App, its workers and the reaper start at once on a fresh database.
    starts = [
        subprocess.Popen([sys.executable, "-c", _START, store_url], stderr=subprocess.PIPE)
        for _ in range(6)
    ]
    errors = [p.communicate(timeout=120)[1].decode() for p in starts]
    assert [p.returncode for p in starts] == [0] * 6, errors
    engine = make_engine(store_url)
    with engine.connect() as conn:
        versions = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    assert versions == [HEAD]
    engine.dispose()
