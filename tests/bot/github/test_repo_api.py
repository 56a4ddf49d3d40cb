"""What a job reads and writes through ``RepoAPI``: reads, comments, labels and check runs."""

from __future__ import annotations

import pytest

from reprobot.bot.errors import GitHubError
from reprobot.bot.github.repo_api import RepoAPI
from tests.bot.github.scenario import (
    APP_ID,
    CORE,
    FORK,
    MARK,
    REPO,
    api_calls,
)
from tests.support.github_server import GitHubServer
from tests.support.widgets import Sources

# --- reads ------------------------------------------------------------------------------------


def test_repository_branch_and_files(api: RepoAPI, server: GitHubServer, sources: Sources) -> None:
    info = api.repository()
    assert (info.full_name, info.default_branch, info.private) == (REPO, "main", False)
    assert info.clone_url == server.git_url(REPO)

    assert api.branch_sha("main") == sources.main_sha
    with pytest.raises(GitHubError) as no_branch:
        api.branch_sha("nope")
    assert no_branch.value.status == 404 and "Branch not found" in str(no_branch.value)

    assert api.file_text("widgets/core.py", sources.main_sha) == CORE
    assert api.file_text(".github/reprobot.yml", "main") == "python: '3.11'\n"
    assert api.file_text("widgets/core.py", sources.first_sha) is None  # not there yet
    assert api.file_text("nothing/here.py", sources.main_sha) is None
    assert api.file_text("widgets", sources.main_sha) is None  # a directory


def test_issue_and_pulls(api: RepoAPI, server: GitHubServer, sources: Sources) -> None:
    server.add_pull(REPO, 2, "Fix area", "Fixes #1", sources.main_sha, sources.first_sha)
    server.add_pull(
        REPO, 3, "Fork fix", None, sources.fork_sha, sources.main_sha, head_full_name=FORK
    )

    issue = api.issue(1)
    assert (issue.number, issue.title, issue.body, issue.state) == (
        1,
        "area() is wrong",
        "area(2, 3) gives 5",
        "open",
    )
    assert (issue.user, issue.author_association, issue.is_pull) == ("reporter", "NONE", False)
    assert api.issue(2).is_pull and api.issue(3).is_pull

    own = api.pull(2)
    assert (own.head_sha, own.head_ref, own.base_sha, own.base_ref) == (
        sources.main_sha,
        "fix",
        sources.first_sha,
        "main",
    )
    assert own.head_repo == REPO and not own.from_fork(REPO)
    assert own.body == "Fixes #1" and own.state == "open"

    fork = api.pull(3)
    assert fork.head_repo == FORK and fork.from_fork(REPO)
    assert fork.head_sha == sources.fork_sha and fork.body == ""
    with pytest.raises(GitHubError) as not_a_pull:
        api.pull(1)
    assert not_a_pull.value.status == 404


def test_closing_issues_come_from_graphql(
    api: RepoAPI, server: GitHubServer, sources: Sources
) -> None:
    server.add_issue(REPO, 5, "Perimeter too", None)
    server.add_pull(
        REPO, 6, "Fix both", None, sources.main_sha, sources.first_sha, closing_issues=[1, 5]
    )
    server.add_pull(REPO, 7, "Unlinked", None, sources.main_sha, sources.first_sha)

    assert api.closing_issues(6) == [1, 5]
    assert api.closing_issues(7) == []
    assert api.closing_issues(99) == []  # GraphQL answers an error: no such pull request
    assert [c.path for c in api_calls(server, "POST")] == ["/api/graphql"] * 3


def test_closing_issues_are_empty_when_graphql_fails(
    api: RepoAPI, server: GitHubServer, sources: Sources
) -> None:
    server.add_pull(REPO, 6, "Fix", None, sources.main_sha, sources.first_sha, closing_issues=[1])
    server.fail_server_error("POST", r"^/api/graphql$", times=10)

    assert api.closing_issues(6) == []
    # Retried as any server error (max_retries=2), then given up without failing the job.
    assert [c.status for c in api_calls(server, "POST")] == [502, 502, 502]
    server.fail_next("POST", r"^/api/graphql$", 401)
    assert api.closing_issues(6) == []


