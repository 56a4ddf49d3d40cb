"""Report pages of private repositories, end to end: Reprobot's web app on a port of its own,
the local GitHub's sign-in and access answers, and an HTTP client that keeps cookies and
follows redirects between the two as a browser does."""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import httpx
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from sqlalchemy import Engine, select, text

from reprobot.bot.jobs.report_pages import publish
from reprobot.bot.pages.links import page_key
from reprobot.bot.pages.signin import SESSION_COOKIE, STATE_COOKIE, STATE_SALT, safe_next
from reprobot.bot.store.engine import make_engine, migrate
from reprobot.bot.store.models import WebSessionRow
from reprobot.bot.store.pages import Pages
from tests.bot.pages.conftest import PRIVATE, PUBLIC, PagesApp
from tests.bot.pages.test_report_page import _page
from tests.support.github_server import GitHubServer

StartApp = Callable[..., PagesApp]
VERIFIED = "Verified: 1 reproducing test"


def _path(url: str) -> str:
    return urlsplit(url).path


def _user_checks(github: GitHubServer) -> list[str]:
    """The paths the App asked GitHub as a signed-in user."""
    return [
        c.path
        for c in github.calls
        if c.headers.get("authorization", "").lower().startswith("bearer ghu_")
    ]


def _not_found_body(app: PagesApp) -> str:
    answer = httpx.get(app.links.url("no-such-page"))
    assert answer.status_code == 404
    return answer.text


def _sessions(engine: Engine) -> list[dict[str, object]]:
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(select(WebSessionRow)).mappings()]


# --- where a sign-in may lead --------------------------------------------------------------


def test_only_a_report_pages_path_is_a_place_to_come_back_to() -> None:
    assert safe_next("/pages/AbC-_.x.y") == "/pages/AbC-_.x.y"
    for wrong in (
        None,
        "",
        "https://evil.example/pages/x",
        "//evil.example/pages/x",
        "/\\evil.example",
        "/pages/../auth/logout",
        "/pages/x/../../y",
        "/pages/x?next=//evil",
        "/pages/",
        "/metrics",
        "/pages/" + "a" * 300,
    ):
        assert safe_next(wrong) is None, wrong


# --- the store ------------------------------------------------------------------------------


def test_a_page_keeps_whether_its_repository_is_private(engine: Engine) -> None:
    pages = Pages(engine)
    private = pages.save("verdict", PRIVATE, 1, "a" * 40, "verified", "{}", private=True)
    public = pages.save("verdict", PUBLIC, 1, "a" * 40, "verified", "{}")
    assert pages.get(private.id) == private and private.private
    assert pages.get(public.id) == public and not public.private


def test_pages_made_before_the_flag_need_a_signed_in_reader(store_url: str) -> None:
    # Their repository may have been private: nothing says it was not.
    old = make_engine(store_url)
    migrate(old, "0004")
    with old.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO pages (id, kind, repo, number, head_sha, status, document,"
                " created_at) VALUES ('old', 'verdict', 'o/r', 1, NULL, 'verified', '{}',"
                " '2026-01-02 03:04:05')"
            )
        )
    migrate(old)
    stored = Pages(old).get("old")
    assert stored is not None and stored.private is True
    # Pages made from now on say what their repository is; the column's default is public.
    fresh = Pages(old).save("verdict", "o/r", 2, None, "verified", "{}")
    assert Pages(old).get(fresh.id) == fresh and fresh.private is False
    old.dispose()


# --- public pages -----------------------------------------------------------------------------


