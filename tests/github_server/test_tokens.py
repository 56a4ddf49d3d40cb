"""Installation tokens: issued for valid App JWTs only, narrowed by repository and permission."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import jwt
import pytest
from githubkit import AppAuthStrategy, GitHub
from githubkit.cache import MemCacheStrategy

from tests.github_server.clients import (
    APP_ID,
    INSTALLATION,
    REPO,
    api,
    app_jwt,
    request_token,
)
from tests.support.github_server import (
    GitHubServer,
    make_app_key,
)

# --- installation tokens --------------------------------------------------------------------


def test_a_valid_app_jwt_gets_an_installation_token(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    app = GitHub(
        AppAuthStrategy(str(APP_ID), app_key[0]),
        base_url=server.api_url,
        cache_strategy=MemCacheStrategy(),
        http_cache=False,
    )
    before = datetime.now(UTC)
    issued = app.rest.apps.create_installation_access_token(INSTALLATION).parsed_data

    assert re.fullmatch(r"ghs_[A-Za-z0-9]{36}", issued.token)
    expires = datetime.strptime(issued.expires_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert timedelta(seconds=3590) < expires - before <= timedelta(seconds=3601)
    assert issued.repository_selection == "all"
    assert issued.permissions and issued.permissions.issues == "write"
    assert server.tokens == [
        {
            "installation_id": INSTALLATION,
            "token": issued.token,
            "expires_at": issued.expires_at,
            "repositories": None,
            "repository_ids": None,
            "permissions": {
                "metadata": "read",
                "issues": "write",
                "pull_requests": "read",
                "checks": "write",
                "contents": "read",
            },
        }
    ]
    sent = server.calls[0].headers["authorization"].removeprefix("Bearer ")
    assert jwt.decode(sent, options={"verify_signature": False})["iss"] == str(APP_ID)


def test_githubkit_acts_as_the_installation_with_the_token_it_gets(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    app = GitHub(
        AppAuthStrategy(str(APP_ID), app_key[0]).as_installation(INSTALLATION),
        base_url=server.api_url,
        cache_strategy=MemCacheStrategy(),
        http_cache=False,
    )
    repo = app.rest.repos.get("octo-org", "widgets").parsed_data

    assert repo.full_name == REPO
    token_call, repo_call = server.calls
    assert (token_call.method, token_call.status) == ("POST", 201)
    issued = server.tokens[0]["token"]
    assert repo_call.headers["authorization"] == f"token {issued}"


@pytest.mark.parametrize(
    "authorization",
    [
        pytest.param("wrong key", id="wrong-key"),
        pytest.param("expired", id="expired"),
        pytest.param("too long", id="exp-more-than-10-minutes-after-iat"),
        pytest.param("other app", id="wrong-issuer"),
        pytest.param("no exp", id="no-exp"),
        pytest.param("Bearer not.a.jwt", id="garbage"),
        pytest.param("", id="none"),
        pytest.param("token-scheme", id="token-scheme"),
    ],
)
def test_bad_app_jwts_are_refused(
    server: GitHubServer, app_key: tuple[str, bytes], authorization: str
) -> None:
    private = app_key[0]
    other_private, _ = make_app_key() if authorization == "wrong key" else (private, b"")
    now = int(time.time())
    headers = {
        "wrong key": f"Bearer {app_jwt(other_private)}",
        "expired": f"Bearer {app_jwt(private, age_s=1200)}",
        "too long": f"Bearer {app_jwt(private, lifetime_s=900)}",
        "other app": f"Bearer {app_jwt(private, iss='99')}",
        "no exp": "Bearer "
        + jwt.encode({"iss": str(APP_ID), "iat": now - 30}, private, algorithm="RS256"),
        "token-scheme": f"token {app_jwt(private)}",
    }.get(authorization, authorization)

    answer = httpx.post(
        f"{server.api_url}/app/installations/{INSTALLATION}/access_tokens",
        headers={"authorization": headers} if headers else {},
    )

    assert answer.status_code == 401
    assert answer.json()["documentation_url"].startswith("https://docs.github.com/")
    assert server.tokens == []


def test_unknown_installation_is_404(server: GitHubServer, app_key: tuple[str, bytes]) -> None:
    answer = request_token(server, app_key[0], installation=999)
    assert answer.status_code == 404
    assert answer.json()["message"] == "Not Found"


def test_narrowed_tokens_see_only_their_repositories_and_permissions(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    answer = request_token(
        server, app_key[0], {"repositories": ["widgets"], "permissions": {"issues": "write"}}
    )
    assert answer.status_code == 201
    issued = answer.json()
    assert issued["repository_selection"] == "selected"
    assert [r["full_name"] for r in issued["repositories"]] == [REPO]
    assert issued["permissions"] == {"metadata": "read", "issues": "write"}
    assert server.tokens[0]["repositories"] == ["widgets"]

    with api(server, issued["token"]) as client:
        assert client.get("/repos/octo-org/widgets").status_code == 200
        # Outside the narrowed list: hidden, as GitHub hides it.
        assert client.get("/repos/octo-org/gadgets").status_code == 404
        assert client.post(
            "/repos/octo-org/widgets/issues/1/comments", json={"body": "hi"}
        ).is_success
        refused = client.post(
            "/repos/octo-org/widgets/check-runs", json={"name": "x", "head_sha": "0" * 40}
        )
        assert refused.status_code == 403
        assert refused.json()["message"] == "Resource not accessible by integration"
        assert refused.headers["x-accepted-github-permissions"] == "checks=write"
        assert client.get("/repos/octo-org/widgets/contents/README.md").status_code == 403


def test_narrowing_by_repository_id(server: GitHubServer, app_key: tuple[str, bytes]) -> None:
    by_name = request_token(server, app_key[0], {"repositories": ["gadgets"]}).json()
    sibling_id = by_name["repositories"][0]["id"]

    issued = request_token(server, app_key[0], {"repository_ids": [sibling_id]}).json()

    assert issued["repository_selection"] == "selected"
    with api(server, issued["token"]) as client:
        assert client.get("/repos/octo-org/gadgets").status_code == 200
        assert client.get("/repos/octo-org/widgets").status_code == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"repositories": ["thing"]}, "at least one repository"),  # another installation's
        ({"repositories": ["nonexistent"]}, "at least one repository"),
        ({"repository_ids": [123456]}, "at least one repository"),
        ({"permissions": {"administration": "write"}}, "not granted"),
        ({"permissions": {"contents": "write"}}, "not granted"),
    ],
)
def test_token_requests_beyond_the_installation_are_422(
    server: GitHubServer, app_key: tuple[str, bytes], body: dict[str, Any], message: str
) -> None:
    answer = request_token(server, app_key[0], body)
    assert answer.status_code == 422
    assert message in answer.json()["message"]
    assert server.tokens == []


def test_bad_and_expired_tokens_are_401(server: GitHubServer, token: str) -> None:
    for authorization in ("token ghs_" + "x" * 36, "", f"Basic {token}"):
        with httpx.Client(base_url=server.api_url) as client:
            headers = {"authorization": authorization} if authorization else {}
            answer = client.get("/repos/octo-org/widgets/issues/1", headers=headers)
        assert answer.status_code == 401
        assert answer.json()["message"] == "Bad credentials"
    with api(server, token) as client:
        assert client.get("/repos/octo-org/widgets/issues/1").status_code == 200
        # Another installation's repository is hidden.
        assert client.get("/repos/elsewhere/thing").status_code == 404
        server.expire_tokens()
        assert client.get("/repos/octo-org/widgets/issues/1").status_code == 401


def test_bearer_works_like_token(server: GitHubServer, token: str) -> None:
    answer = httpx.get(
        f"{server.api_url}/repos/octo-org/widgets", headers={"authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 200
