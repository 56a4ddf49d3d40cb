"""GitHub App authentication: the App's JWT and narrowed, cached installation tokens."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import httpx
import structlog
from githubkit import AppAuthStrategy, GitHub, TokenAuthStrategy
from githubkit.auth.base import BaseAuthStrategy
from githubkit.exception import GitHubException, RequestFailed

from reprobot.bot.errors import AppConfigError, GitHubError
from reprobot.bot.github.limits import MutationThrottler, RetryPolicy
from reprobot.settings import Settings

# What each kind of job may do, and nothing more: a token is narrowed to one repository and to
# these permissions before a job touches GitHub.
REPRODUCE_PERMISSIONS: Mapping[str, str] = {
    "metadata": "read",
    "contents": "read",
    "issues": "write",
}
VERIFY_PERMISSIONS: Mapping[str, str] = {
    "metadata": "read",
    "contents": "read",
    "issues": "write",
    "pull_requests": "read",
    "checks": "write",
}
# A cached token is handed out only while it has this long left: a job (and the git fetch it
# starts) must not find its token expiring half-way.
log = structlog.get_logger(__name__)

TOKEN_MARGIN = timedelta(minutes=5)
_TokenKey = tuple[int, str, tuple[tuple[str, str], ...]]
# How often one request may renew its token: each renewal follows a revocation of its own.
RENEWALS = 2


@dataclass(frozen=True)
class InstallationToken:
    """A token of one installation, narrowed to ``repositories`` and ``permissions``."""

    token: str
    expires_at: datetime
    installation_id: int
    repositories: tuple[str, ...]
    permissions: Mapping[str, str]
    # When (``time.monotonic``) the request that minted it was sent: a revocation GitHub
    # reported after this moment may have killed it, one reported before cannot have.
    asked_at: float = 0.0

    def __repr__(self) -> str:  # never print the secret itself
        return (
            f"InstallationToken(installation_id={self.installation_id}, "
            f"repositories={self.repositories}, expires_at={self.expires_at.isoformat()})"
        )


class SharedTransport(httpx.BaseTransport):
    """The one connection pool behind every client the App makes.

    githubkit makes an httpx client for each request and closes it after, and closing a client
    closes its transport: a shared pool would be closed under every other request in flight
    (``Bad file descriptor`` while reading an answer), and under the request whose 401 is being
    renewed. This transport ignores those closes; the App closes the pool once, at shutdown.
    """

    def __init__(self, inner: httpx.BaseTransport | None = None) -> None:
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(request)

    def close(self) -> None:
        """A client is done with the pool; the pool stays open for the others."""

    def shut(self) -> None:
        """Close the pool itself: the App is stopping."""
        self.inner.close()


def _parse_expiry(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


class GitHubApp:
    """The App's identity and the clients it hands to jobs.

    One instance per process: it owns the token cache, the retry policy and the throttler that
    serialises mutations, so every client it makes shares them.
    """

    def __init__(
        self,
        app_id: int,
        private_key: str,
        api_url: str,
        *,
        retry: RetryPolicy | None = None,
        throttler: MutationThrottler | None = None,
        timeout_s: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.app_id = app_id
        self.api_url = api_url.rstrip("/")
        self._private_key = private_key
        self._retry = retry or RetryPolicy()
        self._throttler = throttler or MutationThrottler()
        # Requests made as the App itself (minting tokens) are another identity's and queue
        # apart: a job's mutation whose token was revoked mints a new one while it holds the
        # installation's queue, and would wait on itself forever in the same one.
        self._app_throttler = MutationThrottler(self._throttler.pause_s)
        self._timeout_s = timeout_s
        self._transport = SharedTransport(transport)
        self._clock = clock
        self._tokens: dict[_TokenKey, InstallationToken] = {}
        # One mint at a time per key: the requests a revocation rejects together renew to one
        # new token instead of each minting its own.
        self._minting: dict[_TokenKey, threading.Lock] = {}
        self._lock = threading.Lock()
        self._bot_login: str | None = None

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        transport: httpx.BaseTransport | None = None,
        on_wait: Callable[[str, float], None] | None = None,
    ) -> GitHubApp:
        """The App of ``settings``; AppConfigError when its id or private key is missing.
        ``transport`` carries its requests (e.g. one that counts them); ``on_wait`` hears of
        every wait before a retry."""
        if settings.app_id is None or settings.private_key_path is None:
            raise AppConfigError(
                "the GitHub App needs REPROBOT_APP_ID and REPROBOT_PRIVATE_KEY_PATH"
            )
        try:
            key = settings.private_key_path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise AppConfigError(f"cannot read the App's private key: {exc}") from exc
        if "PRIVATE KEY" not in key:
            raise AppConfigError(
                f"{settings.private_key_path} is not a PEM private key (download it from the "
                "App's settings page)"
            )
        return cls(
            settings.app_id,
            key,
            settings.github_api_url,
            retry=RetryPolicy(
                settings.github_max_retries, settings.github_max_wait_s, on_wait=on_wait
            ),
            throttler=MutationThrottler(settings.github_mutation_pause_s),
            timeout_s=settings.github_timeout_s,
            transport=transport,
        )

    def _github(self, auth: Any, throttler: MutationThrottler | None = None) -> GitHub[Any]:
        return GitHub(
            auth,
            base_url=self.api_url,
            timeout=self._timeout_s,
            transport=self._transport,
            auto_retry=self._retry,
            throttler=throttler or self._throttler,
            user_agent=f"reprobot (app {self.app_id})",
            # githubkit's HTTP cache (hishel) drops the request's timeout on the way to the
            # connection, so a stalled answer would hold a worker forever; it also keeps every
            # answer in one process-wide in-memory store that only grows. A job reads each
            # object about once, so revalidation would save little.
            http_cache=False,
        )

    def app_client(self) -> GitHub[Any]:
        """A client authenticated as the App itself (a short-lived JWT signed with its key)."""
        return self._github(
            AppAuthStrategy(str(self.app_id), self._private_key), self._app_throttler
        )

    def close(self) -> None:
        """Close the connection pool every client of this App shares."""
        self._transport.shut()

    def _usable(self, key: _TokenKey, fresher_than: float | None) -> InstallationToken | None:
        with self._lock:
            cached = self._tokens.get(key)
        if cached is None or cached.expires_at - TOKEN_MARGIN <= self._clock():
            return None
        if fresher_than is not None and cached.asked_at < fresher_than:
            return None
        return cached

    def token(
        self,
        installation_id: int,
        repo: str,
        permissions: Mapping[str, str],
        *,
        fresher_than: float | None = None,
    ) -> InstallationToken:
        """A token for ``repo`` (``owner/name``) with ``permissions`` only; reused until
        shortly before it expires. With ``fresher_than`` (a ``time.monotonic`` moment), only a
        token minted after it: one minted before may have died in the same revocation."""
        key = (installation_id, repo.lower(), tuple(sorted(permissions.items())))
        cached = self._usable(key, fresher_than)
        if cached is not None:
            return cached
        with self._lock:
            minting = self._minting.setdefault(key, threading.Lock())
        with minting:
            # Another request may have minted one while this waited.
            cached = self._usable(key, fresher_than)
            if cached is not None:
                return cached
            token = self._mint(installation_id, repo, permissions)
            with self._lock:
                self._tokens[key] = token
            return token

    def _mint(
        self, installation_id: int, repo: str, permissions: Mapping[str, str]
    ) -> InstallationToken:
        name = repo.partition("/")[2]
        asked_at = time.monotonic()
        # githubkit's namespaces hold their client weakly: keep it referenced.
        app = self.app_client()
        try:
            resp = app.rest.apps.create_installation_access_token(
                installation_id,
                repositories=[name],
                permissions=cast(Any, dict(permissions)),
            )
        except RequestFailed as exc:
            raise GitHubError(
                f"cannot get an installation token: {exc.response.status_code}",
                repo=repo,
                status=exc.response.status_code,
            ) from exc
        except GitHubException as exc:
            raise GitHubError(f"cannot get an installation token: {exc!r}", repo=repo) from exc
        data: dict[str, Any] = dict(resp.json())
        return InstallationToken(
            token=str(data["token"]),
            expires_at=_parse_expiry(str(data["expires_at"])),
            installation_id=installation_id,
            repositories=(repo,),
            permissions=dict(data.get("permissions") or permissions),
            asked_at=asked_at,
        )

    def bot_login(self) -> str:
        """The login of the App's bot account (``slug[bot]``), read once from ``GET /app``."""
        with self._lock:
            if self._bot_login is not None:
                return self._bot_login
        app = self.app_client()
        try:
            data: Any = app.rest.apps.get_authenticated().json()
            slug = str(data["slug"])
        except (GitHubException, KeyError, TypeError, ValueError) as exc:
            raise GitHubError(f"cannot read the App's own record: {exc!r}") from exc
        with self._lock:
            self._bot_login = f"{slug}[bot]"
            return self._bot_login

    def client(self, token: InstallationToken) -> GitHub[Any]:
        """A client acting as the installation, with ``token``'s narrowed rights."""
        return self._github(TokenAuthStrategy(token.token))

    def forget(self, token: InstallationToken) -> None:
        """Drop ``token`` from the cache (GitHub rejected it: revoked, or expired early)."""
        with self._lock:
            for key in [k for k, v in self._tokens.items() if v.token == token.token]:
                del self._tokens[key]

    def installation(
        self, installation_id: int, repo: str, permissions: Mapping[str, str]
    ) -> InstallationAuth:
        """The installation's narrowed rights on ``repo``, renewed when GitHub rejects the
        token; ``client_for`` makes a client that uses them."""
        return InstallationAuth(self, installation_id, repo, dict(permissions))

    def client_for(self, auth: InstallationAuth) -> GitHub[Any]:
        """A client acting as the installation through ``auth``."""
        return self._github(auth)


