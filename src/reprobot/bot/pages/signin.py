"""Sign-in for report pages of private repositories: ``/auth/login``, ``/auth/callback`` and
``/auth/logout``, and the gate a private page passes before it is shown.

A page of a private repository is shown only to a GitHub user who signed in with the App (its
own user authorization: GitHub's web application flow) and whom GitHub shows the repository to,
asked with the user's own token (``access``). ``login`` sends the browser to GitHub with a
signed, short-lived ``state`` naming the page to come back to, and a cookie with the state's
nonce, so that a callback started in another browser (a sign-in forced on someone) is refused.
``callback`` trades GitHub's code for the user's token, starts a session (``store.sessions``)
and sets its cookie, which holds only the session's random id. Where to come back to is only
ever a report page of this App, never another site."""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta
from html import escape
from typing import Annotated, Literal
from urllib.parse import quote

import structlog
from fastapi import FastAPI, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from itsdangerous import BadData, URLSafeTimedSerializer

from reprobot.bot.errors import GitHubError
from reprobot.bot.github.user_auth import GitHubUsers, SignInRefused, TokenRefused
from reprobot.bot.pages.access import ReadAccess
from reprobot.bot.store.sessions import MAX_SESSION, WebSessions

log = structlog.get_logger(__name__)

SESSION_COOKIE = "reprobot_session"
# The nonce of a sign-in under way, sent back only to the callback.
STATE_COOKIE = "reprobot_signin"
STATE_SALT = "reprobot.signin-state"
# How long a sign-in may take at GitHub.
_STATE_MAX_AGE_S = 600
# Where a sign-in may come back to: a report page of this App, by its path.
_NEXT = re.compile(r"/pages/[A-Za-z0-9_.\-]{1,200}")
_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "X-Robots-Tag": "noindex, nofollow",
}

Decision = Literal["show", "sign_in", "hidden", "not_set_up", "unavailable"]


def safe_next(value: str | None) -> str | None:
    """``value`` when it is the path of a report page (a relative path on this site), else
    None: a full address, ``//host``, a backslash or ``..`` never passes."""
    if value and _NEXT.fullmatch(value) and ".." not in value:
        return value
    return None


def notice(status: int, title: str, text: str, form: str = "") -> HTMLResponse:
    """A small page that says ``text`` (plain words, escaped)."""
    body = (
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{escape(title)}</title>"
        f"<p>{escape(text)}</p>{form}</html>"
    )
    return HTMLResponse(body, status_code=status, headers=_HEADERS)


def redirect(url: str) -> RedirectResponse:
    """303 to ``url``, kept by no cache."""
    return RedirectResponse(url, 303, headers={"Cache-Control": "no-store"})


def not_set_up() -> HTMLResponse:
    """What a private page answers when the App's operator has not set up sign-in."""
    return notice(
        403,
        "Sign-in is not set up",
        "This page can only be shown to GitHub users signed in with the App, and the operator "
        "of this Reprobot has not set up signing in.",
    )


