"""A job's report page: stored with its results, linked from its check run and comment."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reprobot.bot.pages.documents import Page
from reprobot.bot.pages.links import page_links
from reprobot.bot.store.pages import PageKind

if TYPE_CHECKING:
    from reprobot.bot.context import AppContext


def publish(
    ctx: AppContext,
    repo: str,
    number: int,
    head_sha: str | None,
    status: str,
    page: Page,
    *,
    private: bool,
) -> str | None:
    """Keep ``page`` and return its link; None when the App has no public address (PUBLIC_URL),
    as nobody could reach it then. ``private``: the repository is private, so the page is shown
    only to signed-in users who can read it."""
    links = page_links(ctx.settings)
    if not links.linkable:
        return None
    kind: PageKind = "reproduction" if page.kind == "reproduction" else "verdict"
    document = page.model_dump_json()
    stored = ctx.pages.save(kind, repo, number, head_sha, status, document, private=private)
    return links.url(stored.id)


def link_line(url: str | None) -> str:
    """The comment's line that leads to the page (empty without a page)."""
    if not url:
        return ""
    return (
        f"\n\n📄 [Full report]({url}): each test's outcome and failure on the base and with the "
        "change, the changed lines the tests ran, the environment and the logs."
    )
