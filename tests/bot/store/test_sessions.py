"""Sign-in sessions on both store back-ends: what the cookie holds, what the database keeps,
and when a session ends."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, select

from reprobot.bot.store.models import WebSessionRow
from reprobot.bot.store.sessions import MAX_SESSION, WebSessions

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
TOKEN = "ghu_" + "t" * 36


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def _rows(engine: Engine) -> list[dict[str, object]]:
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(select(WebSessionRow)).mappings()]


def test_a_session_is_found_by_its_cookie_and_keeps_its_user_and_token(engine: Engine) -> None:
    sessions = WebSessions(engine, Clock())
    session_id = sessions.create("alice", TOKEN)
    assert len(session_id) >= 43
    found = sessions.get(session_id)
    assert found is not None
    assert (found.login, found.token) == ("alice", TOKEN)
    assert (found.created_at, found.expires_at) == (T0, T0 + MAX_SESSION)
    assert TOKEN not in repr(found) and session_id not in repr(found)
    # Another session, an altered or foreign id: nothing.
    other = sessions.create("bob", "ghu_other")
    assert sessions.get(other) is not None and sessions.get(other) != found
    assert sessions.get(session_id[:-1] + ("A" if session_id[-1] != "A" else "B")) is None
    assert sessions.get("") is None and sessions.get("x" * 500) is None


def test_the_database_holds_neither_the_cookie_nor_the_token(engine: Engine) -> None:
    sessions = WebSessions(engine, Clock())
    session_id = sessions.create("alice", TOKEN)
    (row,) = _rows(engine)
    assert row["id_hash"] == hashlib.sha256(session_id.encode()).hexdigest()
    stored = " ".join(str(v) for v in row.values())
    assert session_id not in stored and TOKEN not in stored
    # Knowing the stored hash does not open the token: the cookie's value is needed.
    assert sessions.get(str(row["id_hash"])) is None


def test_a_session_ends_when_it_expires_or_is_ended(engine: Engine) -> None:
    clock = Clock()
    sessions = WebSessions(engine, clock)
    short = sessions.create("alice", TOKEN, timedelta(hours=1))
    capped = sessions.create("bob", TOKEN, timedelta(days=30))
    ended = sessions.create("carol", TOKEN)
    sessions.end(ended)
    assert sessions.get(ended) is None
    sessions.end("no-such-session")  # nothing to end is no error
    clock.now = T0 + timedelta(minutes=59)
    assert sessions.get(short) is not None
    clock.now = T0 + timedelta(hours=1)
    assert sessions.get(short) is None
    # However long GitHub's token lives, a session lasts eight hours at most.
    assert sessions.get(capped) is not None
    clock.now = T0 + MAX_SESSION
    assert sessions.get(capped) is None
    assert len(_rows(engine)) == 2
    # A new sign-in clears the expired sessions away.
    clock.now = T0 + MAX_SESSION + timedelta(seconds=1)
    fresh = sessions.create("dave", TOKEN)
    assert [r["login"] for r in _rows(engine)] == ["dave"]
    assert sessions.prune() == 0
    clock.now += MAX_SESSION
    assert sessions.prune() == 1 and sessions.get(fresh) is None
