"""Bare mirrors fetched from the local GitHub server's git endpoint with an installation token."""

from __future__ import annotations

import base64
import itertools
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from reprobot.bot.errors import GitHubError
from reprobot.bot.github import mirror as git_mirror
from reprobot.bot.github.auth import REPRODUCE_PERMISSIONS, GitHubApp, InstallationToken
from reprobot.bot.github.limits import MutationThrottler
from tests.support.github_server import Call, GitHubServer, make_app_key, make_bare_repo
from tests.support.repos import commit_files, git
from tests.support.widgets import Sources as Widgets
from tests.support.widgets import make_sources

# githubkit caches App JWTs process-wide by App id: an id of this module's own, for its key.
APP_ID = 5303
INSTALLATION = 51
REPO = "octo-org/widgets"
FORK = "contributor/widgets"
CORE = "def area(w, h):\n    return w * h\n"


@dataclass(frozen=True)
class Sources(Widgets):
    branch_sha: str  # the head of branch "feature" of the base repository, off its first commit


@pytest.fixture(scope="module")
def app_key() -> tuple[str, bytes]:
    return make_app_key()


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Sources:
    widgets = make_sources(tmp_path_factory.mktemp("mirror-sources"), CORE)
    git(widgets.base, "checkout", "-q", "-b", "feature", widgets.first_sha)
    branch = commit_files(widgets.base, {"feature.py": "x = 1\n"}, "a feature")
    git(widgets.base, "checkout", "-q", "main")
    return Sources(**asdict(widgets), branch_sha=branch)


@pytest.fixture
def server(app_key: tuple[str, bytes], sources: Sources, tmp_path: Path) -> Iterator[GitHubServer]:
    git_root = tmp_path / "git"
    make_bare_repo(git_root, REPO, sources.base)
    make_bare_repo(git_root, FORK, sources.fork, branch="fix")
    with GitHubServer(APP_ID, app_key[1], git_root) as srv:
        srv.add_installation(INSTALLATION, "octo-org")
        srv.add_repo(REPO, INSTALLATION)
        # The fork's commit reaches the base repository as refs/pull/4/head, as on GitHub.
        srv.add_pull(
            REPO, 4, "Fork fix", None, sources.fork_sha, sources.main_sha, head_full_name=FORK
        )
        yield srv


@pytest.fixture
def token(server: GitHubServer, app_key: tuple[str, bytes]) -> InstallationToken:
    app = GitHubApp(APP_ID, app_key[0], server.api_url, throttler=MutationThrottler(0.0))
    return app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def git_calls(server: GitHubServer) -> list[Call]:
    return [c for c in server.calls if c.path.startswith("/git/")]


def rev(mirror: Path, name: str) -> str:
    return git(mirror, "rev-parse", "--verify", "-q", name)


