"""The links to report pages: a page's id inside a signed, expiring token (itsdangerous).

A link is all a reader needs, so it must be unguessable and unforgeable: the page id is random,
and the token signs it with a key only the App has, with the time it was made; an altered,
foreign or expired token names no page, and the route answers it as it answers a page that
does not exist."""

from __future__ import annotations

import hashlib
import hmac

from itsdangerous import BadData, URLSafeTimedSerializer

from reprobot.settings import Settings

_SALT = "reprobot.page-link"


def page_key(settings: Settings) -> bytes:
    """The signing key: PAGE_SECRET, or one derived from the webhook secret (so that an App
    configured for webhooks links its pages without another secret)."""
    own = settings.page_secret.get_secret_value()
    if own:
        return own.encode()
    webhook = settings.webhook_secret.get_secret_value().encode()
    return hmac.new(webhook, b"reprobot report page links", hashlib.sha256).digest()


class PageLinks:
    """Makes and reads page links under ``public_url`` (no trailing slash needed)."""

    def __init__(self, key: bytes, public_url: str, max_age_s: float) -> None:
        self._serializer = URLSafeTimedSerializer(key, salt=_SALT)
        self._base = public_url.rstrip("/")
        self._max_age_s = int(max_age_s)

    @property
    def linkable(self) -> bool:
        """Whether links can be made: GitHub needs an absolute address to link to."""
        return self._base.startswith(("https://", "http://"))

    def token(self, page_id: str) -> str:
        return str(self._serializer.dumps(page_id))

    def url(self, page_id: str) -> str:
        return f"{self._base}/pages/{self.token(page_id)}"

    def page_id(self, token: str) -> str | None:
        """The page a token names, or None when it was altered, made with another key, or has
        expired."""
        try:
            value = self._serializer.loads(token, max_age=self._max_age_s)
        except BadData:
            return None
        return value if isinstance(value, str) else None


def page_links(settings: Settings) -> PageLinks:
    """The App's page links: under PUBLIC_URL, valid as long as pages are kept."""
    return PageLinks(page_key(settings), settings.public_url, settings.page_retention_days * 86400)
