"""The App's user authorization (GitHub's web application flow) and what a user's token may ask:
who its user is, and a repository as that user sees it.

There is no browser session at this GitHub: the test says who is signed in and approves the App
(``sign_in_as``), and ``/login/oauth/authorize`` redirects back at once with a code, as GitHub
does for a user who authorized the App before. Codes are single-use and short-lived; user
tokens (``ghu_``) live eight hours, as GitHub's expiring user tokens do, unless revoked."""

from __future__ import annotations

import copy
import re
import secrets
import time
from dataclasses import dataclass, field
from urllib.parse import unquote, urlencode, urlsplit

from tests.support.github_server.graphql import GraphQLRoute
from tests.support.github_server.records import (
    _REPO,
    _TOKEN_ALPHABET,
    API_PREFIX,
    JSON,
    PERMISSION_LEVELS,
    ROLES,
    _Answer,
    _HttpError,
    _not_found,
    _Request,
)

OAUTH_PREFIX = "/login/oauth/"
USER_TOKEN_TTL_S = 8 * 3600
_CODE_TTL_S = 600
_OAUTH_DOCS = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors"


@dataclass
class _UserToken:
    login: str
    expires: float


@dataclass
class _Code:
    login: str
    redirect_uri: str
    expires: float


@dataclass
class OAuthState:
    """The App's client secret, who is signed in, the codes and the user tokens handed out."""

    client_secret: str = field(default_factory=lambda: secrets.token_hex(20))
    callback_url: str | None = None
    signed_in: str | None = None
    approves: bool = True
    codes: dict[str, _Code] = field(default_factory=dict)
    tokens: dict[str, _UserToken] = field(default_factory=dict)


def _random(prefix: str, length: int = 36) -> str:
    return prefix + "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(length))


def _web(status: int, text: str, headers: dict[str, str] | None = None) -> _Answer:
    """An answer of GitHub's web side: not a REST answer, no rate limit headers."""
    return _Answer(
        status,
        raw=text.encode(),
        headers=headers or {},
        content_type="text/html; charset=utf-8",
        resource=None,
    )


