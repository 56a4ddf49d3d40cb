"""``pull_request``: every push to an open pull request is verified against the reproductions
of the issues it closes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reprobot.bot.github.events import PullRequestEvent
from reprobot.bot.store.jobs import JobRequest, verify_key

if TYPE_CHECKING:
    from reprobot.bot.webhooks.route_context import RouteContext

ACTIONS = frozenset({"opened", "synchronize", "reopened"})


def route(event: PullRequestEvent, ctx: RouteContext) -> list[JobRequest]:
    if event.action not in ACTIONS or event.installation is None or event.repository is None:
        return []
    pull = event.pull_request
    repo = event.repository.full_name
    return [
        JobRequest(
            kind="verify",
            key=verify_key(repo, pull.number, pull.head.sha),
            repo=repo,
            installation_id=event.installation.id,
            number=pull.number,
            head_sha=pull.head.sha,
            payload={"trigger": event.action},
            # Reopening asks for a fresh look even when this head was verified before.
            rerun=event.action == "reopened",
        )
    ]
