"""Installation tokens (``GitHubApp``): narrowed, cached, renewed; the App from its settings."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reprobot.bot.errors import AppConfigError, GitHubError
from reprobot.bot.github.auth import (
    RENEWALS,
    REPRODUCE_PERMISSIONS,
    TOKEN_MARGIN,
    VERIFY_PERMISSIONS,
    GitHubApp,
)
from reprobot.bot.github.repo_api import RepoAPI
from tests.bot.github.scenario import (
    APP_ID,
    INSTALLATION,
    REPO,
    SIBLING,
    api_calls,
    make_app,
    settings_for,
    start_server,
    token_calls,
)
from tests.support.github_server import GitHubServer, make_app_key
from tests.support.widgets import Sources

# --- installation tokens ----------------------------------------------------------------------


def test_a_token_is_narrowed_to_one_repository_and_the_permissions(
    server: GitHubServer, app: GitHubApp, sources: Sources
) -> None:
    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)

    (issued,) = server.tokens
    assert issued["token"] == token.token
    assert issued["installation_id"] == INSTALLATION
    assert issued["repositories"] == ["widgets"]
    assert issued["permissions"] == {"metadata": "read", "contents": "read", "issues": "write"}
    assert token.repositories == (REPO,) and token.installation_id == INSTALLATION
    assert dict(token.permissions) == issued["permissions"]
    expected = datetime.strptime(issued["expires_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert token.expires_at == expected
    assert token.token not in repr(token)

    # The server holds it to that: the sibling repository is hidden, pull requests refused.
    api = RepoAPI(app.client(token), REPO, APP_ID)
    assert api.repository().full_name == REPO
    sibling = RepoAPI(app.client(token), SIBLING, APP_ID)
    with pytest.raises(GitHubError) as hidden:
        sibling.repository()
    assert hidden.value.status == 404
    server.add_pull(REPO, 2, "Fix", None, sources.main_sha, sources.first_sha)
    with pytest.raises(GitHubError) as refused:
        api.pull(2)
    assert refused.value.status == 403


def test_tokens_are_cached_per_repository_and_permissions(
    server: GitHubServer, app: GitHubApp
) -> None:
    first = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    again = app.token(INSTALLATION, "Octo-Org/Widgets", dict(REPRODUCE_PERMISSIONS))

    assert again is first
    assert len(server.tokens) == 1 and len(token_calls(server)) == 1

    verify = app.token(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    sibling = app.token(INSTALLATION, SIBLING, REPRODUCE_PERMISSIONS)
    assert len({first.token, verify.token, sibling.token}) == 3
    assert [t["repositories"] for t in server.tokens] == [["widgets"], ["widgets"], ["gadgets"]]
    assert server.tokens[1]["permissions"] == dict(VERIFY_PERMISSIONS)
    assert app.token(INSTALLATION, REPO, VERIFY_PERMISSIONS) is verify
    assert len(server.tokens) == 3


def test_a_token_is_renewed_when_it_nears_its_expiry(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    now = [datetime.now(UTC)]
    app = make_app(server, app_key[0], clock=lambda: now[0])
    first = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    issued_by = datetime.now(UTC)
    lifetime = first.expires_at - now[0]
    # The server stamps the expiry by its own clock, a moment after ``now[0]``.
    assert timedelta(minutes=59) < lifetime
    assert first.expires_at <= issued_by + timedelta(minutes=60, seconds=1)

    now[0] += lifetime - TOKEN_MARGIN - timedelta(seconds=30)
    assert app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS) is first
    now[0] += timedelta(seconds=60)  # now within the margin
    renewed = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)

    assert renewed.token != first.token
    assert [t["token"] for t in server.tokens] == [first.token, renewed.token]
    assert RepoAPI(app.client(renewed), REPO, APP_ID).issue(1).number == 1


def test_a_token_shorter_lived_than_the_margin_is_never_reused(
    app_key: tuple[str, bytes], git_root: Path
) -> None:
    server = start_server(app_key, git_root, token_ttl_s=200)
    try:
        app = make_app(server, app_key[0])
        first = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
        second = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)

        assert first.token != second.token
        assert len(server.tokens) == 2
        # Each is a working token all the same.
        assert RepoAPI(app.client(second), REPO, APP_ID).issue(1).number == 1
    finally:
        server.__exit__(None, None, None)


def test_token_failures_are_github_errors(server: GitHubServer, app: GitHubApp) -> None:
    with pytest.raises(GitHubError) as unknown:
        app.token(999, REPO, REPRODUCE_PERMISSIONS)
    assert unknown.value.status == 404
    with pytest.raises(GitHubError) as foreign:
        app.token(INSTALLATION, "elsewhere/thing", REPRODUCE_PERMISSIONS)
    assert foreign.value.status == 422
    with pytest.raises(GitHubError) as beyond:
        app.token(INSTALLATION, REPO, {"administration": "write"})
    assert beyond.value.status == 422
    assert server.tokens == []


def test_a_wrong_private_key_is_refused(server: GitHubServer) -> None:
    other_key, _ = make_app_key()
    # Another App id, so that githubkit's JWT cache cannot hand out this module's JWT.
    impostor = GitHubApp(APP_ID + 1000, other_key, server.api_url)
    with pytest.raises(GitHubError) as refused:
        impostor.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    assert refused.value.status == 401


def test_the_app_from_its_settings_gets_tokens(
    server: GitHubServer, app_key: tuple[str, bytes], tmp_path: Path
) -> None:
    key_path = tmp_path / "app.pem"
    key_path.write_text(app_key[0])
    app = GitHubApp.from_settings(
        settings_for(server, tmp_path, key_path, github_max_retries=0, github_timeout_s=5)
    )

    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    api = RepoAPI(app.client(token), REPO, app.app_id)
    assert app.app_id == APP_ID and api.issue(1).title == "area() is wrong"
    # github_max_retries=0 reached the retry policy: a server error is not tried again.
    server.fail_server_error("GET", r"/issues/1$", times=2)
    with pytest.raises(GitHubError) as failed:
        api.issue(1)
    assert failed.value.status == 502
    assert len(api_calls(server, "GET", r"/issues/1$")) == 2


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("no app id", "REPROBOT_APP_ID"),
        ("no key path", "REPROBOT_PRIVATE_KEY_PATH"),
        ("missing file", "cannot read"),
        ("directory", "cannot read"),
        ("binary", "cannot read"),
        ("not pem", "not a PEM private key"),
        ("public key", "not a PEM private key"),
    ],
)
def test_bad_app_settings_are_config_errors(
    server: GitHubServer, app_key: tuple[str, bytes], tmp_path: Path, case: str, message: str
) -> None:
    key_path: Path | None = tmp_path / "app.pem"
    assert key_path is not None
    extra: dict[str, object] = {}
    if case == "no app id":
        key_path.write_text(app_key[0])
        extra["app_id"] = None
    elif case == "no key path":
        key_path = None
    elif case == "directory":
        key_path.mkdir()
    elif case == "binary":
        key_path.write_bytes(b"\xff\xfe-----BEGIN RSA PRIVATE KEY-----\x80\n")
    elif case == "not pem":
        key_path.write_text('{"private_key": "somewhere else"}\n')
    elif case == "public key":
        key_path.write_bytes(app_key[1])

    with pytest.raises(AppConfigError, match=message):
        GitHubApp.from_settings(settings_for(server, tmp_path, key_path, **extra))
    assert server.calls == []


def test_a_rejected_cached_token_is_dropped_and_renewed_once(
    server: GitHubServer, app: GitHubApp
) -> None:
    auth = app.installation(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    api = RepoAPI(app.client_for(auth), REPO, APP_ID)
    assert api.issue(1).number == 1
    first = auth.token
    # GitHub stops accepting every token issued so far (revoked, as on a permissions change).
    server.expire_tokens()
    rejected_at = time.monotonic()
    assert api.issue(1).number == 1
    assert auth.token.token != first.token
    assert [t["token"] for t in server.tokens] == [first.token, auth.token.token]
    # The cache holds the new token: the next job of this repository gets it, not the old one.
    assert app.token(INSTALLATION, REPO, VERIFY_PERMISSIONS).token == auth.token.token
    # A second job whose request the same revocation refused renews to the same new one,
    # minting nothing.
    stale = app.installation(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    assert stale.renew(first, rejected_at).token == auth.token.token
    assert len(server.tokens) == 2


def test_a_renewal_never_hands_out_a_token_the_same_revocation_killed(
    server: GitHubServer, app: GitHubApp
) -> None:
    # Job A renews first; its new token is minted, then a revocation kills it and job B's
    # token together. B must not take A's cached token: it is as dead as its own.
    a = app.installation(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    b = app.installation(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    held = b.token
    minted_before = a.renew(a.token, time.monotonic())
    server.expire_tokens()
    rejected_at = time.monotonic()

    fresh = b.renew(held, rejected_at)

    assert fresh.token not in (held.token, minted_before.token)
    assert RepoAPI(app.client_for(b), REPO, APP_ID).issue(1).number == 1
    # A, refused by the same revocation, takes B's new token instead of minting a third.
    assert a.renew(minted_before, rejected_at).token == fresh.token
    assert len(server.tokens) == 3


def test_requests_in_flight_survive_revocations_and_each_others_clients(
    server: GitHubServer, app: GitHubApp
) -> None:
    # Every client the App makes shares one connection pool, and githubkit closes its client
    # after each request: no request may close the pool under another, nor under the request
    # whose 401 is being renewed.
    errors: list[BaseException] = []
    done = threading.Event()

    def reads(n: int) -> None:
        try:
            for i in range(n):
                auth = app.installation(INSTALLATION, REPO, VERIFY_PERMISSIONS)
                api = RepoAPI(app.client_for(auth), REPO, APP_ID)
                assert api.issue(1).number == 1
                if i % 3 == 0:
                    api.add_label(1, "seen")
        except BaseException as exc:  # noqa: BLE001 - every failure is the test's finding
            errors.append(exc)

    threads = [threading.Thread(target=reads, args=(25,)) for _ in range(8)]
    for thread in threads:
        thread.start()

    def revoke() -> None:
        while not done.wait(0.2):
            server.expire_tokens()

    revoker = threading.Thread(target=revoke)
    revoker.start()
    for thread in threads:
        thread.join(120)
    done.set()
    revoker.join()

    assert errors == []
    assert len(server.tokens) > 2  # the revocations did land during the run


def test_a_mutation_whose_token_was_revoked_is_sent_again_with_a_new_one(
    server: GitHubServer, app: GitHubApp
) -> None:
    # The mutation holds the installation's queue of mutations while its answer, a 401, makes
    # it mint a new token: a POST too, which must not wait behind the request it serves.
    for attempt in range(3):
        auth = app.installation(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
        api = RepoAPI(app.client_for(auth), REPO, APP_ID)
        rejected = auth.token
        server.expire_tokens()
        api.add_label(1, f"seen-{attempt}")
        assert auth.token.token != rejected.token
    assert {"seen-0", "seen-1", "seen-2"} <= set(server.issue_labels(REPO, 1))


def test_a_token_rejected_again_after_renewal_is_an_error(
    server: GitHubServer, app: GitHubApp
) -> None:
    auth = app.installation(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    api = RepoAPI(app.client_for(auth), REPO, APP_ID)
    server.fail_next("GET", r"/issues/1$", 401, times=RENEWALS + 1)
    with pytest.raises(GitHubError) as failed:
        api.issue(1)
    assert failed.value.status == 401
    # Renewed a bounded number of times, not in a loop.
    assert len(server.tokens) == RENEWALS + 1
