"""Whether a signed-in user can read a repository: GitHub's answers through the App's user
client (against the local GitHub), and the short-lived, bounded memory of them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from reprobot.bot.errors import GitHubError
from reprobot.bot.github.user_auth import GitHubUsers, SignInRefused, TokenRefused
from reprobot.bot.pages.access import AccessCache, ReadAccess
from reprobot.bot.store.sessions import WebSession
from tests.bot.pages.conftest import PRIVATE, PUBLIC
from tests.support.github_server import GitHubServer

CALLBACK = "https://reprobot.example.org/auth/callback"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def users(github: GitHubServer) -> Iterator[GitHubUsers]:
    http = httpx.Client(timeout=10)
    yield GitHubUsers(
        web_url=github.base_url,
        api_url=github.api_url,
        client_id=github.oauth_client_id,
        client_secret=github.oauth_client_secret,
        http=http,
    )
    http.close()


def _code(github: GitHubServer, users: GitHubUsers, login: str) -> str:
    github.sign_in_as(login)
    back = httpx.get(users.authorize_url(CALLBACK, "st")).headers["location"]
    query = parse_qs(urlsplit(back).query)
    assert query["state"] == ["st"]
    return query["code"][0]


def _session(github: GitHubServer, users: GitHubUsers, login: str) -> WebSession:
    token = users.exchange(_code(github, users, login), CALLBACK)
    now = datetime.now(UTC)
    return WebSession(f"key-{login}", users.login(token.value), token.value, now, now)


def _repo_checks(github: GitHubServer) -> int:
    return sum(1 for c in github.calls if c.path == f"/api/v3/repos/{PRIVATE}")


def test_answers_are_kept_for_their_time_and_no_longer() -> None:
    clock = Clock()
    cache = AccessCache(300, clock=clock)
    cache.put(("s", "o/r"), True)
    cache.put(("s", "o/other"), False)
    clock.now += 299.9
    assert cache.get(("s", "o/r")) is True and cache.get(("s", "o/other")) is False
    assert cache.get(("t", "o/r")) is None
    clock.now += 0.1
    assert cache.get(("s", "o/r")) is None and len(cache) == 1
    # Nothing is kept when answers are not to be reused.
    never = AccessCache(0, clock=clock)
    never.put(("s", "o/r"), True)
    assert never.get(("s", "o/r")) is None


def test_the_memory_is_bounded_and_forgets_a_session() -> None:
    cache = AccessCache(300, max_entries=3, clock=Clock())
    for n in range(5):
        cache.put(("s", f"o/r{n}"), True)
    assert len(cache) == 3
    assert cache.get(("s", "o/r0")) is None and cache.get(("s", "o/r4")) is True
    cache.put(("t", "o/r4"), False)
    cache.forget("s")
    assert len(cache) == 1 and cache.get(("t", "o/r4")) is False


def test_the_memory_is_shared_safely_by_threads() -> None:
    cache = AccessCache(300, max_entries=50)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(2000):
                key = (f"s{n}", f"o/r{i % 97}")
                cache.put(key, bool(i % 2))
                cache.get(key)
                if i % 500 == 0:
                    cache.forget(f"s{(n + 1) % 8}")
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(cache) <= 50


def test_github_is_asked_once_per_answer_time(github: GitHubServer, users: GitHubUsers) -> None:
    github.grant_read(PRIVATE, "alice")
    session = _session(github, users, "alice")
    assert session.login == "alice"
    clock = Clock()
    access = ReadAccess(users, AccessCache(300, clock=clock))
    assert access.can_read(session, PRIVATE) is True
    github.revoke_read(PRIVATE, "alice")
    clock.now += 299
    assert access.can_read(session, PRIVATE.upper()) is True  # remembered, whatever the case
    assert _repo_checks(github) == 1
    clock.now += 1
    assert access.can_read(session, PRIVATE) is False
    assert _repo_checks(github) == 2
    # Public repositories are readable by anyone; the owner reads its own.
    assert access.can_read(session, PUBLIC) is True
    owner = _session(github, users, "acme")
    assert access.can_read(owner, PRIVATE) is True


def test_a_refused_token_and_an_unanswered_question_are_not_remembered(
    github: GitHubServer, users: GitHubUsers
) -> None:
    github.grant_read(PRIVATE, "alice")
    session = _session(github, users, "alice")
    access = ReadAccess(users, AccessCache(300, clock=Clock()))
    github.fail_next("GET", rf"/repos/{PRIVATE}$", 503)
    with pytest.raises(GitHubError):
        access.can_read(session, PRIVATE)
    # A rate limit's 403 says nothing of access.
    limited = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1"}
    github.fail_next("GET", rf"/repos/{PRIVATE}$", 403, headers=limited)
    with pytest.raises(GitHubError):
        access.can_read(session, PRIVATE)
    assert access.can_read(session, PRIVATE) is True
    github.revoke_user_tokens("alice")
    fresh = ReadAccess(users, AccessCache(300, clock=Clock()))
    with pytest.raises(TokenRefused):
        fresh.can_read(session, PRIVATE)
    with pytest.raises(TokenRefused):
        users.login(session.token)


def test_a_code_buys_one_token_for_the_apps_own_client(
    github: GitHubServer, users: GitHubUsers
) -> None:
    code = _code(github, users, "alice")
    wrong = GitHubUsers(
        web_url=github.base_url,
        api_url=github.api_url,
        client_id=github.oauth_client_id,
        client_secret="not the secret",
        http=httpx.Client(timeout=10),
    )
    with pytest.raises(SignInRefused, match="incorrect_client_credentials"):
        wrong.exchange(code, CALLBACK)
    wrong.close()
    token = users.exchange(code, CALLBACK)
    assert token.value.startswith("ghu_") and token.value not in repr(token)
    assert token.expires_in_s == 8 * 3600
    with pytest.raises(SignInRefused, match="bad_verification_code"):
        users.exchange(code, CALLBACK)
    with pytest.raises(SignInRefused, match="redirect_uri_mismatch"):
        users.exchange(_code(github, users, "alice"), CALLBACK + "/elsewhere")
