"""Twenty issue and pull request jobs at once, two threads per worker, while GitHub revokes the
App's tokens three times: no job attempt is lost, no check run is left in progress, no comment
is posted twice; on SQLite with one worker and on PostgreSQL + Redis with two."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobot.validation.env.env_image import EnvImage
from tests.support.app_harness import AppHarness
from tests.support.servers import PostgresServer, RedisServer
from tests.support.token_storm import storm

pytestmark = pytest.mark.docker

ISSUES = list(range(300, 310))
PULLS = list(range(400, 410))


@pytest.fixture(params=["sqlite", "postgresql+redis"])
def stack(
    request: pytest.FixtureRequest, tmp_path: Path, example_repo: Path, example_env: EnvImage
) -> Iterator[AppHarness]:
    settings = {
        "REPROBOT_JOB_HEARTBEAT_S": "1",
        "REPROBOT_REAPER_INTERVAL_S": "1",
    }
    database = None
    postgres: PostgresServer | None = None
    if request.param != "sqlite":
        postgres = request.getfixturevalue("postgres_server")
        redis_server: RedisServer = request.getfixturevalue("redis_server")
        redis_server.flush()
        database = postgres.new_database()
        settings |= {"REPROBOT_DATABASE_URL": database, "REPROBOT_QUEUE_URL": redis_server.url()}
    harness = AppHarness(tmp_path, example_repo, **settings)
    try:
        harness.serve(workers=0)
        for _ in range(1 if request.param == "sqlite" else 2):
            harness.worker(threads=2)
        yield harness
    finally:
        harness.close()
        if postgres is not None and database is not None:
            postgres.drop_database(database)


def test_no_attempt_is_lost_when_tokens_are_revoked_under_concurrent_jobs(
    stack: AppHarness,
) -> None:
    counts = storm(stack, ISSUES, PULLS, revocations=3)

    assert counts.jobs == len(ISSUES) + len(PULLS)
    assert counts.revocations == 3
    # The revocations did reach requests in flight, and each was renewed without a trace.
    assert counts.refused_requests > 0, counts
    assert counts.lost_attempts == 0, (counts, stack.logs()[-6000:])
    assert counts.failed_jobs == 0
    assert counts.check_runs == len(PULLS), counts
    assert counts.check_runs_in_progress == 0
    assert counts.duplicate_comments == 0
