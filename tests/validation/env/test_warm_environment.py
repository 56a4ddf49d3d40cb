"""Against a real Docker engine: a project whose tests download a data file at start-up (its
conftest fetches it into the user's cache) runs offline once its environment's warm-up command
fetched the file during the build; without one, the offline run cannot start."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.env_image import ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import run_tests
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import TINY_PYPROJECT, make_repo

pytestmark = pytest.mark.docker

TEST_ID = "tests/test_table.py::test_the_table_is_there"
CONFTEST = """\
import os
import urllib.request

URL = "http://127.0.0.1:{port}/table.txt"
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "tiny", "table.txt")

# As projects with data too large for their repository do: fetched once, then cached.
if not os.path.exists(CACHE):
    os.makedirs(os.path.dirname(CACHE), exist_ok=True)
    with urllib.request.urlopen(URL, timeout=10) as response:
        data = response.read()
    with open(CACHE, "wb") as fh:
        fh.write(data)
"""
TEST = """\
import os


def test_the_table_is_there():
    path = os.path.join(os.path.expanduser("~"), ".cache", "tiny", "table.txt")
    with open(path) as fh:
        assert fh.read() == "1 2 3\\n"
"""


@pytest.fixture
def data_server() -> Iterator[tuple[int, list[str]]]:
    served: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.append(self.path)
            body = b"1 2 3\n"
            self.send_response(200 if self.path == "/table.txt" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], served
    finally:
        server.shutdown()
        server.server_close()


def test_what_the_tests_fetch_at_start_up_is_fetched_by_the_build(
    docker_client: docker.DockerClient,
    tmp_path: Path,
    settings: Settings,
    data_server: tuple[int, list[str]],
) -> None:
    port, served = data_server
    repo = make_repo(
        tmp_path / "tiny",
        {
            "pyproject.toml": TINY_PYPROJECT,
            "tiny/__init__.py": "",
            "conftest.py": CONFTEST.format(port=port),
            "tests/test_table.py": TEST,
        },
    )
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "test/warm")
    cold = EnvSpec(python="3.11", env={"RUN": uuid.uuid4().hex})
    warm = cold.model_copy(update={"warm": ("python -m pytest --collect-only -q",)})
    made: list[str] = []
    try:
        env = ensure_environment(docker_client, warm, snapshot, settings)
        made.append(env.tag)
        assert served == ["/table.txt"]
        assert docker_client.images.get(env.tag).labels["reprobot.env.warm"] == (
            '[{"command": "python -m pytest --collect-only -q", "exit": 0}]'
        )
        run = run_tests(docker_client, env, snapshot, selection=[TEST_ID])
        assert run.error is None, run.error
        assert run.outcomes == {TEST_ID: Outcome.PASSED}
        # The run got a copy: a second run finds the file again.
        again = run_tests(docker_client, env, snapshot, selection=[TEST_ID])
        assert again.outcomes == {TEST_ID: Outcome.PASSED}
        # The sandbox itself never reached the server.
        assert served == ["/table.txt"]

        bare = ensure_environment(docker_client, cold, snapshot, settings)
        made.append(bare.tag)
        offline = run_tests(docker_client, bare, snapshot, selection=[TEST_ID])
        assert offline.outcome(TEST_ID) is not Outcome.PASSED
        assert served == ["/table.txt"]
    finally:
        for tag in reversed(made):
            docker_client.images.remove(tag, force=True)
