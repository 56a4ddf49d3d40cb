"""One installation holding ``widgets`` (with its fork) and a sibling, another holding one
repository; the App, a job's ``RepoAPI`` and the App's records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobot.bot.github.auth import (
    VERIFY_PERMISSIONS,
    GitHubApp,
)
from reprobot.bot.github.repo_api import RepoAPI
from reprobot.bot.store.engine import make_engine, migrate
from reprobot.bot.store.records import Records
from tests.bot.github.scenario import (
    APP_ID,
    CORE,
    FORK,
    INSTALLATION,
    REPO,
    make_app,
    shared_app_key,
    start_server,
)
from tests.support.github_server import GitHubServer, make_bare_repo
from tests.support.widgets import Sources, make_sources


@pytest.fixture
def app_key() -> tuple[str, bytes]:
    return shared_app_key()


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Sources:
    return make_sources(
        tmp_path_factory.mktemp("io-sources"), CORE, {".github/reprobot.yml": "python: '3.11'\n"}
    )


@pytest.fixture(scope="module")
def git_root(sources: Sources, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The served bare repositories, shared by the module's servers (a server only ever writes
    ``refs/pull/N/head`` into them)."""
    root = tmp_path_factory.mktemp("io-git")
    make_bare_repo(root, REPO, sources.base)
    make_bare_repo(root, FORK, sources.fork, branch="fix")
    return root


@pytest.fixture
def server(app_key: tuple[str, bytes], git_root: Path) -> Iterator[GitHubServer]:
    srv = start_server(app_key, git_root)
    try:
        yield srv
    finally:
        srv.__exit__(None, None, None)


@pytest.fixture
def app(server: GitHubServer, app_key: tuple[str, bytes]) -> GitHubApp:
    return make_app(server, app_key[0])


@pytest.fixture
def api(app: GitHubApp) -> RepoAPI:
    token = app.token(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    return RepoAPI(app.client(token), REPO, APP_ID)


@pytest.fixture
def records(tmp_path: Path) -> Records:
    engine = make_engine(f"sqlite:///{tmp_path / 'app.sqlite3'}")
    migrate(engine)
    return Records(engine)
