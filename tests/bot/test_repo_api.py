"""The App's GitHub client layer against the local GitHub server: installation tokens
(``GitHubApp``), what a job reads and writes (``RepoAPI``), and the App's labels."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reprobot.bot.errors import AppConfigError, GitHubError
from reprobot.bot.github.auth import (
    REPRODUCE_PERMISSIONS,
    TOKEN_MARGIN,
    VERIFY_PERMISSIONS,
    GitHubApp,
)
from reprobot.bot.github.limits import MutationThrottler, RetryPolicy
from reprobot.bot.github.repo_api import RepoAPI
from reprobot.bot.jobs.labels import COLORS, DESCRIPTIONS, apply_label, withdraw_label
from reprobot.bot.store.engine import make_engine, migrate
from reprobot.bot.store.records import Records
from reprobot.settings import Settings
from tests.support.github_server import Call, GitHubServer, make_app_key, make_bare_repo
from tests.support.repos import commit_files, git, make_repo

# githubkit caches App JWTs process-wide by App id: an id of this module's own, for its key.
APP_ID = 5302
INSTALLATION = 41
OTHER_INSTALLATION = 42
REPO = "octo-org/widgets"
SIBLING = "octo-org/gadgets"
FORK = "contributor/widgets"
CORE = "def area(w, h):\n    return w * h\n"
MARK = "<!-- reprobot:reproduction -->"


@dataclass(frozen=True)
class Sources:
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
    root = tmp_path_factory.mktemp("io-sources")
    base = make_repo(root / "widgets", {"README.md": "# widgets\n", "widgets/__init__.py": ""})
    first = git(base, "rev-parse", "HEAD")
    main = commit_files(
        base, {"widgets/core.py": CORE, ".github/reprobot.yml": "python: '3.11'\n"}, "core"
    )
    fork = root / "fork"
    subprocess.run(["git", "clone", "-q", str(base), str(fork)], check=True, capture_output=True)
    git(fork, "checkout", "-q", "-b", "fix")
    fork_sha = commit_files(fork, {"widgets/core.py": CORE + "# fixed\n"}, "the fix")
    return Sources(base, fork, first, main, fork_sha)


@pytest.fixture(scope="module")
def git_root(sources: Sources, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The served bare repositories, shared by the module's servers (a server only ever writes
    ``refs/pull/N/head`` into them)."""
    root = tmp_path_factory.mktemp("io-git")
    make_bare_repo(root, REPO, sources.base)
    make_bare_repo(root, FORK, sources.fork, branch="fix")
    return root


def start_server(key: tuple[str, bytes], git_root: Path, token_ttl_s: int = 3600) -> GitHubServer:
    srv = GitHubServer(APP_ID, key[1], git_root, token_ttl_s=token_ttl_s).__enter__()
    srv.add_installation(INSTALLATION, "octo-org")
    srv.add_installation(OTHER_INSTALLATION, "elsewhere")
    srv.add_repo(REPO, INSTALLATION)
    srv.add_repo(SIBLING, INSTALLATION)
    srv.add_repo("elsewhere/thing", OTHER_INSTALLATION)
    srv.add_issue(
        REPO, 1, "area() is wrong", "area(2, 3) gives 5", user="reporter", author_association="NONE"
    )
    return srv


@pytest.fixture
def server(app_key: tuple[str, bytes], git_root: Path) -> Iterator[GitHubServer]:
    srv = start_server(app_key, git_root)
    try:
        yield srv
    finally:
        srv.__exit__(None, None, None)


def make_app(
    server: GitHubServer, key: str, clock: Callable[[], datetime] | None = None
) -> GitHubApp:
    return GitHubApp(
        APP_ID,
        key,
        server.api_url,
        retry=RetryPolicy(max_retries=2, max_wait_s=5, backoff_s=0.02),
        throttler=MutationThrottler(pause_s=0.0),
        clock=clock or (lambda: datetime.now(UTC)),
    )


@pytest.fixture
def app(server: GitHubServer, app_key: tuple[str, bytes]) -> GitHubApp:
    return make_app(server, app_key[0])


