"""``GET /pages/{token}``: a report page, for whoever holds its link, and, when its repository
is private, can read the repository.

For a public repository the link is the only credential, as a check run's or comment's link is
only seen by readers of the repository: an altered, foreign or expired token, and a page removed
by retention, all get the same 404, which says nothing of what exists. A page of a private
repository is shown only to a GitHub user signed in with the App whom GitHub shows the
repository to (``signin``); anyone else signed in gets that same 404. A page never lists other
pages, except the earlier heads of its own pull request, each behind a link of its own."""

from __future__ import annotations

import structlog
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response
from pydantic import TypeAdapter, ValidationError

from reprobot.bot.pages.documents import Page
from reprobot.bot.pages.html import EarlierHead, page_csp_header, render_page
from reprobot.bot.pages.links import PageLinks
from reprobot.bot.pages.signin import SESSION_COOKIE, SignIn, not_set_up, notice
from reprobot.bot.store.pages import Pages, StoredPage

log = structlog.get_logger(__name__)

_DOCUMENT: TypeAdapter[Page] = TypeAdapter(Page)
_HEADERS = {
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "X-Robots-Tag": "noindex, nofollow",
}
_NOT_FOUND = (
    "<!doctype html><html lang=en><meta charset=utf-8><title>Not found</title>"
    "<p>There is no page here.</p></html>"
)
# Longest token a link ever carries (a 22-character id, its signature and time); longer ones
# are refused before any work.
_MAX_TOKEN = 200


def _headers() -> dict[str, str]:
    return {**_HEADERS, "Content-Security-Policy": page_csp_header()}


def not_found() -> HTMLResponse:
    return HTMLResponse(_NOT_FOUND, status_code=404, headers=_headers())


def find_page(pages: Pages, links: PageLinks, token: str) -> StoredPage | None:
    """The stored page ``token`` names, or None when it names none."""
    if len(token) > _MAX_TOKEN:
        return None
    page_id = links.page_id(token)
    return pages.get(page_id) if page_id else None


def page_html(pages: Pages, links: PageLinks, token: str) -> str | None:
    """The HTML of the page ``token`` names, or None when it names none."""
    stored = find_page(pages, links, token)
    return None if stored is None else stored_html(pages, links, stored)


def stored_html(pages: Pages, links: PageLinks, stored: StoredPage) -> str | None:
    """The HTML of ``stored``, or None when its document does not read."""
    try:
        document = _DOCUMENT.validate_json(stored.document)
    except ValidationError as exc:
        # Written by Reprobot itself: a page that does not read is a defect, logged, not shown.
        log.error("pages.unreadable", page=stored.id, error=str(exc)[:500])
        return None
    earlier = tuple(
        EarlierHead(href=links.url(e.id), head=e.head_sha or "", status=e.status)
        for e in pages.earlier_heads(stored)
    )
    return render_page(document, earlier)


def add_page_route(app: FastAPI, pages: Pages, links: PageLinks, signin: SignIn) -> None:
    @app.get("/pages/{token}", response_class=HTMLResponse)
    async def page(request: Request, token: str) -> Response:
        stored = await run_in_threadpool(find_page, pages, links, token)
        if stored is None:
            return not_found()
        if stored.private:
            session_id = request.cookies.get(SESSION_COOKIE)
            decision = await run_in_threadpool(signin.decide, session_id, stored.repo)
            if decision == "not_set_up":
                return not_set_up()
            if decision == "sign_in":
                return signin.to_sign_in(f"/pages/{token}", had_session=session_id is not None)
            if decision == "hidden":
                return not_found()
            if decision == "unavailable":
                return notice(
                    503, "Try again", "GitHub could not say who may read this page. Try again."
                )
        html = await run_in_threadpool(stored_html, pages, links, stored)
        if html is None:
            return not_found()
        return HTMLResponse(html, headers=_headers())
