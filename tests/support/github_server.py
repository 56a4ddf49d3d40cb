"""A real HTTP server on 127.0.0.1 that speaks GitHub's protocols for the calls a GitHub App makes.

It answers REST v3 under ``/api/v3`` (the GitHub Enterprise layout, so clients take it as their
base URL), one GraphQL query (``closingIssuesReferences`` of a pull request) at
``/api/graphql``, and git's smart HTTP protocol (fetch only) under ``/git/{owner}/{repo}.git``
through the real ``git http-backend``. Authentication is checked for real: App JWTs are
verified with PyJWT against the App's public key, installation tokens are issued by
``POST /app/installations/{id}/access_tokens`` and checked on every call, including their
repository and permission narrowing.

Answers carry GitHub's headers (rate limit, request id, media type, and on ``GET`` the
``cache-control: private, max-age=60`` and ``etag`` GitHub sends; ``If-None-Match`` answers
304) and GitHub's error bodies. Objects have the shapes of GitHub's own (as its webhook payloads
show them, completed with the fields githubkit's typed models require) with their URLs
pointing at this server.

Tests set up state with plain methods (``add_repo``, ``add_issue``, ``add_pull``, ...), read
what the client did with ``comments``, ``issue_labels``, ``check_runs``, ``tokens`` and
``calls``, and make the next matching requests fail with ``fail_next`` (or the rate limit and
server error helpers built on it).

Where it differs from GitHub on purpose:

- ``GET .../collaborators/{user}/permission`` answers 200 ``"permission": "none"`` for a user
  who is no collaborator; GitHub answers 404 for such users on private repositories.
- git over HTTP always needs a token, also for public repositories.
- ``add_pull`` and ``set_pull_head`` write ``refs/pull/{n}/head`` into the base repository's
  bare repository (fetching the commit from the head repository's bare repository when that
  exists), as GitHub keeps such a ref; nothing else ever writes to the bare repositories.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import itertools
import json
import os
import re
import secrets
import string
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

JSON = dict[str, Any]

API_PREFIX = "/api/v3"
GRAPHQL_PATH = "/api/graphql"
DOCS = "https://docs.github.com/rest"
COMMENT_BODY_MAX = 65536
CHECK_OUTPUT_MAX = 65535
RATE_LIMIT = 5000
SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
SECONDARY_RATE_LIMIT_DOCS = (
    "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api"
    "#about-secondary-rate-limits"
)
PRIMARY_RATE_LIMIT_DOCS = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
    "#about-the-primary-rate-limit"
)
NOT_ACCESSIBLE = "Resource not accessible by integration"
# What an installation token may do when the request for it names no permissions.
DEFAULT_PERMISSIONS: Mapping[str, str] = {
    "metadata": "read",
    "issues": "write",
    "pull_requests": "read",
    "checks": "write",
    "contents": "read",
}
# The conclusions an App may set; "stale" is GitHub's own.
CONCLUSIONS = frozenset(
    {"action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out"}
)
CHECK_STATUSES = frozenset({"queued", "in_progress", "completed"})
PERMISSION_LEVELS = {"none": 0, "read": 1, "write": 2, "admin": 3}
# Collaborator roles and the permission GitHub reports for them.
ROLES = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}
EPOCH_ISO = "2024-01-02T03:04:05Z"

_TOKEN_ALPHABET = string.ascii_letters + string.digits
_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"

_USER_URLS = (
    ("followers_url", "/followers"),
    ("following_url", "/following{/other_user}"),
    ("gists_url", "/gists{/gist_id}"),
    ("starred_url", "/starred{/owner}{/repo}"),
    ("subscriptions_url", "/subscriptions"),
    ("organizations_url", "/orgs"),
    ("repos_url", "/repos"),
    ("events_url", "/events{/privacy}"),
    ("received_events_url", "/received_events"),
)
_REPO_URLS = (
    ("forks_url", "/forks"),
    ("keys_url", "/keys{/key_id}"),
    ("collaborators_url", "/collaborators{/collaborator}"),
    ("teams_url", "/teams"),
    ("hooks_url", "/hooks"),
    ("issue_events_url", "/issues/events{/number}"),
    ("events_url", "/events"),
    ("assignees_url", "/assignees{/user}"),
    ("branches_url", "/branches{/branch}"),
    ("tags_url", "/tags"),
    ("blobs_url", "/git/blobs{/sha}"),
    ("git_tags_url", "/git/tags{/sha}"),
    ("git_refs_url", "/git/refs{/sha}"),
    ("trees_url", "/git/trees{/sha}"),
    ("statuses_url", "/statuses/{sha}"),
    ("languages_url", "/languages"),
    ("stargazers_url", "/stargazers"),
    ("contributors_url", "/contributors"),
    ("subscribers_url", "/subscribers"),
    ("subscription_url", "/subscription"),
    ("commits_url", "/commits{/sha}"),
    ("git_commits_url", "/git/commits{/sha}"),
    ("comments_url", "/comments{/number}"),
    ("issue_comment_url", "/issues/comments{/number}"),
    ("contents_url", "/contents/{+path}"),
    ("compare_url", "/compare/{base}...{head}"),
    ("merges_url", "/merges"),
    ("archive_url", "/{archive_format}{/ref}"),
    ("downloads_url", "/downloads"),
    ("issues_url", "/issues{/number}"),
    ("pulls_url", "/pulls{/number}"),
    ("milestones_url", "/milestones{/number}"),
    ("notifications_url", "/notifications{?since,all,participating}"),
    ("labels_url", "/labels{/name}"),
    ("releases_url", "/releases{/id}"),
    ("deployments_url", "/deployments"),
)


# --- helpers for test fixtures ------------------------------------------------------------


def make_app_key() -> tuple[str, bytes]:
    """A fresh RSA key pair for an App: the private key as PEM text (the PKCS#1 form GitHub
    hands out) and the public key as PEM bytes (for ``GitHubServer``)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private.decode(), public


def make_bare_repo(git_root: Path, full_name: str, source: Path, branch: str = "main") -> Path:
    """Clone the local repository ``source`` bare to ``git_root/owner/repo.git``, where the
    server serves it, with ``branch`` as its HEAD; return that path."""
    owner, name = full_name.split("/")
    dest = git_root / owner / f"{name}.git"
    dest.parent.mkdir(parents=True, exist_ok=True)
    _run_git(None, "clone", "--bare", "-q", str(source), str(dest))
    _run_git(dest, "symbolic-ref", "HEAD", f"refs/heads/{branch}")
    return dest


def git_auth_header(token: str) -> str:
    """The header git sends for an installation token, for ``git -c http.extraHeader=...``."""
    pair = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return f"Authorization: Basic {pair}"


def _git_env() -> dict[str, str]:
    # The user's and the system's git configuration must not change what the server does.
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }


