"""The reaper's rounds over a real store: sign-in sessions past their end go."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from reprobot.bot.context import AppContext
from reprobot.bot.jobs.worker import Reaper
from reprobot.bot.store.models import WebSessionRow
from reprobot.bot.store.sessions import WebSessions


def test_the_reaper_removes_sessions_past_their_end(ctx: AppContext) -> None:
    sessions = WebSessions(ctx.engine)
    kept = sessions.create("reader", "ghu_kept", lifetime=timedelta(hours=1))
    sessions.create("reader", "ghu_ended", lifetime=timedelta(seconds=-1))

    Reaper(ctx, interval_s=3600).reap_once()

    with ctx.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(WebSessionRow)).scalar() == 1
    found = sessions.get(kept)
    assert found is not None and found.login == "reader"
