"""What every job does first, against the GitHub stand-in: its token and the git fetch."""

from __future__ import annotations

from pathlib import Path

from reprobot.bot.config.repo_file import parse_repo_config
from reprobot.bot.github.auth import VERIFY_PERMISSIONS, GitHubApp
from reprobot.bot.github.repo_api import RepoAPI
from reprobot.bot.jobs import setup as job_setup
from tests.bot.github.scenario import APP_ID, INSTALLATION, REPO
from tests.support.github_server import GitHubServer
from tests.support.widgets import Sources


def session_of(app: GitHubApp) -> job_setup.RepoSession:
    auth = app.installation(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    api = RepoAPI(app.client_for(auth), REPO, APP_ID)
    info = api.repository()
    return job_setup.RepoSession(
        api, auth, info, api.branch_sha(info.default_branch), parse_repo_config(None)
    )


def test_a_fetch_whose_token_was_revoked_renews_it_and_fetches(
    server: GitHubServer, app: GitHubApp, sources: Sources, tmp_path: Path
) -> None:
    session = session_of(app)
    held = session.auth.token
    # Revoked between the job's API reads and its git fetch, as on a permissions change.
    server.expire_tokens()

    mirror = job_setup.fetch(tmp_path, session, [sources.main_sha, "refs/heads/main"])

    snapshot = job_setup.snapshot(mirror, session, sources.main_sha)
    assert snapshot.sha == sources.main_sha
    assert session.auth.token.token != held.token
    git_answers = [c.status for c in server.calls if c.path.startswith("/git/")]
    assert git_answers[0] == 401 and git_answers[-1] == 200
    # The API requests after it use the renewed token too, minting nothing more.
    assert session.api.repository().full_name == REPO
    assert len(server.tokens) == 2
