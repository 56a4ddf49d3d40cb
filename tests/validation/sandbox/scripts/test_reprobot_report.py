"""Reprobot's pytest plugin keeps assertion rewriting for a pytest plugin installed editable, as
the project under test is: its own tests of what its plugin's asserts say pass as they would
from a regular install (pytest-mock's introspection tests are such); and it has pytest load the
entry points of trusted metadata only."""

from __future__ import annotations

import uuid
from pathlib import Path

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.detect import detect_environment
from reprobot.validation.env.env_image import ensure_environment
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import run_tests
from reprobot.validation.sandbox.scripts.reprobot_report import TREE, trusted
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import make_repo

pytestmark = pytest.mark.docker

# The package lives in a folder of another name, so setuptools' editable install serves it
# through an import finder rather than a path, which pytest's rewriting hook does not see.
PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "plugdemo"
version = "1.0"

[project.entry-points.pytest11]
plugdemo = "plugdemo"

[tool.setuptools]
packages = ["plugdemo"]
package-dir = {"plugdemo" = "code"}

[tool.pytest.ini_options]
testpaths = ["tests"]
"""
PLUGIN = """\
import pytest


def check(a, b):
    assert a == b


@pytest.fixture
def checker():
    return check
"""
TEST = """\
import pytest


def test_the_plugin_assert_says_what_differs(checker):
    with pytest.raises(AssertionError) as info:
        checker(1, 2)
    assert "assert 1 == 2" in str(info.value)
"""


def test_an_editable_pytest_plugin_keeps_assertion_rewriting(
    docker_client: docker.DockerClient, settings: Settings, tmp_path: Path
) -> None:
    files = {
        "pyproject.toml": PYPROJECT,
        # As pytest-mock's: the package imports the module that holds the asserts.
        "code/__init__.py": "from plugdemo.plugin import check, checker\n",
        "code/plugin.py": PLUGIN,
        "tests/test_plugin.py": TEST,
    }
    repo = make_repo(tmp_path / "plugdemo", files)
    snapshot = RepoSnapshot.from_git(repo, "HEAD", f"test/plugdemo-{uuid.uuid4().hex[:8]}")
    env = ensure_environment(docker_client, detect_environment(snapshot).spec, snapshot, settings)
    assert env.editable
    run = run_tests(docker_client, env, snapshot)
    assert run.outcomes == {
        "tests/test_plugin.py::test_the_plugin_assert_says_what_differs": Outcome.PASSED
    }, run.failures


class _Dist:
    def __init__(self, path: str | None) -> None:
        if path is not None:
            self._path = Path(path)


@pytest.mark.parametrize(
    ("path", "named", "loads"),
    [
        ("/usr/lib/python3/site-packages/pytest_cov-5.0.dist-info", (), True),
        ("/work/.overlay/lib/python3.11/site-packages/tiny-1.0.dist-info", (), True),
        (f"{TREE}/tiny.egg-info", (f"{TREE}/tiny.egg-info",), True),
        # The tree's metadata the runner did not name, wherever the import path finds it.
        (f"{TREE}/lib/helper-1.0.dist-info", (f"{TREE}/tiny.egg-info",), False),
        (f"{TREE}/tiny.egg-info", (), False),
        # A path relative to pytest's working folder, the tree's root.
        ("helper.egg-info", (), False),
        (None, (), False),
    ],
)
def test_only_metadata_outside_the_tree_or_named_by_the_runner_loads(
    path: str | None, named: tuple[str, ...], loads: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir("/")
    if path == "helper.egg-info":
        monkeypatch.setattr("os.getcwd", lambda: TREE)
    assert trusted(_Dist(path), frozenset(named)) is loads
