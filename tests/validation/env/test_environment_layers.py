"""A tree whose manifests changed since its environment was built, against a real Docker engine:
it never runs as a silent run of zero tests. From a trusted commit the difference is installed as
a layer of its own; without one the run is an error naming the missing requirement."""

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
from tests.support.repos import TINY_MODULE, TINY_PYPROJECT, commit_files, make_repo

pytestmark = pytest.mark.docker

TEST = "import tiny\n\n\ndef test_add():\n    assert tiny.add(1, 2) == 3\n"


def test_a_requirement_added_after_the_image_is_a_layer_or_a_named_error(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(
        tmp_path / "layers",
        {
            "pyproject.toml": TINY_PYPROJECT,
            "tiny/__init__.py": TINY_MODULE,
            "tests/test_tiny.py": TEST,
        },
    )
    old = RepoSnapshot.from_git(repo, "HEAD", "test/layers")
    commit_files(
        repo,
        {
            "pyproject.toml": TINY_PYPROJECT + 'dependencies = ["six"]\n',
            "tiny/__init__.py": "import six  # noqa: F401\n\n" + TINY_MODULE,
        },
        "needs six",
    )
    new = RepoSnapshot.from_git(repo, "HEAD", "test/layers")
    # A spec of this test's own, so that its images are built here and removed afterwards.
    spec = EnvSpec(python="3.11", env={"RUN": uuid.uuid4().hex})
    shared = ensure_environment(docker_client, spec, old, settings)
    made = [shared.tag]
    try:
        assert ensure_environment(docker_client, spec, old, settings, on=shared) == shared

        # Without a layer: the re-install finds that the tree needs what the image lacks.
        lacking = run_tests(docker_client, shared, new, selection=["tests/test_tiny.py"])
        assert lacking.error is not None
        assert "requires six" in lacking.error
        assert "environment does not have" in lacking.error

        layer = ensure_environment(docker_client, spec, new, settings, on=shared)
        made.append(layer.tag)
        assert layer.tag != shared.tag
        assert layer.source_sha == new.sha
        # The layer is built on the shared image, not from the base image again.
        assert shared.tag in {
            tag
            for entry in docker_client.images.get(layer.tag).history()
            for tag in entry["Tags"] or []
        }
        run = run_tests(docker_client, layer, new, selection=["tests/test_tiny.py"])
        assert run.error is None
        assert run.outcomes == {"tests/test_tiny.py::test_add": Outcome.PASSED}
        # The same tree again reuses the layer.
        assert ensure_environment(docker_client, spec, new, settings, on=shared).tag == layer.tag
    finally:
        for tag in reversed(made):
            docker_client.images.remove(tag, force=True)


def test_a_layer_keeps_the_spec_below_it(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings, tiny_repo: Path
) -> None:
    snapshot = RepoSnapshot.from_git(tiny_repo, "main", "test/tiny")
    shared = ensure_environment(docker_client, EnvSpec(python="3.11"), snapshot, settings)
    with pytest.raises(ValueError, match="keep the spec"):
        ensure_environment(
            docker_client,
            EnvSpec(python="3.11", pip_packages=("x",)),
            snapshot,
            settings,
            on=shared,
        )


def test_constraints_bound_the_projects_own_install(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(
        tmp_path / "bounded",
        {
            "pyproject.toml": TINY_PYPROJECT + 'dependencies = ["six"]\n',
            "tiny/__init__.py": TINY_MODULE,
            "tests/test_six.py": (
                "from importlib.metadata import version\n\n\n"
                "def test_era():\n    assert version('six') == '1.15.0'\n"
            ),
        },
    )
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "test/bounded")
    # The project asks for any six; the constraint keeps its era's release.
    spec = EnvSpec(python="3.11", constraints=("six==1.15.0",), env={"RUN": uuid.uuid4().hex})
    env = ensure_environment(docker_client, spec, snapshot, settings)
    try:
        run = run_tests(docker_client, env, snapshot, selection=["tests/test_six.py"])
        assert run.outcomes == {"tests/test_six.py::test_era": Outcome.PASSED}, run.log_excerpt
    finally:
        docker_client.images.remove(env.tag, force=True)
