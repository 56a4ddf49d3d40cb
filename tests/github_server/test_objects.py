"""Repositories, issues, pulls, contents, comments and labels in the shapes githubkit parses."""

from __future__ import annotations

import base64
import re
from typing import Any, cast

import httpx
import pytest
from githubkit.exception import (
    RequestFailed,
)
from githubkit_schemas.latest.models import ContentFile, Label

from tests.github_server.clients import (
    APP_ID,
    CORE,
    FORK,
    REPO,
    api,
    kit,
)
from tests.support.github_server import (
    COMMENT_BODY_MAX,
    GitHubServer,
)
from tests.support.repos import git
from tests.support.widgets import Sources

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
