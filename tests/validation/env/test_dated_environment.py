"""Against a real Docker engine and a package index made by the test: a project whose unpinned
dependency released an incompatible version after the commit gets the release of its day, and
says so in its image; resolving the newest releases instead breaks it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.env_image import (
    DATED_RESOLVER,
    EnvImage,
    ensure_environment,
    environment_tag,
)
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.env.image_cache import cached_images
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import run_tests
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.cli import reprobot
from tests.support.package_index import PackageIndex
from tests.support.repos import commit_files, make_repo

pytestmark = pytest.mark.docker

# A name no public index holds, so that only the test's index answers for it.
DEPENDENCY = f"reprobot-fixture-{uuid.uuid4().hex[:10]}"
MODULE = DEPENDENCY.replace("-", "_")
TEST_ID = "tests/test_hello.py::test_hello"


def test_an_unpinned_dependency_resolves_as_of_the_commit(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(tmp_path / "hello", {"README": "hello\n"})
    sha = commit_files(
        repo,
        {
            "pyproject.toml": (
                '[build-system]\nrequires = ["setuptools>=61"]\n'
                'build-backend = "setuptools.build_meta"\n\n'
                '[project]\nname = "hello"\nversion = "0.1"\n'
                f'dependencies = ["{DEPENDENCY}"]\n\n'
                '[tool.setuptools]\npackages = ["hello"]\n'
            ),
            "hello/__init__.py": (
                f"from {MODULE} import greet\n\n\ndef hello():\n    return greet() + '!'\n"
            ),
            "tests/test_hello.py": "from hello import hello\n\n\ndef test_hello():\n"
            "    assert hello() == 'hi!'\n",
        },
        "depend on the fixture package",
        date="2023-03-01T12:00:00Z",
    )
    # Named as the command line names it: by its folder.
    snapshot = RepoSnapshot.from_git(repo, sha)
    spec = EnvSpec(python="3.11", env={"RUN": uuid.uuid4().hex})
    made: list[str] = []
    with PackageIndex() as index:
        index.add_wheel(
            DEPENDENCY,
            "1.0",
            {f"{MODULE}.py": "def greet():\n    return 'hi'\n"},
            "2022-06-01T00:00:00Z",
        )
        # Released after the commit: ``greet`` is gone.
        index.add_wheel(
            DEPENDENCY,
            "2.0",
            {f"{MODULE}.py": "def salute():\n    return 'hi'\n"},
            "2024-06-01T00:00:00Z",
        )
        dated = settings.model_copy(update={"pip_extra_index_urls": [index.url]})
        try:
            planned = environment_tag(docker_client, spec, snapshot, dated)
            env = ensure_environment(docker_client, spec, snapshot, dated)
            made.append(env.tag)
            assert env.tag == planned
            assert env.as_of == "2023-03-02T12:00:00Z"
            assert env.as_of_why == "the commit's date"
            labels = docker_client.images.get(env.tag).labels
            assert labels["reprobot.env.resolver"] == DATED_RESOLVER
            assert labels["reprobot.env.commit-date"] == "2023-03-01T12:00:00+00:00"
            # The build's end is recorded: a bound later than it never was the real moment.
            assert env.built_at > env.as_of and env.built_at.endswith("Z")
            # An image built before that label existed has the engine's creation time instead.
            older = docker_client.containers.create(env.tag, command=["true"])
            try:
                older_tag = f"reprobot-test/unlabelled:{uuid.uuid4().hex[:12]}"
                repository, _, image_tag = older_tag.partition(":")
                older.commit(repository, image_tag, changes=['LABEL reprobot.env.built-at=""'])
                made.append(older_tag)
            finally:
                older.remove(force=True)
            image = docker_client.images.get(older_tag)
            created = str(image.attrs["Created"])[:19] + "Z"
            assert EnvImage.of_image(older_tag, image).built_at == created
            listed = {c.tag: c for c in cached_images(docker_client, dated)}
            assert listed[env.tag].as_of == env.as_of
            # The command line shows it too: the listing, and a build that finds the image.
            shown = reprobot("env", "list", "--json", settings=dated)
            rows = {r["tag"]: r for r in json.loads(shown.stdout)["images"]}
            assert rows[env.tag]["as_of"] == "2023-03-02T12:00:00Z"
            assert rows[env.tag]["resolver"] == DATED_RESOLVER
            spec_file = tmp_path / "spec.json"
            spec_file.write_text(spec.model_dump_json())
            found = reprobot(
                "env",
                "build",
                "--repo",
                str(repo),
                "--ref",
                sha,
                "--spec",
                str(spec_file),
                "--json",
                settings=dated,
                env={"REPROBOT_PIP_EXTRA_INDEX_URLS": json.dumps([index.url])},
            )
            assert found.returncode == 0, found.stderr
            built = json.loads(found.stdout)
            assert (built["image"], built["as_of"]) == (env.tag, env.as_of)
            assert built["as_of_why"] == "the commit's date"
            run = run_tests(docker_client, env, snapshot, selection=[TEST_ID])
            assert run.error is None, run.error
            assert run.outcomes == {TEST_ID: Outcome.PASSED}

            newest = settings.model_copy(
                update={"pip_extra_index_urls": [index.url], "env_as_of_commit": False}
            )
            unbounded = ensure_environment(docker_client, spec, snapshot, newest)
            made.append(unbounded.tag)
            assert unbounded.tag == environment_tag(docker_client, spec, snapshot, newest)
            assert unbounded.tag != env.tag
            assert unbounded.as_of == "" and unbounded.built_at
            broken = run_tests(docker_client, unbounded, snapshot, selection=[TEST_ID])
            assert broken.outcomes[TEST_ID] is not Outcome.PASSED
            # A conda environment file's build is keyed by the date bound too.
            conda = spec.model_copy(update={"binary_requirements": ("ci/environment.yml",)})
            assert environment_tag(docker_client, conda, snapshot, dated) != environment_tag(
                docker_client, conda, snapshot, newest
            )
        finally:
            for tag in reversed(made):
                docker_client.images.remove(tag, force=True)
