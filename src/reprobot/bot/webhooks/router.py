"""From a verified delivery to the jobs it asks for: one module per event, as a table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from reprobot.bot.errors import BotError
from reprobot.bot.github.events import EVENT_VIEWS, Event
from reprobot.bot.store.jobs import JobRequest
from reprobot.bot.webhooks import (
    on_check_run,
    on_installation,
    on_issue_comment,
    on_issues,
    on_pull_request,
)
from reprobot.bot.webhooks.route_context import RouteContext


class BadDelivery(BotError):
    """A signed delivery whose body is not the event it claims to be."""


@dataclass(frozen=True)
class Routed:
    event: Event | None
    requests: list[JobRequest] = field(default_factory=list)
    note: str = ""


Handler = Callable[[Any, RouteContext], list[JobRequest]]

HANDLERS: dict[str, Handler] = {
    "issues": on_issues.route,
    "pull_request": on_pull_request.route,
    "issue_comment": on_issue_comment.route,
    "check_run": on_check_run.route,
    "installation": on_installation.route_installation,
    "installation_repositories": on_installation.route_repositories,
}


def acts_on(event_name: str) -> bool:
    """Whether deliveries of ``event_name`` can ask for anything (others are not recorded)."""
    return event_name in HANDLERS


def parse(event_name: str, body: bytes) -> Event | None:
    """The typed view of a delivery, or None for an event Reprobot does not act on."""
    view = EVENT_VIEWS.get(event_name)
    if view is None:
        return None
    try:
        return view.model_validate_json(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise BadDelivery(f"not a valid {event_name} delivery: {problems}") from exc


def route(event_name: str, body: bytes, ctx: RouteContext) -> Routed:
    """Parse ``body`` and work out the jobs it asks for (none for most deliveries)."""
    event = parse(event_name, body)
    if event is None:
        return Routed(None, note=f"{event_name} is not an event Reprobot acts on")
    requests = HANDLERS[event_name](event, ctx)
    note = f"{len(requests)} job(s)" if requests else "nothing to do"
    return Routed(event, requests, note)