def test_a_public_repositorys_page_opens_by_its_link_alone(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app()
    answer = httpx.get(app.page(PUBLIC, private=False))
    assert answer.status_code == 200 and VERIFIED in answer.text
    assert "set-cookie" not in answer.headers
    # Nobody signed in, nothing asked of GitHub.
    assert not [c for c in github.calls if "oauth" in c.path or c.path.endswith("/user")]
    assert _user_checks(github) == []


# --- private pages ----------------------------------------------------------------------------


def test_a_private_page_without_a_session_sends_the_browser_to_sign_in(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app()
    link = app.page(PRIVATE, private=True)
    answer = httpx.get(link)
    assert answer.status_code == 303
    assert answer.headers["location"] == f"/auth/login?next={_path(link)}"
    assert VERIFIED not in answer.text
    # /auth/login: to GitHub with the App's client id, its callback and a state, and a cookie
    # that ties the state to this browser.
    login = httpx.get(app.url + answer.headers["location"])
    assert login.status_code == 303
    to = urlsplit(login.headers["location"])
    assert f"{to.scheme}://{to.netloc}{to.path}" == f"{github.base_url}/login/oauth/authorize"
    query = parse_qs(to.query)
    assert query["client_id"] == [github.oauth_client_id]
    assert query["redirect_uri"] == [f"{app.url}/auth/callback"]
    assert query["state"][0]
    cookie = login.headers["set-cookie"].lower()
    assert cookie.startswith(f"{STATE_COOKIE}=")
    for attribute in ("httponly", "samesite=lax", "path=/auth", "max-age=600"):
        assert attribute in cookie
    assert "secure" not in cookie  # the App is served over plain HTTP here


def test_a_job_publishes_a_private_repositorys_page_as_private(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app()
    link = publish(app.ctx, PRIVATE, 7, "c" * 40, "verified", _page(), private=True)
    assert link is not None and link.startswith(f"{app.url}/pages/")
    assert httpx.get(link).status_code == 303
    shared = publish(app.ctx, PUBLIC, 7, "c" * 40, "verified", _page(), private=False)
    assert shared is not None and httpx.get(shared).status_code == 200


def test_a_reader_signs_in_once_and_reads_the_page(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app()
    link = app.page(PRIVATE, private=True)
    github.grant_read(PRIVATE, "alice")
    github.sign_in_as("alice")
    answer = app.browser.get(link)
    assert answer.status_code == 200 and VERIFIED in answer.text
    # Page -> sign-in -> GitHub -> callback -> page.
    hops = [(r.status_code, _path(str(r.url))) for r in answer.history]
    assert hops == [
        (303, _path(link)),
        (303, "/auth/login"),
        (302, "/login/oauth/authorize"),
        (303, "/auth/callback"),
    ]
    callback = answer.history[-1]
    cookie = next(
        v for v in callback.headers.get_list("set-cookie") if v.startswith(SESSION_COOKIE)
    )
    session_id = app.browser.cookies[SESSION_COOKIE]
    for attribute in ("httponly", "samesite=lax", "path=/"):
        assert attribute in cookie.lower()
    # The cookie holds a random id, the store its hash and the token encrypted: neither the
    # cookie nor a reader of the database learns the user's token, nor can present the cookie.
    (token,) = github.user_tokens("alice")
    assert token not in cookie
    (row,) = _sessions(app.ctx.engine)
    assert row["login"] == "alice"
    assert session_id not in str(row.values()) and token not in str(row.values())
    # Read again: the access answer is reused, GitHub is not asked.
    checks = len(_user_checks(github))
    again = app.browser.get(link)
    assert again.status_code == 200 and not again.history
    assert len(_user_checks(github)) == checks


def test_a_reader_who_loses_access_loses_the_page_when_the_answer_expires(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app(access_cache_s=1.5)
    link = app.page(PRIVATE, private=True)
    github.grant_read(PRIVATE, "bob")
    github.sign_in_as("bob")
    started = time.monotonic()
    assert app.browser.get(link).status_code == 200
    github.revoke_read(PRIVATE, "bob")
    still = app.browser.get(link)
    if time.monotonic() - started < 1.4:
        # GitHub's answer is reused for ACCESS_CACHE_S, no longer.
        assert still.status_code == 200
    time.sleep(1.6)
    gone = app.browser.get(link)
    assert gone.status_code == 404 and gone.text == _not_found_body(app)
    assert not gone.history  # no sign-in asked: the user is who they are, and may not read


def test_a_user_who_never_could_read_gets_the_404_of_a_page_that_does_not_exist(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app()
    link = app.page(PRIVATE, private=True)
    github.sign_in_as("mallory")
    answer = app.browser.get(link)
    assert answer.status_code == 404
    assert answer.text == _not_found_body(app)
    assert "acme" not in answer.text and VERIFIED not in answer.text
    assert _user_checks(github)[-1] == f"/api/v3/repos/{PRIVATE}"


def _expired_state(app: PagesApp, next_path: str, nonce: str) -> str:
    class Old(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - 3600

    serializer = URLSafeTimedSerializer(page_key(app.ctx.settings), STATE_SALT, signer=Old)
    return str(serializer.dumps({"next": next_path, "nonce": nonce}))


def test_a_forged_expired_or_foreign_state_is_refused_and_sets_nothing(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app()
    link = app.page(PRIVATE, private=True)
    github.grant_read(PRIVATE, "alice")
    github.sign_in_as("alice")
    browser = httpx.Client()  # follows nothing
    login = browser.get(f"{app.url}/auth/login", params={"next": _path(link)})
    state = parse_qs(urlsplit(login.headers["location"]).query)["state"][0]
    nonce = browser.cookies[STATE_COOKIE]
    payload, stamp, signature = state.split(".")
    forged = f"{payload}.{stamp}.{'A' if signature[0] != 'A' else 'B'}{signature[1:]}"
    refused = [
        browser.get(f"{app.url}/auth/callback", params={"code": "x", "state": forged}),
        browser.get(
            f"{app.url}/auth/callback",
            params={"code": "x", "state": _expired_state(app, _path(link), nonce)},
        ),
        # A good state, from a browser that did not start this sign-in.
        httpx.get(f"{app.url}/auth/callback", params={"code": "x", "state": state}),
        browser.get(f"{app.url}/auth/callback", params={"state": state}),
    ]
    for answer in refused:
        assert answer.status_code == 400
        assert "set-cookie" not in answer.headers and "location" not in answer.headers
    assert not [c for c in github.calls if c.path == "/login/oauth/access_token"]
    assert _sessions(app.ctx.engine) == []
    browser.close()


def test_a_sign_in_that_leads_elsewhere_is_refused(start_app: StartApp) -> None:
    app = start_app()
    for target in ("https://evil.example/", "//evil.example/pages/x", "/pages/../metrics"):
        answer = httpx.get(f"{app.url}/auth/login", params={"next": target})
        assert answer.status_code == 400, target
        assert "location" not in answer.headers and "set-cookie" not in answer.headers


def test_a_denied_or_spent_sign_in_is_not_a_session(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app()
    link = app.page(PRIVATE, private=True)
    github.sign_in_as("alice", approve=False)
    denied = app.browser.get(link)
    assert denied.status_code == 400 and SESSION_COOKIE not in app.browser.cookies
    # A code is good once: the callback's URL loaded again is refused by GitHub.
    github.grant_read(PRIVATE, "alice")
    github.sign_in_as("alice")
    browser = httpx.Client()
    to_github = browser.get(f"{app.url}/auth/login", params={"next": _path(link)})
    callback = browser.get(to_github.headers["location"]).headers["location"]
    assert browser.get(callback).status_code == 303
    assert browser.get(callback).status_code == 400
    browser.close()


def test_a_token_github_no_longer_accepts_means_signing_in_again(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app(access_cache_s=0)
    link = app.page(PRIVATE, private=True)
    github.grant_read(PRIVATE, "alice")
    github.sign_in_as("alice")
    assert app.browser.get(link).status_code == 200
    github.revoke_user_tokens("alice")
    github.sign_in_as(None)
    plain = httpx.Client(cookies=app.browser.cookies)
    answer = plain.get(link)
    assert answer.status_code == 303
    assert answer.headers["location"] == f"/auth/login?next={_path(link)}"
    assert f'{SESSION_COOKIE}=""' in answer.headers["set-cookie"]
    assert _sessions(app.ctx.engine) == []
    plain.close()
    # Signing in again gives a new token, and the page.
    github.sign_in_as("alice")
    again = app.browser.get(link)
    assert again.status_code == 200 and VERIFIED in again.text
    assert len(github.user_tokens("alice")) == 2


def test_signing_out_ends_the_session(start_app: StartApp, github: GitHubServer) -> None:
    app = start_app()
    link = app.page(PRIVATE, private=True)
    github.grant_read(PRIVATE, "alice")
    github.sign_in_as("alice")
    assert app.browser.get(link).status_code == 200
    session_id = app.browser.cookies[SESSION_COOKIE]
    form = app.browser.get(f"{app.url}/auth/logout")
    assert form.status_code == 200 and 'method=post action="/auth/logout"' in form.text
    out = app.browser.post(f"{app.url}/auth/logout")
    assert out.status_code == 200 and SESSION_COOKIE not in app.browser.cookies
    assert _sessions(app.ctx.engine) == []
    # The old cookie, presented again, is no session.
    answer = httpx.get(link, cookies={SESSION_COOKIE: session_id})
    assert answer.status_code == 303 and answer.headers["location"].startswith("/auth/login")


def test_github_not_answering_is_not_taken_for_an_answer(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app()
    link = app.page(PRIVATE, private=True)
    github.grant_read(PRIVATE, "alice")
    github.sign_in_as("alice")
    github.fail_next("GET", rf"/repos/{PRIVATE}$", 502)
    answer = app.browser.get(link)
    assert answer.status_code == 503 and VERIFIED not in answer.text
    assert app.browser.get(link).status_code == 200


def test_without_sign_in_set_up_private_pages_are_refused(
    start_app: StartApp, github: GitHubServer
) -> None:
    app = start_app(oauth_client_id="")
    answer = httpx.get(app.page(PRIVATE, private=True))
    assert answer.status_code == 403
    assert "has not set up signing in" in answer.text
    assert "acme" not in answer.text and VERIFIED not in answer.text
    assert httpx.get(f"{app.url}/auth/login", params={"next": "/pages/x"}).status_code == 403
    # Public pages are shown as ever.
    assert httpx.get(app.page(PUBLIC, private=False)).status_code == 200
    assert [c for c in github.calls if "oauth" in c.path] == []
