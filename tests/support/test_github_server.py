"""The GitHub test server answers real HTTP clients (httpx, githubkit, git) as GitHub does."""

from __future__ import annotations

import base64
import gzip
import itertools
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import httpx
import jwt
import pytest
from githubkit import AppAuthStrategy, GitHub, TokenAuthStrategy
from githubkit.cache import MemCacheStrategy
from githubkit.exception import (
    GraphQLFailed,
    PrimaryRateLimitExceeded,
    RequestFailed,
    SecondaryRateLimitExceeded,
)
from githubkit_schemas.latest.models import ContentFile, Label

from tests.support.github_server import (
    COMMENT_BODY_MAX,
    SECONDARY_RATE_LIMIT_MESSAGE,
    Call,
    GitHubServer,
    git_auth_header,
    make_app_key,
    make_bare_repo,
)
from tests.support.repos import commit_files, git, make_repo

APP_ID = 4242
INSTALLATION = 77
OTHER_INSTALLATION = 78
REPO = "octo-org/widgets"
SIBLING = "octo-org/gadgets"
FOREIGN = "elsewhere/thing"
FORK = "contributor/widgets"
# Longer than one 60-character base64 line, so the content shows GitHub's line wrapping.
CORE = "def area(w, h):\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
CLOSING_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      closingIssuesReferences(first: 10) { nodes { number title repository { nameWithOwner } } }
    }
  }
}
"""


@dataclass(frozen=True)
class Sources:
    """Local repositories the bare repositories are cloned from, and their commits."""

    base: Path
    fork: Path
    first_sha: str
    main_sha: str
    fork_sha: str


@pytest.fixture(scope="module")
def app_key() -> tuple[str, bytes]:
    return make_app_key()


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Sources:
    root = tmp_path_factory.mktemp("sources")
    base = make_repo(root / "widgets", {"README.md": "# widgets\n", "widgets/__init__.py": ""})
    first = git(base, "rev-parse", "HEAD")
    main = commit_files(base, {"widgets/core.py": CORE}, "add core")
    fork = root / "fork"
    subprocess.run(["git", "clone", "-q", str(base), str(fork)], check=True, capture_output=True)
    git(fork, "checkout", "-q", "-b", "fix")
    fork_sha = commit_files(fork, {"widgets/core.py": CORE + "# fixed\n"}, "the fix")
    return Sources(base, fork, first, main, fork_sha)


@pytest.fixture
def server(app_key: tuple[str, bytes], sources: Sources, tmp_path: Path) -> Iterator[GitHubServer]:
    """A server with one installation holding REPO (with its bare repository) and SIBLING, and
    another installation holding FOREIGN."""
    git_root = tmp_path / "git"
    make_bare_repo(git_root, REPO, sources.base)
    make_bare_repo(git_root, FORK, sources.fork, branch="fix")
    with GitHubServer(APP_ID, app_key[1], git_root) as srv:
        srv.add_installation(INSTALLATION, "octo-org")
        srv.add_installation(OTHER_INSTALLATION, "elsewhere")
        srv.add_repo(REPO, INSTALLATION)
        srv.add_repo(SIBLING, INSTALLATION, private=True)
        srv.add_repo(FOREIGN, OTHER_INSTALLATION)
        srv.add_issue(REPO, 1, "area() is wrong", "area(2, 3) gives 5")
        yield srv


def app_jwt(
    private_key: str, *, iss: str = str(APP_ID), age_s: int = 30, lifetime_s: int = 600
) -> str:
    iat = int(time.time()) - age_s
    claims = {"iss": iss, "iat": iat, "exp": iat + lifetime_s}
    return jwt.encode(claims, private_key, algorithm="RS256")


def request_token(
    server: GitHubServer,
    private_key: str,
    body: dict[str, Any] | None = None,
    installation: int = INSTALLATION,
) -> httpx.Response:
    return httpx.post(
        f"{server.api_url}/app/installations/{installation}/access_tokens",
        headers={"authorization": f"Bearer {app_jwt(private_key)}"},
        json=body,
    )


@pytest.fixture
def token(server: GitHubServer, app_key: tuple[str, bytes]) -> str:
    answer = request_token(server, app_key[0])
    assert answer.status_code == 201
    value: str = answer.json()["token"]
    return value


def kit(server: GitHubServer, token: str) -> GitHub[TokenAuthStrategy]:
    # No HTTP cache, so that every call is a plain one: githubkit's cache revalidates with
    # If-None-Match, answered 304 when nothing changed.
    return GitHub(
        TokenAuthStrategy(token), base_url=server.api_url, http_cache=False, auto_retry=False
    )


def api(server: GitHubServer, token: str | None) -> httpx.Client:
    headers = {"authorization": f"token {token}"} if token else {}
    return httpx.Client(base_url=server.api_url, headers=headers)


# --- installation tokens --------------------------------------------------------------------


def test_a_valid_app_jwt_gets_an_installation_token(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    app = GitHub(
        AppAuthStrategy(str(APP_ID), app_key[0]),
        base_url=server.api_url,
        cache_strategy=MemCacheStrategy(),
        http_cache=False,
    )
    before = datetime.now(UTC)
    issued = app.rest.apps.create_installation_access_token(INSTALLATION).parsed_data

    assert re.fullmatch(r"ghs_[A-Za-z0-9]{36}", issued.token)
    expires = datetime.strptime(issued.expires_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert timedelta(seconds=3590) < expires - before <= timedelta(seconds=3601)
    assert issued.repository_selection == "all"
    assert issued.permissions and issued.permissions.issues == "write"
    assert server.tokens == [
        {
            "installation_id": INSTALLATION,
            "token": issued.token,
            "expires_at": issued.expires_at,
            "repositories": None,
            "repository_ids": None,
            "permissions": {
                "metadata": "read",
                "issues": "write",
                "pull_requests": "read",
                "checks": "write",
                "contents": "read",
            },
        }
    ]
    sent = server.calls[0].headers["authorization"].removeprefix("Bearer ")
    assert jwt.decode(sent, options={"verify_signature": False})["iss"] == str(APP_ID)


def test_githubkit_acts_as_the_installation_with_the_token_it_gets(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    app = GitHub(
        AppAuthStrategy(str(APP_ID), app_key[0]).as_installation(INSTALLATION),
        base_url=server.api_url,
        cache_strategy=MemCacheStrategy(),
        http_cache=False,
    )
    repo = app.rest.repos.get("octo-org", "widgets").parsed_data

    assert repo.full_name == REPO
    token_call, repo_call = server.calls
    assert (token_call.method, token_call.status) == ("POST", 201)
    issued = server.tokens[0]["token"]
    assert repo_call.headers["authorization"] == f"token {issued}"


@pytest.mark.parametrize(
    "authorization",
    [
        pytest.param("wrong key", id="wrong-key"),
        pytest.param("expired", id="expired"),
        pytest.param("too long", id="exp-more-than-10-minutes-after-iat"),
        pytest.param("other app", id="wrong-issuer"),
        pytest.param("no exp", id="no-exp"),
        pytest.param("Bearer not.a.jwt", id="garbage"),
        pytest.param("", id="none"),
        pytest.param("token-scheme", id="token-scheme"),
    ],
)
def test_bad_app_jwts_are_refused(
    server: GitHubServer, app_key: tuple[str, bytes], authorization: str
) -> None:
    private = app_key[0]
    other_private, _ = make_app_key() if authorization == "wrong key" else (private, b"")
    now = int(time.time())
    headers = {
        "wrong key": f"Bearer {app_jwt(other_private)}",
        "expired": f"Bearer {app_jwt(private, age_s=1200)}",
        "too long": f"Bearer {app_jwt(private, lifetime_s=900)}",
        "other app": f"Bearer {app_jwt(private, iss='99')}",
        "no exp": "Bearer "
        + jwt.encode({"iss": str(APP_ID), "iat": now - 30}, private, algorithm="RS256"),
        "token-scheme": f"token {app_jwt(private)}",
    }.get(authorization, authorization)

    answer = httpx.post(
        f"{server.api_url}/app/installations/{INSTALLATION}/access_tokens",
        headers={"authorization": headers} if headers else {},
    )

    assert answer.status_code == 401
    assert answer.json()["documentation_url"].startswith("https://docs.github.com/")
    assert server.tokens == []


def test_unknown_installation_is_404(server: GitHubServer, app_key: tuple[str, bytes]) -> None:
    answer = request_token(server, app_key[0], installation=999)
    assert answer.status_code == 404
    assert answer.json()["message"] == "Not Found"


def test_narrowed_tokens_see_only_their_repositories_and_permissions(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    answer = request_token(
        server, app_key[0], {"repositories": ["widgets"], "permissions": {"issues": "write"}}
    )
    assert answer.status_code == 201
    issued = answer.json()
    assert issued["repository_selection"] == "selected"
    assert [r["full_name"] for r in issued["repositories"]] == [REPO]
    assert issued["permissions"] == {"metadata": "read", "issues": "write"}
    assert server.tokens[0]["repositories"] == ["widgets"]

    with api(server, issued["token"]) as client:
        assert client.get("/repos/octo-org/widgets").status_code == 200
        # Outside the narrowed list: hidden, as GitHub hides it.
        assert client.get("/repos/octo-org/gadgets").status_code == 404
        assert client.post(
            "/repos/octo-org/widgets/issues/1/comments", json={"body": "hi"}
        ).is_success
        refused = client.post(
            "/repos/octo-org/widgets/check-runs", json={"name": "x", "head_sha": "0" * 40}
        )
        assert refused.status_code == 403
        assert refused.json()["message"] == "Resource not accessible by integration"
        assert refused.headers["x-accepted-github-permissions"] == "checks=write"
        assert client.get("/repos/octo-org/widgets/contents/README.md").status_code == 403


def test_narrowing_by_repository_id(server: GitHubServer, app_key: tuple[str, bytes]) -> None:
    by_name = request_token(server, app_key[0], {"repositories": ["gadgets"]}).json()
    sibling_id = by_name["repositories"][0]["id"]

    issued = request_token(server, app_key[0], {"repository_ids": [sibling_id]}).json()

    assert issued["repository_selection"] == "selected"
    with api(server, issued["token"]) as client:
        assert client.get("/repos/octo-org/gadgets").status_code == 200
        assert client.get("/repos/octo-org/widgets").status_code == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"repositories": ["thing"]}, "at least one repository"),  # another installation's
        ({"repositories": ["nonexistent"]}, "at least one repository"),
        ({"repository_ids": [123456]}, "at least one repository"),
        ({"permissions": {"administration": "write"}}, "not granted"),
        ({"permissions": {"contents": "write"}}, "not granted"),
    ],
)
def test_token_requests_beyond_the_installation_are_422(
    server: GitHubServer, app_key: tuple[str, bytes], body: dict[str, Any], message: str
) -> None:
    answer = request_token(server, app_key[0], body)
    assert answer.status_code == 422
    assert message in answer.json()["message"]
    assert server.tokens == []


def test_bad_and_expired_tokens_are_401(server: GitHubServer, token: str) -> None:
    for authorization in ("token ghs_" + "x" * 36, "", f"Basic {token}"):
        with httpx.Client(base_url=server.api_url) as client:
            headers = {"authorization": authorization} if authorization else {}
            answer = client.get("/repos/octo-org/widgets/issues/1", headers=headers)
        assert answer.status_code == 401
        assert answer.json()["message"] == "Bad credentials"
    with api(server, token) as client:
        assert client.get("/repos/octo-org/widgets/issues/1").status_code == 200
        # Another installation's repository is hidden.
        assert client.get("/repos/elsewhere/thing").status_code == 404
        server.expire_tokens()
        assert client.get("/repos/octo-org/widgets/issues/1").status_code == 401


def test_bearer_works_like_token(server: GitHubServer, token: str) -> None:
    answer = httpx.get(
        f"{server.api_url}/repos/octo-org/widgets", headers={"authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 200


# --- typed parsing ----------------------------------------------------------------------------


def test_githubkit_parses_repository_issue_and_pull(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    server.add_pull(
        REPO, 2, "Fix area", "Fixes #1", sources.fork_sha, sources.main_sha, head_full_name=FORK
    )
    gh = kit(server, token)

    repo = gh.rest.repos.get("octo-org", "widgets").parsed_data
    assert (repo.full_name, repo.owner.login, repo.private) == (REPO, "octo-org", False)
    assert repo.default_branch == "main"
    assert repo.clone_url == server.git_url(REPO)

    issue = gh.rest.issues.get("octo-org", "widgets", 1).parsed_data
    assert (issue.title, issue.body, issue.state) == (
        "area() is wrong",
        "area(2, 3) gives 5",
        "open",
    )
    assert issue.user and issue.user.login == "octocat"
    assert issue.author_association == "OWNER"
    assert not issue.pull_request

    as_issue = gh.rest.issues.get("octo-org", "widgets", 2).parsed_data
    assert as_issue.pull_request

    pull = gh.rest.pulls.get("octo-org", "widgets", 2).parsed_data
    assert (pull.number, pull.state, pull.merged, pull.draft) == (2, "open", False, False)
    assert pull.head.sha == sources.fork_sha
    assert pull.head.repo and pull.head.repo.full_name == FORK and pull.head.repo.fork
    assert pull.base.repo and pull.base.repo.full_name == REPO
    assert (pull.head.ref, pull.base.ref, pull.base.sha) == ("fix", "main", sources.main_sha)
    assert pull.html_url == f"{server.base_url}/{REPO}/pull/2"

    server.set_pull_head(REPO, 2, sources.main_sha)
    assert gh.rest.pulls.get("octo-org", "widgets", 2).parsed_data.head.sha == sources.main_sha

    with pytest.raises(RequestFailed) as missing:
        gh.rest.pulls.get("octo-org", "widgets", 1)  # an issue, not a pull request
    assert missing.value.response.status_code == 404


def test_githubkit_parses_branch_and_contents(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    gh = kit(server, token)

    branch = gh.rest.repos.get_branch("octo-org", "widgets", "main").parsed_data
    assert branch.commit.sha == sources.main_sha
    assert branch.commit.commit.message == "add core"
    assert [p.sha for p in branch.commit.parents] == [sources.first_sha]
    assert branch.protected is False
    with pytest.raises(RequestFailed) as no_branch:
        gh.rest.repos.get_branch("octo-org", "widgets", "nope")
    assert no_branch.value.response.json()["message"] == "Branch not found"

    content = gh.rest.repos.get_content("octo-org", "widgets", "widgets/core.py").parsed_data
    assert isinstance(content, ContentFile)
    assert content.encoding == "base64"
    assert base64.b64decode(content.content).decode() == CORE
    lines = content.content.split("\n")
    assert lines[-1] == "" and all(len(line) == 60 for line in lines[:-2])
    assert content.sha == git(sources.base, "rev-parse", "HEAD:widgets/core.py")
    assert content.size == len(CORE)

    with pytest.raises(RequestFailed) as before_it_existed:
        gh.rest.repos.get_content("octo-org", "widgets", "widgets/core.py", ref=sources.first_sha)
    assert before_it_existed.value.response.status_code == 404

    listing = gh.rest.repos.get_content("octo-org", "widgets", "widgets").parsed_data
    assert isinstance(listing, list)
    assert {(item.name, item.type) for item in listing} == {
        ("__init__.py", "file"),
        ("core.py", "file"),
    }
    root = gh.rest.repos.get_content("octo-org", "widgets", "").parsed_data
    assert isinstance(root, list)
    assert {(item.name, item.type) for item in root} == {("README.md", "file"), ("widgets", "dir")}

    raw = httpx.get(
        f"{server.api_url}/repos/octo-org/widgets/contents/widgets/core.py",
        headers={"authorization": f"token {token}", "accept": "application/vnd.github.raw+json"},
    )
    assert raw.text == CORE


def test_collaborator_permission(server: GitHubServer, token: str) -> None:
    server.set_permission(REPO, "maintainer", "write")
    server.set_permission(REPO, "helper", "triage")
    gh = kit(server, token)

    def level(user: str) -> tuple[str, str]:
        answer = gh.rest.repos.get_collaborator_permission_level("octo-org", "widgets", user)
        return answer.parsed_data.permission, answer.parsed_data.role_name

    assert level("maintainer") == ("write", "write")
    assert level("helper") == ("read", "triage")
    assert level("octo-org") == ("admin", "admin")
    assert level("stranger") == ("none", "none")


# --- comments -------------------------------------------------------------------------------


def test_the_app_comments_as_its_bot_and_edits_only_its_own_comments(
    server: GitHubServer, token: str
) -> None:
    human = server.add_comment(REPO, 1, "I can reproduce this")
    gh = kit(server, token)

    created = gh.rest.issues.create_comment("octo-org", "widgets", 1, body="Reproduced.")
    comment = created.parsed_data
    assert created.status_code == 201
    assert comment.user and comment.user.login == "reprobot[bot]"
    assert (comment.user.type, comment.user.id) == ("Bot", 9000 + APP_ID)
    app = comment.performed_via_github_app
    assert app and (app.id, app.slug) == (APP_ID, "reprobot")
    assert comment.author_association == "NONE"
    assert comment.html_url == f"{server.base_url}/{REPO}/issues/1#issuecomment-{comment.id}"

    edited = gh.rest.issues.update_comment("octo-org", "widgets", comment.id, body="Edited.")
    assert edited.parsed_data.body == "Edited."
    assert gh.rest.issues.get_comment("octo-org", "widgets", comment.id).parsed_data.body == (
        "Edited."
    )
    with pytest.raises(RequestFailed) as refused:
        gh.rest.issues.update_comment("octo-org", "widgets", human["id"], body="Hijacked.")
    assert refused.value.response.status_code == 403

    assert [c["body"] for c in server.comments(REPO, 1)] == ["I can reproduce this", "Edited."]
    assert server.comments(REPO, 1)[0]["user"]["type"] == "User"
    assert server.comments(REPO, 1)[0]["performed_via_github_app"] is None
    assert gh.rest.issues.get("octo-org", "widgets", 1).parsed_data.comments == 2


def test_comment_bodies_over_65536_characters_are_422(server: GitHubServer, token: str) -> None:
    with api(server, token) as client:
        too_long = client.post(
            "/repos/octo-org/widgets/issues/1/comments", json={"body": "x" * (COMMENT_BODY_MAX + 1)}
        )
        at_limit = client.post(
            "/repos/octo-org/widgets/issues/1/comments", json={"body": "x" * COMMENT_BODY_MAX}
        )
        edit_too_long = client.patch(
            f"/repos/octo-org/widgets/issues/comments/{at_limit.json()['id']}",
            json={"body": "y" * (COMMENT_BODY_MAX + 1)},
        )

    assert too_long.status_code == 422
    assert too_long.json()["message"] == "Validation Failed"
    assert too_long.json()["errors"] == [
        {
            "resource": "IssueComment",
            "code": "custom",
            "field": "body",
            "message": "body is too long (maximum is 65536 characters)",
        }
    ]
    assert at_limit.status_code == 201
    assert edit_too_long.status_code == 422
    assert len(server.comments(REPO, 1)) == 1


def test_comment_pages_link_to_each_other(server: GitHubServer, token: str) -> None:
    for i in range(65):
        server.add_comment(REPO, 1, f"comment {i}")
    with api(server, token) as client:
        first = client.get("/repos/octo-org/widgets/issues/1/comments", params={"per_page": 30})
        links = first.headers["link"]
        second_url = re.search(r'<([^>]+)>; rel="next"', links)
        last_url = re.search(r'<([^>]+)>; rel="last"', links)
        assert second_url and last_url
        second = client.get(second_url[1])
        last = client.get(last_url[1])

    assert [c["body"] for c in first.json()] == [f"comment {i}" for i in range(30)]
    assert "per_page=30&page=2" in second_url[1] and "page=3" in last_url[1]
    assert [c["body"] for c in second.json()] == [f"comment {i}" for i in range(30, 60)]
    assert [c["body"] for c in last.json()] == [f"comment {i}" for i in range(60, 65)]
    assert 'rel="next"' not in last.headers["link"]
    assert 'rel="prev"' in last.headers["link"] and 'rel="first"' in last.headers["link"]

    gh = kit(server, token)
    everything: list[Any] = list(
        gh.rest.paginate(
            gh.rest.issues.list_comments,
            owner="octo-org",
            repo="widgets",
            issue_number=1,
            per_page=20,
        )
    )
    assert [c.body for c in everything] == [f"comment {i}" for i in range(65)]
    default = gh.rest.issues.list_comments("octo-org", "widgets", 1)
    assert len(default.parsed_data) == 30
    capped = gh.rest.issues.list_comments("octo-org", "widgets", 1, per_page=1000)
    assert len(capped.parsed_data) == 65 and "link" not in capped.headers


# --- labels ---------------------------------------------------------------------------------


def test_labels_are_created_added_and_removed(server: GitHubServer, token: str) -> None:
    gh = kit(server, token)

    created = gh.rest.issues.create_label(
        "octo-org", "widgets", name="reproduced", color="0e8a16", description="A test fails"
    )
    assert created.status_code == 201
    assert created.parsed_data.color == "0e8a16"
    assert gh.rest.issues.get_label("octo-org", "widgets", "reproduced").parsed_data.name == (
        "reproduced"
    )
    with pytest.raises(RequestFailed) as missing:
        gh.rest.issues.get_label("octo-org", "widgets", "nope")
    assert missing.value.response.status_code == 404
    with api(server, token) as client:
        again = client.post("/repos/octo-org/widgets/labels", json={"name": "reproduced"})
    assert again.status_code == 422
    assert again.json()["errors"][0]["code"] == "already_exists"

    # githubkit's IssuesClient has a method named ``list``, which mypy takes for the
    # ``list[Label]`` of its annotations, hence the casts.
    added = cast(
        "list[Label]",
        gh.rest.issues.add_labels(
            "octo-org", "widgets", 1, data={"labels": ["reproduced", "needs triage"]}
        ).parsed_data,
    )
    assert [label.name for label in added] == ["reproduced", "needs triage"]
    new_label = next(label for label in server.repo_labels(REPO) if label["name"] == "needs triage")
    assert new_label["color"] == "ededed"
    assert server.issue_labels(REPO, 1) == ["reproduced", "needs triage"]

    removed = gh.rest.issues.remove_label("octo-org", "widgets", 1, "needs triage")
    remaining = cast("list[Label]", removed.parsed_data)
    assert [label.name for label in remaining] == ["reproduced"]
    with api(server, token) as client:
        gone = client.delete("/repos/octo-org/widgets/issues/1/labels/needs%20triage")
    assert gone.status_code == 404
    assert gone.json()["message"] == "Label does not exist"

    server.remove_label(REPO, 1, "reproduced")
    assert gh.rest.issues.get("octo-org", "widgets", 1).parsed_data.labels == []
    assert gh.rest.issues.list_labels_on_issue("octo-org", "widgets", 1).parsed_data == []


# --- check runs -----------------------------------------------------------------------------


def test_check_runs_are_created_and_completed(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    server.add_pull(REPO, 2, "Same-repo fix", None, sources.main_sha, sources.first_sha)
    server.add_pull(
        REPO, 3, "Fork fix", None, sources.fork_sha, sources.main_sha, head_full_name=FORK
    )
    gh = kit(server, token)

    created = gh.rest.checks.create(
        "octo-org",
        "widgets",
        data={"name": "reprobot/verify", "head_sha": sources.main_sha, "status": "in_progress"},
    )
    run = created.parsed_data
    assert created.status_code == 201
    assert (run.status, run.conclusion, run.head_sha) == ("in_progress", None, sources.main_sha)
    assert run.app and run.app.slug == "reprobot"
    assert [p.number for p in run.pull_requests] == [2]
    # As on GitHub, check runs list no pull requests from forks.
    fork_run = gh.rest.checks.create(
        "octo-org", "widgets", data={"name": "reprobot/verify", "head_sha": sources.fork_sha}
    ).parsed_data
    assert fork_run.pull_requests == []

    done = gh.rest.checks.update(
        "octo-org",
        "widgets",
        run.id,
        data={
            "conclusion": "failure",
            "output": {"title": "Still fails", "summary": "1 test fails", "text": "details"},
        },
    ).parsed_data
    assert (done.status, done.conclusion) == ("completed", "failure")
    assert done.completed_at is not None
    assert done.output.summary == "1 test fails"
    fetched = gh.rest.checks.get("octo-org", "widgets", run.id).parsed_data
    assert fetched.output.title == "Still fails"
    assert [r["name"] for r in server.check_runs(REPO)] == ["reprobot/verify"] * 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"output": {"title": "t", "summary": "s" * 65536}}, "Only 65535 characters"),
        ({"output": {"title": "t", "summary": "s", "text": "t" * 65536}}, "Only 65535"),
        ({"output": {"title": "t"}}, "wasn't supplied"),
        ({"status": "completed"}, "Validation Failed"),
        ({"status": "completed", "conclusion": "stale"}, "Validation Failed"),
        ({"conclusion": "great"}, "Validation Failed"),
        ({"head_sha": "0" * 40}, "No commit found for SHA"),
        ({"started_at": "yesterday"}, "Validation Failed"),
    ],
)
def test_invalid_check_runs_are_422(
    server: GitHubServer, token: str, sources: Sources, change: dict[str, Any], message: str
) -> None:
    body = {"name": "reprobot/verify", "head_sha": sources.main_sha, **change}
    with api(server, token) as client:
        answer = client.post("/repos/octo-org/widgets/check-runs", json=body)
    assert answer.status_code == 422
    assert message in answer.json()["message"]
    assert server.check_runs(REPO) == []


def test_summary_at_the_limit_is_accepted(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    body = {
        "name": "reprobot/verify",
        "head_sha": sources.main_sha,
        "conclusion": "success",
        "output": {"title": "t", "summary": "s" * 65535, "text": "t" * 65535},
    }
    with api(server, token) as client:
        assert client.post("/repos/octo-org/widgets/check-runs", json=body).status_code == 201


# --- faults ---------------------------------------------------------------------------------


def test_secondary_rate_limit_answers_429_with_retry_after(
    server: GitHubServer, token: str
) -> None:
    server.fail_secondary_rate_limit("POST", r"/issues/1/comments$", retry_after_s=1, status=429)
    gh = kit(server, token)

    with pytest.raises(SecondaryRateLimitExceeded) as limited:
        gh.rest.issues.create_comment("octo-org", "widgets", 1, body="first try")
    assert limited.value.retry_after == timedelta(seconds=1)
    answer = limited.value.response
    assert answer.status_code == 429
    assert answer.headers["retry-after"] == "1"
    assert answer.json()["message"] == SECONDARY_RATE_LIMIT_MESSAGE
    assert server.comments(REPO, 1) == []

    # Only the next matching request failed.
    gh.rest.issues.create_comment("octo-org", "widgets", 1, body="second try")
    assert [c.status for c in api_calls(server)] == [429, 201]


def test_secondary_rate_limit_as_403(server: GitHubServer, token: str) -> None:
    server.fail_secondary_rate_limit("*", r"/issues/1$", retry_after_s=30)
    gh = kit(server, token)
    with pytest.raises(SecondaryRateLimitExceeded) as limited:
        gh.rest.issues.get("octo-org", "widgets", 1)
    assert limited.value.response.status_code == 403
    assert limited.value.retry_after == timedelta(seconds=30)


def test_primary_rate_limit_answers_403_with_the_reset_time(
    server: GitHubServer, token: str
) -> None:
    server.fail_primary_rate_limit("GET", r"/repos/octo-org/widgets$", reset_in_s=30, times=2)
    with api(server, token) as client:
        answer = client.get("/repos/octo-org/widgets")
    assert answer.status_code == 403
    assert answer.headers["x-ratelimit-remaining"] == "0"
    assert 0 < int(answer.headers["x-ratelimit-reset"]) - time.time() <= 31
    assert (
        answer.json()["message"] == f"API rate limit exceeded for installation ID {INSTALLATION}."
    )

    # githubkit's namespaces hold their client weakly: keep it in a variable.
    gh = kit(server, token)
    with pytest.raises(PrimaryRateLimitExceeded) as limited:
        gh.rest.repos.get("octo-org", "widgets")
    assert timedelta(seconds=25) < limited.value.retry_after <= timedelta(seconds=31)
    assert gh.rest.repos.get("octo-org", "widgets").status_code == 200


def test_server_errors_and_slow_answers(server: GitHubServer, token: str) -> None:
    server.fail_server_error("GET", r"/issues/1$", delay_s=0.5)
    server.fail_next("GET", r"/issues/1$", 503, headers={"x-custom": "yes"})
    with api(server, token) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.get("/repos/octo-org/widgets/issues/1", timeout=0.1)
        unavailable = client.get("/repos/octo-org/widgets/issues/1")
        fine = client.get("/repos/octo-org/widgets/issues/1")
    assert (unavailable.status_code, unavailable.headers["x-custom"]) == (503, "yes")
    assert unavailable.json()["message"] == "Service Unavailable"
    assert fine.status_code == 200
    # The client gave up on the slow answer, which is recorded once the delay has passed.
    deadline = time.monotonic() + 2
    while len(api_calls(server)) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [c.status for c in api_calls(server)] == [503, 200, 502]


# --- GraphQL --------------------------------------------------------------------------------


def test_graphql_answers_closing_issue_references(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    server.add_issue(REPO, 5, "Perimeter is wrong too", None)
    server.add_pull(
        REPO, 6, "Fix both", None, sources.main_sha, sources.first_sha, closing_issues=[1, 5]
    )
    gh = kit(server, token)

    data = gh.graphql(CLOSING_QUERY, {"owner": "octo-org", "name": "widgets", "number": 6})

    nodes = data["repository"]["pullRequest"]["closingIssuesReferences"]["nodes"]
    assert nodes == [
        {"number": 1, "title": "area() is wrong", "repository": {"nameWithOwner": REPO}},
        {"number": 5, "title": "Perimeter is wrong too", "repository": {"nameWithOwner": REPO}},
    ]
    assert server.calls[-1].path == "/api/graphql"
    with pytest.raises(GraphQLFailed):
        gh.graphql(CLOSING_QUERY, {"owner": "octo-org", "name": "widgets", "number": 1})
    with pytest.raises(GraphQLFailed):
        gh.graphql(CLOSING_QUERY, {"owner": "elsewhere", "name": "thing", "number": 6})
    other = httpx.post(
        server.graphql_url,
        headers={"authorization": f"bearer {token}"},
        json={"query": "{ viewer { login } }"},
    )
    assert other.status_code == 200
    assert other.json() == {"errors": [{"message": "unsupported by this test server"}]}
    assert httpx.post(server.graphql_url, json={"query": CLOSING_QUERY}).status_code == 401


# --- git ------------------------------------------------------------------------------------


def run_git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd or Path.cwd()),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_git_clone_with_an_installation_token(
    server: GitHubServer, token: str, sources: Sources, tmp_path: Path
) -> None:
    header = f"http.extraHeader={git_auth_header(token)}"
    assert header.endswith(base64.b64encode(f"x-access-token:{token}".encode()).decode())

    cloned = run_git("-c", header, "clone", "-q", server.git_url(REPO), str(tmp_path / "clone"))

    assert cloned.returncode == 0, cloned.stderr
    assert run_git("rev-parse", "HEAD", cwd=tmp_path / "clone").stdout.strip() == sources.main_sha
    assert (tmp_path / "clone" / "widgets" / "core.py").read_text() == CORE
    git_calls = [c for c in server.calls if c.path.startswith("/git/")]
    # Protocol v2 posts twice: ls-refs, then fetch.
    assert [(c.method, c.path.rsplit("/", 1)[-1], c.status) for c in git_calls] == [
        ("GET", "refs", 200),
        ("POST", "git-upload-pack", 200),
        ("POST", "git-upload-pack", 200),
    ]
    assert git_calls[1].headers["git-protocol"] == "version=2"
    assert git_calls[0].query == {"service": "git-upload-pack"}


def test_git_clone_without_a_valid_token_fails(
    server: GitHubServer, token: str, tmp_path: Path
) -> None:
    anonymous = run_git("clone", "-q", server.git_url(REPO), str(tmp_path / "a"))
    wrong = run_git(
        "-c",
        f"http.extraHeader={git_auth_header('ghs_' + 'x' * 36)}",
        "clone",
        "-q",
        server.git_url(REPO),
        str(tmp_path / "b"),
    )
    foreign = run_git(
        "-c",
        f"http.extraHeader={git_auth_header(token)}",
        "clone",
        "-q",
        server.git_url(FOREIGN),
        str(tmp_path / "c"),
    )

    assert anonymous.returncode != 0 and wrong.returncode != 0 and foreign.returncode != 0
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    statuses = [c.status for c in api_calls(server)]
    assert statuses == [401, 401, 404]
    with httpx.Client() as client:
        refused = client.get(f"{server.git_url(REPO)}/info/refs?service=git-upload-pack")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'Basic realm="GitHub"'


@pytest.mark.parametrize("protocol", ["0", "2"])
def test_git_fetches_commits_by_sha(
    server: GitHubServer, token: str, sources: Sources, tmp_path: Path, protocol: str
) -> None:
    # The fork's commit reaches the base repository as refs/pull/4/head, as on GitHub.
    server.add_pull(
        REPO, 4, "Fork fix", None, sources.fork_sha, sources.main_sha, head_full_name=FORK
    )
    work = tmp_path / "work"
    run_git("init", "-q", str(work))
    options = ["-c", f"http.extraHeader={git_auth_header(token)}", "-c"]
    options.append(f"protocol.version={protocol}")

    for sha in (sources.first_sha, sources.fork_sha):
        fetched = run_git(*options, "fetch", "-q", server.git_url(REPO), sha, cwd=work)
        assert fetched.returncode == 0, fetched.stderr
        assert run_git("rev-parse", "FETCH_HEAD", cwd=work).stdout.strip() == sha
    by_ref = run_git(*options, "fetch", "-q", server.git_url(REPO), "refs/pull/4/head", cwd=work)
    assert by_ref.returncode == 0, by_ref.stderr
    assert run_git("rev-parse", "FETCH_HEAD", cwd=work).stdout.strip() == sources.fork_sha


def pkt_line(text: str) -> bytes:
    return f"{len(text) + 5:04x}{text}\n".encode()


def test_upload_pack_takes_gzipped_chunked_requests(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    # What git sends for a fetch with a long negotiation: a gzipped body, chunked.
    request = (
        pkt_line(f"want {sources.main_sha} ofs-delta no-progress") + b"0000" + pkt_line("done")
    )
    packed = gzip.compress(request)
    credentials = base64.b64encode(f"x-access-token:{token}".encode()).decode()

    answer = httpx.post(
        f"{server.git_url(REPO)}/git-upload-pack",
        content=iter([packed[:10], packed[10:]]),
        headers={
            "authorization": f"Basic {credentials}",
            "content-type": "application/x-git-upload-pack-request",
            "content-encoding": "gzip",
        },
    )

    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/x-git-upload-pack-result"
    assert answer.content.startswith(b"0008NAK\nPACK")
    sent = api_calls(server)[-1]
    assert sent.headers["transfer-encoding"] == "chunked" and sent.json is None


def test_git_push_is_refused(server: GitHubServer, token: str, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    header = f"http.extraHeader={git_auth_header(token)}"
    assert run_git("-c", header, "clone", "-q", server.git_url(REPO), str(clone)).returncode == 0
    commit_files(clone, {"new.txt": "new\n"}, "a push")

    pushed = run_git("-c", header, "push", "-q", "origin", "HEAD:main", cwd=clone)

    assert pushed.returncode != 0
    assert server.calls[-1].status == 403
    assert server.calls[-1].query == {"service": "git-receive-pack"}


# --- headers and the record of calls ---------------------------------------------------------


def test_answers_carry_githubs_headers(server: GitHubServer, token: str) -> None:
    with api(server, token) as client:
        first = client.get("/repos/octo-org/widgets")
        second = client.get("/repos/octo-org/widgets/issues/1")
        missing = client.get("/repos/octo-org/widgets/issues/99")
        unknown = client.get("/repos/octo-org/widgets/teleport")
        cached = client.get(
            "/repos/octo-org/widgets", headers={"if-none-match": first.headers["etag"]}
        )

    for answer in (first, second, missing, unknown):
        assert answer.headers["content-type"] == "application/json; charset=utf-8"
        assert answer.headers["x-github-media-type"] == "github.v3; format=json"
        assert answer.headers["x-ratelimit-limit"] == "5000"
        assert answer.headers["x-ratelimit-resource"] == "core"
        assert answer.headers["x-github-request-id"]
        assert int(answer.headers["x-ratelimit-reset"]) > time.time()
    assert (
        int(second.headers["x-ratelimit-remaining"])
        == int(first.headers["x-ratelimit-remaining"]) - 1
    )
    assert int(second.headers["x-ratelimit-used"]) == 2
    assert first.headers["cache-control"] == "private, max-age=60, s-maxage=60"
    assert cached.status_code == 304 and cached.content == b""
    assert missing.status_code == 404 and missing.json()["message"] == "Not Found"
    assert unknown.status_code == 404
    assert [c.path for c in api_calls(server)][3] == "/api/v3/repos/octo-org/widgets/teleport"


def test_githubkit_revalidates_its_cache_with_etags(server: GitHubServer, token: str) -> None:
    gh = GitHub(TokenAuthStrategy(token), base_url=server.api_url, auto_retry=False)

    first = gh.rest.issues.get("octo-org", "widgets", 1).parsed_data
    again = gh.rest.issues.get("octo-org", "widgets", 1).parsed_data
    server.add_comment(REPO, 1, "news")
    changed = gh.rest.issues.get("octo-org", "widgets", 1).parsed_data

    assert first == again and changed.comments == 1
    assert [c.status for c in api_calls(server)] == [200, 304, 200]


def test_calls_record_requests_and_their_timing(server: GitHubServer, token: str) -> None:
    server.fail_next("POST", r"/issues/1/comments$", 201, body={"slow": True}, delay_s=0.4)
    with api(server, token) as client:
        slow = threading.Thread(
            target=client.post,
            args=("/repos/octo-org/widgets/issues/1/comments",),
            kwargs={"json": {"body": "slow"}},
        )
        slow.start()
        time.sleep(0.1)
        with api(server, token) as other:
            other.post(
                "/repos/octo-org/widgets/issues/1/labels",
                json={"labels": ["x"]},
                params={"trace": "1"},
            )
        slow.join()

    labels, comment = api_calls(server)
    assert (labels.method, labels.path, labels.query) == (
        "POST",
        "/api/v3/repos/octo-org/widgets/issues/1/labels",
        {"trace": "1"},
    )
    assert labels.json == {"labels": ["x"]}
    assert labels.headers["authorization"] == f"token {token}"
    assert (comment.status, comment.json) == (201, {"body": "slow"})
    assert comment.finished - comment.started >= 0.4
    assert overlapping(api_calls(server))
    assert not overlapping([labels])


def api_calls(server: GitHubServer) -> list[Call]:
    """The calls after the one that got the test's token."""
    return [c for c in server.calls if not c.path.endswith("/access_tokens")]


def overlapping(calls: list[Call]) -> bool:
    """Whether any two of ``calls`` were being answered at the same time."""
    ordered = sorted(calls, key=lambda c: c.started)
    return any(b.started < a.finished for a, b in itertools.pairwise(ordered))
