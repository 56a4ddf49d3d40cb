"""Typed views of the webhook deliveries Reprobot acts on, holding the fields it reads.

Why not the full generated models: GitHub's deliveries do not always carry every field its
published schema marks as required (older deliveries and GitHub Enterprise Server omit, e.g.,
``labels[].archived_by``, ``installation.app_slug`` or ``check_run.node_id``), and a strict
model would then refuse a real delivery. These views require what Reprobot needs, ignore the
rest, and refuse a delivery only when a field Reprobot needs is missing or mistyped.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _View(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Account(_View):
    login: str
    id: int | None = None
    type: str | None = None


class InstallationRef(_View):
    id: int
    account: Account | None = None


class RepositoryRef(_View):
    full_name: str
    default_branch: str | None = None
    private: bool = False


class Label(_View):
    name: str


class Issue(_View):
    number: int
    title: str = ""
    body: str | None = None
    state: str = "open"
    user: Account | None = None
    labels: list[Label] = Field(default_factory=list)
    author_association: str = "NONE"
    pull_request: dict[str, Any] | None = None

    @property
    def is_pull(self) -> bool:
        return self.pull_request is not None


class Comment(_View):
    id: int
    body: str | None = None
    user: Account
    author_association: str = "NONE"
    performed_via_github_app: dict[str, Any] | None = None


class BranchRef(_View):
    ref: str
    sha: str
    repo: RepositoryRef | None = None


class PullRequest(_View):
    number: int
    title: str = ""
    body: str | None = None
    state: str = "open"
    head: BranchRef
    base: BranchRef
    draft: bool = False


class CheckRunPull(_View):
    number: int


class AppRef(_View):
    id: int
    slug: str | None = None


class CheckRun(_View):
    id: int
    name: str
    head_sha: str
    app: AppRef | None = None
    pull_requests: list[CheckRunPull] = Field(default_factory=list)


class Event(_View):
    """What every delivery of an App carries."""

    action: str | None = None
    installation: InstallationRef | None = None
    repository: RepositoryRef | None = None
    sender: Account | None = None


class IssuesEvent(Event):
    issue: Issue
    changes: dict[str, Any] | None = None


class PullRequestEvent(Event):
    number: int
    pull_request: PullRequest


class IssueCommentEvent(Event):
    issue: Issue
    comment: Comment


class CheckRunEvent(Event):
    check_run: CheckRun


class RepoName(_View):
    full_name: str


class InstallationEvent(Event):
    installation: InstallationRef
    repositories: list[RepoName] | None = None


class InstallationRepositoriesEvent(Event):
    installation: InstallationRef
    repositories_added: list[RepoName] = Field(default_factory=list)
    repositories_removed: list[RepoName] = Field(default_factory=list)


EVENT_VIEWS: dict[str, type[Event]] = {
    "issues": IssuesEvent,
    "pull_request": PullRequestEvent,
    "issue_comment": IssueCommentEvent,
    "check_run": CheckRunEvent,
    "installation": InstallationEvent,
    "installation_repositories": InstallationRepositoriesEvent,
}
