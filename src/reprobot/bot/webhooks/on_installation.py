"""``installation`` and ``installation_repositories``: remember where the App is installed,
and forget everything about a repository when it is removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reprobot.bot.github.events import InstallationEvent, InstallationRepositoriesEvent
from reprobot.bot.store.jobs import JobRequest

if TYPE_CHECKING:
    from reprobot.bot.webhooks.route_context import RouteContext


def route_installation(event: InstallationEvent, ctx: RouteContext) -> list[JobRequest]:
    inst = event.installation
    if event.action == "created":
        account = inst.account.login if inst.account else ""
        repos = [r.full_name for r in event.repositories or []]
        ctx.records.save_installation(inst.id, account, repos)
    elif event.action == "deleted":
        ctx.records.forget_installation(inst.id)
    return []


def route_repositories(event: InstallationRepositoriesEvent, ctx: RouteContext) -> list[JobRequest]:
    inst = event.installation
    if ctx.records.installation(inst.id) is None:
        account = inst.account.login if inst.account else ""
        ctx.records.save_installation(inst.id, account, [])
    if event.repositories_added:
        ctx.records.add_repos(inst.id, [r.full_name for r in event.repositories_added])
    if event.repositories_removed:
        ctx.records.remove_repos(inst.id, [r.full_name for r in event.repositories_removed])
    return []
