"""The ``reprobot run-tests`` command-line contract, run as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage
from tests.support.cli import reprobot
from tests.support.example_patches import NEW_TEST


@pytest.mark.docker
def test_json_contract(
    example_env: EnvImage, example_repo: Path, settings: Settings, tmp_path: Path
) -> None:
    patch = tmp_path / "test.diff"
    patch.write_text(NEW_TEST)
    spec = tmp_path / "spec.json"
    spec.write_text(example_env.spec.model_dump_json())
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--ref",
        "HEAD",
        "--name",
        "example/durations",
        "--spec",
        str(spec),
        "--patch",
        str(patch),
        "--test",
        "tests/test_multi.py::test_multi_unit",
        "--test",
        "tests/test_parse.py::test_format",
        "--json",
        settings=settings,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["patches_applied"] is True
    assert out["tests"] == {
        "tests/test_multi.py::test_multi_unit": "failed",
        "tests/test_parse.py::test_format": "passed",
    }
    assert out["image"] == example_env.tag


@pytest.mark.docker
def test_patch_that_does_not_apply_still_exits_zero(
    example_env: EnvImage, example_repo: Path, settings: Settings, tmp_path: Path
) -> None:
    patch = tmp_path / "bad.diff"
    # Its removed line is not in the file (the added one is: it looks reversed).
    patch.write_text(
        "--- a/tests/test_parse.py\n+++ b/tests/test_parse.py\n@@ -1,2 +1,2 @@\n"
        "-import unittest\n+import pytest\n \n"
    )
    spec = tmp_path / "spec.json"
    spec.write_text(example_env.spec.model_dump_json())
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--name",
        "example/durations",
        "--spec",
        str(spec),
        "--patch",
        str(patch),
        "--json",
        settings=settings,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["patches_applied"] is False, out["patches"]


@pytest.mark.docker  # the command reaches the engine before it reads the commit
def test_unknown_commit_exits_two(example_repo: Path, settings: Settings) -> None:
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--ref",
        "no-such-ref",
        "--json",
        settings=settings,
    )
    assert proc.returncode == 2
    assert "no-such-ref" in proc.stderr
    assert proc.stdout == ""


def test_unreachable_docker_exits_two(
    example_repo: Path, settings: Settings, tmp_path: Path
) -> None:
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--json",
        settings=settings,
        env={"DOCKER_HOST": f"unix://{tmp_path}/nothing.sock"},
    )
    assert proc.returncode == 2
    assert "no Docker engine answers" in proc.stderr


def test_missing_patch_file_exits_two(
    example_repo: Path, settings: Settings, tmp_path: Path
) -> None:
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--patch",
        str(tmp_path / "absent.diff"),
        settings=settings,
    )
    assert proc.returncode == 2
    assert "cannot read patch" in proc.stderr
