"""A local GitHub with one installation holding two repositories and another holding one."""

from __future__ import annotations

import subprocess
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
    Sources,
    request_token,
)
from tests.support.github_server import (
    GitHubServer,
    make_app_key,
    make_bare_repo,
)
from tests.support.repos import commit_files, git, make_repo


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


@pytest.fixture
def token(server: GitHubServer, app_key: tuple[str, bytes]) -> str:
    answer = request_token(server, app_key[0])
    assert answer.status_code == 201
    value: str = answer.json()["token"]
    return value