@pytest.fixture
def api(app: GitHubApp) -> RepoAPI:
    token = app.token(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    return RepoAPI(app.client(token), REPO, APP_ID)


def api_calls(server: GitHubServer, method: str = "", path_regex: str = "") -> list[Call]:
    return [
        c
        for c in server.calls
        if not c.path.endswith("/access_tokens")
        and (not method or c.method == method)
        and (not path_regex or re.search(path_regex, c.path))
    ]


def token_calls(server: GitHubServer) -> list[Call]:
    return [c for c in server.calls if c.path.endswith("/access_tokens")]


# --- installation tokens ----------------------------------------------------------------------


def test_a_token_is_narrowed_to_one_repository_and_the_permissions(
    server: GitHubServer, app: GitHubApp, sources: Sources
) -> None:
    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)

    (issued,) = server.tokens
    assert issued["token"] == token.token
    assert issued["installation_id"] == INSTALLATION
    assert issued["repositories"] == ["widgets"]
    assert issued["permissions"] == {"metadata": "read", "contents": "read", "issues": "write"}
    assert token.repositories == (REPO,) and token.installation_id == INSTALLATION
    assert dict(token.permissions) == issued["permissions"]
    expected = datetime.strptime(issued["expires_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert token.expires_at == expected
    assert token.token not in repr(token)

    # The server holds it to that: the sibling repository is hidden, pull requests refused.
    api = RepoAPI(app.client(token), REPO, APP_ID)
    assert api.repository().full_name == REPO
    sibling = RepoAPI(app.client(token), SIBLING, APP_ID)
    with pytest.raises(GitHubError) as hidden:
        sibling.repository()
    assert hidden.value.status == 404
    server.add_pull(REPO, 2, "Fix", None, sources.main_sha, sources.first_sha)
    with pytest.raises(GitHubError) as refused:
        api.pull(2)
    assert refused.value.status == 403


def test_tokens_are_cached_per_repository_and_permissions(
    server: GitHubServer, app: GitHubApp
) -> None:
    first = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    again = app.token(INSTALLATION, "Octo-Org/Widgets", dict(REPRODUCE_PERMISSIONS))

    assert again is first
    assert len(server.tokens) == 1 and len(token_calls(server)) == 1

    verify = app.token(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    sibling = app.token(INSTALLATION, SIBLING, REPRODUCE_PERMISSIONS)
    assert len({first.token, verify.token, sibling.token}) == 3
    assert [t["repositories"] for t in server.tokens] == [["widgets"], ["widgets"], ["gadgets"]]
    assert server.tokens[1]["permissions"] == dict(VERIFY_PERMISSIONS)
    assert app.token(INSTALLATION, REPO, VERIFY_PERMISSIONS) is verify
    assert len(server.tokens) == 3


def test_a_token_is_renewed_when_it_nears_its_expiry(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    now = [datetime.now(UTC)]
    app = make_app(server, app_key[0], clock=lambda: now[0])
    first = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    lifetime = first.expires_at - now[0]
    assert timedelta(minutes=59) < lifetime <= timedelta(minutes=60)

    now[0] += lifetime - TOKEN_MARGIN - timedelta(seconds=30)
    assert app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS) is first
    now[0] += timedelta(seconds=60)  # now within the margin
    renewed = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)

    assert renewed.token != first.token
    assert [t["token"] for t in server.tokens] == [first.token, renewed.token]
    assert RepoAPI(app.client(renewed), REPO, APP_ID).issue(1).number == 1


def test_a_token_shorter_lived_than_the_margin_is_never_reused(
    app_key: tuple[str, bytes], git_root: Path
) -> None:
    server = start_server(app_key, git_root, token_ttl_s=200)
    try:
        app = make_app(server, app_key[0])
        first = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
        second = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)

        assert first.token != second.token
        assert len(server.tokens) == 2
        # Each is a working token all the same.
        assert RepoAPI(app.client(second), REPO, APP_ID).issue(1).number == 1
    finally:
        server.__exit__(None, None, None)


def test_token_failures_are_github_errors(server: GitHubServer, app: GitHubApp) -> None:
    with pytest.raises(GitHubError) as unknown:
        app.token(999, REPO, REPRODUCE_PERMISSIONS)
    assert unknown.value.status == 404
    with pytest.raises(GitHubError) as foreign:
        app.token(INSTALLATION, "elsewhere/thing", REPRODUCE_PERMISSIONS)
    assert foreign.value.status == 422
    with pytest.raises(GitHubError) as beyond:
        app.token(INSTALLATION, REPO, {"administration": "write"})
    assert beyond.value.status == 422
    assert server.tokens == []


def test_a_wrong_private_key_is_refused(server: GitHubServer) -> None:
    other_key, _ = make_app_key()
    # Another App id, so that githubkit's JWT cache cannot hand out this module's JWT.
    impostor = GitHubApp(APP_ID + 1000, other_key, server.api_url)
    with pytest.raises(GitHubError) as refused:
        impostor.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    assert refused.value.status == 401


# --- the App from its settings ------------------------------------------------------------------


def settings_for(
    server: GitHubServer, tmp_path: Path, key_path: Path | None, **kw: object
) -> Settings:
    values: dict[str, object] = {
        "cache_dir": tmp_path / "cache",
        "app_id": APP_ID,
        "private_key_path": key_path,
        "github_api_url": server.api_url,
        "github_mutation_pause_s": 0.0,
        **kw,
    }
    return Settings(**values)  # type: ignore[arg-type]


def test_the_app_from_its_settings_gets_tokens(
    server: GitHubServer, app_key: tuple[str, bytes], tmp_path: Path
) -> None:
    key_path = tmp_path / "app.pem"
    key_path.write_text(app_key[0])
    app = GitHubApp.from_settings(
        settings_for(server, tmp_path, key_path, github_max_retries=0, github_timeout_s=5)
    )

    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    api = RepoAPI(app.client(token), REPO, app.app_id)
    assert app.app_id == APP_ID and api.issue(1).title == "area() is wrong"
    # github_max_retries=0 reached the retry policy: a server error is not tried again.
    server.fail_server_error("GET", r"/issues/1$", times=2)
    with pytest.raises(GitHubError) as failed:
        api.issue(1)
    assert failed.value.status == 502
    assert len(api_calls(server, "GET", r"/issues/1$")) == 2


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("no app id", "REPROBOT_APP_ID"),
        ("no key path", "REPROBOT_PRIVATE_KEY_PATH"),
        ("missing file", "cannot read"),
        ("directory", "cannot read"),
        ("binary", "cannot read"),
        ("not pem", "not a PEM private key"),
        ("public key", "not a PEM private key"),
    ],
)
def test_bad_app_settings_are_config_errors(
    server: GitHubServer, app_key: tuple[str, bytes], tmp_path: Path, case: str, message: str
) -> None:
    key_path: Path | None = tmp_path / "app.pem"
    assert key_path is not None
    extra: dict[str, object] = {}
    if case == "no app id":
        key_path.write_text(app_key[0])
        extra["app_id"] = None
    elif case == "no key path":
        key_path = None
    elif case == "directory":
        key_path.mkdir()
    elif case == "binary":
        key_path.write_bytes(b"\xff\xfe-----BEGIN RSA PRIVATE KEY-----\x80\n")
    elif case == "not pem":
        key_path.write_text('{"private_key": "somewhere else"}\n')
    elif case == "public key":
        key_path.write_bytes(app_key[1])

    with pytest.raises(AppConfigError, match=message):
        GitHubApp.from_settings(settings_for(server, tmp_path, key_path, **extra))
    assert server.calls == []


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