class InstallationAuth(BaseAuthStrategy):
    """An installation token for one job, and the way to a new one.

    A cached token can stop working before its expiry (an installation's tokens are revoked
    when its permissions change, or by hand): GitHub answers 401. Then the token is dropped
    from the App's cache and the request is sent again with one minted after the refusal. A
    token that new can only be refused by a later revocation, so a request is renewed at most
    ``RENEWALS`` times; a 401 after that (the App suspended or uninstalled) is an answer like
    any other.
    """

    def __init__(
        self, app: GitHubApp, installation_id: int, repo: str, permissions: dict[str, str]
    ) -> None:
        self.app, self.installation_id, self.repo = app, installation_id, repo
        self.permissions = permissions
        self._lock = threading.Lock()
        self.token = app.token(installation_id, repo, permissions)

    def renew(self, rejected: InstallationToken, rejected_at: float) -> InstallationToken:
        """A token GitHub cannot have revoked along with ``rejected``, which it refused at
        ``rejected_at`` (``time.monotonic``): one minted after that moment, by another request
        that renewed already or by this one."""
        with self._lock:
            current = self.token
            if current.token != rejected.token and current.asked_at >= rejected_at:
                return current
            self.app.forget(rejected)
            self.token = self.app.token(
                self.installation_id, self.repo, self.permissions, fresher_than=rejected_at
            )
            return self.token

    def get_auth_flow(self, github: Any) -> httpx.Auth:
        return _RenewingTokenAuth(self)


class _RenewingTokenAuth(httpx.Auth):
    # The body is read up front, so that the request can be sent a second time.
    requires_request_body = True

    def __init__(self, source: InstallationAuth) -> None:
        self.source = source

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self.source.token
        for _ in range(RENEWALS):
            request.headers["Authorization"] = f"token {token.token}"
            response = yield request
            if response.status_code != 401:
                return
            rejected_at = time.monotonic()
            log.warning("github.token_rejected", repo=self.source.repo)
            token = self.source.renew(token, rejected_at)
        request.headers["Authorization"] = f"token {token.token}"
        yield request
