"""``issues``: an opened issue is reproduced; an edited one again while not yet reproduced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reprobot.bot.github.events import IssuesEvent
from reprobot.bot.store.jobs import JobRequest, reproduce_key

if TYPE_CHECKING:
    from reprobot.bot.webhooks.route_context import RouteContext


def route(event: IssuesEvent, ctx: RouteContext) -> list[JobRequest]:
    if event.installation is None or event.repository is None or event.issue.is_pull:
        return []
    if event.action == "opened":
        rerun = False
    elif event.action == "edited" and "body" in (event.changes or {}):
        # A new body may hold the reproducer the first one lacked. The worker skips the run when
        # a reproduction is already stored, so an edit never replaces a confirmed test.
        rerun = True
    else:
        return []
    repo = event.repository.full_name
    return [
        JobRequest(
            kind="reproduce",
            key=reproduce_key(repo, event.issue.number),
            repo=repo,
            installation_id=event.installation.id,
            number=event.issue.number,
            payload={"trigger": event.action},
            rerun=rerun,
        )
    ]
