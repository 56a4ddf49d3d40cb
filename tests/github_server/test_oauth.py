"""The App's user authorization at the local GitHub: the web application flow's two steps, and
what a user's token is shown (its user, and repositories as that user may see them)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import httpx
from githubkit import GitHub, OAuthWebAuthStrategy

from tests.github_server.clients import FOREIGN, REPO, SIBLING
from tests.support.github_server import GitHubServer

CALLBACK = "https://app.example.org/auth/callback"


def _authorize(server: GitHubServer, redirect_uri: str = CALLBACK, **extra: str) -> httpx.Response:
    params = {
        "client_id": server.oauth_client_id,
        "redirect_uri": redirect_uri,
        "state": "the-state",
        **extra,
    }
    return httpx.get(f"{server.base_url}/login/oauth/authorize", params=params)


def _code(server: GitHubServer, login: str) -> str:
    server.sign_in_as(login)
    answer = _authorize(server)
    assert answer.status_code == 302
    return parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]


def _exchange(server: GitHubServer, code: str, **changes: str) -> httpx.Response:
    body = {
        "client_id": server.oauth_client_id,
        "client_secret": server.oauth_client_secret,
        "code": code,
        "redirect_uri": CALLBACK,
        **changes,
    }
    return httpx.post(
        f"{server.base_url}/login/oauth/access_token",
        json=body,
        headers={"accept": "application/json"},
    )


def _user_token(server: GitHubServer, login: str) -> str:
    token: str = _exchange(server, _code(server, login)).json()["access_token"]
    return token


def _as(server: GitHubServer, token: str, path: str) -> httpx.Response:
    return httpx.get(f"{server.api_url}{path}", headers={"authorization": f"Bearer {token}"})


def test_a_signed_in_user_who_approves_is_sent_back_with_a_code_and_the_state(
    server: GitHubServer,
) -> None:
    server.sign_in_as("alice")
    answer = _authorize(server, CALLBACK + "?from=x")
    assert answer.status_code == 302
    back = urlsplit(answer.headers["location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == CALLBACK
    query = parse_qs(back.query)
    assert query["from"] == ["x"] and query["state"] == ["the-state"]
    assert re.fullmatch(r"[0-9a-f]{20}", query["code"][0])
    assert "x-ratelimit-limit" not in answer.headers  # the web side, not the REST API
    # One who declines is sent back with GitHub's error instead.
    server.sign_in_as("alice", approve=False)
    declined = parse_qs(urlsplit(_authorize(server).headers["location"]).query)
    assert declined["error"] == ["access_denied"] and declined["state"] == ["the-state"]
    assert "code" not in declined


def test_authorize_refuses_what_github_refuses(server: GitHubServer) -> None:
    assert _authorize(server).status_code == 401  # nobody is signed in
    server.sign_in_as("alice")
    assert _authorize(server, client_id="Iv23liSomeoneElse").status_code == 404
    server.set_oauth_callback("https://app.example.org/auth")
    assert _authorize(server, CALLBACK).status_code == 302  # below the callback URL
    for elsewhere in ("https://evil.example/auth/callback", "https://app.example.org/other"):
        assert _authorize(server, elsewhere).status_code == 400


def test_a_code_is_traded_once_for_a_user_token(server: GitHubServer) -> None:
    code = _code(server, "alice")
    wrong = _exchange(server, code, client_secret="nope")
    assert (wrong.status_code, wrong.json()["error"]) == (200, "incorrect_client_credentials")
    mismatch = _exchange(server, code, redirect_uri="https://app.example.org/x")
    assert mismatch.json()["error"] == "redirect_uri_mismatch"
    # Traded with the App's credentials, a code is spent even when the trade is refused.
    assert _exchange(server, code).json()["error"] == "bad_verification_code"
    code = _code(server, "alice")
    answer = _exchange(server, code)
    body = answer.json()
    assert re.fullmatch(r"ghu_[A-Za-z0-9]{36}", body["access_token"])
    assert (body["token_type"], body["scope"], body["expires_in"]) == ("bearer", "", 28800)
    assert body["refresh_token"].startswith("ghr_")
    assert server.user_tokens("alice") == [body["access_token"]]
    assert _exchange(server, code).json()["error"] == "bad_verification_code"
    # Without asking for JSON, the answer is a form.
    plain = httpx.post(
        f"{server.base_url}/login/oauth/access_token",
        params={
            "client_id": server.oauth_client_id,
            "client_secret": server.oauth_client_secret,
            "code": _code(server, "bob"),
        },
    )
    assert plain.headers["content-type"].startswith("application/x-www-form-urlencoded")
    assert parse_qs(plain.text)["access_token"][0].startswith("ghu_")


def test_githubkit_signs_in_with_a_code_and_reads_its_user(server: GitHubServer) -> None:
    strategy = OAuthWebAuthStrategy(
        server.oauth_client_id, server.oauth_client_secret, _code(server, "alice"), CALLBACK
    )
    github = GitHub(strategy, base_url=server.api_url, http_cache=False)
    assert github.rest.users.get_authenticated().json()["login"] == "alice"


def test_a_user_token_sees_its_user_until_it_is_revoked(server: GitHubServer) -> None:
    token = _user_token(server, "alice")
    user = _as(server, token, "/user")
    assert user.status_code == 200 and user.json()["login"] == "alice"
    assert user.json()["type"] == "User"
    server.revoke_user_tokens("alice")
    assert _as(server, token, "/user").status_code == 401
    assert _as(server, "ghu_" + "x" * 36, "/user").status_code == 401


def test_a_user_token_sees_a_private_repository_only_while_its_user_may_read_it(
    server: GitHubServer,
) -> None:
    token = _user_token(server, "alice")
    public = _as(server, token, f"/repos/{REPO}")
    assert public.status_code == 200 and public.json()["permissions"]["pull"] is True
    assert _as(server, token, f"/repos/{SIBLING}").status_code == 404
    server.grant_read(SIBLING, "alice")
    shown = _as(server, token, f"/repos/{SIBLING}")
    assert shown.status_code == 200
    assert shown.json()["private"] is True
    assert shown.json()["permissions"] == {
        "admin": False,
        "maintain": False,
        "push": False,
        "triage": False,
        "pull": True,
    }
    server.revoke_read(SIBLING, "alice")
    assert _as(server, token, f"/repos/{SIBLING}").status_code == 404
    # The owner reads its own; nobody reads what does not exist.
    owner = _user_token(server, "octo-org")
    assert _as(server, owner, f"/repos/{SIBLING}").json()["permissions"]["admin"] is True
    assert _as(server, owner, "/repos/octo-org/nothing").status_code == 404
    # A user's token is not an installation's: no other route answers it here.
    assert _as(server, token, f"/repos/{REPO}/issues/1").status_code == 404


def test_installation_tokens_see_repositories_as_before(server: GitHubServer, token: str) -> None:
    assert _as(server, token, f"/repos/{SIBLING}").status_code == 200
    assert _as(server, token, f"/repos/{FOREIGN}").status_code == 404