class OAuthRoutes(GraphQLRoute):
    """The web application flow of the App's users and the REST routes of a user's token."""

    _oauth: OAuthState

    # --- test-side setup ------------------------------------------------------------------

    @property
    def oauth_client_id(self) -> str:
        """The App's client id, as its settings page shows it."""
        return f"Iv23li{self.app_id:014d}"

    @property
    def oauth_client_secret(self) -> str:
        return self._oauth.client_secret

    def set_oauth_callback(self, url: str | None) -> None:
        """The App's callback URL: a sign-in's ``redirect_uri`` must be under it."""
        with self._lock:
            self._oauth.callback_url = url

    def sign_in_as(self, login: str | None, approve: bool = True) -> None:
        """``login`` is signed in to this GitHub and, unless ``approve`` is false, authorizes
        the App when asked; None: nobody is signed in."""
        with self._lock:
            self._oauth.signed_in = login
            self._oauth.approves = approve

    def grant_read(self, full_name: str, login: str) -> None:
        """``login`` may read the repository (a collaborator with the read role)."""
        with self._lock:
            self._repo(full_name).permissions[login.lower()] = "read"

    def revoke_read(self, full_name: str, login: str) -> None:
        """``login`` may no longer read the repository (unless it is its owner's, or public)."""
        with self._lock:
            self._repo(full_name).permissions[login.lower()] = "none"

    def revoke_user_tokens(self, login: str) -> None:
        """``login`` revoked the App's authorization: their tokens are refused from now on."""
        with self._lock:
            for token in self._oauth.tokens.values():
                if token.login.lower() == login.lower():
                    token.expires = 0.0

    def user_tokens(self, login: str) -> list[str]:
        """The tokens handed out to ``login``, oldest first, live or not."""
        with self._lock:
            return [v for v, t in self._oauth.tokens.items() if t.login.lower() == login.lower()]

    # --- the web side: /login/oauth/... ---------------------------------------------------

    def _oauth_web(self, req: _Request) -> _Answer:
        route = req.path[len(OAUTH_PREFIX) :].rstrip("/")
        if route == "authorize" and req.method == "GET":
            return self._authorize(req)
        if route == "access_token" and req.method == "POST":
            return self._access_token(req)
        return _web(404, "Not Found")

    def _authorize(self, req: _Request) -> _Answer:
        if req.query.get("client_id") != self.oauth_client_id:
            return _web(404, "Not Found")
        redirect_uri = req.query.get("redirect_uri", "")
        with self._lock:
            callback = self._oauth.callback_url
            login, approves = self._oauth.signed_in, self._oauth.approves
        if not redirect_uri or (callback is not None and not _under(redirect_uri, callback)):
            return _web(400, "The redirect_uri is not associated with this application.")
        if login is None:
            return _web(401, "Nobody is signed in to this GitHub: the test calls sign_in_as.")
        answer: dict[str, str]
        if approves:
            code = secrets.token_hex(10)
            with self._lock:
                self._oauth.codes[code] = _Code(login, redirect_uri, time.time() + _CODE_TTL_S)
            answer = {"code": code}
        else:
            answer = {
                "error": "access_denied",
                "error_description": "The user has denied your application access.",
                "error_uri": _OAUTH_DOCS,
            }
        if "state" in req.query:
            answer["state"] = req.query["state"]
        joiner = "&" if urlsplit(redirect_uri).query else "?"
        return _web(302, "", {"location": f"{redirect_uri}{joiner}{urlencode(answer)}"})

    def _access_token(self, req: _Request) -> _Answer:
        # GitHub takes the parameters from the body (JSON here) or the query.
        params = dict(req.query)
        if isinstance(req.json, dict):
            params.update({k: str(v) for k, v in req.json.items()})
        body: JSON
        if params.get("client_id") != self.oauth_client_id or (
            params.get("client_secret") != self._oauth.client_secret
        ):
            body = {"error": "incorrect_client_credentials"}
        else:
            body = self._redeem(params.get("code", ""), params.get("redirect_uri"))
        if "error" in body:
            body["error_uri"] = _OAUTH_DOCS
        # Errors too are answered 200, as GitHub does; without asking for JSON, a form.
        if "json" in req.headers.get("accept", ""):
            return _Answer(200, body, resource=None)
        return _Answer(
            200,
            raw=urlencode(body).encode(),
            content_type="application/x-www-form-urlencoded; charset=utf-8",
            resource=None,
        )

    def _redeem(self, value: str, redirect_uri: str | None) -> JSON:
        """A new token for a code, which is spent either way; or the error GitHub names."""
        with self._lock:
            code = self._oauth.codes.pop(value, None)
            if code is None or code.expires <= time.time():
                return {"error": "bad_verification_code"}
            if redirect_uri is not None and redirect_uri != code.redirect_uri:
                return {"error": "redirect_uri_mismatch"}
            token = _random("ghu_")
            self._oauth.tokens[token] = _UserToken(code.login, time.time() + USER_TOKEN_TTL_S)
        return {
            "access_token": token,
            "expires_in": USER_TOKEN_TTL_S,
            "refresh_token": _random("ghr_", 76),
            "refresh_token_expires_in": 15_897_600,
            "token_type": "bearer",
            "scope": "",
        }

    # --- the REST side of a user's token --------------------------------------------------

    def _as_user(self, req: _Request) -> _Answer | None:
        """The answer to a REST request made with a user's token; None for any other token."""
        scheme, _, credential = req.headers.get("authorization", "").partition(" ")
        credential = credential.strip()
        if scheme.lower() not in ("token", "bearer") or not credential.startswith("ghu_"):
            return None
        with self._lock:
            token = self._oauth.tokens.get(credential)
            login = token.login if token is not None and token.expires > time.time() else None
        if login is None:
            raise _HttpError(401, "Bad credentials")
        route = req.path[len(API_PREFIX) :].rstrip("/")
        if route == "/user" and req.method == "GET":
            with self._lock:
                user = self._user(login)
            user.update({"name": None, "company": None, "email": None, "two_factor": True})
            return _Answer(200, user)
        match = re.fullmatch(_REPO, route)
        if match is not None and req.method == "GET":
            return self._repo_as_user(login, f"{unquote(match['owner'])}/{unquote(match['repo'])}")
        # No other route is asked with a user's token here.
        raise _not_found()

    def _repo_as_user(self, login: str, full_name: str) -> _Answer:
        with self._lock:
            repo = self._repos.get(full_name.lower())
            if repo is None:
                raise _not_found()
            default = "admin" if login.lower() == repo.owner.lower() else "none"
            role = repo.permissions.get(login.lower(), default)
            level = PERMISSION_LEVELS[ROLES[role]]
            if repo.private and level == 0:
                # GitHub hides a private repository from whoever cannot read it.
                raise _not_found()
            obj = copy.deepcopy(repo.object)
        obj["permissions"] = {
            "admin": role == "admin",
            "maintain": role in ("admin", "maintain"),
            "push": level >= 2,
            "triage": role in ("admin", "maintain", "write", "triage"),
            "pull": level >= 1 or not repo.private,
        }
        return _Answer(200, obj)


def _under(redirect_uri: str, callback: str) -> bool:
    """GitHub's rule: the same host and port as the callback URL, and its path or below."""
    got, want = urlsplit(redirect_uri), urlsplit(callback)
    path = want.path.rstrip("/")
    return (got.scheme, got.netloc) == (want.scheme, want.netloc) and (
        got.path == path or got.path.startswith(path + "/") or not path
    )
