"""What tests do to the server: set up state, read what clients did, inject faults."""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Mapping, Sequence

from tests.support.github_server import records
from tests.support.github_server.git_http import GitHttp
from tests.support.github_server.records import (
    DEFAULT_PERMISSIONS,
    JSON,
    PRIMARY_RATE_LIMIT_DOCS,
    RATE_LIMIT,
    ROLES,
    SECONDARY_RATE_LIMIT_DOCS,
    SECONDARY_RATE_LIMIT_MESSAGE,
)


class Scenario(GitHttp):
    """What tests do to the server: set up state, read what clients did, inject faults."""

    # --- test-side setup ------------------------------------------------------------------

    def add_installation(
        self, installation_id: int, account: str, permissions: Mapping[str, str] | None = None
    ) -> None:
        """Install the App on ``account``; ``permissions`` are what it was granted (tokens can
        only narrow them), by default ``DEFAULT_PERMISSIONS``."""
        with self._lock:
            self._installations[installation_id] = records._Installation(
                installation_id,
                account,
                dict(permissions or DEFAULT_PERMISSIONS),
                records._now_iso(),
            )

    def add_repo(
        self,
        full_name: str,
        installation_id: int,
        default_branch: str = "main",
        private: bool = False,
    ) -> None:
        """Make ``owner/repo`` one of the repositories of an installation."""
        with self._lock:
            if installation_id not in self._installations:
                raise ValueError(f"no installation {installation_id}")
            repo_id = next(self._ids)
            obj = self._repository_object(full_name, repo_id, private, default_branch)
            self._repos[full_name.lower()] = records._Repo(
                full_name, installation_id, default_branch, private, repo_id, obj
            )

    def add_issue(
        self,
        full_name: str,
        number: int,
        title: str,
        body: str | None,
        user: str = "octocat",
        author_association: str = "OWNER",
    ) -> JSON:
        """Open issue ``number``; return the stored issue object (changes made to it, such as
        its ``state``, show in later answers)."""
        with self._lock:
            repo = self._repo(full_name)
            return self._new_issue(repo, number, title, body, user, author_association, False)

    def add_pull(
        self,
        full_name: str,
        number: int,
        title: str,
        body: str | None,
        head_sha: str,
        base_sha: str,
        head_ref: str = "fix",
        base_ref: str = "main",
        user: str = "contributor",
        head_full_name: str | None = None,
        closing_issues: Sequence[int] = (),
    ) -> JSON:
        """Open pull request ``number`` (also an issue, as on GitHub) from ``head_full_name``
        (None: the repository itself; another name: a fork) and return the stored pull request
        object. ``closing_issues`` are the numbers of issues of this repository it closes."""
        with self._lock:
            repo = self._repo(full_name)
            head_name = head_full_name or repo.full_name
            association = self._association(repo, user, default="CONTRIBUTOR")
            issue = self._new_issue(repo, number, title, body, user, association, True)
            head_repo = self._head_repository(repo, head_name)
            api = f"{self.api_url}/repos/{repo.full_name}"
            web = f"{self.base_url}/{repo.full_name}"
            pull_id = next(self._ids)
            obj: JSON = {
                "url": f"{api}/pulls/{number}",
                "id": pull_id,
                "node_id": records._node_id("PullRequest", pull_id),
                "html_url": f"{web}/pull/{number}",
                "diff_url": f"{web}/pull/{number}.diff",
                "patch_url": f"{web}/pull/{number}.patch",
                "issue_url": f"{api}/issues/{number}",
                "number": number,
                "state": "open",
                "locked": False,
                "title": title,
                "user": self._user(user),
                "body": body,
                "created_at": issue["created_at"],
                "updated_at": issue["updated_at"],
                "closed_at": None,
                "merged_at": None,
                "merge_commit_sha": None,
                "assignee": None,
                "assignees": [],
                "requested_reviewers": [],
                "requested_teams": [],
                "labels": [],
                "milestone": None,
                "draft": False,
                "commits_url": f"{api}/pulls/{number}/commits",
                "review_comments_url": f"{api}/pulls/{number}/comments",
                "review_comment_url": f"{api}/pulls/comments{{/number}}",
                "comments_url": f"{api}/issues/{number}/comments",
                "statuses_url": f"{api}/statuses/{head_sha}",
                "head": {
                    "label": f"{head_name.split('/')[0]}:{head_ref}",
                    "ref": head_ref,
                    "sha": head_sha,
                    "user": self._user(head_name.split("/")[0]),
                    "repo": head_repo,
                },
                "base": {
                    "label": f"{repo.owner}:{base_ref}",
                    "ref": base_ref,
                    "sha": base_sha,
                    "user": self._user(repo.owner),
                    "repo": repo.object,
                },
                "_links": {},
                "author_association": association,
                "auto_merge": None,
                "active_lock_reason": None,
                "merged": False,
                "mergeable": None,
                "rebaseable": None,
                "mergeable_state": "unknown",
                "merged_by": None,
                "comments": 0,
                "review_comments": 0,
                "maintainer_can_modify": False,
                "commits": 1,
                "additions": 0,
                "deletions": 0,
                "changed_files": 0,
            }
            obj["_links"] = self._pull_links(repo, number, head_sha)
            self._pulls[(repo.full_name.lower(), number)] = records._Pull(
                head_name, tuple(closing_issues), obj
            )
        self._write_pull_ref(repo.full_name, number, head_sha, head_name)
        return obj

    def add_manifest_code(self, code: str, pem: str, webhook_secret: str) -> None:
        """What GitHub hands back, once, for ``code`` after an App was registered from a
        manifest: the App (this server's) with its private key and webhook secret."""
        with self._lock:
            app = self._app_object()
            app.update(pem=pem, webhook_secret=webhook_secret, client_secret="0" * 40)
            self._manifest_codes[code] = app

    def set_pull_head(self, full_name: str, number: int, head_sha: str) -> None:
        """A push to pull request ``number``'s head branch."""
        with self._lock:
            repo = self._repo(full_name)
            pull = self._pulls[(repo.full_name.lower(), number)]
            pull.object["head"]["sha"] = head_sha
            statuses = f"{self.api_url}/repos/{repo.full_name}/statuses/{head_sha}"
            pull.object["statuses_url"] = statuses
            pull.object["_links"] = self._pull_links(repo, number, head_sha)
            now = records._now_iso()
            pull.object["updated_at"] = now
            self._issues[(repo.full_name.lower(), number)]["updated_at"] = now
            head_name = pull.head_full_name
        self._write_pull_ref(repo.full_name, number, head_sha, head_name)

    def add_comment(
        self,
        full_name: str,
        number: int,
        body: str,
        user: str = "maintainer",
        author_association: str | None = None,
    ) -> JSON:
        """A person's comment on issue or pull request ``number``; return the stored comment.
        The association is worked out from the user's permission unless given."""
        with self._lock:
            repo = self._repo(full_name)
            association = author_association or self._association(repo, user, default="NONE")
            return self._new_comment(repo, number, body, self._user(user), association, None)

    def set_permission(self, full_name: str, user: str, permission: str) -> None:
        """Give ``user`` a role on the repository: admin, maintain, write, triage, read or none."""
        if permission not in ROLES:
            raise ValueError(f"unknown permission {permission!r}")
        with self._lock:
            self._repo(full_name).permissions[user.lower()] = permission

    def remove_label(self, full_name: str, number: int, name: str) -> None:
        """A person removing label ``name`` from issue or pull request ``number``."""
        with self._lock:
            repo = self._repo(full_name)
            key = (repo.full_name.lower(), number)
            self._issue_labels[key].remove(name.lower())
            self._sync_labels(repo, number)

    def expire_tokens(self) -> None:
        """Make every installation token issued so far expired, as an hour passing would."""
        with self._lock:
            for token in self._tokens.values():
                token.expires = time.time() - 1

    # --- test-side queries ----------------------------------------------------------------

    def comments(self, full_name: str, number: int) -> list[JSON]:
        """The comments on issue or pull request ``number``, oldest first (copies)."""
        with self._lock:
            key = self._repo(full_name).full_name.lower()
            return [
                copy.deepcopy(obj)
                for repo_key, n, obj in self._comments.values()
                if repo_key == key and n == number
            ]

    def issue_labels(self, full_name: str, number: int) -> list[str]:
        """The names of the labels on issue or pull request ``number``."""
        with self._lock:
            repo = self._repo(full_name)
            names = self._issue_labels[(repo.full_name.lower(), number)]
            return [repo.labels[n]["name"] for n in names]

    def repo_labels(self, full_name: str) -> list[JSON]:
        with self._lock:
            return copy.deepcopy(list(self._repo(full_name).labels.values()))

    def check_runs(self, full_name: str) -> list[JSON]:
        """The repository's check runs, in the order they were created (copies)."""
        with self._lock:
            key = self._repo(full_name).full_name.lower()
            return [copy.deepcopy(obj) for k, obj in self._check_runs.values() if k == key]

    @property
    def tokens(self) -> list[JSON]:
        """Every installation token issued: ``installation_id``, ``token``, ``expires_at``, the
        requested ``repositories`` and ``repository_ids`` (None when not narrowed) and the
        granted ``permissions``."""
        with self._lock:
            return [copy.deepcopy(t.record) for t in self._tokens.values()]

    @property
    def calls(self) -> list[records.Call]:
        """Every request answered so far, in the order their answers were ready; a call is
        here before its client can have the answer."""
        with self._lock:
            return list(self._calls)

    # --- fault injection ------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        headers: Mapping[str, str] | None = None,
        body: JSON | None = None,
        times: int = 1,
        delay_s: float = 0.0,
        after: bool = False,
    ) -> None:
        """Answer the next ``times`` requests whose method is ``method`` (``*``: any) and whose
        path as sent (e.g. ``/api/v3/repos/o/r/issues/1/comments``, no query) has a match for
        ``path_regex`` with ``status``, ``headers`` and ``body`` (by default GitHub's message
        for the status) instead, after ``delay_s`` seconds. Faults come before authentication,
        and answers carry the usual headers, which ``headers`` override. With ``after`` the
        request is carried out first and only its answer is replaced."""
        with self._lock:
            self._faults.append(
                records._Fault(
                    method.upper(),
                    re.compile(path_regex),
                    status,
                    {k.lower(): v for k, v in (headers or {}).items()},
                    body,
                    times,
                    delay_s,
                    after,
                )
            )

    def fail_secondary_rate_limit(
        self,
        method: str,
        path_regex: str,
        retry_after_s: int = 1,
        status: int = 403,
        times: int = 1,
    ) -> None:
        """GitHub's secondary rate limit answer: 403 (or 429) with ``retry-after``."""
        self.fail_next(
            method,
            path_regex,
            status,
            headers={"retry-after": str(retry_after_s)},
            body={
                "message": SECONDARY_RATE_LIMIT_MESSAGE,
                "documentation_url": SECONDARY_RATE_LIMIT_DOCS,
            },
            times=times,
        )

    def fail_primary_rate_limit(
        self, method: str, path_regex: str, reset_in_s: float = 1.0, times: int = 1
    ) -> None:
        """GitHub's primary rate limit answer: 403 with ``x-ratelimit-remaining: 0`` and the
        reset time as epoch seconds in ``x-ratelimit-reset``."""
        with self._lock:
            installation = min(self._installations, default=1)
        reset = int(time.time() + reset_in_s)
        self.fail_next(
            method,
            path_regex,
            403,
            headers={
                "x-ratelimit-limit": str(RATE_LIMIT),
                "x-ratelimit-remaining": "0",
                "x-ratelimit-used": str(RATE_LIMIT),
                "x-ratelimit-reset": str(reset),
            },
            body={
                "message": f"API rate limit exceeded for installation ID {installation}.",
                "documentation_url": PRIMARY_RATE_LIMIT_DOCS,
            },
            times=times,
        )

    def fail_server_error(
        self, method: str, path_regex: str, status: int = 502, times: int = 1, delay_s: float = 0.0
    ) -> None:
        """A server error as GitHub's front end gives it, ``{"message": "Server Error"}``."""
        self.fail_next(
            method,
            path_regex,
            status,
            body={"message": "Server Error"},
            times=times,
            delay_s=delay_s,
        )
