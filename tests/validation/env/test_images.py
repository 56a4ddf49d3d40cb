"""Base and environment images on a real Docker engine: caching, keys, failures."""

from __future__ import annotations

import io
import uuid
from collections.abc import Callable
from pathlib import Path

import docker
import pytest
from rich.console import Console

from reprobot.console import ConsoleProgress
from reprobot.settings import Settings
from reprobot.validation.env.base_image import base_tag, ensure_base_image
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.errors import ImageBuildError
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import run_tests
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import TINY_MODULE, TINY_PYPROJECT, make_repo

pytestmark = pytest.mark.docker


def _reprobot_containers(client: docker.DockerClient) -> list[str]:
    found = client.containers.list(all=True, filters={"label": "reprobot.sandbox"})
    return [str(c.id) for c in found]


def console_progress() -> tuple[ConsoleProgress, io.StringIO]:
    """The command line's progress, writing into a string."""
    told = io.StringIO()
    return ConsoleProgress(Console(file=told, width=200)), told


def test_base_image_second_call_reuses_it(
    docker_client: docker.DockerClient, settings: Settings
) -> None:
    tag = ensure_base_image(docker_client, "3.11", settings)
    assert tag == base_tag("3.11")
    image_id = docker_client.images.get(tag).id
    before = _reprobot_containers(docker_client)
    assert ensure_base_image(docker_client, "3.11", settings) == tag
    assert docker_client.images.get(tag).id == image_id
    assert _reprobot_containers(docker_client) == before


def test_base_image_has_the_sandbox_layout(
    docker_client: docker.DockerClient, settings: Settings
) -> None:
    tag = ensure_base_image(docker_client, "3.11", settings)
    out = docker_client.containers.run(
        tag,
        [
            "sh",
            "-c",
            "python -c 'import sys; print(sys.version_info[:2])'; id -u sandbox; "
            "git --version >/dev/null && patch --version >/dev/null && echo tools",
        ],
        remove=True,
        network_mode="none",
    ).decode()
    assert "(3, 11)" in out
    assert "1000" in out
    assert "tools" in out


# What test suites commonly expect of the system (infra/sandbox/base-setup.sh, TEST_TOOLS), as
# a test run sees it: no network, the sandbox user, a read-only root.
SYSTEM_TOOLS_TEST = """\
import locale
import os
import subprocess
import zoneinfo


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def test_pager():
    assert run("less", "--version").startswith("less ")


def test_git():
    assert run("git", "--version").startswith("git version ")


def test_file():
    assert run("file", "--version").startswith("file-")


def test_make():
    assert run("make", "--version").startswith("GNU Make ")


def test_locales():
    names = run("locale", "-a").split()
    assert "en_US.utf8" in names and "C.utf8" in names
    assert locale.setlocale(locale.LC_ALL, "en_US.UTF-8") == "en_US.UTF-8"


def test_time_zones():
    paris = zoneinfo.ZoneInfo("Europe/Paris")
    assert paris.key == "Europe/Paris"
    # From the system's database, not a package of the environment's.
    assert any(os.path.exists(folder + "/Europe/Paris") for folder in zoneinfo.TZPATH)
"""


def test_a_test_run_has_the_system_tools_test_suites_expect(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
) -> None:
    snapshot = tiny_snapshot({"tests/test_system_tools.py": SYSTEM_TOOLS_TEST})
    run = run_tests(docker_client, tiny_env, snapshot)
    assert run.error is None, run.log_excerpt[-3000:]
    assert run.outcomes == {
        f"tests/test_system_tools.py::test_{name}": Outcome.PASSED
        for name in ("pager", "git", "file", "make", "locales", "time_zones")
    }, run.failures


def test_unsupported_python_is_a_clear_error(
    docker_client: docker.DockerClient, settings: Settings
) -> None:
    with pytest.raises(ImageBuildError, match=r"unsupported Python version '2\.7'"):
        ensure_base_image(docker_client, "2.7", settings)


def test_environment_is_cached_by_content(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_repo: Path, settings: Settings
) -> None:
    snapshot = RepoSnapshot.from_git(tiny_repo, "main", "test/tiny")
    progress, told = console_progress()
    spec = EnvSpec(python="3.11")
    again = ensure_environment(docker_client, spec, snapshot, settings, progress)
    assert again.tag == tiny_env.tag
    assert again.editable
    # Nothing was built, so nothing was said.
    assert told.getvalue() == ""
    # A spec of this run's own is built afresh (and removed afterwards), and said so.
    other = EnvSpec(python="3.11", pip_packages=("iniconfig",), env={"RUN": uuid.uuid4().hex})
    built = ensure_environment(docker_client, other, snapshot, settings, progress)
    docker_client.images.remove(built.tag)
    assert built.tag != tiny_env.tag
    start, end = told.getvalue().splitlines()
    what = f"building the environment of test/tiny @ {snapshot.sha[:12]} (Python 3.11;"
    assert start.startswith(f"… {what}")
    assert end.startswith(f"✓ {what}") and end.endswith(" s)")


def test_failed_build_names_its_log(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(
        tmp_path / "broken", {"pyproject.toml": TINY_PYPROJECT, "tiny/__init__.py": TINY_MODULE}
    )
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "test/broken")
    spec = EnvSpec(python="3.11", install="echo installing && exit 3")
    progress, told = console_progress()
    with pytest.raises(ImageBuildError) as info:
        ensure_environment(docker_client, spec, snapshot, settings, progress)
    assert "✗ building the environment of test/broken" in told.getvalue()
    assert ": failed after " in told.getvalue()
    assert info.value.log_path is not None
    assert str(info.value.log_path) in str(info.value)
    log = info.value.log_path.read_text()
    assert "installing" in log
    assert "the install command failed" in str(info.value)


def test_images_keep_no_build_settings(
    docker_client: docker.DockerClient, tiny_env: EnvImage, settings: Settings
) -> None:
    # The build containers saw the host's index settings; the committed images must not.
    for tag in (ensure_base_image(docker_client, "3.11", settings), tiny_env.tag):
        env = docker_client.images.get(tag).attrs["Config"]["Env"] or []
        leaked = [e for e in env if e.startswith(("PIP_", "SSL_CERT", "REQUESTS_CA"))]
        assert leaked == [], tag
