"""What a job reads from and writes to one GitHub repository.

Requests go through githubkit's REST and GraphQL clients (auth, retries, pacing); answers are
read into small frozen records holding only the fields Reprobot uses, so that a field GitHub
adds or drops elsewhere in an object never breaks a job.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import structlog
from githubkit import GitHub
from githubkit.exception import GitHubException, RequestFailed
from githubkit.utils import UNSET

from reprobot.bot.errors import GitHubError

log = structlog.get_logger(__name__)
T = TypeVar("T")
Conclusion = Literal["success", "failure", "neutral"]

_CLOSING_ISSUES = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      closingIssuesReferences(first: 50) { nodes { number repository { nameWithOwner } } }
    }
  }
}
"""


@dataclass(frozen=True)
class RepoInfo:
    full_name: str
    default_branch: str
    clone_url: str
    private: bool


@dataclass(frozen=True)
class IssueInfo:
    number: int
    title: str
    body: str
    state: str
    labels: tuple[str, ...]
    is_pull: bool
    user: str
    author_association: str


@dataclass(frozen=True)
class PullInfo:
    number: int
    title: str
    body: str
    state: str
    head_sha: str
    head_ref: str
    head_repo: str | None
    base_sha: str
    base_ref: str
    labels: tuple[str, ...]

    def from_fork(self, repo: str) -> bool:
        return self.head_repo is None or self.head_repo.lower() != repo.lower()