# --- labels the App owns -----------------------------------------------------------------------


@pytest.fixture
def records(tmp_path: Path) -> Records:
    engine = make_engine(f"sqlite:///{tmp_path / 'app.sqlite3'}")
    migrate(engine)
    return Records(engine)


def test_the_app_adds_its_label_once(api: RepoAPI, server: GitHubServer, records: Records) -> None:
    assert apply_label(api, records, 1, "reproduced", api.issue(1).labels, "reproduced")
    assert not apply_label(api, records, 1, "reproduced", api.issue(1).labels, "reproduced")

    assert server.issue_labels(REPO, 1) == ["reproduced"]
    (label,) = server.repo_labels(REPO)
    assert (label["color"], label["description"]) == (
        COLORS["reproduced"],
        DESCRIPTIONS["reproduced"],
    )
    assert records.label_state(REPO, 1, "reproduced") == "added"
    adds = [c for c in api_calls(server, "POST") if c.path.endswith("/issues/1/labels")]
    assert len(adds) == 1


def test_a_label_a_person_removed_is_not_added_again(
    api: RepoAPI, server: GitHubServer, records: Records
) -> None:
    apply_label(api, records, 1, "reproduced", api.issue(1).labels, "reproduced")
    server.remove_label(REPO, 1, "reproduced")  # a person disagrees

    assert not apply_label(api, records, 1, "reproduced", api.issue(1).labels, "reproduced")
    assert server.issue_labels(REPO, 1) == []
    # Nor is it withdrawn again (there is nothing to withdraw).
    assert not withdraw_label(api, records, 1, "reproduced", api.issue(1).labels)
    assert api_calls(server, "DELETE") == []


