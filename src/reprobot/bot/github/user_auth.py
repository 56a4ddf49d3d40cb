"""The App's user authorization (GitHub's web application flow), and what the App asks GitHub as
one of its users: who they are, and whether they can read a repository.

The token a user grants is a user-to-server token of the App: it reaches only what both the
user and the App may, and the App asks nothing else with it. It is never logged: errors name
the request, not its headers."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

import httpx

from reprobot.bot.errors import BotError, GitHubError
from reprobot.settings import Settings

_API_HEADERS = {
    "Accept": "application/vnd.github+json",
    "X-GitHub-Api-Version": "2022-11-28",
}


class SignInRefused(BotError):
    """GitHub gave no token for a sign-in's code (expired, used already, another client's)."""


class TokenRefused(BotError):
    """GitHub no longer accepts a user's token (it expired, or the user revoked it)."""


@dataclass(frozen=True)
class UserToken:
    """A user's token and, when GitHub says, how long it lives."""

    value: str = field(repr=False)
    expires_in_s: float | None


class GitHubUsers:
    """GitHub's web (``web_url``) and REST (``api_url``) sides as the App's users see them,
    over one HTTP client."""

    def __init__(
        self,
        *,
        web_url: str,
        api_url: str,
        client_id: str,
        client_secret: str,
        http: httpx.Client,
    ) -> None:
        self._web = web_url.rstrip("/")
        self._api = api_url.rstrip("/")
        self.client_id = client_id
        self._client_secret = client_secret
        self._http = http

    @classmethod
    def from_settings(
        cls, settings: Settings, transport: httpx.BaseTransport | None = None
    ) -> GitHubUsers:
        http = httpx.Client(
            timeout=settings.github_timeout_s,
            transport=transport,
            headers={"User-Agent": "reprobot (sign-in)"},
        )
        return cls(
            web_url=settings.github_url,
            api_url=settings.github_api_url,
            client_id=settings.oauth_client_id,
            client_secret=settings.oauth_client_secret.get_secret_value(),
            http=http,
        )

    @property
    def configured(self) -> bool:
        """Whether users can sign in: the App's client id is set."""
        return bool(self.client_id)

    def authorize_url(self, redirect_uri: str, state: str) -> str:
        """Where the browser goes to ask the user to sign in with the App."""
        query = urlencode(
            {"client_id": self.client_id, "redirect_uri": redirect_uri, "state": state}
        )
        return f"{self._web}/login/oauth/authorize?{query}"

    def exchange(self, code: str, redirect_uri: str) -> UserToken:
        """The user's token for a sign-in's ``code``; SignInRefused when GitHub gives none."""
        body = {
            "client_id": self.client_id,
            "client_secret": self._client_secret,
            "code": code,
            "redirect_uri": redirect_uri,
        }
        url = f"{self._web}/login/oauth/access_token"
        answer = self._send("POST", url, json=body, headers={"Accept": "application/json"})
        if answer.status_code != 200:
            raise GitHubError(f"exchanging a sign-in code answered {answer.status_code}")
        try:
            data = answer.json()
        except ValueError as exc:
            raise GitHubError("exchanging a sign-in code answered no JSON") from exc
        token = data.get("access_token") if isinstance(data, dict) else None
        if not isinstance(token, str) or not token:
            error = data.get("error") if isinstance(data, dict) else None
            raise SignInRefused(f"GitHub refused the sign-in: {str(error or 'no token')[:100]}")
        expires_in = data.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, int | float) else None
        return UserToken(token, lifetime)

    def login(self, token: str) -> str:
        """The login of the user whose token this is."""
        answer = self._as_user("GET", "/user", token)
        if answer.status_code == 401:
            raise TokenRefused("GitHub does not accept the user's token")
        if answer.status_code != 200:
            raise GitHubError(f"GET /user answered {answer.status_code}")
        login = answer.json().get("login")
        if not isinstance(login, str) or not login:
            raise GitHubError("GET /user named no login")
        return login

    def can_read(self, token: str, repo: str) -> bool:
        """Whether the token's user can read ``owner/name``: GitHub shows the repository to
        them (200), or hides it (404, 403). TokenRefused when the token is no longer good;
        GitHubError when GitHub could not say (a rate limit, a 5xx, the network)."""
        owner, _, name = repo.partition("/")
        path = f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"
        answer = self._as_user("GET", path, token)
        status = answer.status_code
        if status == 200:
            return True
        if status == 401:
            raise TokenRefused("GitHub does not accept the user's token")
        limited = answer.headers.get("x-ratelimit-remaining") == "0" or "retry-after" in (
            answer.headers
        )
        if status == 404 or (status == 403 and not limited):
            return False
        raise GitHubError(f"GET {path} as a user answered {status}", repo=repo, status=status)

    def close(self) -> None:
        self._http.close()

    def _as_user(self, method: str, path: str, token: str) -> httpx.Response:
        headers = {**_API_HEADERS, "Authorization": f"Bearer {token}"}
        return self._send(method, self._api + path, headers=headers)

    def _send(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        json: dict[str, str] | None = None,
    ) -> httpx.Response:
        try:
            return self._http.request(method, url, headers=headers, json=json)
        except httpx.HTTPError as exc:
            # The exception's text names the URL, never the request's headers or body.
            raise GitHubError(f"{method} {url} failed: {type(exc).__name__}") from exc
