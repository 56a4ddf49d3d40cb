"""Constants, helpers, records and error answers of the local GitHub."""

from __future__ import annotations

import base64
import functools
import os
import re
import string
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
    # The request is carried out first and only its answer is replaced (GitHub did the work,
    # then failed to say so).
    after: bool = False


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


def _git_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> _HttpError:
    """An error git prints: plain text, as GitHub's git front end answers."""
    error = _HttpError(status, message, headers=headers)
    error.text = message
    return error
