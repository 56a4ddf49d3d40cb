"""``issue_comment``: ``/reprobot reproduce`` on an issue and ``/reprobot verify`` on a pull
request run the flows again. Who may ask is checked by the worker against the repository's
configuration (author association, else the collaborator permission)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reprobot.bot.github.events import IssueCommentEvent
from reprobot.bot.github.linked_issues import parse_command
from reprobot.bot.store.jobs import JobRequest, reproduce_key, verify_key

if TYPE_CHECKING:
    from reprobot.bot.webhooks.route_context import RouteContext


def route(event: IssueCommentEvent, ctx: RouteContext) -> list[JobRequest]:
    if event.action != "created" or event.installation is None or event.repository is None:
        return []
    comment = event.comment
    # Bots (this App included) never command Reprobot: no loops, no escalation through bots.
    if comment.user.type == "Bot" or comment.performed_via_github_app:
        return []
    command = parse_command(comment.body)
    if command is None:
        return []
    repo = event.repository.full_name
    number = event.issue.number
    payload = {
        "trigger": f"command:{command.name}",
        "requested_by": comment.user.login,
        "author_association": comment.author_association,
        "comment_id": comment.id,
    }
    if command.name == "reproduce" and not event.issue.is_pull:
        key = reproduce_key(repo, number)
        kind = "reproduce"
    elif command.name == "verify" and event.issue.is_pull:
        # The head is read when the job runs; the comment's id keeps each request apart.
        key = verify_key(repo, number, f"command-{comment.id}")
        kind = "verify"
    else:
        return []
    return [
        JobRequest(
            kind=kind,  # type: ignore[arg-type]
            key=key,
            repo=repo,
            installation_id=event.installation.id,
            number=number,
            payload=payload,
            rerun=True,
        )
    ]
