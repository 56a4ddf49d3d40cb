"""The GitHub stand-in's scenario of ``tests/bot/github``, for the jobs that talk to it, and the
App's context over it with a real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobot.bot.context import AppContext, build_context
from reprobot.bot.github.auth import GitHubApp
from reprobot.bot.store.jobs import Job, JobRequest, verify_key
from reprobot.settings import Settings
from tests.bot.github.conftest import api, app, app_key, git_root, records, server, sources
from tests.bot.github.scenario import INSTALLATION, REPO

__all__ = ["api", "app", "app_key", "ctx", "git_root", "records", "server", "sources"]


@pytest.fixture
def ctx(app: GitHubApp, tmp_path: Path) -> Iterator[AppContext]:
    """The App's context as a worker builds it: a fresh SQLite store and queue, the App."""
    context = build_context(
        Settings(cache_dir=tmp_path / "cache", webhook_secret="s3cret", _env_file=None),
        github=app,
    )
    yield context
    context.close()


def verify_job(ctx: AppContext, head_sha: str, pull: int = 3) -> Job:
    """A verification job of ``pull`` at ``head_sha``, claimed by worker ``w1``."""
    request = JobRequest(
        kind="verify",
        key=verify_key(REPO, pull, head_sha),
        repo=REPO,
        installation_id=INSTALLATION,
        number=pull,
        head_sha=head_sha,
    )
    delivery = f"d-{pull}-{head_sha}"
    outcome = ctx.ledger.record_delivery(delivery, "pull_request", "opened", REPO, [request])
    job = ctx.ledger.claim(outcome.job_ids[0], "w1", 60)
    assert job is not None
    return job
