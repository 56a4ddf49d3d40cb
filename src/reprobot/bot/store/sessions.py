"""Sign-in sessions of GitHub users who read report pages of private repositories.

The browser holds a random session id in a cookie; the store keeps only its SHA-256, so a reader
of the database cannot present a cookie, and the user's GitHub token encrypted with a key
derived from the id, so that reader cannot use the token either. A session ends when it expires,
when its user signs out, or when GitHub no longer accepts its token."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from cryptography.fernet import Fernet, InvalidToken
from sqlalchemy import Engine, delete, insert, select

from reprobot.bot.store.models import WebSessionRow, utc

# However long GitHub's token lives, a session ends after this.
MAX_SESSION = timedelta(hours=8)
# The longest session id a cookie carries (``token_urlsafe(32)`` is 43 characters).
_MAX_ID = 100


@dataclass(frozen=True)
class WebSession:
    """A signed-in user. ``key`` names the session in logs and caches (the stored hash, never
    the cookie's value); the token is kept out of ``repr``."""

    key: str
    login: str
    token: str = field(repr=False)
    created_at: datetime
    expires_at: datetime


def _id_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


def _box(session_id: str) -> Fernet:
    # An HMAC of the id, not its plain hash: the stored hash must not be the key.
    key = hmac.new(session_id.encode(), b"reprobot web session token", hashlib.sha256).digest()
    return Fernet(base64.urlsafe_b64encode(key))


class WebSessions:
    """The sessions over ``engine``; ``clock`` returns the current time."""

    def __init__(
        self, engine: Engine, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._engine = engine
        self._clock = clock

    def create(self, login: str, token: str, lifetime: timedelta = MAX_SESSION) -> str:
        """Start a session for ``login`` holding ``token`` for ``lifetime`` (at most
        ``MAX_SESSION``); return its id, the cookie's value, which is not kept. Sessions that
        have expired are removed on the way."""
        now = utc(self._clock())
        session_id = secrets.token_urlsafe(32)
        row = {
            "id_hash": _id_hash(session_id),
            "login": login,
            "user_token": _box(session_id).encrypt(token.encode()).decode(),
            "created_at": now,
            "expires_at": now + min(lifetime, MAX_SESSION),
        }
        with self._engine.begin() as conn:
            conn.execute(delete(WebSessionRow).where(WebSessionRow.expires_at <= now))
            conn.execute(insert(WebSessionRow).values(**row))
        return session_id

    def get(self, session_id: str) -> WebSession | None:
        """The live session the cookie's value names, or None (unknown, expired, altered)."""
        if not session_id or len(session_id) > _MAX_ID:
            return None
        key = _id_hash(session_id)
        query = select(WebSessionRow).where(WebSessionRow.id_hash == key)
        with self._engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None or utc(row["expires_at"]) <= utc(self._clock()):
            return None
        try:
            token = _box(session_id).decrypt(row["user_token"].encode()).decode()
        except InvalidToken:
            return None
        return WebSession(
            key=key,
            login=row["login"],
            token=token,
            created_at=utc(row["created_at"]),
            expires_at=utc(row["expires_at"]),
        )

    def end(self, session_id: str) -> None:
        """Remove the session (its user signed out, or GitHub refused its token)."""
        if not session_id or len(session_id) > _MAX_ID:
            return
        key = _id_hash(session_id)
        with self._engine.begin() as conn:
            conn.execute(delete(WebSessionRow).where(WebSessionRow.id_hash == key))

    def prune(self) -> int:
        """Remove the sessions that have expired; returns how many went."""
        now = utc(self._clock())
        with self._engine.begin() as conn:
            result = conn.execute(delete(WebSessionRow).where(WebSessionRow.expires_at <= now))
        return int(result.rowcount or 0)
