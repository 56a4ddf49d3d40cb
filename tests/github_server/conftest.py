"""A local GitHub with one installation holding two repositories and another holding one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.github_server.clients import (
    APP_ID,
    CORE,
    FOREIGN,
    FORK,
    INSTALLATION,
    OTHER_INSTALLATION,
    REPO,
    SIBLING,
    request_token,
)
from tests.support.github_server import (
    GitHubServer,
    make_app_key,
    make_bare_repo,
)
from tests.support.widgets import Sources, make_sources


@pytest.fixture(scope="module")
def app_key() -> tuple[str, bytes]:
    return make_app_key()


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Sources:
    return make_sources(tmp_path_factory.mktemp("sources"), CORE)


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


@pytest.fixture
def token(server: GitHubServer, app_key: tuple[str, bytes]) -> str:
    answer = request_token(server, app_key[0])
    assert answer.status_code == 201
    value: str = answer.json()["token"]
    return value
