"""Against a real Docker engine: a project of the Python 3.6 era that reads ``collections.Mapping``
(an alias Python 3.10 removed) and turns deprecation warnings into errors, as astropy's test set-up
of that era did, runs its tests in an environment that restores the alias; without it, the same
tree fails at import."""

from __future__ import annotations

import uuid
from pathlib import Path

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

TEST_ID = "tests/test_registry.py::test_a_registry_is_a_mapping"
FILES = {
    "pyproject.toml": TINY_PYPROJECT,
    "tiny/__init__.py": (
        "import collections\n\n\n"
        "class Registry(dict):\n"
        "    pass\n\n\n"
        "collections.MutableMapping.register(Registry)\n"
    ),
    "conftest.py": (
        "import warnings\n\n"
        "# As the project's era did: its own deprecated uses are errors in its tests.\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
    ),
    "tests/test_registry.py": (
        "import collections.abc\n\n"
        "from tiny import Registry\n\n\n"
        "def test_a_registry_is_a_mapping():\n"
        "    assert isinstance(Registry(), collections.abc.Mapping)\n"
    ),
}


def test_an_environment_restores_what_the_projects_python_had(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(tmp_path / "tiny", FILES)
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "test/compat")
    plain = EnvSpec(python="3.11", env={"RUN": uuid.uuid4().hex})
    restored = plain.model_copy(update={"python_compat": ("collections-abc-aliases",)})
    made: list[str] = []
    try:
        env = ensure_environment(docker_client, restored, snapshot, settings)
        made.append(env.tag)
        run = run_tests(docker_client, env, snapshot, selection=[TEST_ID])
        assert run.error is None, run.error
        assert run.outcomes == {TEST_ID: Outcome.PASSED}

        bare = ensure_environment(docker_client, plain, snapshot, settings)
        made.append(bare.tag)
        assert bare.tag != env.tag
        broken = run_tests(docker_client, bare, snapshot, selection=[TEST_ID])
        assert broken.outcome(TEST_ID) is not Outcome.PASSED
        assert "MutableMapping" in broken.log_excerpt
    finally:
        for tag in reversed(made):
            docker_client.images.remove(tag, force=True)