class RepoAPI:
    """One repository as seen through an installation token."""

    def __init__(
        self,
        gh: GitHub[Any],
        repo: str,
        app_id: int,
        bot_login: str | None = None,
        *,
        retries: int = 2,
        retry_wait_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.gh = gh
        self.repo = repo
        self.owner, _, self.name = repo.partition("/")
        self.app_id = app_id
        self.bot_login = bot_login
        # How often a read of an object the event named is tried again after a 404 (GitHub's
        # replicas can lag behind its webhooks), and a comment after an unclear failure.
        self.retries = retries
        self.retry_wait_s = retry_wait_s
        self._sleep = sleep

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except RequestFailed as exc:
            raise GitHubError(
                f"{what} failed: {exc.response.status_code} {_message(exc)}",
                repo=self.repo,
                status=exc.response.status_code,
            ) from exc
        except GitHubException as exc:
            raise GitHubError(f"{what} failed: {exc!r}", repo=self.repo) from exc

    def _json(self, what: str, fn: Callable[[], Any]) -> Any:
        return self._call(what, lambda: fn().json())

    def _read(self, what: str, fn: Callable[[], Any]) -> Any:
        """A read of something that exists (the event named it): a 404 is tried again."""
        for attempt in range(self.retries + 1):
            try:
                return self._json(what, fn)
            except GitHubError as exc:
                if exc.status != 404 or attempt == self.retries:
                    raise
                log.info("github.not_found_yet", what=what, attempt=attempt + 1)
                self._sleep(self.retry_wait_s * 2**attempt)
        raise AssertionError("unreachable")

    def _missing_ok(self, what: str, fn: Callable[[], Any]) -> Any | None:
        try:
            return self._json(what, fn)
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise

    # --- reads ---------------------------------------------------------------------------

    def repository(self) -> RepoInfo:
        data = self._read(
            "reading the repository", lambda: self.gh.rest.repos.get(self.owner, self.name)
        )
        return RepoInfo(
            full_name=str(data["full_name"]),
            default_branch=str(data["default_branch"]),
            clone_url=str(data["clone_url"]),
            private=bool(data.get("private")),
        )

    def branch_sha(self, branch: str) -> str:
        data = self._read(
            f"reading branch {branch}",
            lambda: self.gh.rest.repos.get_branch(self.owner, self.name, branch),
        )
        return str(data["commit"]["sha"])

    def file_text(self, path: str, ref: str) -> str | None:
        """The text of ``path`` at ``ref``, or None when there is no such file."""
        data = self._missing_ok(
            f"reading {path}",
            lambda: self.gh.rest.repos.get_content(self.owner, self.name, path, ref=ref),
        )
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        raw = base64.b64decode(str(data.get("content", "")))
        return raw.decode("utf-8", "replace")

    def issue(self, number: int) -> IssueInfo:
        data = self._read(
            f"reading issue #{number}",
            lambda: self.gh.rest.issues.get(self.owner, self.name, number),
        )
        return _issue_info(data)

    def find_issue(self, number: int) -> IssueInfo | None:
        """Issue ``number``, or None when there is none (a pull request's text may name any)."""
        data = self._missing_ok(
            f"reading issue #{number}",
            lambda: self.gh.rest.issues.get(self.owner, self.name, number),
        )
        return None if data is None else _issue_info(data)

    def pull(self, number: int) -> PullInfo:
        data = self._read(
            f"reading pull request #{number}",
            lambda: self.gh.rest.pulls.get(self.owner, self.name, number),
        )
        head, base = data["head"], data["base"]
        return PullInfo(
            number=int(data["number"]),
            title=str(data.get("title") or ""),
            body=str(data.get("body") or ""),
            state=str(data.get("state") or "open"),
            head_sha=str(head["sha"]),
            head_ref=str(head.get("ref") or ""),
            head_repo=(head.get("repo") or {}).get("full_name"),
            base_sha=str(base["sha"]),
            base_ref=str(base.get("ref") or ""),
            labels=tuple(str(label["name"]) for label in data.get("labels") or []),
        )

    def closing_issues(self, number: int) -> list[int]:
        """Issues of this repository that the pull request is linked to close (GitHub's
        "linked issues" relation, which also covers links made in the sidebar)."""
        try:
            data = self.gh.graphql.request(
                _CLOSING_ISSUES, {"owner": self.owner, "name": self.name, "number": number}
            )
        except GitHubException as exc:
            # The body's closing keywords still link issues; the relation is a second source.
            log.warning("github.linked_issues_unavailable", error=repr(exc))
            return []
        pull = ((data or {}).get("repository") or {}).get("pullRequest") or {}
        nodes = (pull.get("closingIssuesReferences") or {}).get("nodes") or []
        return [
            int(node["number"])
            for node in nodes
            if str((node.get("repository") or {}).get("nameWithOwner", self.repo)).lower()
            == self.repo.lower()
        ]

    def permission(self, user: str) -> str:
        """The user's permission on the repository: admin, maintain, write, triage, read or
        none."""
        data = self._missing_ok(
            f"reading {user}'s permission",
            lambda: self.gh.rest.repos.get_collaborator_permission_level(
                self.owner, self.name, user
            ),
        )
        return str((data or {}).get("permission") or "none")

    def _comments(self, number: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        page = 1
        while True:
            batch = self._json(
                f"listing comments of #{number}",
                lambda p=page: self.gh.rest.issues.list_comments(  # type: ignore[misc]
                    self.owner, self.name, number, per_page=100, page=p
                ),
            )
            out.extend(batch)
            if len(batch) < 100:
                return out
            page += 1

    def _is_ours(self, comment: dict[str, Any]) -> bool:
        """Written by this App: GitHub names the App that performed it, or the author is the
        App's bot account (``slug[bot]``, a login no person can take)."""
        app = comment.get("performed_via_github_app") or {}
        if app and app.get("id") == self.app_id:
            return True
        user = comment.get("user") or {}
        return (
            bool(self.bot_login)
            and user.get("type") == "Bot"
            and (user.get("login") == self.bot_login)
        )

    # --- writes (idempotent: each keyed by a hidden marker or a name) ---------------------

    def upsert_comment(self, number: int, marker: str, body: str, known_id: int | None) -> int:
        """Edit the App's comment carrying ``marker`` on ``number`` (``known_id`` first), or post
        one. A comment the App did not write is never edited, whatever it contains."""
        if known_id is not None:
            current = self._missing_ok(
                "reading the App's comment",
                lambda: self.gh.rest.issues.get_comment(self.owner, self.name, known_id),
            )
            if current is not None and self._is_ours(current):
                return self._edit_comment(known_id, body)
        for attempt in range(self.retries + 1):
            found = self._find_comment(number, marker)
            if found is not None:
                return self._edit_comment(found, body)
            try:
                data = self._json(
                    f"commenting on #{number}",
                    lambda: self.gh.rest.issues.create_comment(
                        self.owner, self.name, number, data={"body": body}
                    ),
                )
                return int(data["id"])
            except GitHubError as exc:
                # A 5xx or a lost answer: GitHub may have made the comment anyway; the next
                # round looks for it before posting again.
                unclear = exc.status is None or exc.status >= 500
                if not unclear or attempt == self.retries:
                    raise
                log.info("github.comment_unclear", status=exc.status, attempt=attempt + 1)
                self._sleep(self.retry_wait_s * 2**attempt)
        raise AssertionError("unreachable")

    def _find_comment(self, number: int, marker: str) -> int | None:
        """The App's comment carrying ``marker`` on ``number``, if there is one."""
        for comment in self._comments(number):
            if self._is_ours(comment) and marker in str(comment.get("body") or ""):
                return int(comment["id"])
        return None

    def _edit_comment(self, comment_id: int, body: str) -> int:
        self._json(
            "editing the App's comment",
            lambda: self.gh.rest.issues.update_comment(
                self.owner, self.name, comment_id, data={"body": body}
            ),
        )
        return comment_id

    def ensure_label(self, name: str, color: str, description: str) -> None:
        """Create the repository label ``name`` unless it exists."""
        found = self._missing_ok(
            f"reading label {name}",
            lambda: self.gh.rest.issues.get_label(self.owner, self.name, _segment(name)),
        )
        if found is not None:
            return
        try:
            self._json(
                f"creating label {name}",
                lambda: self.gh.rest.issues.create_label(
                    self.owner,
                    self.name,
                    data={"name": name, "color": color, "description": description},
                ),
            )
        except GitHubError as exc:
            if exc.status != 422:  # created meanwhile by someone else: fine
                raise

    def add_label(self, number: int, name: str) -> None:
        self._json(
            f"labelling #{number}",
            lambda: self.gh.rest.issues.add_labels(
                self.owner, self.name, number, data={"labels": [name]}
            ),
        )

    def remove_label(self, number: int, name: str) -> None:
        self._missing_ok(
            f"unlabelling #{number}",
            lambda: self.gh.rest.issues.remove_label(self.owner, self.name, number, _segment(name)),
        )

    def create_check_run(self, head_sha: str, name: str, title: str, summary: str) -> int:
        data = self._json(
            "creating the check run",
            lambda: self.gh.rest.checks.create(
                self.owner,
                self.name,
                data={
                    "name": name,
                    "head_sha": head_sha,
                    "status": "in_progress",
                    "output": {"title": title, "summary": summary},
                },
            ),
        )
        return int(data["id"])

    def update_check_run(self, check_run_id: int, title: str, summary: str) -> None:
        """Say something new on a check run that stays in progress."""
        self._json(
            "updating the check run",
            lambda: self.gh.rest.checks.update(
                self.owner,
                self.name,
                check_run_id,
                status="in_progress",
                output={"title": title, "summary": summary},
            ),
        )

    def complete_check_run(
        self,
        check_run_id: int,
        conclusion: Conclusion,
        title: str,
        summary: str,
        text: str,
        details_url: str | None = None,
    ) -> None:
        """Complete the check run; ``details_url`` is its report page, when there is one."""
        self._json(
            "completing the check run",
            lambda: self.gh.rest.checks.update(
                self.owner,
                self.name,
                check_run_id,
                status="completed",
                conclusion=conclusion,
                output={"title": title, "summary": summary, "text": text},
                details_url=details_url or UNSET,
            ),
        )


def _segment(text: str) -> str:
    """``text`` as one escaped URL path segment. githubkit puts path parameters into the URL as
    they are, so a label named ``area/core``, ``c#x`` or ``q?y`` would name another route, or
    another label (``DELETE .../labels/c#x`` removes label ``c``)."""
    return quote(text, safe="")


def _message(exc: RequestFailed) -> str:
    try:
        data = exc.response.json()
    except ValueError:
        return ""
    return str(data.get("message", "")) if isinstance(data, dict) else ""


def _issue_info(data: Any) -> IssueInfo:
    return IssueInfo(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        state=str(data.get("state") or "open"),
        labels=tuple(str(label["name"]) for label in data.get("labels") or []),
        is_pull="pull_request" in data and data["pull_request"] is not None,
        user=str((data.get("user") or {}).get("login", "")),
        author_association=str(data.get("author_association") or "NONE"),
    )
