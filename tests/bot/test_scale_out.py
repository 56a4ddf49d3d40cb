"""Scale-out for real: ``reprobot serve --workers 0`` and three ``reprobot worker`` processes on
PostgreSQL and Redis, the local GitHub and the real sandbox. Twenty issues and five fix pull
requests arrive at once, each delivered twice and redelivered; one worker is killed with
SIGKILL in the middle of a job. Every issue gets one comment and one label, every pull request
one comment and a finished check, and nothing is left leased."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from reprobot.bot.render.pull import CHECK_NAME
from reprobot.validation.env.env_image import EnvImage
from tests.support.app_harness import REPO, AppHarness
from tests.support.example_patches import FIX
from tests.support.repos import EXAMPLE
from tests.support.servers import PostgresServer, RedisServer, free_port

pytestmark = pytest.mark.docker

ISSUE_TITLE, _, ISSUE_BODY = (EXAMPLE / "ISSUE.md").read_text().partition("\n")
ISSUES = list(range(20, 40))
PULLS = list(range(100, 105))


@pytest.fixture
def stack(
    tmp_path: Path,
    example_repo: Path,
    example_env: EnvImage,
    postgres_server: PostgresServer,
    redis_server: RedisServer,
) -> Iterator[AppHarness]:
    redis_server.flush()
    database = postgres_server.new_database()
    harness = AppHarness(
        tmp_path,
        example_repo,
        REPROBOT_DATABASE_URL=database,
        REPROBOT_QUEUE_URL=redis_server.url(),
        REPROBOT_JOB_LEASE_S="600",
        REPROBOT_JOB_HEARTBEAT_S="1",
        REPROBOT_REAPER_INTERVAL_S="0.5",
    )
    try:
        harness.serve(workers=0)
        yield harness
    finally:
        harness.close()
        postgres_server.drop_database(database)


def _deliver_twice(app: AppHarness, event: str, payloads: dict[int, dict[str, object]]) -> None:
    """Each payload twice with one delivery id (a redelivery) and once more with another (a
    duplicate event), all at once."""
    sends = [(n, f"{event}-{n}") for n in payloads] * 2 + [(n, f"{event}-{n}-b") for n in payloads]

    def send(item: tuple[int, str]) -> int:
        return app.deliver(event, payloads[item[0]], item[1]).status_code

    with ThreadPoolExecutor(16) as pool:
        assert set(pool.map(send, sends)) == {202}


def _started_jobs(app: AppHarness) -> list[str]:
    """The job ids of every ``job.started`` line the App's processes logged, once a line."""
    lines = [
        line
        for log in app.root.glob("*.log")
        for line in log.read_text(errors="replace").splitlines()
        if '"event": "job.started"' in line
    ]
    return [m.group(1) for line in lines if (m := re.search(r'"job_id": (\d+)', line))]


def test_many_workers_on_postgresql_and_redis(stack: AppHarness) -> None:
    app = stack
    ports = [free_port() for _ in range(3)]
    workers = [app.worker(metrics_port=port) for port in ports]
    _deliver_twice(app, "issues", {n: app.open_issue(n, ISSUE_TITLE, ISSUE_BODY) for n in ISSUES})

    # Kill the first worker as soon as it holds a job.
    victim = workers[0]

    def victims_job() -> list[int]:
        return [
            j.id
            for j in app.ledger.jobs(REPO)
            if j.state == "running" and j.worker and f":{victim.pid}:" in j.worker
        ]

    killed_job = app.wait("the first worker to hold a job", victims_job, timeout=300)[0]
    # The claim is in the store a moment before the worker logs that it started the job: kill
    # only once it has, so that the log below accounts for both attempts.
    app.wait(
        "the first worker to log its job",
        lambda: str(killed_job) in _started_jobs(app),
        timeout=60,
    )
    app.kill(victim)

    app.wait(
        "every issue's reproduction",
        lambda: all(app.finished(n) for n in ISSUES) and all(app.bot_comments(n) for n in ISSUES),
        timeout=900,
    )
    heads = {
        n: app.push({f"notes/{n}.md": f"pull {n}\n"}, f"Fix for #{ISSUES[i]}", f"fix-{n}", FIX)
        for i, n in enumerate(PULLS)
    }
    _deliver_twice(
        app,
        "pull_request",
        {n: app.open_pull(n, heads[n], f"Fixes #{ISSUES[i]}") for i, n in enumerate(PULLS)},
    )
    app.wait(
        "every pull request's verification",
        lambda: (
            all(app.finished(n) for n in PULLS)
            and all(
                any(
                    r["status"] == "completed"
                    for r in app.github.check_runs(REPO)
                    if r["head_sha"] == heads[n]
                )
                for n in PULLS
            )
        ),
        timeout=900,
    )

    for n in ISSUES:
        assert len(app.bot_comments(n)) == 1, n
        assert app.github.issue_labels(REPO, n) == ["reproduced"], n
    for n in PULLS:
        assert len(app.bot_comments(n)) == 1, n
        runs = [r for r in app.github.check_runs(REPO) if r["head_sha"] == heads[n]]
        assert [(r["name"], r["status"], r["conclusion"]) for r in runs] == [
            (CHECK_NAME, "completed", "success")
        ], n
        assert app.github.issue_labels(REPO, n) == ["fix-verified"], n
    jobs = app.ledger.jobs(REPO)
    assert len(jobs) == len(ISSUES) + len(PULLS)
    # Nothing left leased; every job done once, the killed one taken over once.
    assert {(j.state, j.lease_until) for j in jobs} == {("done", None)}
    assert {j.id: j.attempts for j in jobs if j.attempts != 1} == {killed_job: 2}
    # No job ran twice at once: every worker that ran a job left its own log lines, and each
    # job was started by at most one worker before the kill and one after.
    started = _started_jobs(app)
    mismatched = {
        j.id: (started.count(str(j.id)), j.attempts)
        for j in jobs
        if started.count(str(j.id)) != j.attempts
    }
    assert not mismatched, f"job id: (started lines, attempts) {mismatched}\n{app.logs()[-6000:]}"
    metrics = httpx.get(f"{app.url}/metrics", timeout=10).text
    assert 'reprobot_jobs{kind="reproduce",state="done"} 20.0' in metrics
    assert 'reprobot_jobs{kind="verify",state="done"} 5.0' in metrics
    assert "reprobot_queue_depth 0.0" in metrics
    # The surviving workers' own metrics: between them, every job but the one the killed
    # worker began, their sandbox runs and their GitHub requests.
    done = 0.0
    for port in ports[1:]:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        done += sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("reprobot_job_duration_seconds_count{") and 'outcome="done"' in line
        )
        assert "reprobot_sandbox_run_duration_seconds_count" in text
        assert 'reprobot_github_requests_total{method="POST",status="201"}' in text
    assert done >= len(ISSUES) + len(PULLS) - 1
