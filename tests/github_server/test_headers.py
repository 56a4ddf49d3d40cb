"""GitHub's headers, etag revalidation, and the record of calls with their timing."""

from __future__ import annotations

import threading
import time

from githubkit import GitHub, TokenAuthStrategy

from tests.github_server.clients import (
    REPO,
    api,
    api_calls,
    overlapping,
)
from tests.support.github_server import (
    GitHubServer,
)

# --- headers and the record of calls ---------------------------------------------------------


def test_answers_carry_githubs_headers(server: GitHubServer, token: str) -> None:
    with api(server, token) as client:
        first = client.get("/repos/octo-org/widgets")
        second = client.get("/repos/octo-org/widgets/issues/1")
        missing = client.get("/repos/octo-org/widgets/issues/99")
        unknown = client.get("/repos/octo-org/widgets/teleport")
        cached = client.get(
            "/repos/octo-org/widgets", headers={"if-none-match": first.headers["etag"]}
        )

    for answer in (first, second, missing, unknown):
        assert answer.headers["content-type"] == "application/json; charset=utf-8"
        assert answer.headers["x-github-media-type"] == "github.v3; format=json"
        assert answer.headers["x-ratelimit-limit"] == "5000"
        assert answer.headers["x-ratelimit-resource"] == "core"
        assert answer.headers["x-github-request-id"]
        assert int(answer.headers["x-ratelimit-reset"]) > time.time()
    assert (
        int(second.headers["x-ratelimit-remaining"])
        == int(first.headers["x-ratelimit-remaining"]) - 1
    )
    assert int(second.headers["x-ratelimit-used"]) == 2
    assert first.headers["cache-control"] == "private, max-age=60, s-maxage=60"
    assert cached.status_code == 304 and cached.content == b""
    assert missing.status_code == 404 and missing.json()["message"] == "Not Found"
    assert unknown.status_code == 404
    assert [c.path for c in api_calls(server)][3] == "/api/v3/repos/octo-org/widgets/teleport"


def test_githubkit_revalidates_its_cache_with_etags(server: GitHubServer, token: str) -> None:
    gh = GitHub(TokenAuthStrategy(token), base_url=server.api_url, auto_retry=False)

    first = gh.rest.issues.get("octo-org", "widgets", 1).parsed_data
    again = gh.rest.issues.get("octo-org", "widgets", 1).parsed_data
    server.add_comment(REPO, 1, "news")
    changed = gh.rest.issues.get("octo-org", "widgets", 1).parsed_data

    assert first == again and changed.comments == 1
    assert [c.status for c in api_calls(server)] == [200, 304, 200]


def test_calls_record_requests_and_their_timing(server: GitHubServer, token: str) -> None:
    server.fail_next("POST", r"/issues/1/comments$", 201, body={"slow": True}, delay_s=0.4)
    with api(server, token) as client:
        slow = threading.Thread(
            target=client.post,
            args=("/repos/octo-org/widgets/issues/1/comments",),
            kwargs={"json": {"body": "slow"}},
        )
        slow.start()
        time.sleep(0.1)
        with api(server, token) as other:
            other.post(
                "/repos/octo-org/widgets/issues/1/labels",
                json={"labels": ["x"]},
                params={"trace": "1"},
            )
        slow.join()

    labels, comment = api_calls(server)
    assert (labels.method, labels.path, labels.query) == (
        "POST",
        "/api/v3/repos/octo-org/widgets/issues/1/labels",
        {"trace": "1"},
    )
    assert labels.json == {"labels": ["x"]}
    assert labels.headers["authorization"] == f"token {token}"
    assert (comment.status, comment.json) == (201, {"body": "slow"})
    assert comment.finished - comment.started >= 0.4
    assert overlapping(api_calls(server))
    assert not overlapping([labels])
