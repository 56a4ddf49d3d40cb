"""Honest pull requests stay verified: a real fix with the things fixes usually carry beside it
(a linter's settings, a version bump, docs and notes, another test, the drafted test itself)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.example_patches import FIX, NEW_TEST
from tests.support.judged_changes import MODES, commit_all, judge

TEST_ID = "tests/test_multi.py::test_multi_unit"
UNRELATED_TEST = """\
from durations import parse_duration


def test_seconds():
    assert parse_duration("90s") == 90
"""


def _write(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)


def linter_settings(repo: Path) -> None:
    _write(repo, "setup.cfg", "[flake8]\nmax-line-length = 100\n")


def version_bump(repo: Path) -> None:
    text = (repo / "pyproject.toml").read_text()
    _write(repo, "pyproject.toml", text.replace('version = "0.3.0"', 'version = "0.3.1"'))


def docs_and_notes(repo: Path) -> None:
    _write(repo, "README.md", (repo / "README.md").read_text() + "\nDurations add up: `1h30m`.\n")
    _write(repo, "CHANGES.rst", "0.3.1\n=====\n\n- Durations with several units parse.\n")


def another_test(repo: Path) -> None:
    _write(repo, "tests/test_seconds.py", UNRELATED_TEST)


def the_drafted_test(repo: Path) -> None:
    subprocess.run(["git", "-C", str(repo), "apply", "-"], input=NEW_TEST.encode(), check=True)


BESIDE_THE_FIX: dict[str, Callable[[Path], None]] = {
    "linter-settings": linter_settings,
    "version-bump": version_bump,
    "docs-and-notes": docs_and_notes,
    "another-test": another_test,
    "the-drafted-test": the_drafted_test,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(BESIDE_THE_FIX))
def test_a_real_fix_with_what_fixes_carry_is_verified(
    docker_client: docker.DockerClient,
    example_env: EnvImage,
    clone: Path,
    name: str,
    mode: str,
) -> None:
    base = RepoSnapshot.from_git(clone, "HEAD")
    subprocess.run(["git", "-C", str(clone), "apply", "-"], input=FIX.encode(), check=True)
    BESIDE_THE_FIX[name](clone)
    verdict = judge(docker_client, example_env, base, commit_all(clone, "fix"), mode)
    assert verdict.transitions[TEST_ID].kind == "F->P"
    assert (verdict.status, verdict.review) == ("verified", ()), verdict.reasons
    assert verdict.success
    # The fix's own lines ran; those of the drafted test it commits are not the change measured.
    assert verdict.change_coverage.covered > 0
    assert "tests/test_multi.py" not in {f.path for f in verdict.change_coverage.files}
