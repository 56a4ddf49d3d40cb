"""Metrics of the processes that see the events: GitHub requests and rate-limit waits through a
real local GitHub, job durations from a worker, image builds and sandbox runs from progress."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from reprobot.bot.github.auth import REPRODUCE_PERMISSIONS, GitHubApp
from reprobot.bot.github.limits import MutationThrottler, RetryPolicy
from reprobot.bot.github.repo_api import RepoAPI
from reprobot.bot.metrics import CountingTransport, Metrics, MetricsProgress
from tests.support.github_server import GitHubServer, make_app_key

APP_ID = 5311
INSTALLATION = 61
REPO = "octo-org/widgets"


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the rendered text, by name and sorted labels."""
    out = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[GitHubServer, str]]:
    key, public = make_app_key()
    with GitHubServer(APP_ID, public, tmp_path / "git") as srv:
        srv.add_installation(INSTALLATION, "octo-org")
        srv.add_repo(REPO, INSTALLATION)
        srv.add_issue(REPO, 1, "bug", "boom")
        yield srv, key


@pytest.mark.github
def test_github_requests_and_rate_limit_waits_are_counted(
    server: tuple[GitHubServer, str],
) -> None:
    srv, key = server
    metrics = Metrics()
    app = GitHubApp(
        APP_ID,
        key,
        srv.api_url,
        retry=RetryPolicy(max_retries=3, backoff_s=0.01, on_wait=metrics.waited),
        throttler=MutationThrottler(pause_s=0.0),
        transport=CountingTransport(metrics),
    )
    api = RepoAPI(app.client(app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)), REPO, APP_ID)
    srv.fail_secondary_rate_limit("GET", r"/issues/1$", retry_after_s=1, status=429)
    assert api.issue(1).number == 1
    got = samples(metrics)
    assert got[("reprobot_github_requests_total", (("method", "POST"), ("status", "201")))] == 1
    assert got[("reprobot_github_requests_total", (("method", "GET"), ("status", "429")))] == 1
    assert got[("reprobot_github_requests_total", (("method", "GET"), ("status", "200")))] == 1
    assert got[("reprobot_github_rate_limit_waits_total", (("reason", "secondary"),))] == 1
    assert got[("reprobot_github_rate_limit_wait_seconds_total", ())] >= 1.0


def test_progress_of_a_job_records_builds_and_sandbox_runs() -> None:
    metrics = Metrics()
    progress = MetricsProgress(metrics)
    with progress.step("building the environment of o/r", kind="environment"):
        pass
    with progress.step("drafting", kind="drafting"):
        pass
    progress.detail("sandbox run 1", kind="sandbox-run", seconds=2.5)
    progress.detail("a line for people", kind="")
    got = samples(metrics)
    assert got[("reprobot_image_builds_total", (("kind", "environment"),))] == 1
    assert ("reprobot_image_builds_total", (("kind", "drafting"),)) not in got
    assert got[("reprobot_sandbox_run_duration_seconds_count", ())] == 1
    assert got[("reprobot_sandbox_run_duration_seconds_sum", ())] == 2.5


def test_the_state_collector_survives_an_unreachable_store() -> None:
    def broken() -> dict[tuple[str, str], int]:
        raise RuntimeError("database down")

    metrics = Metrics(job_counts=broken, queue_depth=lambda: 3)
    got = samples(metrics)
    assert got[("reprobot_queue_depth", ())] == 3
    assert not any(name == "reprobot_jobs" for name, _ in got)
