"""Check runs, injected faults (rate limits, server errors, slow answers) and GraphQL."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import httpx
import pytest
from githubkit.exception import (
    GraphQLFailed,
    PrimaryRateLimitExceeded,
    SecondaryRateLimitExceeded,
)

from tests.github_server.clients import (
    CLOSING_QUERY,
    FORK,
    INSTALLATION,
    REPO,
    api,
    api_calls,
    kit,
)
from tests.support.github_server import (
    SECONDARY_RATE_LIMIT_MESSAGE,
    GitHubServer,
)
from tests.support.widgets import Sources

# --- check runs -----------------------------------------------------------------------------


def test_check_runs_are_created_and_completed(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    server.add_pull(REPO, 2, "Same-repo fix", None, sources.main_sha, sources.first_sha)
    server.add_pull(
        REPO, 3, "Fork fix", None, sources.fork_sha, sources.main_sha, head_full_name=FORK
    )
    gh = kit(server, token)

    created = gh.rest.checks.create(
        "octo-org",
        "widgets",
        data={"name": "reprobot/verify", "head_sha": sources.main_sha, "status": "in_progress"},
    )
    run = created.parsed_data
    assert created.status_code == 201
    assert (run.status, run.conclusion, run.head_sha) == ("in_progress", None, sources.main_sha)
    assert run.app and run.app.slug == "reprobot"
    assert [p.number for p in run.pull_requests] == [2]
    # As on GitHub, check runs list no pull requests from forks.
    fork_run = gh.rest.checks.create(
        "octo-org", "widgets", data={"name": "reprobot/verify", "head_sha": sources.fork_sha}
    ).parsed_data
    assert fork_run.pull_requests == []

    done = gh.rest.checks.update(
        "octo-org",
        "widgets",
        run.id,
        data={
            "conclusion": "failure",
            "output": {"title": "Still fails", "summary": "1 test fails", "text": "details"},
        },
    ).parsed_data
    assert (done.status, done.conclusion) == ("completed", "failure")
    assert done.completed_at is not None
    assert done.output.summary == "1 test fails"
    fetched = gh.rest.checks.get("octo-org", "widgets", run.id).parsed_data
    assert fetched.output.title == "Still fails"
    assert [r["name"] for r in server.check_runs(REPO)] == ["reprobot/verify"] * 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"output": {"title": "t", "summary": "s" * 65536}}, "Only 65535 characters"),
        ({"output": {"title": "t", "summary": "s", "text": "t" * 65536}}, "Only 65535"),
        ({"output": {"title": "t"}}, "wasn't supplied"),
        ({"status": "completed"}, "Validation Failed"),
        ({"status": "completed", "conclusion": "stale"}, "Validation Failed"),
        ({"conclusion": "great"}, "Validation Failed"),
        ({"head_sha": "0" * 40}, "No commit found for SHA"),
        ({"started_at": "yesterday"}, "Validation Failed"),
    ],
)
def test_invalid_check_runs_are_422(
    server: GitHubServer, token: str, sources: Sources, change: dict[str, Any], message: str
) -> None:
    body = {"name": "reprobot/verify", "head_sha": sources.main_sha, **change}
    with api(server, token) as client:
        answer = client.post("/repos/octo-org/widgets/check-runs", json=body)
    assert answer.status_code == 422
    assert message in answer.json()["message"]
    assert server.check_runs(REPO) == []


def test_summary_at_the_limit_is_accepted(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    body = {
        "name": "reprobot/verify",
        "head_sha": sources.main_sha,
        "conclusion": "success",
        "output": {"title": "t", "summary": "s" * 65535, "text": "t" * 65535},
    }
    with api(server, token) as client:
        assert client.post("/repos/octo-org/widgets/check-runs", json=body).status_code == 201


# --- faults ---------------------------------------------------------------------------------


def test_secondary_rate_limit_answers_429_with_retry_after(
    server: GitHubServer, token: str
) -> None:
    server.fail_secondary_rate_limit("POST", r"/issues/1/comments$", retry_after_s=1, status=429)
    gh = kit(server, token)

    with pytest.raises(SecondaryRateLimitExceeded) as limited:
        gh.rest.issues.create_comment("octo-org", "widgets", 1, body="first try")
    assert limited.value.retry_after == timedelta(seconds=1)
    answer = limited.value.response
    assert answer.status_code == 429
    assert answer.headers["retry-after"] == "1"
    assert answer.json()["message"] == SECONDARY_RATE_LIMIT_MESSAGE
    assert server.comments(REPO, 1) == []

    # Only the next matching request failed.
    gh.rest.issues.create_comment("octo-org", "widgets", 1, body="second try")
    assert [c.status for c in api_calls(server)] == [429, 201]


def test_secondary_rate_limit_as_403(server: GitHubServer, token: str) -> None:
    server.fail_secondary_rate_limit("*", r"/issues/1$", retry_after_s=30)
    gh = kit(server, token)
    with pytest.raises(SecondaryRateLimitExceeded) as limited:
        gh.rest.issues.get("octo-org", "widgets", 1)
    assert limited.value.response.status_code == 403
    assert limited.value.retry_after == timedelta(seconds=30)


def test_primary_rate_limit_answers_403_with_the_reset_time(
    server: GitHubServer, token: str
) -> None:
    server.fail_primary_rate_limit("GET", r"/repos/octo-org/widgets$", reset_in_s=30, times=2)
    with api(server, token) as client:
        answer = client.get("/repos/octo-org/widgets")
    assert answer.status_code == 403
    assert answer.headers["x-ratelimit-remaining"] == "0"
    assert 0 < int(answer.headers["x-ratelimit-reset"]) - time.time() <= 31
    assert (
        answer.json()["message"] == f"API rate limit exceeded for installation ID {INSTALLATION}."
    )

    # githubkit's namespaces hold their client weakly: keep it in a variable.
    gh = kit(server, token)
    with pytest.raises(PrimaryRateLimitExceeded) as limited:
        gh.rest.repos.get("octo-org", "widgets")
    assert timedelta(seconds=25) < limited.value.retry_after <= timedelta(seconds=31)
    assert gh.rest.repos.get("octo-org", "widgets").status_code == 200


def test_server_errors_and_slow_answers(server: GitHubServer, token: str) -> None:
    server.fail_server_error("GET", r"/issues/1$", delay_s=0.5)
    server.fail_next("GET", r"/issues/1$", 503, headers={"x-custom": "yes"})
    with api(server, token) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.get("/repos/octo-org/widgets/issues/1", timeout=0.1)
        unavailable = client.get("/repos/octo-org/widgets/issues/1")
        fine = client.get("/repos/octo-org/widgets/issues/1")
    assert (unavailable.status_code, unavailable.headers["x-custom"]) == (503, "yes")
    assert unavailable.json()["message"] == "Service Unavailable"
    assert fine.status_code == 200
    # The client gave up on the slow answer, which is recorded once the delay has passed.
    deadline = time.monotonic() + 2
    while len(api_calls(server)) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [c.status for c in api_calls(server)] == [503, 200, 502]


# --- GraphQL --------------------------------------------------------------------------------


def test_graphql_answers_closing_issue_references(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    server.add_issue(REPO, 5, "Perimeter is wrong too", None)
    server.add_pull(
        REPO, 6, "Fix both", None, sources.main_sha, sources.first_sha, closing_issues=[1, 5]
    )
    gh = kit(server, token)

    data = gh.graphql(CLOSING_QUERY, {"owner": "octo-org", "name": "widgets", "number": 6})

    nodes = data["repository"]["pullRequest"]["closingIssuesReferences"]["nodes"]
    assert nodes == [
        {"number": 1, "title": "area() is wrong", "repository": {"nameWithOwner": REPO}},
        {"number": 5, "title": "Perimeter is wrong too", "repository": {"nameWithOwner": REPO}},
    ]
    assert server.calls[-1].path == "/api/graphql"
    with pytest.raises(GraphQLFailed):
        gh.graphql(CLOSING_QUERY, {"owner": "octo-org", "name": "widgets", "number": 1})
    with pytest.raises(GraphQLFailed):
        gh.graphql(CLOSING_QUERY, {"owner": "elsewhere", "name": "thing", "number": 6})
    other = httpx.post(
        server.graphql_url,
        headers={"authorization": f"bearer {token}"},
        json={"query": "{ viewer { login } }"},
    )
    assert other.status_code == 200
    assert other.json() == {"errors": [{"message": "unsupported by this test server"}]}
    assert httpx.post(server.graphql_url, json={"query": CLOSING_QUERY}).status_code == 401