def test_permission(api: RepoAPI, server: GitHubServer) -> None:
    server.set_permission(REPO, "maintainer", "maintain")
    server.set_permission(REPO, "helper", "triage")

    assert api.permission("maintainer") == "write"
    assert api.permission("helper") == "read"
    assert api.permission("octo-org") == "admin"
    assert api.permission("stranger") == "none"
    server.fail_next("GET", r"/collaborators/ghost/permission$", 404)
    assert api.permission("ghost") == "none"


# --- comments --------------------------------------------------------------------------------


def test_upsert_posts_once_then_edits_its_comment(api: RepoAPI, server: GitHubServer) -> None:
    first = api.upsert_comment(1, MARK, f"{MARK}\nReproducing...", None)
    (posted,) = server.comments(REPO, 1)
    assert posted["id"] == first and posted["user"]["login"] == "reprobot[bot]"

    again = api.upsert_comment(1, MARK, f"{MARK}\nReproduced.", first)

    assert again == first
    assert [c["body"] for c in server.comments(REPO, 1)] == [f"{MARK}\nReproduced."]
    assert [c.method for c in api_calls(server)] == ["GET", "POST", "GET", "PATCH"]


def test_upsert_finds_its_comment_by_marker_when_the_id_is_unknown_or_gone(
    api: RepoAPI, server: GitHubServer
) -> None:
    other = api.upsert_comment(1, "<!-- reprobot:other -->", "<!-- reprobot:other -->\nx", None)
    ours = api.upsert_comment(1, MARK, f"{MARK}\nfirst", None)

    assert api.upsert_comment(1, MARK, f"{MARK}\nsecond", None) == ours
    assert api.upsert_comment(1, MARK, f"{MARK}\nthird", 987654) == ours  # no such comment

    bodies = {c["id"]: c["body"] for c in server.comments(REPO, 1)}
    assert bodies == {other: "<!-- reprobot:other -->\nx", ours: f"{MARK}\nthird"}


def test_upsert_never_edits_a_persons_comment(api: RepoAPI, server: GitHubServer) -> None:
    quoting = f"> {MARK}\nWhy does the bot say this?"
    person = server.add_comment(REPO, 1, quoting, user="maintainer")

    # Neither by the marker nor by an id that names the person's comment.
    ours = api.upsert_comment(1, MARK, f"{MARK}\nReproduced.", None)
    assert ours != person["id"]
    assert api.upsert_comment(1, MARK, f"{MARK}\nStill reproduced.", person["id"]) == ours

    comments = server.comments(REPO, 1)
    assert [(c["id"], c["body"]) for c in comments] == [
        (person["id"], quoting),
        (ours, f"{MARK}\nStill reproduced."),
    ]
    assert not [c for c in api_calls(server, "PATCH") if c.path.endswith(str(person["id"]))]


def test_upsert_never_edits_another_apps_comment(api: RepoAPI, server: GitHubServer) -> None:
    stored = server.add_comment(REPO, 1, f"{MARK}\ncopied", user="other-app[bot]")
    # The stored object is the server's own: make it another App's comment.
    stored["performed_via_github_app"] = {"id": APP_ID + 1, "slug": "other-app"}

    ours = api.upsert_comment(1, MARK, f"{MARK}\nours", stored["id"])

    assert ours != stored["id"]
    assert [c["body"] for c in server.comments(REPO, 1)] == [f"{MARK}\ncopied", f"{MARK}\nours"]


def test_upsert_reads_every_page_of_comments(api: RepoAPI, server: GitHubServer) -> None:
    for i in range(150):
        server.add_comment(REPO, 1, f"comment {i}", user=f"user{i % 7}")
    ours = api.upsert_comment(1, MARK, f"{MARK}\nfirst", None)
    for i in range(30):
        server.add_comment(REPO, 1, f"later {i}")
    before = len(api_calls(server))

    assert api.upsert_comment(1, MARK, f"{MARK}\nsecond", None) == ours

    calls = api_calls(server)[before:]
    assert [(c.method, c.query.get("page")) for c in calls] == [
        ("GET", "1"),
        ("GET", "2"),
        ("PATCH", None),
    ]
    assert all(c.query.get("per_page") == "100" for c in calls[:2])
    assert len(server.comments(REPO, 1)) == 181
    assert server.comments(REPO, 1)[150]["body"] == f"{MARK}\nsecond"


