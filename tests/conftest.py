"""Fixtures shared by every test folder: settings, a real Docker engine, real git repositories
made by the tests, real environment images, a local OpenAI-compatible endpoint."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.errors import DockerUnavailableError
from reprobot.validation.sandbox.container import connect
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.openai_server import OpenAIServer
from tests.support.repos import (
    EXAMPLE,
    TINY_MODULE,
    TINY_PYPROJECT,
    commit_files,
    git,
    make_repo,
)
from tests.support.servers import PostgresServer, RedisServer, ServerUnavailable

T = TypeVar("T")


@pytest.fixture(scope="session")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(cache_dir=tmp_path_factory.mktemp("reprobot-cache"), run_timeout_s=300)


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    try:
        client = connect()
    except DockerUnavailableError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Docker tests never skip in CI: {exc}")
        pytest.skip(f"no Docker engine: {exc}")
    yield client
    client.close()


@pytest.fixture(scope="session")
def example_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's example project as a real git repository."""
    dest = tmp_path_factory.mktemp("example") / "durations"
    shutil.copytree(EXAMPLE, dest)
    make_repo(dest, {})
    return dest


@pytest.fixture(scope="session")
def example_env(
    docker_client: docker.DockerClient, example_repo: Path, settings: Settings
) -> EnvImage:
    snapshot = RepoSnapshot.from_git(example_repo, "HEAD", "example/durations")
    spec = EnvSpec(python="3.11", install="python -m pip install -e '.[test]'")
    return ensure_environment(docker_client, spec, snapshot, settings)


@pytest.fixture(scope="session")
def tiny_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A minimal installable project; tests add commits with the test files they need."""
    return make_repo(
        tmp_path_factory.mktemp("tiny") / "tiny",
        {
            "pyproject.toml": TINY_PYPROJECT,
            "tiny/__init__.py": TINY_MODULE,
            "tests/__init__.py": "",
        },
    )


@pytest.fixture(scope="session")
def tiny_env(docker_client: docker.DockerClient, tiny_repo: Path, settings: Settings) -> EnvImage:
    snapshot = RepoSnapshot.from_git(tiny_repo, "HEAD", "test/tiny")
    return ensure_environment(docker_client, EnvSpec(python="3.11"), snapshot, settings)


@pytest.fixture
def tiny_snapshot(tiny_repo: Path) -> Callable[[dict[str, str]], RepoSnapshot]:
    """Commit ``files`` (e.g. a test module) on top of the tiny project's first commit (so that
    no test sees another test's files) and snapshot that commit."""
    root = git(tiny_repo, "rev-list", "--max-parents=0", "main")

    def make(files: dict[str, str]) -> RepoSnapshot:
        git(tiny_repo, "checkout", "-q", "--detach", root)
        sha = commit_files(tiny_repo, files, "test files")
        return RepoSnapshot.from_git(tiny_repo, sha, "test/tiny")

    return make


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A chat-completions server on 127.0.0.1 answering from a script, for this test only."""
    with OpenAIServer() as server:
        yield server


# --- real servers for the scale-out back-ends (tests/support/servers.py) ---------------------


def _server_or_skip(make: Callable[[], T]) -> T:
    try:
        return make()
    except ServerUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL and Redis tests never skip in CI: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL for the whole session."""
    root = Path(tempfile.mkdtemp(prefix="reprobot-pg-"))
    server = _server_or_skip(lambda: PostgresServer(root).__enter__())
    yield server
    server.__exit__(None, None, None)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A throwaway Redis for the whole session."""
    server = _server_or_skip(lambda: RedisServer(tmp_path_factory.mktemp("redis")).__enter__())
    yield server
    server.__exit__(None, None, None)


# --- what a test needs, as markers (`pytest -m "not docker and not servers and not github and
# not browser"` runs the rest, which needs nothing but this checkout) --------------------------

# Fixtures whose closure names a kind of outside part; a test is marked when it asks for any,
# directly or through the fixtures it asks for.
_NEEDS = {
    "docker": {"docker_client"},
    "servers": {"postgres_server", "redis_server"},
    "github": {"app_key"},
}
# Parametrised back-ends that start their servers inside the fixture (tests/bot/conftest.py).
_SERVER_PARAMS = {"postgresql", "scale-out"}
# Folders whose every test talks to the local GitHub stand-in.
_GITHUB_FOLDERS = ("github_server", "bot/github")
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        for marker, fixtures in _NEEDS.items():
            if names & fixtures:
                item.add_marker(marker)
        callspec = getattr(item, "callspec", None)
        if callspec is not None and _SERVER_PARAMS & {str(v) for v in callspec.params.values()}:
            item.add_marker("servers")
        where = Path(str(item.path)).resolve().relative_to(_TESTS).as_posix()
        if where.startswith(tuple(f"{f}/" for f in _GITHUB_FOLDERS)):
            item.add_marker("github")