def _run_git(git_dir: Path | None, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run git (on the bare repository ``git_dir`` if given) and return the finished process;
    failures are the caller's to read from ``returncode``."""
    prefix = ["git", "-c", "safe.directory=*"]
    if git_dir is not None:
        prefix += ["--git-dir", str(git_dir)]
    return subprocess.run(
        [*prefix, *args], capture_output=True, env=_git_env(), timeout=60, check=False
    )


@functools.cache
def _http_backend() -> Path:
    """The ``git http-backend`` program, which lives in git's exec path."""
    exec_path = _run_git(None, "--exec-path").stdout.decode().strip()
    return Path(exec_path) / "git-http-backend"


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node_id(kind: str, number: int) -> str:
    # GitHub's legacy global ids: base64 of "<len(kind)>:<kind><id>".
    return base64.b64encode(f"0{len(kind)}:{kind}{number}".encode()).decode()


def _valid_iso(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# --- records ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One request as the server received and answered it. ``path`` is the path as sent,
    without the query; ``headers`` are lower-cased; ``json`` is the parsed request body (None
    for none, and for git); ``started`` and ``finished`` are ``time.monotonic()`` readings
    taken when the request arrived and when its answer was ready to be sent."""

    method: str
    path: str
    query: dict[str, str]
    status: int
    json: Any
    headers: dict[str, str]
    started: float
    finished: float


@dataclass
class _Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: JSON | None
    remaining: int
    delay_s: float


@dataclass
class _Installation:
    id: int
    account: str
    permissions: dict[str, str]
    created_at: str


@dataclass
class _Repo:
    full_name: str
    installation_id: int
    default_branch: str
    private: bool
    id: int
    object: JSON
    labels: dict[str, JSON] = field(default_factory=dict)  # lower-cased name -> label
    permissions: dict[str, str] = field(default_factory=dict)  # lower-cased login -> role

    @property
    def owner(self) -> str:
        return self.full_name.split("/")[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/")[1]


@dataclass
class _Pull:
    head_full_name: str
    closing_issues: tuple[int, ...]
    object: JSON


@dataclass
class _Token:
    value: str
    installation_id: int
    expires: float
    repositories: frozenset[str] | None  # lower-cased full names, None: all of the installation
    permissions: dict[str, str]
    record: JSON


@dataclass
class _Request:
    method: str
    path: str
    query_string: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    json: Any
    token: _Token | None = None


@dataclass
class _Answer:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    content_type: str = "application/json; charset=utf-8"
    delay_s: float = 0.0
    resource: str | None = "core"  # the rate limit resource; None: not a REST answer


class _HttpError(Exception):
    """An error answer in GitHub's shape."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[JSON] | None = None,
        headers: Mapping[str, str] | None = None,
        documentation_url: str = DOCS,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body: JSON = {"message": message, "documentation_url": documentation_url}
        if errors is not None:
            self.body["errors"] = errors
        self.body["status"] = str(status)
        self.headers = dict(headers or {})
        self.text: str | None = None  # a plain text answer instead, for git clients

    def answer(self) -> _Answer:
        if self.text is not None:
            return _Answer(
                self.status,
                raw=self.text.encode() + b"\n",
                headers=self.headers,
                content_type="text/plain; charset=utf-8",
                resource=None,
            )
        return _Answer(self.status, self.body, self.headers)


def _not_found() -> _HttpError:
    return _HttpError(404, "Not Found")


def _validation(
    resource: str, code: str, field_name: str, message: str | None = None
) -> _HttpError:
    error: JSON = {"resource": resource, "code": code, "field": field_name}
    if message is not None:
        error["message"] = message
    return _HttpError(422, "Validation Failed", errors=[error])


_Route = Callable[[_Request, re.Match[str]], _Answer]


# --- the server ---------------------------------------------------------------------------


class GitHubServer:
    """GitHub for one App, with its installations, repositories and their issues, pull
    requests, comments, labels and check runs; use as a context manager.

    ``public_key_pem`` verifies the App's JWTs; bare repositories served over git are found at
    ``git_root/owner/repo.git``; installation tokens live ``token_ttl_s`` seconds."""

    def __init__(
        self,
        app_id: int,
        public_key_pem: bytes,
        git_root: Path,
        app_slug: str = "reprobot",
        token_ttl_s: int = 3600,
    ) -> None:
        self.app_id = app_id
        self.app_slug = app_slug
        self.git_root = Path(git_root)
        self.token_ttl_s = token_ttl_s
        public_key = serialization.load_pem_public_key(public_key_pem)
        if not isinstance(public_key, rsa.RSAPublicKey):
            raise ValueError("an App's key is an RSA key")
        self._public_key = public_key
        self._lock = threading.RLock()
        self._ids = itertools.count(1000)
        self._started_at = _now_iso()
        self._installations: dict[int, _Installation] = {}
        self._repos: dict[str, _Repo] = {}  # lower-cased full name -> repo
        self._forks: dict[str, JSON] = {}  # repository objects of unregistered head repos
        self._issues: dict[tuple[str, int], JSON] = {}
        self._issue_labels: dict[tuple[str, int], list[str]] = {}  # lower-cased label names
        self._pulls: dict[tuple[str, int], _Pull] = {}
        self._comments: dict[int, tuple[str, int, JSON]] = {}  # id -> (repo key, number, obj)
        self._check_runs: dict[int, tuple[str, JSON]] = {}
        self._check_suites: dict[tuple[str, str], int] = {}
        self._tokens: dict[str, _Token] = {}
        self._user_ids: dict[str, int] = {}
        self._rate_used: dict[str, int] = {}
        self._rate_reset: dict[str, int] = {}
        self._faults: list[_Fault] = []
        self._manifest_codes: dict[str, JSON] = {}
        self._calls: list[Call] = []
        self._routes = self._route_table()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        # Handler threads of clients that gave up, or keep a connection open, must not delay
        # the test's end.
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits for the next poll, and tests start many servers.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

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

    # --- lifecycle ------------------------------------------------------------------------

    def __enter__(self) -> GitHubServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # --- test-side setup ------------------------------------------------------------------

    def add_installation(
        self, installation_id: int, account: str, permissions: Mapping[str, str] | None = None
    ) -> None:
        """Install the App on ``account``; ``permissions`` are what it was granted (tokens can
        only narrow them), by default ``DEFAULT_PERMISSIONS``."""
        with self._lock:
            self._installations[installation_id] = _Installation(
                installation_id,
                account,
                dict(permissions or DEFAULT_PERMISSIONS),
                _now_iso(),
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
            self._repos[full_name.lower()] = _Repo(
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
                "node_id": _node_id("PullRequest", pull_id),
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
            self._pulls[(repo.full_name.lower(), number)] = _Pull(
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
            now = _now_iso()
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
    def calls(self) -> list[Call]:
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
    ) -> None:
        """Answer the next ``times`` requests whose method is ``method`` (``*``: any) and whose
        path as sent (e.g. ``/api/v3/repos/o/r/issues/1/comments``, no query) has a match for
        ``path_regex`` with ``status``, ``headers`` and ``body`` (by default GitHub's message
        for the status) instead, after ``delay_s`` seconds. Faults come before authentication,
        and answers carry the usual headers, which ``headers`` override."""
        with self._lock:
            self._faults.append(
                _Fault(
                    method.upper(),
                    re.compile(path_regex),
                    status,
                    {k.lower(): v for k, v in (headers or {}).items()},
                    body,
                    times,
                    delay_s,
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

    # --- requests -------------------------------------------------------------------------

    def _route_table(self) -> list[tuple[str, re.Pattern[str], _Route, bool]]:
        """(method, pattern, handler, authenticated by an App JWT) for each REST route."""
        table: list[tuple[str, str, _Route, bool]] = [
            ("GET", r"/app", self._get_app, True),
            ("GET", r"/app/installations/(?P<id>\d+)", self._get_installation, True),
            (
                "POST",
                r"/app/installations/(?P<id>\d+)/access_tokens",
                self._create_token,
                True,
            ),
            ("GET", _REPO + r"/installation", self._get_repo_installation, True),
            ("GET", _REPO, self._get_repo, False),
            ("GET", _REPO + r"/branches/(?P<branch>.+)", self._get_branch, False),
            ("GET", _REPO + r"/contents(?:/(?P<path>.*))?", self._get_contents, False),
            ("GET", _REPO + r"/issues/(?P<number>\d+)", self._get_issue, False),
            ("GET", _REPO + r"/issues/(?P<number>\d+)/comments", self._list_comments, False),
            ("POST", _REPO + r"/issues/(?P<number>\d+)/comments", self._create_comment, False),
            ("GET", _REPO + r"/issues/comments/(?P<id>\d+)", self._get_comment, False),
            ("PATCH", _REPO + r"/issues/comments/(?P<id>\d+)", self._update_comment, False),
            ("GET", _REPO + r"/labels", self._list_labels, False),
            ("GET", _REPO + r"/labels/(?P<name>[^/]+)", self._get_label, False),
            ("POST", _REPO + r"/labels", self._create_label, False),
            ("GET", _REPO + r"/issues/(?P<number>\d+)/labels", self._list_issue_labels, False),
            ("POST", _REPO + r"/issues/(?P<number>\d+)/labels", self._add_labels, False),
            ("PUT", _REPO + r"/issues/(?P<number>\d+)/labels", self._set_labels, False),
            (
                "DELETE",
                _REPO + r"/issues/(?P<number>\d+)/labels/(?P<name>[^/]+)",
                self._delete_label,
                False,
            ),
            ("GET", _REPO + r"/pulls/(?P<number>\d+)", self._get_pull, False),
            ("POST", _REPO + r"/check-runs", self._create_check_run, False),
            ("GET", _REPO + r"/check-runs/(?P<id>\d+)", self._get_check_run, False),
            ("PATCH", _REPO + r"/check-runs/(?P<id>\d+)", self._update_check_run, False),
            (
                "GET",
                _REPO + r"/collaborators/(?P<user>[^/]+)/permission",
                self._get_permission,
                False,
            ),
        ]
        return [(m, re.compile(p + r"/?"), h, jwt_auth) for m, p, h, jwt_auth in table]

    def _dispatch(self, req: _Request) -> _Answer:
        fault = self._take_fault(req)
        if fault is not None:
            body = fault.body or {
                "message": HTTPStatus(fault.status).phrase,
                "documentation_url": DOCS,
            }
            return _Answer(fault.status, body, dict(fault.headers), delay_s=fault.delay_s)
        try:
            if req.path.startswith("/git/"):
                return self._git_http(req)
            if req.path.rstrip("/") == GRAPHQL_PATH and req.method == "POST":
                self._authenticate(req)
                answer = self._graphql(req)
                answer.resource = "graphql"
                return answer
            if req.path.startswith(API_PREFIX + "/"):
                return self._rest(req)
            raise _not_found()
        except _HttpError as error:
            return error.answer()

    def _take_fault(self, req: _Request) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.method in ("*", req.method) and fault.pattern.search(req.path):
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _rest(self, req: _Request) -> _Answer:
        route = req.path[len(API_PREFIX) :]
        by_id = re.fullmatch(r"/repositories/(\d+)(/.*)?", route)
        if by_id:
            # GitHub's Link headers point at /repositories/{id}/...; both spellings work.
            with self._lock:
                repo = next((r for r in self._repos.values() if r.id == int(by_id[1])), None)
            if repo is None:
                raise _not_found()
            route = f"/repos/{repo.full_name}{by_id[2] or ''}"
        conversion = re.fullmatch(r"/app-manifests/([^/]+)/conversions", route)
        if conversion and req.method == "POST":
            # The manifest flow's last step needs no authentication: the code is the secret.
            return self._convert_manifest(conversion[1])
        for method, pattern, handler, jwt_auth in self._routes:
            match = pattern.fullmatch(route)
            if match is None or method != req.method:
                continue
            if jwt_auth:
                self._verify_jwt(req)
            else:
                self._authenticate(req)
            return handler(req, match)
        raise _not_found()

    def _convert_manifest(self, code: str) -> _Answer:
        with self._lock:
            app = self._manifest_codes.pop(code, None)
        if app is None:
            raise _not_found()
        return _Answer(201, app)

    # --- authentication -------------------------------------------------------------------

    def _verify_jwt(self, req: _Request) -> None:
        scheme, _, credential = req.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not credential:
            raise _HttpError(401, "A JSON web token could not be decoded")
        try:
            claims = jwt.decode(
                credential.strip(),
                self._public_key,
                algorithms=["RS256"],
                options={"require": ["exp", "iat", "iss"], "verify_iss": False},
            )
        except jwt.ExpiredSignatureError as exc:
            raise _HttpError(
                401,
                "'Expiration time' claim ('exp') must be a numeric value representing the "
                "future time at which the assertion expires",
            ) from exc
        except jwt.PyJWTError as exc:
            raise _HttpError(401, "A JSON web token could not be decoded") from exc
        if str(claims["iss"]) != str(self.app_id):
            # Another App's JWT: GitHub would check it against that App's key.
            raise _HttpError(401, "A JSON web token could not be decoded")
        if int(claims["exp"]) - int(claims["iat"]) > 600:
            raise _HttpError(401, "'Expiration time' claim ('exp') is too far in the future")

    def _token_for(self, credential: str) -> _Token | None:
        with self._lock:
            token = self._tokens.get(credential)
        if token is None or token.expires <= time.time():
            return None
        return token

    def _authenticate(self, req: _Request) -> None:
        scheme, _, credential = req.headers.get("authorization", "").partition(" ")
        token = None
        if scheme.lower() in ("token", "bearer"):
            token = self._token_for(credential.strip())
        if token is None:
            raise _HttpError(401, "Bad credentials")
        req.token = token

    def _covered(self, token: _Token, full_name: str) -> _Repo | None:
        """The repository if the token may see it."""
        with self._lock:
            repo = self._repos.get(full_name.lower())
        if repo is None or repo.installation_id != token.installation_id:
            return None
        if token.repositories is not None and repo.full_name.lower() not in token.repositories:
            return None
        return repo

    def _repo_of(self, req: _Request, match: re.Match[str]) -> _Repo:
        assert req.token is not None
        repo = self._covered(req.token, f"{unquote(match['owner'])}/{unquote(match['repo'])}")
        if repo is None:
            # GitHub hides repositories a token cannot see.
            raise _not_found()
        return repo

    @staticmethod
    def _need(req: _Request, level: str, *permissions: str) -> None:
        """Refuse unless the token has ``level`` on one of ``permissions``."""
        assert req.token is not None
        wanted = PERMISSION_LEVELS[level]
        for name in permissions:
            have = req.token.permissions.get(name, "none")
            if name == "metadata":
                have = "read" if have == "none" else have
            if PERMISSION_LEVELS.get(have, 0) >= wanted:
                return
        accepted = "; ".join(f"{name}={level}" for name in permissions)
        raise _HttpError(403, NOT_ACCESSIBLE, headers={"x-accepted-github-permissions": accepted})

    # --- App routes (JWT) -----------------------------------------------------------------

    def _installation_object(self, installation: _Installation) -> JSON:
        api = self.api_url
        return {
            "id": installation.id,
            "client_id": f"Iv23li{self.app_id:014d}",
            "account": self._user(installation.account),
            "repository_selection": "selected",
            "access_tokens_url": f"{api}/app/installations/{installation.id}/access_tokens",
            "repositories_url": f"{api}/installation/repositories",
            "html_url": f"{self.base_url}/settings/installations/{installation.id}",
            "app_id": self.app_id,
            "app_slug": self.app_slug,
            "target_id": self._user_id(installation.account),
            "target_type": "User",
            "permissions": dict(installation.permissions),
            "events": ["check_run", "issue_comment", "issues", "pull_request"],
            "created_at": installation.created_at,
            "updated_at": installation.created_at,
            "single_file_name": None,
            "has_multiple_single_files": False,
            "single_file_paths": [],
            "suspended_by": None,
            "suspended_at": None,
        }

    def _get_app(self, req: _Request, match: re.Match[str]) -> _Answer:
        with self._lock:
            return _Answer(200, self._app_object())

    def _get_installation(self, req: _Request, match: re.Match[str]) -> _Answer:
        with self._lock:
            installation = self._installations.get(int(match["id"]))
            if installation is None:
                raise _not_found()
            return _Answer(200, self._installation_object(installation))

    def _get_repo_installation(self, req: _Request, match: re.Match[str]) -> _Answer:
        with self._lock:
            repo = self._repos.get(f"{unquote(match['owner'])}/{unquote(match['repo'])}".lower())
            if repo is None:
                raise _not_found()
            installation = self._installations[repo.installation_id]
            return _Answer(200, self._installation_object(installation))

    def _create_token(self, req: _Request, match: re.Match[str]) -> _Answer:
        body = req.json if req.json is not None else {}
        if not isinstance(body, dict):
            raise _HttpError(400, "Problems parsing JSON")
        with self._lock:
            installation = self._installations.get(int(match["id"]))
            if installation is None:
                raise _not_found()
            own = [r for r in self._repos.values() if r.installation_id == installation.id]
            names = body.get("repositories")
            ids = body.get("repository_ids")
            selected: list[_Repo] | None = None
            if names is not None or ids is not None:
                selected = []
                for name in names or []:
                    found = [
                        r for r in own if isinstance(name, str) and r.name.lower() == name.lower()
                    ]
                    if not found:
                        raise _HttpError(
                            422,
                            "There is at least one repository that does not exist or is not "
                            "accessible to the parent installation.",
                        )
                    selected.extend(found)
                for repo_id in ids or []:
                    found = [r for r in own if r.id == repo_id]
                    if not found:
                        raise _HttpError(
                            422,
                            "There is at least one repository that does not exist or is not "
                            "accessible to the parent installation.",
                        )
                    selected.extend(found)
            requested = body.get("permissions")
            if requested is None:
                permissions = dict(installation.permissions)
            else:
                if not isinstance(requested, dict):
                    raise _HttpError(422, "Invalid request.\n\npermissions must be an object.")
                for name, level in requested.items():
                    granted = installation.permissions.get(name, "none")
                    if level not in ("read", "write", "admin") or (
                        PERMISSION_LEVELS[level] > PERMISSION_LEVELS.get(granted, 0)
                    ):
                        raise _HttpError(
                            422, "The permissions requested are not granted to this installation."
                        )
                # GitHub adds metadata read to every token.
                permissions = {"metadata": "read", **requested}
            value = "ghs_" + "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(36))
            expires = time.time() + self.token_ttl_s
            expires_at = _iso(expires)
            record: JSON = {
                "installation_id": installation.id,
                "token": value,
                "expires_at": expires_at,
                "repositories": list(names) if names is not None else None,
                "repository_ids": list(ids) if ids is not None else None,
                "permissions": dict(permissions),
            }
            repo_keys = None
            if selected is not None:
                repo_keys = frozenset(r.full_name.lower() for r in selected)
            self._tokens[value] = _Token(
                value, installation.id, expires, repo_keys, permissions, record
            )
            answer: JSON = {
                "token": value,
                "expires_at": expires_at,
                "permissions": dict(permissions),
                "repository_selection": "all" if selected is None else "selected",
            }
            if selected is not None:
                unique = {r.id: r for r in selected}
                answer["repositories"] = [copy.deepcopy(r.object) for r in unique.values()]
            return _Answer(201, answer)

    # --- repository routes ----------------------------------------------------------------

    def _get_repo(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "metadata")
        with self._lock:
            return _Answer(200, copy.deepcopy(repo.object))

    def _bare(self, repo: _Repo) -> Path:
        path = self.bare_path(repo.full_name)
        if not path.is_dir():
            raise _HttpError(409, "Git Repository is empty.")
        return path

    def _commit_object(self, repo: _Repo, bare: Path, sha: str) -> JSON:
        shown = _run_git(
            bare,
            "show",
            "-s",
            "--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B",
            sha,
        )
        fields = shown.stdout.decode("utf-8", "replace").split("\x00")
        full, tree, parents, an, ae, ad, cn, ce, cd, message = fields[:10]
        api = f"{self.api_url}/repos/{repo.full_name}"
        web = f"{self.base_url}/{repo.full_name}"

        def when(date: str) -> str:
            return datetime.fromisoformat(date).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

        return {
            "sha": full,
            "node_id": _node_id("Commit", int(full[:7], 16)),
            "commit": {
                "author": {"name": an, "email": ae, "date": when(ad)},
                "committer": {"name": cn, "email": ce, "date": when(cd)},
                "message": message.rstrip("\n"),
                "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"},
                "url": f"{api}/git/commits/{full}",
                "comment_count": 0,
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "signature": None,
                    "payload": None,
                    "verified_at": None,
                },
            },
            "url": f"{api}/commits/{full}",
            "html_url": f"{web}/commit/{full}",
            "comments_url": f"{api}/commits/{full}/comments",
            "author": None,
            "committer": None,
            "parents": [
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{web}/commit/{p}"}
                for p in parents.split()
            ],
        }

    def _get_branch(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "metadata")
        branch = unquote(match["branch"]).rstrip("/")
        bare = self._bare(repo)
        parsed = _run_git(bare, "rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}")
        if parsed.returncode != 0 or branch.startswith("-"):
            raise _HttpError(404, "Branch not found")
        sha = parsed.stdout.decode().strip()
        api = f"{self.api_url}/repos/{repo.full_name}/branches/{quote(branch)}"
        commit = self._commit_object(repo, bare, sha)
        body = {
            "name": branch,
            "commit": commit,
            "_links": {"self": api, "html": f"{self.base_url}/{repo.full_name}/tree/{branch}"},
            "protected": False,
            "protection": {
                "enabled": False,
                "required_status_checks": {
                    "enforcement_level": "off",
                    "contexts": [],
                    "checks": [],
                },
            },
            "protection_url": f"{api}/protection",
        }
        return _Answer(200, body)

    def _content_entry(
        self, repo: _Repo, ref: str, path: str, kind: str, sha: str, size: int
    ) -> JSON:
        api = f"{self.api_url}/repos/{repo.full_name}"
        url = f"{api}/contents/{quote(path)}?ref={quote(ref, safe='')}"
        web_kind = "tree" if kind == "dir" else "blob"
        html = f"{self.base_url}/{repo.full_name}/{web_kind}/{ref}/{quote(path)}"
        git = f"{api}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
        download = None
        if kind == "file":
            download = f"{self.base_url}/raw/{repo.full_name}/{ref}/{quote(path)}"
        return {
            "type": kind,
            "size": size,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "url": url,
            "git_url": git,
            "html_url": html,
            "download_url": download,
            "_links": {"self": url, "git": git, "html": html},
        }

    @staticmethod
    def _ls_tree(bare: Path, treeish: str) -> list[tuple[str, str, str, int, str]]:
        """(mode, type, sha, size, name) of the entries ``git ls-tree -l`` lists."""
        listed = _run_git(bare, "ls-tree", "-l", "-z", treeish)
        if listed.returncode != 0:
            return []
        entries = []
        for item in listed.stdout.decode("utf-8", "replace").split("\x00"):
            if not item:
                continue
            meta, _, name = item.partition("\t")
            mode, kind, sha, size = meta.split()
            entries.append((mode, kind, sha, int(size) if size.isdigit() else 0, name))
        return entries

    def _get_contents(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "contents")
        bare = self._bare(repo)
        ref = req.query.get("ref") or repo.default_branch
        path = unquote(match["path"] or "").strip("/")
        commit = _run_git(bare, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
        if ref.startswith("-") or commit.returncode != 0:
            raise _HttpError(404, f"No commit found for the ref {ref}")
        sha = commit.stdout.decode().strip()
        kinds = {"blob": "file", "tree": "dir", "commit": "submodule"}
        if path:
            found = [
                e
                for e in self._ls_tree(bare, f"{sha}:{path.rpartition('/')[0]}")
                if e[4] == path.rpartition("/")[2]
            ]
            if not found:
                raise _not_found()
            mode, kind, object_sha, size, _ = found[0]
        else:
            mode, kind, object_sha, size = "040000", "tree", "", 0
        if kind == "tree":
            listing = [
                self._content_entry(
                    repo,
                    ref,
                    f"{path}/{name}" if path else name,
                    "symlink" if m == "120000" else kinds[k],
                    s,
                    n,
                )
                for m, k, s, n, name in self._ls_tree(bare, f"{sha}:{path}")
            ]
            return _Answer(200, listing)
        if kind != "blob":
            raise _not_found()
        entry = self._content_entry(repo, ref, path, "file", object_sha, size)
        data = _run_git(bare, "cat-file", "blob", object_sha).stdout
        accept = req.headers.get("accept", "")
        if "vnd.github.raw" in accept or "vnd.github.v3.raw" in accept:
            return _Answer(
                200,
                raw=data,
                content_type="application/vnd.github.raw",
                headers={"x-github-media-type": "github.v3; param=raw"},
            )
        if mode == "120000":
            entry["type"] = "symlink"
            entry["target"] = data.decode("utf-8", "replace")
            return _Answer(200, entry)
        if len(data) > 1_000_000:
            # GitHub leaves out the content of files over 1 MB; clients must ask for raw.
            entry.update({"content": "", "encoding": "none"})
        else:
            encoded = base64.b64encode(data).decode()
            lines = [encoded[i : i + 60] for i in range(0, len(encoded), 60)]
            entry.update({"content": "".join(line + "\n" for line in lines), "encoding": "base64"})
        return _Answer(200, entry)

    def _issue_key(self, req: _Request, match: re.Match[str]) -> tuple[_Repo, int, bool]:
        """The repository, number and pull-request-ness of the issue a route names, after
        checking the token may read it."""
        repo = self._repo_of(req, match)
        number = int(match["number"])
        with self._lock:
            issue = self._issues.get((repo.full_name.lower(), number))
        if issue is None:
            self._need(req, "read", "issues", "pull_requests")
            raise _not_found()
        is_pull = "pull_request" in issue
        self._need(req, "read", "issues", *(("pull_requests",) if is_pull else ()))
        return repo, number, is_pull

    def _get_issue(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, _ = self._issue_key(req, match)
        with self._lock:
            return _Answer(200, copy.deepcopy(self._issues[(repo.full_name.lower(), number)]))

    def _list_comments(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, _ = self._issue_key(req, match)
        with self._lock:
            key = repo.full_name.lower()
            items = [
                copy.deepcopy(obj)
                for k, n, obj in self._comments.values()
                if k == key and n == number
            ]
        link_base = f"{self.api_url}/repositories/{repo.id}/issues/{number}/comments"
        return self._paginate(req, items, link_base)

    @staticmethod
    def _paginate(req: _Request, items: list[JSON], link_base: str) -> _Answer:
        def number(name: str, default: int) -> int:
            try:
                return int(req.query.get(name, default))
            except ValueError:
                return default

        per_page = min(max(number("per_page", 30), 1), 100)
        page = max(number("page", 1), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []

        def link(target: int, rel: str) -> str:
            params = {"per_page": str(per_page)} if "per_page" in req.query else {}
            params["page"] = str(target)
            return f'<{link_base}?{urlencode(params)}>; rel="{rel}"'

        if page > 1:
            links.append(link(min(page - 1, last), "prev"))
        if page < last:
            links.append(link(page + 1, "next"))
            links.append(link(last, "last"))
        if page > 1:
            links.append(link(1, "first"))
        headers = {"link": ", ".join(links)} if links else {}
        return _Answer(200, chunk, headers)

    def _comment_body(self, req: _Request) -> str:
        body = req.json.get("body") if isinstance(req.json, dict) else None
        if not isinstance(body, str):
            raise _HttpError(422, 'Invalid request.\n\n"body" wasn\'t supplied.')
        if not body.strip():
            raise _validation("IssueComment", "missing_field", "body")
        if len(body) > COMMENT_BODY_MAX:
            raise _validation(
                "IssueComment",
                "custom",
                "body",
                f"body is too long (maximum is {COMMENT_BODY_MAX} characters)",
            )
        return body

    def _create_comment(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, is_pull = self._issue_key(req, match)
        self._need(req, "write", "issues", *(("pull_requests",) if is_pull else ()))
        body = self._comment_body(req)
        with self._lock:
            comment = self._new_comment(
                repo, number, body, self._user(self._bot_login), "NONE", self._app_object()
            )
            return _Answer(201, copy.deepcopy(comment), {"location": comment["url"]})

    def _comment_of(self, req: _Request, match: re.Match[str]) -> tuple[_Repo, JSON]:
        repo = self._repo_of(req, match)
        with self._lock:
            found = self._comments.get(int(match["id"]))
            is_pull = found is not None and "pull_request" in self._issues[found[:2]]
        if found is None or found[0] != repo.full_name.lower():
            self._need(req, "read", "issues", "pull_requests")
            raise _not_found()
        self._need(req, "read", "issues", *(("pull_requests",) if is_pull else ()))
        return repo, found[2]

    def _get_comment(self, req: _Request, match: re.Match[str]) -> _Answer:
        _, comment = self._comment_of(req, match)
        with self._lock:
            return _Answer(200, copy.deepcopy(comment))

    def _update_comment(self, req: _Request, match: re.Match[str]) -> _Answer:
        _, comment = self._comment_of(req, match)
        self._need(req, "write", "issues", "pull_requests")
        body = self._comment_body(req)
        with self._lock:
            if comment["user"]["login"] != self._bot_login:
                raise _HttpError(403, NOT_ACCESSIBLE)
            comment["body"] = body
            comment["updated_at"] = _now_iso()
            return _Answer(200, copy.deepcopy(comment))

    def _list_labels(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "issues", "pull_requests")
        with self._lock:
            items = copy.deepcopy(list(repo.labels.values()))
        return self._paginate(req, items, f"{self.api_url}/repositories/{repo.id}/labels")

    def _get_label(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "issues", "pull_requests")
        with self._lock:
            label = repo.labels.get(unquote(match["name"]).lower())
            if label is None:
                raise _not_found()
            return _Answer(200, copy.deepcopy(label))

    def _create_label(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "write", "issues", "pull_requests")
        body = req.json if isinstance(req.json, dict) else {}
        name = body.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _validation("Label", "missing_field", "name")
        color = str(body.get("color") or "ededed").lstrip("#")
        if not re.fullmatch(r"[0-9a-fA-F]{6}", color):
            raise _validation("Label", "invalid", "color")
        description = body.get("description")
        if description is not None and len(str(description)) > 100:
            raise _validation(
                "Label",
                "custom",
                "description",
                "description is too long (maximum is 100 characters)",
            )
        with self._lock:
            if name.lower() in repo.labels:
                raise _validation("Label", "already_exists", "name")
            label = self._label_object(repo, name, color.lower(), description)
            repo.labels[name.lower()] = label
            return _Answer(201, copy.deepcopy(label), {"location": label["url"]})

    def _list_issue_labels(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, _ = self._issue_key(req, match)
        with self._lock:
            labels = self._issues[(repo.full_name.lower(), number)]["labels"]
            return _Answer(200, copy.deepcopy(labels))

    @staticmethod
    def _label_names(req: _Request) -> list[str]:
        # GitHub takes {"labels": [...]}, a bare list, and names or {"name": ...} objects.
        raw = req.json.get("labels") if isinstance(req.json, dict) else req.json
        if not isinstance(raw, list):
            raise _HttpError(422, 'Invalid request.\n\n"labels" wasn\'t supplied.')
        names = []
        for item in raw:
            name = item.get("name") if isinstance(item, dict) else item
            if not isinstance(name, str) or not name.strip():
                raise _validation("Label", "invalid", "name")
            names.append(name)
        return names

    def _apply_labels(self, req: _Request, match: re.Match[str], replace: bool) -> _Answer:
        repo, number, is_pull = self._issue_key(req, match)
        self._need(req, "write", "issues", *(("pull_requests",) if is_pull else ()))
        names = self._label_names(req)
        with self._lock:
            key = (repo.full_name.lower(), number)
            current = [] if replace else list(self._issue_labels[key])
            for name in names:
                if name.lower() not in repo.labels:
                    # As on GitHub, labeling with an unknown name creates the label.
                    repo.labels[name.lower()] = self._label_object(repo, name, "ededed", None)
                if name.lower() not in current:
                    current.append(name.lower())
            self._issue_labels[key] = current
            self._sync_labels(repo, number)
            return _Answer(200, copy.deepcopy(self._issues[key]["labels"]))

    def _add_labels(self, req: _Request, match: re.Match[str]) -> _Answer:
        return self._apply_labels(req, match, replace=False)

    def _set_labels(self, req: _Request, match: re.Match[str]) -> _Answer:
        return self._apply_labels(req, match, replace=True)

    def _delete_label(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, is_pull = self._issue_key(req, match)
        self._need(req, "write", "issues", *(("pull_requests",) if is_pull else ()))
        name = unquote(match["name"]).lower()
        with self._lock:
            key = (repo.full_name.lower(), number)
            if name not in self._issue_labels[key]:
                raise _HttpError(404, "Label does not exist")
            self._issue_labels[key].remove(name)
            self._sync_labels(repo, number)
            return _Answer(200, copy.deepcopy(self._issues[key]["labels"]))

    def _get_pull(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "pull_requests")
        key = (repo.full_name.lower(), int(match["number"]))
        with self._lock:
            pull = self._pulls.get(key)
            if pull is None:
                raise _not_found()
            issue = self._issues[key]
            obj = copy.deepcopy(pull.object)
            # The issue side holds what pull requests share with issues.
            for name in ("title", "body", "state", "locked", "comments", "closed_at"):
                obj[name] = issue[name]
            obj["labels"] = copy.deepcopy(issue["labels"])
            obj["updated_at"] = max(obj["updated_at"], issue["updated_at"])
            return _Answer(200, obj)

    # --- check runs -----------------------------------------------------------------------

    def _check_fields(self, body: JSON, creating: bool) -> None:
        """Refuse a check run request GitHub would refuse."""
        if creating:
            for name in ("name", "head_sha"):
                if not isinstance(body.get(name), str) or not body[name]:
                    raise _HttpError(422, f'Invalid request.\n\n"{name}" wasn\'t supplied.')
        status = body.get("status")
        if status is not None and status not in CHECK_STATUSES:
            raise _validation("CheckRun", "invalid", "status")
        conclusion = body.get("conclusion")
        if conclusion is not None and conclusion not in CONCLUSIONS:
            raise _validation("CheckRun", "invalid", "conclusion")
        if status == "completed" and conclusion is None and creating:
            raise _validation("CheckRun", "missing_field", "conclusion")
        for name in ("started_at", "completed_at"):
            if body.get(name) is not None and not _valid_iso(body[name]):
                raise _validation("CheckRun", "invalid", name)
        output = body.get("output")
        if output is not None:
            if not isinstance(output, dict):
                raise _validation("CheckRun", "invalid", "output")
            for name in ("title", "summary"):
                if not isinstance(output.get(name), str):
                    raise _HttpError(422, f'Invalid request.\n\n"{name}" wasn\'t supplied.')
            for name in ("summary", "text"):
                text = output.get(name)
                if isinstance(text, str) and len(text) > CHECK_OUTPUT_MAX:
                    raise _HttpError(
                        422,
                        f"Invalid request.\n\nOnly {CHECK_OUTPUT_MAX} characters are allowed; "
                        f"{len(text)} were supplied.",
                    )
            annotations = output.get("annotations") or []
            if not isinstance(annotations, list) or len(annotations) > 50:
                raise _validation("CheckRun", "invalid", "annotations")

    def _apply_check_fields(self, run: JSON, body: JSON) -> None:
        for name in ("name", "details_url", "external_id", "started_at"):
            if name in body:
                run[name] = body[name]
        if "status" in body:
            run["status"] = body["status"]
        if body.get("conclusion") is not None:
            # A conclusion completes the run, as on GitHub.
            run["conclusion"] = body["conclusion"]
            run["status"] = "completed"
        if "completed_at" in body:
            run["completed_at"] = body["completed_at"]
        if run["status"] == "completed" and run["completed_at"] is None:
            run["completed_at"] = _now_iso()
        output = body.get("output")
        if isinstance(output, dict):
            run["output"].update(
                {
                    "title": output.get("title"),
                    "summary": output.get("summary"),
                    "text": output.get("text"),
                }
            )
            run["output"]["annotations_count"] += len(output.get("annotations") or [])

    def _minimal_pulls(self, repo: _Repo, head_sha: str) -> list[JSON]:
        """The open pull requests from the repository itself whose head is ``head_sha``; as
        on GitHub, pull requests from forks are left out."""
        found = []
        for (key, number), pull in self._pulls.items():
            obj = pull.object
            issue = self._issues[(key, number)]
            if key != repo.full_name.lower() or obj["head"]["sha"] != head_sha:
                continue
            if pull.head_full_name.lower() != key or issue["state"] != "open":
                continue
            found.append(
                {
                    "id": obj["id"],
                    "number": number,
                    "url": obj["url"],
                    "head": {
                        "ref": obj["head"]["ref"],
                        "sha": obj["head"]["sha"],
                        "repo": {"id": repo.id, "url": repo.object["url"], "name": repo.name},
                    },
                    "base": {
                        "ref": obj["base"]["ref"],
                        "sha": obj["base"]["sha"],
                        "repo": {"id": repo.id, "url": repo.object["url"], "name": repo.name},
                    },
                }
            )
        return found

    def _create_check_run(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "write", "checks")
        body = req.json if isinstance(req.json, dict) else {}
        self._check_fields(body, creating=True)
        head_sha = body["head_sha"]
        bare = self.bare_path(repo.full_name)
        if bare.is_dir() and (
            not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", head_sha)
            or _run_git(bare, "cat-file", "-e", f"{head_sha}^{{commit}}").returncode != 0
        ):
            raise _HttpError(422, f"No commit found for SHA: {head_sha}")
        with self._lock:
            run_id = next(self._ids)
            suite_key = (repo.full_name.lower(), head_sha)
            if suite_key not in self._check_suites:
                self._check_suites[suite_key] = next(self._ids)
            url = f"{self.api_url}/repos/{repo.full_name}/check-runs/{run_id}"
            run: JSON = {
                "id": run_id,
                "name": body["name"],
                "node_id": _node_id("CheckRun", run_id),
                "head_sha": head_sha,
                "external_id": "",
                "url": url,
                "html_url": f"{self.base_url}/{repo.full_name}/runs/{run_id}",
                "details_url": f"{self.base_url}/apps/{self.app_slug}",
                "status": "queued",
                "conclusion": None,
                "started_at": _now_iso(),
                "completed_at": None,
                "output": {
                    "title": None,
                    "summary": None,
                    "text": None,
                    "annotations_count": 0,
                    "annotations_url": f"{url}/annotations",
                },
                "check_suite": {"id": self._check_suites[suite_key]},
                "app": self._app_object(),
                "pull_requests": self._minimal_pulls(repo, head_sha),
            }
            self._apply_check_fields(run, body)
            self._check_runs[run_id] = (repo.full_name.lower(), run)
            return _Answer(201, copy.deepcopy(run), {"location": url})

    def _check_run_of(self, req: _Request, match: re.Match[str]) -> JSON:
        repo = self._repo_of(req, match)
        with self._lock:
            found = self._check_runs.get(int(match["id"]))
        if found is None or found[0] != repo.full_name.lower():
            raise _not_found()
        return found[1]

    def _get_check_run(self, req: _Request, match: re.Match[str]) -> _Answer:
        run = self._check_run_of(req, match)
        self._need(req, "read", "checks")
        with self._lock:
            return _Answer(200, copy.deepcopy(run))

    def _update_check_run(self, req: _Request, match: re.Match[str]) -> _Answer:
        run = self._check_run_of(req, match)
        self._need(req, "write", "checks")
        body = req.json if isinstance(req.json, dict) else {}
        self._check_fields(body, creating=False)
        with self._lock:
            self._apply_check_fields(run, body)
            return _Answer(200, copy.deepcopy(run))

    # --- collaborators --------------------------------------------------------------------

    def _get_permission(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "metadata")
        login = unquote(match["user"])
        with self._lock:
            default = "admin" if login.lower() == repo.owner.lower() else "none"
            role = repo.permissions.get(login.lower(), default)
            permission = ROLES[role]
            user = self._user(login)
            levels = PERMISSION_LEVELS[permission]
            user["permissions"] = {
                "admin": role == "admin",
                "maintain": role in ("admin", "maintain"),
                "push": levels >= 2,
                "triage": role in ("admin", "maintain", "write", "triage"),
                "pull": levels >= 1,
            }
            user["role_name"] = role
            return _Answer(200, {"permission": permission, "role_name": role, "user": user})

    # --- GraphQL --------------------------------------------------------------------------

    def _graphql(self, req: _Request) -> _Answer:
        body = req.json if isinstance(req.json, dict) else {}
        query = body.get("query")
        variables = body.get("variables") or {}
        if not isinstance(query, str) or "closingIssuesReferences" not in query:
            return _Answer(200, {"errors": [{"message": "unsupported by this test server"}]})
        try:
            owner, name, number = variables["owner"], variables["name"], int(variables["number"])
        except (KeyError, TypeError, ValueError):
            return _Answer(
                200,
                {"errors": [{"message": "variables owner, name and number are required"}]},
            )
        assert req.token is not None
        full_name = f"{owner}/{name}"
        repo = self._covered(req.token, full_name)
        if repo is None:
            return _Answer(
                200,
                {
                    "data": {"repository": None},
                    "errors": [
                        {
                            "type": "NOT_FOUND",
                            "path": ["repository"],
                            "locations": [{"line": 1, "column": 1}],
                            "message": f"Could not resolve to a Repository with the name "
                            f"'{full_name}'.",
                        }
                    ],
                },
            )
        self._need(req, "read", "pull_requests")
        with self._lock:
            pull = self._pulls.get((repo.full_name.lower(), number))
            if pull is None:
                return _Answer(
                    200,
                    {
                        "data": {"repository": {"pullRequest": None}},
                        "errors": [
                            {
                                "type": "NOT_FOUND",
                                "path": ["repository", "pullRequest"],
                                "locations": [{"line": 1, "column": 1}],
                                "message": "Could not resolve to a PullRequest with the number "
                                f"of {number}.",
                            }
                        ],
                    },
                )
            nodes = []
            for issue_number in pull.closing_issues:
                node: JSON = {
                    "number": issue_number,
                    "repository": {"nameWithOwner": repo.full_name},
                }
                issue = self._issues.get((repo.full_name.lower(), issue_number))
                # Fields beyond number and repository come only when the query names them.
                if issue is not None:
                    extra = {
                        "title": issue["title"],
                        "state": issue["state"].upper(),
                        "url": issue["html_url"],
                        "body": issue["body"] or "",
                    }
                    for key, value in extra.items():
                        if re.search(rf"\b{key}\b", query):
                            node[key] = value
                nodes.append(node)
        connection: JSON = {"nodes": nodes}
        if re.search(r"\btotalCount\b", query):
            connection["totalCount"] = len(nodes)
        data = {"repository": {"pullRequest": {"closingIssuesReferences": connection}}}
        return _Answer(200, {"data": data})

    # --- git smart HTTP -------------------------------------------------------------------

    def _git_http(self, req: _Request) -> _Answer:
        match = re.fullmatch(
            r"/git/(?P<owner>[^/]+)/(?P<repo>[^/]+?)(?:\.git)?/(?P<rest>.*)", req.path
        )
        if match is None:
            raise _git_error(404, "Repository not found.")
        rest = match["rest"]
        service = req.query.get("service")
        if rest == "info/refs" and req.method == "GET" and service:
            wanted = service
        elif rest in ("git-upload-pack", "git-receive-pack") and req.method == "POST":
            wanted = rest
        else:
            raise _git_error(404, "Repository not found.")
        scheme, _, credential = req.headers.get("authorization", "").partition(" ")
        token = None
        user = ""
        if scheme.lower() == "basic":
            try:
                user, _, password = base64.b64decode(credential.strip()).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                password = ""
            token = self._token_for(password)
        if token is None:
            raise _git_error(
                401,
                "Invalid username or token. Password authentication is not supported for Git "
                "operations.",
                {"www-authenticate": 'Basic realm="GitHub"'},
            )
        repo = self._covered(token, f"{unquote(match['owner'])}/{unquote(match['repo'])}")
        if repo is None:
            raise _git_error(404, "Repository not found.")
        if wanted != "git-upload-pack":
            raise _git_error(403, f"Permission to {repo.full_name}.git denied to {user}.")
        contents = token.permissions.get("contents", "none")
        if PERMISSION_LEVELS.get(contents, 0) < 1:
            raise _git_error(403, f"Permission to {repo.full_name}.git denied to {user}.")
        bare = self.bare_path(repo.full_name)
        if not bare.is_dir():
            raise _git_error(404, "Repository not found.")
        env = _git_env()
        env.update(
            {
                "GIT_PROJECT_ROOT": str(self.git_root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "PATH_INFO": f"/{repo.owner}/{repo.name}.git/{rest}",
                "QUERY_STRING": req.query_string,
                "REQUEST_METHOD": req.method,
                "CONTENT_TYPE": req.headers.get("content-type", ""),
                "REMOTE_USER": user or "x-access-token",
                "REMOTE_ADDR": "127.0.0.1",
                "GIT_HTTP_MAX_REQUEST_BUFFER": "100M",
                # Clients fetch pull request heads and other commits by sha.
                "GIT_CONFIG_COUNT": "4",
                "GIT_CONFIG_KEY_0": "uploadpack.allowReachableSHA1InWant",
                "GIT_CONFIG_VALUE_0": "true",
                "GIT_CONFIG_KEY_1": "uploadpack.allowAnySHA1InWant",
                "GIT_CONFIG_VALUE_1": "true",
                "GIT_CONFIG_KEY_2": "uploadpack.allowFilter",
                "GIT_CONFIG_VALUE_2": "true",
                "GIT_CONFIG_KEY_3": "safe.directory",
                "GIT_CONFIG_VALUE_3": "*",
            }
        )
        if req.method == "POST":
            env["CONTENT_LENGTH"] = str(len(req.body))
        if "content-encoding" in req.headers:
            env["HTTP_CONTENT_ENCODING"] = req.headers["content-encoding"]
        if "git-protocol" in req.headers:
            env["HTTP_GIT_PROTOCOL"] = req.headers["git-protocol"]
        with subprocess.Popen(
            [str(_http_backend())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        ) as proc:
            try:
                out, err = proc.communicate(req.body, timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise _git_error(504, "git http-backend took too long") from None
        ends = [i for i in (out.find(b"\r\n\r\n"), out.find(b"\n\n")) if i >= 0]
        if not ends:
            message = err.decode("utf-8", "replace") or "git http-backend failed"
            raise _git_error(500, message)
        end = min(ends)
        head = out[:end].decode("latin-1")
        payload = out[end + (4 if out.startswith(b"\r\n\r\n", end) else 2) :]
        status = 200
        headers: dict[str, str] = {}
        content_type = "application/octet-stream"
        for line in head.splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name.lower() == "content-type":
                content_type = value.strip()
            elif name:
                headers[name.strip().lower()] = value.strip()
        return _Answer(
            status, raw=payload, content_type=content_type, headers=headers, resource=None
        )

    # --- the HTTP side --------------------------------------------------------------------

    def _response_headers(self, req: _Request, answer: _Answer, body: bytes) -> dict[str, str]:
        headers = {"x-github-request-id": self._request_id()}
        if answer.resource is not None:
            credential = req.headers.get("authorization", "anonymous")
            with self._lock:
                used = self._rate_used.get(credential, 0) + 1
                self._rate_used[credential] = used
                reset = self._rate_reset.setdefault(credential, int(time.time()) + 3600)
            headers.update(
                {
                    "x-ratelimit-limit": str(RATE_LIMIT),
                    "x-ratelimit-remaining": str(max(RATE_LIMIT - used, 0)),
                    "x-ratelimit-used": str(used),
                    "x-ratelimit-reset": str(reset),
                    "x-ratelimit-resource": answer.resource,
                    "x-github-media-type": "github.v3; format=json",
                    "x-github-api-version-selected": req.headers.get(
                        "x-github-api-version", "2022-11-28"
                    ),
                }
            )
            if req.method == "GET" and answer.status == 200:
                headers["cache-control"] = "private, max-age=60, s-maxage=60"
                headers["vary"] = "Accept, Authorization, Cookie, X-GitHub-OTP, Accept-Encoding"
                headers["etag"] = f'W/"{hashlib.sha256(body).hexdigest()}"'
        headers.update(answer.headers)
        return headers

    @staticmethod
    def _request_id() -> str:
        raw = uuid.uuid4().hex.upper()
        return f"{raw[:4]}:{raw[4:9]}:{raw[9:16]}:{raw[16:23]}:{raw[23:31]}"

    def _record(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive as on GitHub; every answer has a content-length.
            protocol_version = "HTTP/1.1"
            # Idle keep-alive connections end after a while instead of holding a thread.
            timeout = 60
            # Headers and body go out in two writes; with Nagle's algorithm the second waits
            # for the client's delayed ACK, 40 ms a request on a kept-alive connection.
            disable_nagle_algorithm = True

            def version_string(self) -> str:
                return "GitHub.com"

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def do_PATCH(self) -> None:
                self._handle()

            def do_PUT(self) -> None:
                self._handle()

            def do_DELETE(self) -> None:
                self._handle()

            def _read_body(self) -> bytes:
                if "chunked" in self.headers.get("transfer-encoding", "").lower():
                    # git sends large fetch negotiations chunked.
                    chunks: list[bytes] = []
                    while True:
                        size = int(self.rfile.readline(65537).split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline(65537)
                length = int(self.headers.get("content-length") or 0)
                return self.rfile.read(length) if length else b""

            def _handle(self) -> None:
                started = time.monotonic()
                url = urlsplit(self.path)
                headers = {k.lower(): v for k, v in self.headers.items()}
                body = self._read_body()
                parsed: Any = None
                is_git = url.path.startswith("/git/")
                if body and not is_git:
                    try:
                        parsed = json.loads(body)
                    except ValueError:
                        parsed = None
                req = _Request(
                    self.command,
                    url.path,
                    url.query,
                    dict(parse_qsl(url.query, keep_blank_values=True)),
                    headers,
                    body,
                    parsed,
                )
                if body and not is_git and parsed is None:
                    problem = {"message": "Problems parsing JSON", "documentation_url": DOCS}
                    answer = _Answer(400, problem)
                else:
                    answer = server._dispatch(req)
                if answer.delay_s:
                    time.sleep(answer.delay_s)
                if answer.raw is not None:
                    data = answer.raw
                elif answer.body is None:
                    data = b""
                else:
                    data = json.dumps(answer.body).encode()
                out_headers = server._response_headers(req, answer, data)
                status = answer.status
                if (
                    status == 200
                    and req.method == "GET"
                    and answer.resource is not None
                    and headers.get("if-none-match") == out_headers.get("etag")
                ):
                    status, data = 304, b""
                # Recorded before the answer goes out, so that a client that has its answer
                # finds the call in ``calls``.
                server._record(
                    Call(
                        req.method,
                        url.path,
                        req.query,
                        status,
                        parsed,
                        headers,
                        started,
                        time.monotonic(),
                    )
                )
                try:
                    self.send_response(status)
                    if data or status not in (204, 304):
                        self.send_header("content-type", answer.content_type)
                    self.send_header("content-length", str(len(data)))
                    for key, value in out_headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client timed out and left

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        return Handler


def _git_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> _HttpError:
    """An error git prints: plain text, as GitHub's git front end answers."""
    error = _HttpError(status, message, headers=headers)
    error.text = message
    return error
