"""The server's state and the GitHub objects it builds from it."""

from __future__ import annotations

import copy
import itertools
import re
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, urlsplit

from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.github_server.records import (
    _REPO_URLS,
    _USER_URLS,
    API_PREFIX,
    DEFAULT_PERMISSIONS,
    EPOCH_ISO,
    GRAPHQL_PATH,
    JSON,
    ROLES,
    Call,
    _Fault,
    _Installation,
    _node_id,
    _now_iso,
    _Pull,
    _Repo,
    _Route,
    _run_git,
    _Token,
)


class ServerBase:
    """The server's state and the GitHub objects it builds from it."""

    app_id: int
    app_slug: str
    git_root: Path
    token_ttl_s: int
    _public_key: rsa.RSAPublicKey
    _lock: threading.RLock
    _ids: itertools.count[int]
    _started_at: str
    _installations: dict[int, _Installation]
    _repos: dict[str, _Repo]  # lower-cased full name -> repo
    _forks: dict[str, JSON]  # repository objects of unregistered head repos
    _issues: dict[tuple[str, int], JSON]
    _issue_labels: dict[tuple[str, int], list[str]]  # lower-cased label names
    _pulls: dict[tuple[str, int], _Pull]
    _comments: dict[int, tuple[str, int, JSON]]  # id -> (repo key, number, obj)
    _check_runs: dict[int, tuple[str, JSON]]
    _check_suites: dict[tuple[str, str], int]
    _tokens: dict[str, _Token]
    _user_ids: dict[str, int]
    _rate_used: dict[str, int]
    _rate_reset: dict[str, int]
    _faults: list[_Fault]
    _manifest_codes: dict[str, JSON]
    _calls: list[Call]
    _routes: list[tuple[str, re.Pattern[str], _Route, bool]]
    _httpd: ThreadingHTTPServer
    _thread: threading.Thread

    # --- addresses ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The server's root, also the base of the ``html_url`` of its objects."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_url(self) -> str:
        """The REST base URL, e.g. ``http://127.0.0.1:PORT/api/v3``."""
        return self.base_url + API_PREFIX

    @property
    def graphql_url(self) -> str:
        return self.base_url + GRAPHQL_PATH

    def git_url(self, full_name: str) -> str:
        """The clone URL of ``owner/repo``."""
        return f"{self.base_url}/git/{full_name}.git"

    def bare_path(self, full_name: str) -> Path:
        """Where the server finds the bare repository of ``owner/repo``."""
        owner, name = full_name.split("/")
        return self.git_root / owner / f"{name}.git"

    # --- object builders (called with the lock held) -------------------------------------

    def _user(self, login: str, kind: str = "User") -> JSON:
        if login.endswith("[bot]"):
            kind = "Bot"
            user_id = 9000 + self.app_id if login == self._bot_login else self._user_id(login)
        else:
            user_id = self._user_id(login)
        api = f"{self.api_url}/users/{quote(login)}"
        user: JSON = {
            "login": login,
            "id": user_id,
            "node_id": _node_id("Bot" if kind == "Bot" else "User", user_id),
            "avatar_url": f"{self.base_url}/avatars/u/{user_id}?v=4",
            "gravatar_id": "",
            "url": api,
            "html_url": f"{self.base_url}/{'apps/' + self.app_slug if kind == 'Bot' else login}",
        }
        user.update({key: api + suffix for key, suffix in _USER_URLS})
        user.update({"type": kind, "user_view_type": "public", "site_admin": False})
        return user

    def _user_id(self, login: str) -> int:
        key = login.lower()
        if key not in self._user_ids:
            self._user_ids[key] = next(self._ids)
        return self._user_ids[key]

    @property
    def _bot_login(self) -> str:
        return f"{self.app_slug}[bot]"

    def _app_object(self) -> JSON:
        return {
            "id": self.app_id,
            "slug": self.app_slug,
            "node_id": _node_id("Integration", self.app_id),
            "client_id": f"Iv23li{self.app_id:014d}",
            "owner": self._user(f"{self.app_slug}-developers"),
            "name": self.app_slug.capitalize(),
            "description": "",
            "external_url": self.base_url,
            "html_url": f"{self.base_url}/apps/{self.app_slug}",
            "created_at": EPOCH_ISO,
            "updated_at": EPOCH_ISO,
            "permissions": dict(DEFAULT_PERMISSIONS),
            "events": ["check_run", "issue_comment", "issues", "pull_request"],
        }

    def _repository_object(
        self, full_name: str, repo_id: int, private: bool, default_branch: str, fork: bool = False
    ) -> JSON:
        owner, name = full_name.split("/")
        api = f"{self.api_url}/repos/{full_name}"
        web = f"{self.base_url}/{full_name}"
        host = urlsplit(self.base_url).hostname
        obj: JSON = {
            "id": repo_id,
            "node_id": _node_id("Repository", repo_id),
            "name": name,
            "full_name": full_name,
            "private": private,
            "owner": self._user(owner),
            "html_url": web,
            "description": None,
            "fork": fork,
            "url": api,
        }
        obj.update({key: api + suffix for key, suffix in _REPO_URLS})
        obj.update(
            {
                "created_at": self._started_at,
                "updated_at": self._started_at,
                "pushed_at": self._started_at,
                "git_url": f"git://{host}/{full_name}.git",
                "ssh_url": f"git@{host}:{full_name}.git",
                "clone_url": self.git_url(full_name),
                "svn_url": web,
                "homepage": None,
                "size": 0,
                "stargazers_count": 0,
                "watchers_count": 0,
                "language": "Python",
                "has_issues": True,
                "has_projects": True,
                "has_downloads": True,
                "has_wiki": True,
                "has_pages": False,
                "has_discussions": False,
                "forks_count": 0,
                "mirror_url": None,
                "archived": False,
                "disabled": False,
                "open_issues_count": 0,
                "license": None,
                "allow_forking": True,
                "is_template": False,
                "web_commit_signoff_required": False,
                "topics": [],
                "visibility": "private" if private else "public",
                "forks": 0,
                "open_issues": 0,
                "watchers": 0,
                "default_branch": default_branch,
                "network_count": 0,
                "subscribers_count": 0,
                "custom_properties": {},
            }
        )
        return obj

    def _head_repository(self, repo: _Repo, head_name: str) -> JSON:
        registered = self._repos.get(head_name.lower())
        if registered is not None:
            return registered.object
        key = head_name.lower()
        if key not in self._forks:
            self._forks[key] = self._repository_object(
                head_name, next(self._ids), repo.private, repo.default_branch, fork=True
            )
        return self._forks[key]

    def _pull_links(self, repo: _Repo, number: int, head_sha: str) -> JSON:
        api = f"{self.api_url}/repos/{repo.full_name}"
        return {
            "self": {"href": f"{api}/pulls/{number}"},
            "html": {"href": f"{self.base_url}/{repo.full_name}/pull/{number}"},
            "issue": {"href": f"{api}/issues/{number}"},
            "comments": {"href": f"{api}/issues/{number}/comments"},
            "review_comments": {"href": f"{api}/pulls/{number}/comments"},
            "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
            "commits": {"href": f"{api}/pulls/{number}/commits"},
            "statuses": {"href": f"{api}/statuses/{head_sha}"},
        }

    def _new_issue(
        self,
        repo: _Repo,
        number: int,
        title: str,
        body: str | None,
        user: str,
        author_association: str,
        is_pull: bool,
    ) -> JSON:
        key = (repo.full_name.lower(), number)
        if key in self._issues:
            raise ValueError(f"{repo.full_name}#{number} exists")
        issue_id = next(self._ids)
        api = f"{self.api_url}/repos/{repo.full_name}/issues/{number}"
        web = f"{self.base_url}/{repo.full_name}/{'pull' if is_pull else 'issues'}/{number}"
        now = _now_iso()
        issue: JSON = {
            "url": api,
            "repository_url": f"{self.api_url}/repos/{repo.full_name}",
            "labels_url": f"{api}/labels{{/name}}",
            "comments_url": f"{api}/comments",
            "events_url": f"{api}/events",
            "html_url": web,
            "id": issue_id,
            "node_id": _node_id("Issue", issue_id),
            "number": number,
            "title": title,
            "user": self._user(user),
            "labels": [],
            "state": "open",
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": 0,
            "created_at": now,
            "updated_at": now,
            "closed_at": None,
            "author_association": author_association,
            "active_lock_reason": None,
            "body": body,
            "closed_by": None,
            "reactions": self._reactions(f"{api}/reactions"),
            "timeline_url": f"{api}/timeline",
            "performed_via_github_app": None,
            "state_reason": None,
        }
        if is_pull:
            pulls = f"{self.api_url}/repos/{repo.full_name}/pulls/{number}"
            issue["draft"] = False
            issue["pull_request"] = {
                "url": pulls,
                "html_url": web,
                "diff_url": f"{web}.diff",
                "patch_url": f"{web}.patch",
                "merged_at": None,
            }
        self._issues[key] = issue
        self._issue_labels[key] = []
        repo.object["open_issues_count"] = repo.object["open_issues"] = sum(
            1 for (k, _), i in self._issues.items() if k == key[0] and i["state"] == "open"
        )
        return issue

    @staticmethod
    def _reactions(url: str) -> JSON:
        counts = dict.fromkeys(
            ("total_count", "+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"),
            0,
        )
        return {"url": url, **counts}

    def _new_comment(
        self,
        repo: _Repo,
        number: int,
        body: str,
        user: JSON,
        association: str,
        app: JSON | None,
    ) -> JSON:
        issue = self._issues.get((repo.full_name.lower(), number))
        if issue is None:
            raise KeyError(f"{repo.full_name}#{number}")
        comment_id = next(self._ids)
        api = f"{self.api_url}/repos/{repo.full_name}/issues"
        now = _now_iso()
        comment: JSON = {
            "url": f"{api}/comments/{comment_id}",
            "html_url": f"{issue['html_url']}#issuecomment-{comment_id}",
            "issue_url": f"{api}/{number}",
            "id": comment_id,
            "node_id": _node_id("IssueComment", comment_id),
            "user": user,
            "created_at": now,
            "updated_at": now,
            "author_association": association,
            "body": body,
            "reactions": self._reactions(f"{api}/comments/{comment_id}/reactions"),
            "performed_via_github_app": app,
        }
        self._comments[comment_id] = (repo.full_name.lower(), number, comment)
        issue["comments"] += 1
        issue["updated_at"] = now
        return comment

    def _association(self, repo: _Repo, user: str, default: str) -> str:
        if user.lower() == repo.owner.lower():
            return "OWNER"
        if ROLES.get(repo.permissions.get(user.lower(), "none"), "none") != "none":
            return "COLLABORATOR"
        return default

    def _label_object(self, repo: _Repo, name: str, color: str, description: str | None) -> JSON:
        label_id = next(self._ids)
        return {
            "id": label_id,
            "node_id": _node_id("Label", label_id),
            "url": f"{self.api_url}/repos/{repo.full_name}/labels/{quote(name)}",
            "name": name,
            "color": color,
            "default": False,
            "description": description,
            # githubkit's Label model requires these keys (they are null unless archived).
            "archived_at": None,
            "archived_by": None,
        }

    def _sync_labels(self, repo: _Repo, number: int) -> None:
        key = (repo.full_name.lower(), number)
        labels = [copy.deepcopy(repo.labels[n]) for n in self._issue_labels[key]]
        self._issues[key]["labels"] = labels
        self._issues[key]["updated_at"] = _now_iso()

    def _repo(self, full_name: str) -> _Repo:
        repo = self._repos.get(full_name.lower())
        if repo is None:
            raise KeyError(f"no repository {full_name}")
        return repo

    def _write_pull_ref(self, full_name: str, number: int, sha: str, head_name: str) -> None:
        """Keep ``refs/pull/{number}/head`` in the base's bare repository at ``sha``, taking
        the commit from the head repository's bare repository when only that has it."""
        base = self.bare_path(full_name)
        if not base.is_dir():
            return
        if _run_git(base, "cat-file", "-e", f"{sha}^{{commit}}").returncode != 0:
            head = self.bare_path(head_name)
            if not head.is_dir():
                return
            _run_git(
                base,
                "-c",
                "uploadpack.allowAnySHA1InWant=true",
                "fetch",
                "-q",
                "--no-tags",
                str(head),
                sha,
            )
        _run_git(base, "update-ref", f"refs/pull/{number}/head", sha)