def test_upsert_with_exactly_a_page_of_comments_looks_at_the_next(
    api: RepoAPI, server: GitHubServer
) -> None:
    for i in range(100):
        server.add_comment(REPO, 1, f"comment {i}")

    created = api.upsert_comment(1, MARK, MARK, None)

    lists = api_calls(server, "GET", r"/comments$")
    assert [c.query.get("page") for c in lists] == ["1", "2"]
    assert server.comments(REPO, 1)[-1]["id"] == created


# --- labels and check runs ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["reproduced", "needs repro", "status/reproduced", "c#x", "q?y"])
def test_labels_are_created_once_added_and_removed(
    api: RepoAPI, server: GitHubServer, name: str
) -> None:
    if name == "c#x":
        # A label the escaping must not confuse with ``c#x``.
        api.add_label(1, "c")

    api.ensure_label(name, "d93f0b", "Reprobot reproduced this")
    api.ensure_label(name, "d93f0b", "Reprobot reproduced this")
    api.add_label(1, name)
    assert name in server.issue_labels(REPO, 1)

    created = api_calls(server, "POST", r"/widgets/labels$")
    assert [c.status for c in created] == [201]
    (label,) = [lb for lb in server.repo_labels(REPO) if lb["name"] == name]
    assert (label["color"], label["description"]) == ("d93f0b", "Reprobot reproduced this")

    api.remove_label(1, name)
    api.remove_label(1, name)  # already gone: 404, tolerated
    assert name not in server.issue_labels(REPO, 1)
    assert server.issue_labels(REPO, 1) == (["c"] if name == "c#x" else [])
    assert [c.status for c in api_calls(server, "DELETE")] == [200, 404]


def test_a_label_created_meanwhile_is_fine(api: RepoAPI, server: GitHubServer) -> None:
    api.ensure_label("reproduced", "d93f0b", "first")
    # Someone else's label, not yet visible to the read: the create answers 422.
    server.fail_next("GET", r"/labels/reproduced$", 404)

    api.ensure_label("reproduced", "d93f0b", "second")

    posts = api_calls(server, "POST", r"/widgets/labels$")
    assert [c.status for c in posts] == [201, 422]
    assert [lb["description"] for lb in server.repo_labels(REPO)] == ["first"]


def test_other_label_failures_are_raised(api: RepoAPI, server: GitHubServer) -> None:
    server.fail_next("GET", r"/labels/reproduced$", 403)
    with pytest.raises(GitHubError) as failed:
        api.ensure_label("reproduced", "d93f0b", "x")
    assert failed.value.status == 403
    server.fail_next("DELETE", r"/labels/reproduced$", 403)
    with pytest.raises(GitHubError):
        api.remove_label(1, "reproduced")


def test_check_runs_are_created_and_completed(
    api: RepoAPI, server: GitHubServer, sources: Sources
) -> None:
    run_id = api.create_check_run(sources.main_sha, "reprobot/verify", "Verifying", "Running")
    (run,) = server.check_runs(REPO)
    assert (run["id"], run["status"], run["head_sha"], run["name"]) == (
        run_id,
        "in_progress",
        sources.main_sha,
        "reprobot/verify",
    )
    assert run["output"]["title"] == "Verifying"

    api.complete_check_run(run_id, "failure", "Not fixed", "1 test fails", "details")

    (done,) = server.check_runs(REPO)
    assert (done["status"], done["conclusion"]) == ("completed", "failure")
    assert done["completed_at"]
    assert (done["output"]["title"], done["output"]["summary"], done["output"]["text"]) == (
        "Not fixed",
        "1 test fails",
        "details",
    )
    with pytest.raises(GitHubError) as unknown_sha:
        api.create_check_run("f" * 40, "reprobot/verify", "t", "s")
    assert unknown_sha.value.status == 422