@dataclass
class SignIn:
    """Sign-in and the access check of private pages: GitHub (``users``), the sessions, the
    cached access answers, the key that signs states, and the App's public address."""

    users: GitHubUsers
    sessions: WebSessions
    access: ReadAccess
    key: bytes
    public_url: str

    @property
    def configured(self) -> bool:
        return self.users.configured

    @property
    def secure(self) -> bool:
        """Cookies go over HTTPS only when the App is served over HTTPS."""
        return self.public_url.startswith("https://")

    @property
    def redirect_uri(self) -> str:
        return f"{self.public_url.rstrip('/')}/auth/callback"

    def _states(self) -> URLSafeTimedSerializer:
        return URLSafeTimedSerializer(self.key, salt=STATE_SALT)

    def decide(self, session_id: str | None, repo: str) -> Decision:
        """Whether the browser holding ``session_id`` may see a page of private ``repo``."""
        if not self.configured:
            return "not_set_up"
        session = self.sessions.get(session_id) if session_id else None
        if session is None or not session_id:
            return "sign_in"
        try:
            return "show" if self.access.can_read(session, repo) else "hidden"
        except TokenRefused:
            # Expired or revoked at GitHub: the session is worth nothing, sign in again.
            self.sessions.end(session_id)
            self.access.forget(session)
            log.info("signin.token_refused", login=session.login)
            return "sign_in"
        except GitHubError as exc:
            log.warning("signin.access_unknown", repo=repo, error=str(exc)[:300])
            return "unavailable"

    def to_sign_in(self, next_path: str, had_session: bool) -> Response:
        """Send the browser to sign in, then back to ``next_path``."""
        response = redirect(f"/auth/login?next={quote(next_path, safe='/')}")
        if had_session:
            self.clear_session(response)
        return response

    def clear_session(self, response: Response) -> None:
        response.delete_cookie(
            SESSION_COOKIE, path="/", secure=self.secure, httponly=True, samesite="lax"
        )

    def start(self, next_path: str) -> Response:
        """``/auth/login``: to GitHub, with a state that comes back to ``next_path``."""
        nonce = secrets.token_urlsafe(16)
        state = str(self._states().dumps({"next": next_path, "nonce": nonce}))
        response = redirect(self.users.authorize_url(self.redirect_uri, state))
        response.set_cookie(
            STATE_COOKIE,
            nonce,
            max_age=_STATE_MAX_AGE_S,
            path="/auth",
            secure=self.secure,
            httponly=True,
            samesite="lax",
        )
        return response

    def next_of(self, state: str | None, nonce: str | None) -> str | None:
        """The page a callback's ``state`` comes back to; None when the state is altered,
        foreign, expired, or was not started in this browser (``nonce``, its cookie)."""
        if not state or not nonce or len(state) > 1000:
            return None
        try:
            value = self._states().loads(state, max_age=_STATE_MAX_AGE_S)
        except BadData:
            return None
        if not isinstance(value, dict) or not isinstance(value.get("nonce"), str):
            return None
        if not hmac.compare_digest(value["nonce"].encode(), nonce.encode()):
            return None
        return safe_next(value.get("next") if isinstance(value.get("next"), str) else None)

    def finish(self, code: str) -> tuple[str, timedelta]:
        """Trade ``code`` for the user's token and start a session: its id and lifetime."""
        token = self.users.exchange(code, self.redirect_uri)
        login = self.users.login(token.value)
        lifetime = MAX_SESSION
        if token.expires_in_s is not None and token.expires_in_s > 0:
            lifetime = min(lifetime, timedelta(seconds=token.expires_in_s))
        session_id = self.sessions.create(login, token.value, lifetime)
        log.info("signin.session_started", login=login)
        return session_id, lifetime


def add_signin_routes(app: FastAPI, signin: SignIn) -> None:
    @app.get("/auth/login")
    async def login(next_path: Annotated[str | None, Query(alias="next")] = None) -> Response:
        if not signin.configured:
            return not_set_up()
        target = safe_next(next_path)
        if target is None:
            return notice(400, "Not a page", "Signing in only leads back to a report page.")
        return signin.start(target)

    @app.get("/auth/callback")
    async def callback(
        request: Request, code: str | None = None, state: str | None = None
    ) -> Response:
        if not signin.configured:
            return not_set_up()
        target = signin.next_of(state, request.cookies.get(STATE_COOKIE))
        if target is None or not code or len(code) > 200:
            return notice(
                400,
                "Sign-in not accepted",
                "This sign-in has expired or was not started here. Open the page's link again.",
            )
        try:
            session_id, lifetime = await run_in_threadpool(signin.finish, code)
        except (SignInRefused, TokenRefused):
            return notice(
                400, "Sign-in not accepted", "GitHub did not accept this sign-in. Try again."
            )
        except GitHubError as exc:
            log.warning("signin.github_unavailable", error=str(exc)[:300])
            return notice(502, "GitHub did not answer", "GitHub could not be reached. Try again.")
        response = redirect(target)
        response.set_cookie(
            SESSION_COOKIE,
            session_id,
            max_age=int(lifetime.total_seconds()),
            path="/",
            secure=signin.secure,
            httponly=True,
            samesite="lax",
        )
        response.delete_cookie(
            STATE_COOKIE, path="/auth", secure=signin.secure, httponly=True, samesite="lax"
        )
        return response

    @app.get("/auth/logout")
    async def logout_form() -> Response:
        form = '<form method=post action="/auth/logout"><button>Sign out</button></form>'
        return notice(200, "Sign out", "Sign out of Reprobot's report pages?", form)

    @app.post("/auth/logout")
    async def logout(request: Request) -> Response:
        session_id = request.cookies.get(SESSION_COOKIE)
        if session_id:
            session = await run_in_threadpool(signin.sessions.get, session_id)
            await run_in_threadpool(signin.sessions.end, session_id)
            if session is not None:
                signin.access.forget(session)
        response = notice(200, "Signed out", "You are signed out.")
        signin.clear_session(response)
        return response