def test_the_app_withdraws_only_labels_it_added(
    api: RepoAPI, server: GitHubServer, records: Records, sources: Sources
) -> None:
    server.add_pull(REPO, 2, "Fix", None, sources.main_sha, sources.first_sha)
    server.add_pull(REPO, 3, "Other fix", None, sources.main_sha, sources.first_sha)
    assert apply_label(api, records, 2, "fix-verified", api.pull(2).labels, "verified")
    # On #3 the label was put by someone else (not through apply_label).
    api.add_label(3, "fix-verified")

    assert not withdraw_label(api, records, 3, "fix-verified", api.pull(3).labels)
    assert server.issue_labels(REPO, 3) == ["fix-verified"]
    assert records.label_state(REPO, 3, "fix-verified") is None
    # A verified push finds the person's label there: the App does not take it over, so a
    # later failing push still leaves it alone.
    assert not apply_label(api, records, 3, "fix-verified", api.pull(3).labels, "verified")
    assert records.label_state(REPO, 3, "fix-verified") is None
    assert not withdraw_label(api, records, 3, "fix-verified", api.pull(3).labels)
    assert server.issue_labels(REPO, 3) == ["fix-verified"]

    assert withdraw_label(api, records, 2, "fix-verified", api.pull(2).labels)
    assert server.issue_labels(REPO, 2) == []
    assert records.label_state(REPO, 2, "fix-verified") == "removed"
    assert not withdraw_label(api, records, 2, "fix-verified", api.pull(2).labels)

    # Withdrawn by the App itself, not by a person: a later verdict may add it again.
    assert apply_label(api, records, 2, "fix-verified", api.pull(2).labels, "verified")
    assert server.issue_labels(REPO, 2) == ["fix-verified"]


def test_comments_of_the_apps_bot_account_count_as_its_own(app: GitHubApp) -> None:
    # GitHub may leave performed_via_github_app empty on an installation's comments; the bot
    # account's login (slug[bot]) still tells them apart from people's.
    assert app.bot_login() == "reprobot[bot]"
    gh = app.client(app.token(INSTALLATION, REPO, VERIFY_PERMISSIONS))
    api = RepoAPI(gh, REPO, app_id=-1, bot_login=app.bot_login())
    first = api.upsert_comment(1, "<!-- m -->", "<!-- m -->\nv1", None)
    assert api.upsert_comment(1, "<!-- m -->", "<!-- m -->\nv2", None) == first
    stranger = RepoAPI(gh, REPO, app_id=-1, bot_login="someone-else[bot]")
    assert stranger.upsert_comment(1, "<!-- m -->", "<!-- m -->\nv3", None) != first