def has_commit(mirror: Path, sha: str) -> bool:
    probe = subprocess.run(
        ["git", "-C", str(mirror), "cat-file", "-e", f"{sha}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


def fetch(server: GitHubServer, cache_dir: Path, token: InstallationToken, refs: list[str]) -> Path:
    return git_mirror.fetch(cache_dir, REPO, server.git_url(REPO), token.token, refs, timeout=60)


def test_fetches_branches_shas_and_pull_heads(
    server: GitHubServer, token: InstallationToken, cache_dir: Path, sources: Sources
) -> None:
    mirror = fetch(server, cache_dir, token, ["main"])

    assert mirror == git_mirror.mirror_path(cache_dir, REPO)
    assert mirror == cache_dir / "mirrors" / "octo-org" / "widgets.git"
    assert git(mirror, "rev-parse", "--is-bare-repository") == "true"
    assert rev(mirror, "refs/reprobot/main") == sources.main_sha
    assert has_commit(mirror, sources.first_sha)  # history comes along
    assert not has_commit(mirror, sources.branch_sha)

    fetch(server, cache_dir, token, [sources.branch_sha])
    assert has_commit(mirror, sources.branch_sha)

    fetch(server, cache_dir, token, ["refs/pull/4/head"])
    assert rev(mirror, "refs/reprobot/refs/pull/4/head") == sources.fork_sha
    assert git(mirror, "show", f"{sources.fork_sha}:widgets/core.py") == CORE + "# fixed"

    # The App's token went in the Authorization header of every git request.
    expected = base64.b64encode(f"x-access-token:{token.token}".encode()).decode()
    assert git_calls(server)
    assert all(c.headers.get("authorization") == f"Basic {expected}" for c in git_calls(server))
    assert all(c.status == 200 for c in git_calls(server))


def test_named_refs_follow_their_branch(
    server: GitHubServer, token: InstallationToken, cache_dir: Path, sources: Sources
) -> None:
    mirror = fetch(server, cache_dir, token, ["refs/pull/4/head"])
    assert rev(mirror, "refs/reprobot/refs/pull/4/head") == sources.fork_sha

    # A push to the pull request moves its head; the next fetch moves the mirror's ref (forced,
    # although the new head does not descend from the old one).
    server.set_pull_head(REPO, 4, sources.branch_sha)
    fetch(server, cache_dir, token, ["refs/pull/4/head"])

    assert rev(mirror, "refs/reprobot/refs/pull/4/head") == sources.branch_sha


def test_a_second_fetch_of_present_shas_makes_no_request(
    server: GitHubServer, token: InstallationToken, cache_dir: Path, sources: Sources
) -> None:
    wanted = [sources.main_sha, sources.fork_sha]
    fetch(server, cache_dir, token, wanted)
    before = len(git_calls(server))
    assert before > 0

    mirror = fetch(server, cache_dir, token, wanted)
    fetch(server, cache_dir, token, [sources.first_sha])  # an ancestor: present as well

    assert len(git_calls(server)) == before
    assert all(has_commit(mirror, sha) for sha in (*wanted, sources.first_sha))
    # One missing sha among present ones is fetched.
    fetch(server, cache_dir, token, [*wanted, sources.branch_sha])
    assert len(git_calls(server)) > before
    assert has_commit(mirror, sources.branch_sha)


def test_the_token_is_never_written_down(
    server: GitHubServer, token: InstallationToken, cache_dir: Path, sources: Sources
) -> None:
    mirror = fetch(server, cache_dir, token, ["main", "refs/pull/4/head", sources.branch_sha])

    secrets = [
        token.token.encode(),
        base64.b64encode(f"x-access-token:{token.token}".encode()),
    ]
    files = [p for p in cache_dir.rglob("*") if p.is_file()]
    assert mirror / "config" in files and mirror / "FETCH_HEAD" in files
    for path in files:
        data = path.read_bytes()
        assert not any(secret in data for secret in secrets), path
    config = git(mirror, "config", "--list", "--local")
    assert "extraheader" not in config.lower() and "remote." not in config
    assert server.git_url(REPO).removesuffix(".git") in (mirror / "FETCH_HEAD").read_text()
    # Nor did the URL carry it.
    for call in git_calls(server):
        assert token.token not in call.path and token.token not in str(call.query)
        assert "@" not in call.headers.get("host", "")


def test_a_bad_token_is_a_github_error(
    server: GitHubServer, token: InstallationToken, cache_dir: Path
) -> None:
    wrong = "ghs_" + "x" * 36
    with pytest.raises(GitHubError) as refused:
        git_mirror.fetch(cache_dir, REPO, server.git_url(REPO), wrong, ["main"], timeout=60)
    assert refused.value.repo == REPO
    assert "git fetch failed" in str(refused.value) and wrong not in str(refused.value)
    # Said as GitHub's 401, so that a job renews its token and fetches again.
    assert refused.value.status == 401
    # Refused at the first request (git may ask once more, with the askpass's empty answer).
    assert {c.status for c in git_calls(server)} == {401}

    server.expire_tokens()
    with pytest.raises(GitHubError) as expired:
        fetch(server, cache_dir, token, ["main"])
    assert token.token not in str(expired.value)
    assert expired.value.status == 401


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc",
        "ext::sh -c touch% /tmp/reprobot-pwned",
        "-uupload-pack=touch /tmp/reprobot-pwned",
        "--upload-pack=touch /tmp/reprobot-pwned",
        "ssh://git@127.0.0.1/octo-org/widgets.git",
        "git@127.0.0.1:octo-org/widgets.git",
        "/srv/git/octo-org/widgets.git",
        "HTTPS-not://x",
    ],
)
def test_only_http_urls_are_fetched(
    server: GitHubServer, token: InstallationToken, cache_dir: Path, url: str
) -> None:
    with pytest.raises(GitHubError, match="not an HTTP"):
        git_mirror.fetch(cache_dir, REPO, url, token.token, ["main"], timeout=60)
    assert not cache_dir.exists()
    assert git_calls(server) == []


def test_concurrent_fetches_into_one_mirror_take_turns(
    server: GitHubServer, token: InstallationToken, cache_dir: Path, sources: Sources
) -> None:
    wanted = [
        ["main"],
        ["refs/pull/4/head"],
        [sources.branch_sha],
        ["main", sources.fork_sha],
        [sources.first_sha, "refs/pull/4/head"],
        ["main"],
    ]
    barrier = threading.Barrier(len(wanted))
    results: list[Any] = [None] * len(wanted)

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = fetch(server, cache_dir, token, wanted[i])
        except GitHubError as exc:  # reported below
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(wanted))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    mirror = git_mirror.mirror_path(cache_dir, REPO)
    assert results == [mirror] * len(wanted)
    assert rev(mirror, "refs/reprobot/main") == sources.main_sha
    assert rev(mirror, "refs/reprobot/refs/pull/4/head") == sources.fork_sha
    for sha in (sources.first_sha, sources.main_sha, sources.fork_sha, sources.branch_sha):
        assert has_commit(mirror, sha)
    checked = subprocess.run(
        ["git", "-C", str(mirror), "fsck", "--strict", "--no-dangling"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    # One fetch at a time: a git fetch's requests follow each other, so no two git requests
    # were ever answered at the same time.
    ordered = sorted(git_calls(server), key=lambda c: c.started)
    assert not any(b.started < a.finished for a, b in itertools.pairwise(ordered))
