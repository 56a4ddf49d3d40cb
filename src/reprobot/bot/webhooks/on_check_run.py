"""``check_run.rerequested``: "Re-run" on Reprobot's check verifies that head again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reprobot.bot.github.events import CheckRunEvent
from reprobot.bot.render.pull import CHECK_NAME
from reprobot.bot.store.jobs import JobRequest, verify_key

if TYPE_CHECKING:
    from reprobot.bot.webhooks.route_context import RouteContext


def route(event: CheckRunEvent, ctx: RouteContext) -> list[JobRequest]:
    if event.action != "rerequested" or event.installation is None or event.repository is None:
        return []
    run = event.check_run
    if run.name != CHECK_NAME or (run.app is not None and ctx.app_id and run.app.id != ctx.app_id):
        return []
    repo = event.repository.full_name
    numbers = [p.number for p in run.pull_requests]
    if not numbers:
        # GitHub lists no pull requests on check runs of forks' heads: find the pull request
        # this head was verified for.
        numbers = ctx.ledger.pulls_verified_at(repo, run.head_sha)
    return [
        JobRequest(
            kind="verify",
            key=verify_key(repo, number, run.head_sha),
            repo=repo,
            installation_id=event.installation.id,
            number=number,
            head_sha=run.head_sha,
            payload={"trigger": "rerequested"},
            rerun=True,
        )
        for number in numbers
    ]
